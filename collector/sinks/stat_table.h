/* What one stat line shows: rows (the whole target, or one CPU, socket or
 * node each) by columns (events, then metrics). Events come from the
 * aggregation of series; metrics from the metric engine. The printers read
 * only this table. */
#ifndef MEMSCOPE_STAT_TABLE_H
#define MEMSCOPE_STAT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/aggregate.h"

struct lua_engine;
struct metric_engine;
struct metric_plan;
struct metric_values;

enum stat_cell_status {
	CELL_OK,
	CELL_UNSUPPORTED,       /* the event could not be opened at all */
	CELL_NOT_APPLICABLE,    /* no value for this row's scope */
	CELL_NOT_COUNTED,       /* a read failed this interval, or a metric's inputs are missing */
};

/* How a cell with no number is written in every text output ("<not supported>",
 * "n/a", "<not counted>", perf's spellings); NULL for CELL_OK. */
const char *stat_cell_status_text(enum stat_cell_status status);

struct stat_cell {
	double value;           /* in the column's unit (scale applied) */
	double coverage;        /* 0..1: share of the interval counted */
	uint64_t raw;           /* raw count (events) */
	uint64_t running_ns;    /* time its counters ran, summed over them (events) */
	bool integer;           /* a plain count: print without decimals */
	bool mixed_slices;      /* a metric whose inputs were counted in different time slices */
	bool gauge;             /* a level (a gauge's cell), not a count: no rate of it is shown */
	/* A gauge's cell over several frames: value is the peak of its per-frame
	 * values, gauge_mean and gauge_last the mean and the last (gauge_frames:
	 * how many; 0 for counters and one-frame cells). */
	uint64_t gauge_frames;
	double gauge_mean, gauge_last;
	enum stat_cell_status status;
	const char *why;        /* static reason when not OK (metrics), or NULL */
};

struct stat_table {
	enum aggr_mode mode;
	int nr_rows;
	int *row_keys;          /* cpu/socket/node number or channel index, -1 for the total row */
	char (*row_names)[16];  /* threads (AGGR_THREAD): each row's name (comm), else NULL */
	int *row_cpus;          /* CPUs each row adds up (perf's aggregate-number), or NULL: unknown */
	/* Per row: its row in the aggregation stat_table_init was given (-1:
	 * none), found once by key; aggr_nr_rows is that aggregation's nr_rows. */
	int *aggr_row;
	int aggr_nr_rows;
	const struct metric_engine *engine; /* names the channel rows; may be NULL */
	int nr_columns;
	int nr_event_columns;   /* columns [0, nr_event_columns) are events, the rest metrics */
	int nr_lua_columns;     /* the last nr_lua_columns are metrics defined by Lua scripts */
	const int *lua_metrics; /* their lua_engine metric indices */
	const char **names;
	const char **units;
	/* Per column: a metric's scale_unit (catalog), how perf's shapes print
	 * it: the value times perf_scales[c] with perf_units[c] ("%"); 0 and
	 * NULL where it has none. NULL arrays: no column has one. */
	/* stat -d: a metric's value on each node as columns of their own
	 * ("proc.pages_alloc@node0"), after the metrics and before Lua's. */
	int nr_detail_columns;
	int detail_metric;         /* its plan index */
	char (*detail_names)[64];
	double *perf_scales;
	const char **perf_units;
	const char **cgroups;      /* per column: the cgroup an event counts in (stat -G), or NULL */
	/* Per column: counts the whole machine although the target is a command
	 * or PIDs (stat_table_mark_whole_system); NULL: no column does. */
	bool *whole_system;
	int *event_source_column;  /* per event column: the aggregation's column */
	struct stat_cell *cells;   /* nr_rows x nr_columns */
	/* stat -r N totals: the cells are means of N runs, noise[i] the spread
	 * of cell i in percent of its mean (NaN: none); NULL and 0 otherwise. */
	const double *noise;
	int runs;
};

/* Rows: the aggregation's keys, plus the engine's node/socket ids when
 * metrics are shown; columns: the aggregation's events (only those named in
 * events[0..nr_events) when events is not NULL: a metric's raw inputs are not
 * shown unless asked for), then the plan's requested metrics, then the Lua
 * metrics named by index in lua_metrics. engine/plan/lua may be NULL. */
int stat_table_init(struct stat_table *t, const struct aggregation *aggr, const char *const *events,
		    int nr_events, const struct metric_plan *plan, const struct metric_engine *engine,
		    const struct lua_engine *lua, const int *lua_metrics, int nr_lua_metrics);
void stat_table_free(struct stat_table *t);
/* stat -d's placement per node: plan metric `metric` (requested) also as a
 * column per node scope of the engine, "METRIC@nodeN", in the totals of the
 * whole system (no other aggregation). Call right after stat_table_init; 0
 * also when there is nothing to add, -1 when out of memory. */
int stat_table_add_node_detail(struct stat_table *t, const struct metric_plan *plan,
			       const struct metric_engine *engine, const char *metric);
struct series_table;
/* The target is a command or PIDs: mark the columns whose values count the
 * whole machine (their series, or a metric's inputs, are whole_system).
 * -1 when out of memory. */
int stat_table_mark_whole_system(struct stat_table *t, const struct series_table *table, const struct metric_plan *plan);
/* Does a column count the whole machine for a command or PID target? */
bool stat_table_whole_system(const struct stat_table *t, int col);
/* Does any column? (the text then ends with a footnote) */
bool stat_table_any_whole_system(const struct stat_table *t);
/* A thread row as perf names it: "comm-tid" ("tid" alone without a name). */
void stat_table_thread_label(const struct stat_table *t, int row, char *buf, size_t size);

struct topology;
/* How many CPUs each row adds up (node, socket: its CPUs; CPU: 1). */
int stat_table_set_row_cpus(struct stat_table *t, const struct topology *topo);

/* Event columns from aggregated cells (aggr rows are matched by key). */
void stat_table_set_events(struct stat_table *t, const struct aggregation *aggr, const struct aggr_cell *cells);
/* Metric columns from values the engine computed. */
void stat_table_set_metrics(struct stat_table *t, const struct metric_plan *plan,
			    const struct metric_engine *engine, const struct metric_values *values);

/* Lua metric columns from the engine's last frame. `whole_run` is false when
 * the values cover only the last of several frames: they are then not shown
 * as the run's totals. */
void stat_table_set_lua_metrics(struct stat_table *t, const struct lua_engine *lua, bool whole_run);

/* "total", "node1", ... or a channel's name: its PMU instance, with @cpuN
 * where the instance is a channel on several CPUs (Intel's uncore_imc_0@cpu4). */
void stat_table_row_label(const struct stat_table *t, int row, char *buf, size_t size);
/* Are the rows memory channels (--per-channel)? Outputs then name them
 * rather than number them. */
bool stat_table_row_is_channel(const struct stat_table *t);

#endif
