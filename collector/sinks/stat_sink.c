#include "sinks/stat_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sinks/stat_table.h"
#include "util/report.h"

struct stat_sink {
	struct stat_sink_options opt;
	const struct sink_setup *setup;
	struct aggregation aggr;
	struct aggr_cell *interval_cells;
	struct aggr_cell *total_cells;
	struct stat_table table;
	/* Catalog metrics that are gauges (levels, such as a cgroup's memory):
	 * their totals are the peak, mean and last of the per-frame values, one
	 * per table cell, not the value of the run's summed frame. */
	bool has_gauge_metrics;
	bool *level_column;       /* per table column: a gauge metric */
	struct gauge_total {
		double peak, sum, last;
		uint64_t frames;
	} *gauge_totals;
	long intervals_printed;
	bool opened;
};

static int stat_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct stat_sink *st = sink->priv;
	size_t cells;

	st->setup = setup;
	st->opt.output.title = setup->title;
	if (aggr_mode_by_place(st->opt.aggr) &&
	    (!setup->topo || aggr_topology_fits(setup->topo, err) < 0)) {
		if (!setup->topo)
			ms_error_set(err, "--per-%s needs the CPUs' topology, which this input does not give",
				     aggr_mode_name(st->opt.aggr));
		return -1;
	}
	if (aggregation_init(&st->aggr, setup->table, st->opt.aggr, setup->topo) < 0)
		goto oom;
	st->opened = true;
	/* With -m, a metric's raw inputs stay hidden unless -e named them. */
	if (stat_table_init(&st->table, &st->aggr, st->opt.shown, st->opt.nr_shown, setup->plan, setup->engine,
			    st->opt.lua, st->opt.lua_metrics, st->opt.nr_lua_metrics) < 0)
		goto oom;
	if (st->opt.node_detail &&
	    stat_table_add_node_detail(&st->table, setup->plan, setup->engine, st->opt.node_detail) < 0)
		goto oom;
	if (setup->topo && stat_table_set_row_cpus(&st->table, setup->topo) < 0)
		goto oom;
	if (setup->task_target && stat_table_mark_whole_system(&st->table, setup->table, setup->plan) < 0)
		goto oom;
	if (!(st->level_column = calloc((size_t)st->table.nr_columns + 1, sizeof(bool))))
		goto oom;
	for (int i = 0, c = st->table.nr_event_columns; setup->plan && setup->engine && i < setup->plan->nr_metrics; i++) {
		if (!setup->plan->metrics[i].requested)
			continue;
		st->level_column[c] = metric_plan_level(setup->plan, i, setup->table);
		st->has_gauge_metrics |= st->level_column[c++];
	}
	if (st->has_gauge_metrics &&
	    !(st->gauge_totals = calloc((size_t)(st->table.nr_rows * st->table.nr_columns) + 1, sizeof(*st->gauge_totals))))
		goto oom;
	cells = (size_t)(st->aggr.nr_rows * st->aggr.nr_columns);
	st->interval_cells = calloc(cells + 1, sizeof(struct aggr_cell));
	st->total_cells = calloc(cells + 1, sizeof(struct aggr_cell));
	if (!st->interval_cells || !st->total_cells)
		goto oom;
	aggregation_clear(&st->aggr, st->total_cells);
	return 0;
oom:
	ms_error_set(err, "out of memory");
	return -1;
}

/* The table from cells and, with metrics, from values; Lua metrics from the
 * scripts' latest frame (the whole run's only when whole_run). */
static void fill_table(struct stat_sink *st, const struct aggr_cell *cells, const struct metric_values *values,
		       bool whole_run)
{
	stat_table_set_events(&st->table, &st->aggr, cells);
	if (st->setup->engine && values)
		stat_table_set_metrics(&st->table, st->setup->plan, st->setup->engine, values);
	if (st->opt.nr_lua_metrics)
		stat_table_set_lua_metrics(&st->table, st->opt.lua, whole_run);
}

static bool gauge_column(const struct stat_sink *st, int c)
{
	return st->level_column[c];
}

/* A frame's values of the gauge metrics, into their peak, sum and last. */
static void add_gauge_metrics(struct stat_sink *st, const struct metric_values *values)
{
	struct stat_table *t = &st->table;

	stat_table_set_metrics(t, st->setup->plan, st->setup->engine, values);
	for (int c = t->nr_event_columns; c < t->nr_columns - t->nr_lua_columns; c++) {
		if (!gauge_column(st, c))
			continue;
		for (int r = 0; r < t->nr_rows; r++) {
			const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];
			struct gauge_total *g = &st->gauge_totals[r * t->nr_columns + c];

			if (cell->status != CELL_OK)
				continue;
			if (!g->frames || cell->value > g->peak)
				g->peak = cell->value;
			g->sum += cell->value;
			g->last = cell->value;
			g->frames++;
		}
	}
}

