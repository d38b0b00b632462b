/* The perf_event_attr sequence memscope opens for Intel's PERF_METRICS
 * top-down (Ice Lake-SP, Sapphire Rapids), checked where no such PMU is:
 * the metric plan on the fixture machines, each plan event as event_parse
 * makes it from the fixture's sysfs, each perf group in the order
 * perf_group_order gives and each member's attr from perf_member_attr -
 * the code the perf source opens with - against
 *  - the sequence perf stat opens for the same metric: perf 6.12's
 *    sapphirerapids tma_backend_bound reads topdown-be-bound, -fe-bound,
 *    -bad-spec, -retiring and slots; perf groups them slots first, then the
 *    metric events (tools/perf/arch/x86/util/evlist.c, arch_evlist__cmp) and
 *    makes each attr in create_perf_stat_counter (tools/perf/util/stat.c):
 *    read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID | GROUP,
 *    sample_period 0, the leader disabled, enable_on_exec on the leader for
 *    a command, inherit set, no exclude bits (perf stat sets exclude_guest
 *    only under perf kvm);
 *  - the kernel's rules (arch/x86/events/intel/core.c, intel_pmu_hw_config,
 *    Linux 6.12): a topdown event (slots, event 0x00 umask 0x04, or a metric
 *    event, event 0x00 umask 0x80 up to the model's last) has config1 and
 *    config2 0 and no filter bits (edge, any, inv, cmask); a metric event is
 *    not sampling, its group leader is slots and the leader is not sampling;
 *    the model has the metric (num_topdown_events: 4 on Ice Lake, umask
 *    0x80-0x83; 8 on Sapphire Rapids, up to 0x87).
 * What only the hardware can show: that the counts are right (the kernel's
 * PERF_METRICS arithmetic, the slots scaling, multiplexing of the group). */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/resolver.h"
#include "check.h"
#include "config.h"
#include "events/event.h"
#include "host/host.h"
#include "metrics/metrics.h"
#include "sources/perf_group_attrs.h"

#define X86_ALL_EVENT_FLAGS 0xffbc0000ull  /* edge (18), pc (19), int (20), any (21), inv (23), cmask (24-31) */
#define PERF_STAT_READ_FORMAT (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | \
			       PERF_FORMAT_GROUP)

struct planned {
	struct host host;
	struct catalog *cat;
	struct resolution *res;
	struct metric_plan *plan;
	struct event *events;     /* one per plan event (perf events parsed, others zero) */
	struct ms_error err;
};

static int plan_on(struct planned *p, const char *machine, const char *metrics)
{
	char path[4096];
	struct name_list list = { NULL, 0 };

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "%s/%s/sys", getenv("MEMSCOPE_TEST_FIXTURES"), machine);
	setenv("MEMSCOPE_SYSFS_ROOT", path, 1);
	snprintf(path, sizeof(path), "%s/%s/proc", getenv("MEMSCOPE_TEST_FIXTURES"), machine);
	setenv("MEMSCOPE_PROCFS_ROOT", path, 1);
	snprintf(path, sizeof(path), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (host_load(&p->host, &p->err) || catalog_load(&p->cat, path, &p->err) ||
	    resolve(&p->host, p->cat, &p->res, &p->err) || name_list_add_text(&list, metrics, &p->err) < 0 ||
	    metric_plan_build(p->res, &list, &p->plan, &p->err)) {
		name_list_free(&list);
		CHECK_FAIL("%s %s: %s", machine, metrics, p->err.text);
		return -1;
	}
	name_list_free(&list);
	p->events = calloc((size_t)p->plan->nr_events + 1, sizeof(*p->events));
	for (int i = 0; p->events && i < p->plan->nr_events; i++)
		if (plan_event_is_perf(&p->plan->events[i]) &&
		    event_parse(&p->host, p->plan->events[i].open, &p->events[i], &p->err) < 0) {
			CHECK_FAIL("%s: %s", p->plan->events[i].open, p->err.text);
			return -1;
		}
	return p->events ? 0 : -1;
}

static void planned_free(struct planned *p)
{
	for (int i = 0; p->events && p->plan && i < p->plan->nr_events; i++)
		event_free(&p->events[i]);
	free(p->events);
	metric_plan_free(p->plan);
	resolution_free(p->res);
	catalog_free(p->cat);
	host_free(&p->host);
}

/* Members of plan group g in the order they open; their number. */
static int group_members(const struct planned *p, int g, int *members)
{
	int nr = 0;

	for (int i = 0; i < p->plan->nr_events; i++)
		if (p->plan->events[i].group == g)
			members[nr++] = i;
	perf_group_order(p->events, members, nr);
	return nr;
}

