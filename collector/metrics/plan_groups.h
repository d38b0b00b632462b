/* The perf groups of a metric plan.
 *
 * A metric's perf events are counted in one group per PMU instance, so its
 * ratios come from the same time slices, and a metric reads only its own
 * group's counts. The rule is perf's for metric groups (metricgroup.c:
 * metrics sorted largest first, a metric whose events are a subset of an
 * earlier one's shares that one's group, any other gets a group of its own
 * with its own copy of each event), with one addition: a metric whose new
 * events fit beside an earlier metric's group joins that group (fewer
 * events, no less exact). A metric with more events than the PMU has
 * counters takes turns in several groups (perf's --metric-no-group); one
 * whose events are spread over such groups gets groups of its own when it
 * fits one. */
#ifndef MEMSCOPE_PLAN_GROUPS_H
#define MEMSCOPE_PLAN_GROUPS_H

#include "metrics/metrics.h"

/* Place the events of a plan whose metrics are all added (each perf event
 * once, ungrouped): every perf event gets its group and copies are made
 * where two groups need the same event; the inputs are rebuilt so each
 * metric reads its own group's copies. -1 when out of memory (the plan is
 * then only fit to be freed). */
int plan_place_groups(struct metric_plan *plan);

#endif