/* The totals of gauge metrics: the peak (named), with mean and last. */
static void set_gauge_totals(struct stat_sink *st)
{
	struct stat_table *t = &st->table;

	for (int k = 0; k < t->nr_rows * t->nr_columns; k++) {
		const struct gauge_total *g = &st->gauge_totals[k];
		struct stat_cell *cell = &t->cells[k];

		if (!g->frames || !gauge_column(st, k % t->nr_columns))
			continue;
		cell->status = CELL_OK;
		cell->why = NULL;
		cell->value = g->peak;
		cell->gauge_frames = g->frames;
		cell->gauge_mean = g->sum / (double)g->frames;
		cell->gauge_last = g->last;
	}
}

/* --interval-count: the sink asks the run to stop after its N-th line; the
 * totals then cover those N intervals (the frames after them are not its). */
static int interval_count_reached(struct stat_sink *st)
{
	return st->opt.interval_count > 0 && ++st->intervals_printed >= st->opt.interval_count;
}

static int stat_frame(struct sink *sink, const struct sink_frame *f)
{
	struct stat_sink *st = sink->priv;
	const struct frame *frame = f->frame;

	/* Without -I only the totals are printed: a frame's own cells are not
	 * needed (adding them up was a quarter of stat --input FILE). */
	if (st->opt.intervals) {
		aggregation_clear(&st->aggr, st->interval_cells);
		aggregation_add(&st->aggr, frame, st->interval_cells);
	}
	aggregation_add(&st->aggr, frame, st->total_cells);
	if (st->has_gauge_metrics && f->metrics)
		add_gauge_metrics(st, f->metrics);
	if (st->opt.threads && stat_threads_frame(st->opt.threads, st->setup->table, frame) < 0) {
		ms_warn("out of memory for the per-thread rows");
		return 1;
	}
	/* The last frame is usually a partial interval; it is printed too, so the
	 * interval lines always add up to the totals. */
	if (!st->opt.intervals || (frame->interval_ns == 0 && f->last))
		return 0;
	if (st->opt.threads) {
		if (stat_threads_fill(st->opt.threads, false) == 0)
			stat_output_interval(&st->opt.output, (double)frame->time_ns / 1e9,
					     (double)frame->interval_ns / 1e9, &st->opt.threads->table);
		return interval_count_reached(st);
	}
	fill_table(st, st->interval_cells, f->metrics, true);
	stat_output_interval(&st->opt.output, (double)frame->time_ns / 1e9, (double)frame->interval_ns / 1e9,
			     &st->table);
	return interval_count_reached(st);
}

static void stat_end(struct sink *sink, const struct sink_end *end)
{
	struct stat_sink *st = sink->priv;
	/* Live: the wall time, as perf's (with --control, disabled spans too). */
	double elapsed = (double)(end->elapsed_ns ? end->elapsed_ns : end->total->interval_ns) / 1e9;

	if (st->opt.threads) {
		if (stat_threads_fill(st->opt.threads, true) < 0) {
			ms_warn("out of memory for the per-thread rows");
			return;
		}
		stat_output_totals(&st->opt.output, elapsed, &st->opt.threads->table);
		return;
	}
	/* Lua metrics were computed on the latest frame: they are the whole
	 * run's when that frame was the only one. */
	fill_table(st, st->total_cells, end->total_metrics, end->frames == 1);
	if (st->has_gauge_metrics)
		set_gauge_totals(st);
	if (st->opt.repeat) {
		struct ms_error err = { "" };

		if (stat_repeat_add(st->opt.repeat, &st->table, elapsed, &err) < 0) {
			ms_report(&err);
			return;
		}
		if (!stat_repeat_last(st->opt.repeat))
			return;
		stat_repeat_apply(st->opt.repeat, &st->table);
		elapsed = st->opt.repeat->elapsed_mean;
		st->opt.output.elapsed_sd = st->opt.repeat->elapsed_sd;
	}
	stat_output_totals(&st->opt.output, elapsed, &st->table);
}

static void stat_idle(struct sink *sink)
{
	struct stat_sink *st = sink->priv;

	if (st->opt.output.batched)
		stat_output_flush(&st->opt.output);
}

static void stat_close(struct sink *sink)
{
	struct stat_sink *st = sink->priv;

	if (!st)
		return;
	if (st->opened) {
		aggregation_free(&st->aggr);
		stat_table_free(&st->table);
	}
	free(st->interval_cells);
	free(st->total_cells);
	free(st->gauge_totals);
	free(st->level_column);
	free(st);
	sink->priv = NULL;
}

static const struct sink_ops stat_sink_ops = {
	.name = "stat",
	.open = stat_open,
	.frame = stat_frame,
	.idle = stat_idle,
	.end = stat_end,
	.close = stat_close,
};

int stat_sink_init(struct sink *sink, const struct stat_sink_options *opt, struct ms_error *err)
{
	struct stat_sink *st = calloc(1, sizeof(*st));

	memset(sink, 0, sizeof(*sink));
	if (!st) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	st->opt = *opt;
	sink->ops = &stat_sink_ops;
	sink->priv = st;
	/* Printing is quick: a deep queue rides out a slow terminal. */
	sink->queue_length = 32;
	/* A terminal sees every interval as it ends; a file or a pipe gets
	 * the intervals of one wake-up in one write. */
	sink->prompt = isatty(fileno(st->opt.output.out)) == 1;
	st->opt.output.batched = !sink->prompt;
	return 0;
}