static bool topdown_code(const struct perf_event_attr *a, unsigned long long lo, unsigned long long hi)
{
	return a->type == PERF_TYPE_RAW && (a->config & 0xff) == 0 && (a->config & 0xffff) >= lo &&
	       (a->config & 0xffff) <= hi;
}

static bool is_slots(const struct perf_event_attr *a)
{
	return topdown_code(a, 0x0400, 0x0400);
}

static bool is_metric(const struct perf_event_attr *a)
{
	return topdown_code(a, 0x8000, 0x8700);
}

/* intel_pmu_hw_config's topdown rules for member k of a group; NULL when
 * the kernel accepts it, else the rule it breaks. last_metric: the model's
 * last metric code (0x8300 Ice Lake, 0x8700 Sapphire Rapids). */
static const char *kernel_refuses(const struct perf_event_attr *attrs, int k, unsigned long long last_metric)
{
	const struct perf_event_attr *a = &attrs[k], *leader = &attrs[0];

	if (!is_slots(a) && !is_metric(a))
		return NULL;
	if (a->config1 || a->config2)
		return "config1/config2 set";
	if (a->config & X86_ALL_EVENT_FLAGS)
		return "a filter bit";
	if (!is_metric(a) || (a->config & 0xffff) > last_metric)
		return is_metric(a) ? "a metric this model has not" : NULL;
	if (a->sample_period || a->freq)
		return "a sampling metric event";
	if (!is_slots(leader))
		return "a metric event whose leader is not slots";
	if (leader->sample_period || leader->freq)
		return "a sampling slots leader";
	return NULL;
}

/* Every group of the plan as it opens, against the kernel's rules; the
 * number of metric events seen. */
static int check_kernel_rules(const struct planned *p, const struct perf_open_mode *mode,
			      unsigned long long last_metric)
{
	int *members = calloc((size_t)p->plan->nr_events + 1, sizeof(int)), metrics = 0;
	struct perf_event_attr *attrs = calloc((size_t)p->plan->nr_events + 1, sizeof(*attrs));

	for (int g = 0; members && attrs && g < p->plan->nr_groups; g++) {
		int nr = group_members(p, g, members);

		for (int k = 0; k < nr; k++)
			perf_member_attr(&p->events[members[k]], k == 0, mode, &attrs[k]);
		for (int k = 0; k < nr; k++) {
			const char *why = kernel_refuses(attrs, k, last_metric);

			if (why)
				CHECK_FAIL("group %d member %d (%s): the kernel refuses %s", g, k,
					   p->plan->events[members[k]].text, why);
			metrics += is_metric(&attrs[k]);
			/* The metric events follow slots before any other member (perf's order). */
			if (k > 0 && is_metric(&attrs[k]))
				CHECK(is_slots(&attrs[k - 1]) || is_metric(&attrs[k - 1]));
		}
	}
	free(members);
	free(attrs);
	return metrics;
}

/* Sapphire Rapids -M TopdownL1 (topdown.backend_bound): one group, attr by
 * attr the sequence perf stat opens, for a command and system-wide. */
static void test_spr_topdown_l1_is_perfs_group(void)
{
	static const unsigned long long perf_metrics[] = { 0x8300, 0x8200, 0x8100, 0x8000 }; /* be, fe, bad-spec, retiring */
	struct planned p;

	if (plan_on(&p, "sapphire-rapids-2s", "topdown.backend_bound") == 0) {
		int members[8], nr;

		CHECK_EQ_INT(p.plan->nr_events, 5);
		CHECK_EQ_INT(p.plan->nr_groups, 1);
		nr = group_members(&p, 0, members);
		CHECK_EQ_INT(nr, 5);
		for (int target = 0; target < 2 && nr == 5; target++) {
			/* perf stat -- ./app (inherit, enable_on_exec), then perf stat -a */
			const struct perf_open_mode mode = { .system_wide = target == 1, .enable_on_exec = target == 0 };
			bool seen[4] = { false };

			for (int k = 0; k < nr; k++) {
				struct perf_event_attr a;

				perf_member_attr(&p.events[members[k]], k == 0, &mode, &a);
				CHECK_EQ_INT(a.type, PERF_TYPE_RAW);    /* the fixture's cpu/type: 4 */
				CHECK_EQ_INT(a.size, sizeof(a));
				if (k == 0)
					CHECK_EQ_INT(a.config, 0x0400); /* slots leads */
				for (int m = 0; m < 4; m++)
					if (k > 0 && a.config == perf_metrics[m]) {
						CHECK(!seen[m]);
						seen[m] = true;
					}
				CHECK_EQ_INT(a.config1, 0);
				CHECK_EQ_INT(a.config2, 0);
				CHECK_EQ_INT(a.read_format, PERF_STAT_READ_FORMAT);
				CHECK_EQ_INT(a.sample_period, 0);
				CHECK_EQ_INT(a.sample_type, 0);
				CHECK_EQ_INT(a.freq, 0);
				CHECK_EQ_INT(a.disabled, k == 0);
				CHECK_EQ_INT(a.enable_on_exec, k == 0 && target == 0);
				/* perf sets inherit on every counter; memscope on a task's only (a
				 * CPU-wide counter has no task whose children inherit it). */
				CHECK_EQ_INT(a.inherit, target == 0);
				CHECK_EQ_INT(a.exclude_user, 0);
				CHECK_EQ_INT(a.exclude_kernel, 0);
				CHECK_EQ_INT(a.exclude_hv, 0);
				CHECK_EQ_INT(a.exclude_guest, 0);
				CHECK_EQ_INT(a.exclude_host, 0);
				CHECK_EQ_INT(a.pinned, 0);
				CHECK_EQ_INT(a.exclusive, 0);
				CHECK_EQ_INT(a.precise_ip, 0);
			}
			for (int m = 0; m < 4; m++)
				CHECK(seen[m]);
			CHECK_EQ_INT(check_kernel_rules(&p, &mode, 0x8700), 4);
		}
	}
	planned_free(&p);
}

