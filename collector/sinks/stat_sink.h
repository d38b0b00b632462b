/* The stat sink: memscope stat's interval lines and final totals (text,
 * CSV or JSON) from the frames and metric values the session hands on. */
#ifndef MEMSCOPE_STAT_SINK_H
#define MEMSCOPE_STAT_SINK_H

#include <stdbool.h>

#include "metrics/aggregate.h"
#include "sinks/sink.h"
#include "sinks/stat_output.h"
#include "sinks/stat_repeat.h"
#include "sinks/stat_threads.h"
#include "util/error.h"

struct lua_engine;

struct stat_sink_options {
	struct stat_output output;      /* format, separator, stream, header repeat; the title is the session's */
	enum aggr_mode aggr;
	const char *const *shown;       /* with metrics: only these events are columns; NULL: every event */
	int nr_shown;
	bool intervals;                 /* a line per frame (-I) */
	struct stat_repeat *repeat;     /* -r N: totals kept per run, printed (means) after the last; or NULL */
	long interval_count;            /* > 0: stop the run after this many interval lines (--interval-count) */
	struct stat_threads *threads;   /* --per-thread: rows from the per-thread series, or NULL */
	const char *node_detail;        /* stat -d: a metric also shown on each node (stat_table_add_node_detail) */
	/* Columns of metrics --lua scripts define: the stat sink then follows the
	 * Lua sink (session_add_sink), which computes them on the same frame. */
	const struct lua_engine *lua;
	const int *lua_metrics;
	int nr_lua_metrics;
};

/* Make sink a stat sink (the options are copied; what they point to must
 * outlive the sink). */
int stat_sink_init(struct sink *sink, const struct stat_sink_options *opt, struct ms_error *err);

#endif
