/* Folding series into what stat prints: one row per scope (the whole target,
 * a CPU, a socket or a node) and one column per event. */
#ifndef MEMSCOPE_AGGREGATE_H
#define MEMSCOPE_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/topology.h"
#include "sampler/frame.h"

/* AGGR_THREAD rows come from the eBPF source's per-thread maps (stat_threads.h),
 * not from series labels. */
/* AGGR_CHANNEL rows are the metric engine's memory channels (metrics only:
 * the series are not grouped by channel); AGGR_INSTANCE shows the same rows,
 * which also hold the instances of plugin series (a resctrl group, a cgroup). */
/* AGGR_CORE and AGGR_DIE rows gather the per-CPU series of a core (or die) by
 * the host's topology; their keys pack (socket, die, core) so that they sort in
 * perf's order (aggr_place_key). */
/* AGGR_TIER rows are the metric engine's memory tiers (metrics only, like
 * AGGR_CHANNEL): each sums the nodes the kernel lists in the tier. */
enum aggr_mode { AGGR_TOTAL, AGGR_CPU, AGGR_SOCKET, AGGR_NODE, AGGR_THREAD, AGGR_CHANNEL, AGGR_INSTANCE,
		 AGGR_CORE, AGGR_DIE, AGGR_CLUSTER, AGGR_CACHE, AGGR_TIER };
/* AGGR_CLUSTER and AGGR_CACHE (perf's --per-cluster, --per-cache: the CPUs
 * sharing a last-level cache) are keyed as AGGR_CORE, by (socket, die, id);
 * a cache's key also holds its level. */
#define AGGR_KEY_MAX_CACHE_ID 8191
/* Rows of CPUs grouped by their place in the topology (core, die, cluster, cache). */
bool aggr_mode_by_place(enum aggr_mode mode);

/* Largest ids a core/die key holds: sockets < 512, dies < 64, cores < 65536. */
#define AGGR_KEY_MAX_SOCKET 511
#define AGGR_KEY_MAX_DIE 63
#define AGGR_KEY_MAX_CORE 65535

struct aggr_cell {
	double value;           /* sum of multiplexing-scaled counts, in counts (not scaled units) */
	uint64_t raw;           /* sum of raw counts */
	uint64_t enabled_ns;
	uint64_t running_ns;
	/* Gauges: value and raw are the peak of the cell's per-frame sums (a
	 * gauge's values are levels: adding them over frames means nothing);
	 * gauge_sum / gauge_frames is their mean, gauge_last the last. */
	bool gauge;
	double gauge_sum, gauge_last;
	uint64_t gauge_frames;
	bool valid;             /* at least one series read, none failed */
	bool unsupported;       /* the event could not be opened at all */
	bool not_applicable;    /* no series of this event has this scope (e.g. not split by node) */
};

enum { GAUGE_FRAME_NONE, GAUGE_FRAME_READ, GAUGE_FRAME_PARTIAL };

struct aggregation {
	enum aggr_mode mode;
	int nr_columns;
	const char **columns;   /* event names (owned by the series table) */
	const char **units;
	const char **cgroups;   /* stat -G: the cgroup each column counts in (series label), or NULL */
	double *scales;
	bool *gauges;           /* per column: its series are gauges */
	int nr_gauge_columns;
	double *gauge_frame;    /* nr_rows x nr_columns scratch: a frame's sum of a gauge cell */
	unsigned char *gauge_read; /* per cell this frame: GAUGE_FRAME_NONE, _READ (every series), _PARTIAL */
	int nr_rows;
	int *row_keys;          /* cpu/socket/node number; -1 for the total row */
	int *series_row;        /* per series: row, or -1 for every row (unsupported events) */
	int *series_col;
	bool *series_unavailable;
	bool *cell_mapped;      /* nr_rows x nr_columns: some series lands in the cell */
	int nr_series;
};

const char *aggr_mode_name(enum aggr_mode mode);   /* "total", "cpu", "socket", "node", "core", "die", "cluster", "cache" */
/* The row key of a CPU's core (AGGR_CORE) or die (AGGR_DIE); -1 when its ids
 * are beyond the AGGR_KEY_MAX_* limits (aggr_topology_fits says which). */
int aggr_place_key(enum aggr_mode mode, const struct cpu_place *place);
/* perf's name of a core or die row key: "S0-D1-C3", "S0-D1". */
void aggr_key_label(enum aggr_mode mode, int key, char *buf, size_t size);
/* 0 when every CPU of topo has a core/die key, else -1 with err naming the CPU. */
int aggr_topology_fits(const struct topology *topo, struct ms_error *err);
/* topo: the CPUs' places for AGGR_CORE and AGGR_DIE (series of CPUs it does
 * not know, or every series when it is NULL, are in no row); else unused. */
int aggregation_init(struct aggregation *a, const struct series_table *table, enum aggr_mode mode,
		     const struct topology *topo);
void aggregation_free(struct aggregation *a);

/* cells: nr_rows x nr_columns. clear, then add frames (add twice = sum for
 * counters; for gauges, the peak, mean and last of each frame's sum). */
void aggregation_clear(const struct aggregation *a, struct aggr_cell *cells);
void aggregation_add(const struct aggregation *a, const struct frame *frame, struct aggr_cell *cells);

/* running/enabled of a cell in [0,1]. */
double aggr_cell_coverage(const struct aggr_cell *cell);

#endif
