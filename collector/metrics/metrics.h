/* Metric plans and the metric engine.
 *
 * A plan says, for the metrics a user asked for, which raw events to open on
 * which PMU instances (grouped so one metric's events share a perf group when
 * they fit the PMU's counters) and which kernel statistics to read. The engine
 * binds a plan to the series table the sources built (a series is named by
 * the plan event's text) and turns each frame into metric values per scope:
 * the whole system, each NUMA node, each socket and each memory channel (a
 * PMU instance whose catalog role is scoped per channel: an Intel IMC, a
 * HiSilicon DDRC, an AMD UMC). Rates divide by the
 * frame's interval; ratios are computed from the scope's sums; multiplexed
 * counters are extrapolated and every value carries its coverage
 * (running/enabled, the smallest of its inputs) and whether its inputs were
 * counted in different time slices. */
#ifndef MEMSCOPE_METRICS_H
#define MEMSCOPE_METRICS_H

#include <stdbool.h>
#include <stdio.h>

#include "catalog/catalog.h"
#include "util/error.h"
#include "util/name_list.h"
#include "sampler/frame.h"
#include "host/host.h"
#include "catalog/resolver.h"

/* SCOPE_TIER: the nodes of one memory tier (devices/virtual/memory_tiering/
 * memory_tierN, host/memory_tiers.h), identified by N; none when the kernel
 * lists no tiers. */
enum metric_scope { SCOPE_SYSTEM, SCOPE_NODE, SCOPE_SOCKET, SCOPE_CHANNEL, SCOPE_TIER };

/* A memory channel scope: one instance of a channel-scoped PMU, counted on
 * one CPU (Intel's uncore_imc_0 is a channel on every socket, read through
 * one CPU of each, so the instance name alone does not name a channel). The
 * same scope holds the instances of a plugin role scoped per `instance`: one
 * per instance label (or, without one, cgroup label) of its series. */
struct metric_channel {
	const char *instance;     /* owned by the plan or the series table */
	int cpu;                  /* LABEL_NONE when the series has no CPU */
	int node, socket;         /* of that CPU (LABEL_NONE when unknown) */
};

/* One raw event to count. text is the name of the series it yields and open
 * what to open (event_parse syntax); procfs events ("vmstat/KEY",
 * "numastat/KEY") are read by the procfs source and eBPF series
 * ("proc.faults") by the bpf source instead of perf.
 *
 * A perf event two metrics read is opened once in each group that needs it
 * (plan_groups.h): copy 1 is named open itself, copy N "open#N". Every
 * metric reads its own group's copies; a count shown for the event itself
 * (stat -e with the same text) is copy 1's. */
struct plan_event {
	char *text;
	char *open;
	int copy;                 /* 1, 2, ...: which copy of open this is */
	char instance[64];        /* PMU instance ("hisi_sccl1_ddrc0"), "vmstat", "numastat" or "bpf" */
	int memory_node;          /* the node its counts belong to when not its CPU's (a CXL device's); -1 the
				   * CPU's; -2 none (a CXL device whose node sysfs does not give) */
	enum catalog_event_how how;
	int group;                /* perf group id: same id = open as one group; -1 for procfs and bpf */
	const struct cpulist *cpus; /* CPUs to count on (owned by the resolution) */
	const struct catalog_role *role;
	const struct catalog_event *event;
	int counters;             /* counters per instance of its role on this host (0 = unknown) */
};

/* One role.event of a family, summed over all its instances in a scope. */
struct plan_input {
	int family, role, event;  /* resolution->families index, role and event index */
	int *events;              /* plan_event indices (one per instance) */
	int nr_events;
};

struct plan_metric {
	int metric;               /* catalog index */
	bool requested;           /* named by the user; others are inputs of derived metrics */
	int family, mapping;      /* base metrics: the chosen mapping */
	int *slot_inputs;         /* base: pairs (formula slot, input index) */
	int nr_slot_inputs;
	int *dep_plan;            /* derived: plan index of each catalog metric (or -1), by catalog index */
	/* base: another family's mapping marked adds (catalog.h), whose value is
	 * added in the scopes it has counters in; NULL when none */
	struct plan_metric *add;
};

struct metric_plan {
	const struct catalog *cat;
	const struct resolution *res;
	struct plan_event *events;
	int nr_events;
	struct plan_input *inputs;
	int nr_inputs;
	struct plan_metric *metrics;   /* evaluation order: inputs of a derived metric come first */
	int nr_metrics;
	int nr_groups;
	int nr_copies;            /* perf events opened more than once: the copies beyond the first */
};