/* Groups the plan grows: -M memory on Sapphire Rapids puts slots and the
 * PERF_METRICS events into the group remote cache bound's events started
 * (largest metric first), after them in the plan; they still open slots
 * first. Without perf_group_order the kernel would refuse the group. */
static void test_spr_memory_slots_leads_a_grown_group(void)
{
	struct planned p;

	if (plan_on(&p, "sapphire-rapids-2s",
		    "topdown.backend_bound,topdown.memory_bound,topdown.l1_bound,topdown.l2_bound,topdown.l3_bound,"
		    "topdown.dram_bound,topdown.dram_bandwidth,topdown.dram_latency,topdown.store_bound,"
		    "topdown.local_dram,topdown.remote_dram,topdown.remote_cache") == 0) {
		const struct perf_open_mode mode = { .system_wide = true };
		int first_slots = -1, first_in_group = -1;

		for (int i = 0; i < p.plan->nr_events; i++)
			if (plan_event_is_perf(&p.plan->events[i]) && perf_event_is_topdown_slots(&p.events[i])) {
				first_slots = i;
				break;
			}
		CHECK(first_slots >= 0);
		for (int i = 0; first_slots >= 0 && i < p.plan->nr_events; i++)
			if (p.plan->events[i].group == p.plan->events[first_slots].group) {
				first_in_group = i;
				break;
			}
		/* In the plan's order slots is not first in its group: the check below is not vacuous. */
		CHECK(first_in_group != first_slots);
		/* td_retiring, bad_spec, fe_bound, be_bound, mem_bound */
		CHECK_EQ_INT(check_kernel_rules(&p, &mode, 0x8700), 5);
	}
	planned_free(&p);
}

/* Ice Lake-SP has 4 metrics (the kernel's num_topdown_events): level 1 only;
 * its memory bound reads them beside general events in slots' group. */
static void test_icx_metrics_the_model_has(void)
{
	struct planned p;

	if (plan_on(&p, "icelake-sp-2s", "topdown.backend_bound,topdown.memory_bound") == 0) {
		const struct perf_open_mode mode = { .enable_on_exec = true };

		CHECK_EQ_INT(check_kernel_rules(&p, &mode, 0x8300), 4);
	}
	planned_free(&p);
}

/* The rule check itself refuses what the kernel refuses. */
static void test_kernel_rules_refuse(void)
{
	struct perf_event_attr g[2] = {
		{ .type = PERF_TYPE_RAW, .config = 0x0400 },
		{ .type = PERF_TYPE_RAW, .config = 0x8300 },
	};

	CHECK(kernel_refuses(g, 1, 0x8700) == NULL);
	g[1].sample_period = 1000;
	CHECK(kernel_refuses(g, 1, 0x8700) != NULL);
	g[1].sample_period = 0;
	g[0].config = 0x003c;   /* cycles leading */
	CHECK(kernel_refuses(g, 1, 0x8700) != NULL);
	g[0].config = 0x0400;
	g[1].config = 0x8700;   /* mem-bound on Ice Lake */
	CHECK(kernel_refuses(g, 1, 0x8300) != NULL);
	g[1].config = 0x1008300; /* cmask 1 */
	CHECK(kernel_refuses(g, 1, 0x8700) != NULL);
}

int main(void)
{
	test_spr_topdown_l1_is_perfs_group();
	test_spr_memory_slots_leads_a_grown_group();
	test_icx_metrics_the_model_has();
	test_kernel_rules_refuse();
	return check_summary("perf_attrs");
}