/* names: metric names ("mem.read_bw", "mem.remote_ratio"). An
 * unknown or unavailable metric is an error that says why. */
int metric_plan_build(const struct resolution *res, const struct name_list *names, struct metric_plan **out,
		      struct ms_error *err);
void metric_plan_free(struct metric_plan *plan);

/* The catalog's definition of plan metric i (its name, unit, formula):
 * the one way to it, rather than indexing the catalog by the plan's index. */
static inline const struct catalog_metric *metric_plan_catalog_metric(const struct metric_plan *plan, int i)
{
	return &plan->cat->metrics[plan->metrics[i].metric];
}

/* Does the plan need the procfs source (vmstat / numastat)? */
bool metric_plan_needs_procfs(const struct metric_plan *plan);
/* Does plan metric i count the whole machine whatever the target: is one
 * of its raw events (or one of a derived metric's inputs') a series of table
 * that does (series_labels.whole_system)? */
bool metric_plan_whole_system(const struct metric_plan *plan, int i, const struct series_table *table);
/* Is plan metric i a level (made from gauge series: a cgroup's memory), as
 * opposed to a count or a rate of counters? Its total over a run is then
 * the peak, mean and last of its per-frame values. */
bool metric_plan_level(const struct metric_plan *plan, int i, const struct series_table *table);
/* Is this event opened by the perf source (not procfs, not eBPF)? */
bool plan_event_is_perf(const struct plan_event *pe);

/* Why a metric has no value, as code reads it. */
enum metric_why_code {
	METRIC_WHY_OTHER = 0,         /* valid, or any reason but the one below */
	METRIC_WHY_NOT_IN_SCOPE,      /* no counter of the metric belongs to this scope (a node, a socket) */
};

struct metric_value {
	double value;
	double coverage;          /* 0..1: share of the interval its inputs were counted */
	bool valid;               /* false: nothing to show in this scope (see why) */
	bool mixed_slices;        /* inputs were counted in different multiplexing time slices */
	const char *why;          /* static text when !valid */
	enum metric_why_code why_code; /* why, for code that decides on it (never the text) */
};

/* The engine binds a plan to a series table once (metric_engine_new) and is
 * read-only afterwards: every compute writes into caller-owned values, so
 * the session computes each frame once and any thread reads (or computes)
 * values of its own. */
struct metric_engine;
struct metric_values;

int metric_engine_new(const struct metric_plan *plan, const struct host *host, const struct series_table *table,
		      struct metric_engine **out, struct ms_error *err);
void metric_engine_free(struct metric_engine *engine);
/* Where the engine's series come from, for the reasons of values it cannot
 * give: a counter of this host, or a file (what is not in a file is not
 * about this host). */
enum metric_origin { METRIC_ORIGIN_LIVE, METRIC_ORIGIN_REPLAY, METRIC_ORIGIN_RECORDING };
void metric_engine_set_origin(struct metric_engine *engine, enum metric_origin origin);

/* Room for one frame's values of every plan metric in every scope (all
 * invalid, "no frame yet", until computed); NULL when out of memory. */
struct metric_values *metric_values_new(const struct metric_engine *engine);
void metric_values_free(struct metric_values *values);
/* dst = src, both made for the same engine. No allocation. */
void metric_values_copy(struct metric_values *dst, const struct metric_values *src);

/* Compute every plan metric in every scope from one frame into out. No
 * allocation; the engine is not written. */
void metric_engine_compute(const struct metric_engine *engine, const struct frame *frame, struct metric_values *out);

/* Number of scopes of a kind (1 for system) and the node/socket id of one
 * (for a channel: its index; see metric_engine_channel). */
int metric_engine_nr_scopes(const struct metric_engine *engine, enum metric_scope scope);
int metric_engine_scope_id(const struct metric_engine *engine, enum metric_scope scope, int index);
/* The memory tier (memory_tierN's N) of node, or -1 when it is in none. */
int metric_engine_node_tier(const struct metric_engine *engine, int node);
/* Channel scope i, ordered by socket, node, instance name (natural order) and CPU. */
const struct metric_channel *metric_engine_channel(const struct metric_engine *engine, int index);
/* Value of plan metric i in a scope, as computed into values. */
const struct metric_value *metric_engine_value(const struct metric_engine *engine, const struct metric_values *values,
					       int plan_metric, enum metric_scope scope, int index);
/* Plan index of a metric by name, or -1. */
int metric_plan_find(const struct metric_plan *plan, const char *name);

#endif
