/* memscope stat's text as perf stat prints it: one line per event (and row),
 * "value unit event # shadow-metric", under "Performance counter stats for
 * ..."; with -I one such line per event and interval, after the time. The
 * column table (one line per interval, a column per event) is --columns
 * (stat_text.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sinks/stat_output.h"
#include "sinks/stat_perf_fields.h"
#include "util/number_format.h"

/* perf's widths: the value, the unit and the event's name. */
#define VALUE_WIDTH 18
#define UNIT_WIDTH 4
#define NAME_WIDTH 32

/* A core, die... label ("S0-D1-C3") with its last id padded to 8, as perf's
 * "S%d-D%d-C%-8d". */
static void place_label(FILE *out, const char *label)
{
	size_t len = strlen(label), digits = 0;

	while (digits < len && label[len - 1 - digits] >= '0' && label[len - 1 - digits] <= '9')
		digits++;
	fprintf(out, "%-*s ", (int)(len - digits + 8), label);
}

/* The row's columns before the value: "CPU3", "N0  2", "S0-D0-C1  1", "comm-tid". */
static void row_prefix(FILE *out, const struct stat_table *t, int row)
{
	struct perf_fields f;
	const char *dash;

	perf_fields_row(t, row, &f);
	switch (t->mode) {
	case AGGR_TOTAL:
		return;
	case AGGR_CPU:
		fprintf(out, "CPU%-7d ", t->row_keys[row]);
		return;
	case AGGR_NODE:
	case AGGR_SOCKET:
		fprintf(out, "%c%-5d ", t->mode == AGGR_NODE ? 'N' : 'S', t->row_keys[row]);
		break;
	case AGGR_THREAD:
		dash = strrchr(f.aggr, '-');
		if (dash)
			fprintf(out, "%16.*s-%-8s ", (int)(dash - f.aggr), f.aggr, dash + 1);
		else
			fprintf(out, "%25s ", f.aggr);
		return;
	case AGGR_CORE:
	case AGGR_DIE:
	case AGGR_CLUSTER:
	case AGGR_CACHE:
		place_label(out, f.aggr);
		break;
	default:
		fprintf(out, "%-24s ", f.aggr);
		break;
	}
	if (f.aggr_number >= 0)
		fprintf(out, "%4d ", f.aggr_number);
}

/* A number as perf's big-num form shows it (thousands separated) in width. */
static void value_text(FILE *out, const struct stat_output *o, const struct stat_cell *cell, const char *unit,
		       double value)
{
	char text[64];

	/* perf's: times (msec) always with 2 decimals, counts without. */
	if (!strcmp(unit, "msec")) {
		snprintf(text, sizeof(text), "%.2f", value);
	} else if (cell->integer || floor(value) == value) {
		if (o->no_big_num)
			snprintf(text, sizeof(text), "%.0f", value);
		else
			number_human(text, sizeof(text), value, 1);
	} else {
		snprintf(text, sizeof(text), "%.2f", value);
	}
	fprintf(out, "%*s ", VALUE_WIDTH, text);
}

static void cell_line(struct stat_output *o, const char *time_prefix, const struct stat_table *t, int r, int c)
{
	const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];
	struct perf_fields f;
	FILE *out = o->out;

	if (!perf_fields_of(t, r, c, &f))
		return;
	perf_fields_shadow(t, r, c, o->span_s, "%8.3f", &f);
	fputs(time_prefix, out);
	row_prefix(out, t, r);
	if (f.is_metric) {
		/* A metric (-m) has no counter: perf's place for it is after '#'. */
		char value[64];

		if (f.metric_scaled)
			snprintf(value, sizeof(value), "%s", f.metric_value);
		else
			number_human(value, sizeof(value), cell->value, 0);
		fprintf(out, "%*s # %8s %s  %s", VALUE_WIDTH + UNIT_WIDTH + NAME_WIDTH + 1, "",
			cell->status == CELL_OK ? value : f.counter, f.metric_scaled ? f.metric_unit : t->units[c],
			t->names[c]);
	} else {
		if (cell->status != CELL_OK)
			fprintf(out, "%*s ", VALUE_WIDTH, f.counter);
		else
			value_text(out, o, cell, f.unit, f.value);
		/* The name is padded only where something follows it. */
		fprintf(out, "%-*s %-*s", UNIT_WIDTH, f.unit, f.cgroup || f.shadow_unit[0] ? NAME_WIDTH : 0, f.event);
		if (f.cgroup)
			fprintf(out, " %s", f.cgroup);
		if (f.shadow_unit[0])
			fprintf(out, " # %s %s", f.metric_value, f.shadow_unit);
	}
	/* memscope's notes after perf's fields: the whole machine's value, a gauge's total named. */
	if (stat_table_whole_system(t, c))
		fputs("  *", out);
	if (cell->status == CELL_OK && cell->gauge_frames > 1 && !time_prefix[0])
		stat_text_gauge_note(o, cell);
	if (cell->status != CELL_OK && cell->why)
		fprintf(out, "  (%s)", cell->why);
	else if (cell->status == CELL_OK && cell->coverage < 0.9999)
		fprintf(out, "  (%.2f%%)", cell->coverage * 100.0);
	if (t->noise && !isnan(t->noise[r * t->nr_columns + c]))
		fprintf(out, "  ( +-%6.2f%% )", t->noise[r * t->nr_columns + c]);
	fputc('\n', out);
}

/* perf's order: per CPU and per thread, each event over the rows; per
 * socket, node, core..., each row with its events. */
static void lines(struct stat_output *o, const char *time_prefix, const struct stat_table *t)
{
	for (int k = 0; k < t->nr_rows * t->nr_columns; k++) {
		int r, c;

		perf_line_cell(t, k, &r, &c);
		cell_line(o, time_prefix, t, r, c);
	}
}

static void interval_header(FILE *out, enum aggr_mode mode)
{
	switch (mode) {
	case AGGR_TOTAL: fputs("#           time             counts unit events\n", out); break;
	case AGGR_CPU: fputs("#           time CPU                    counts unit events\n", out); break;
	case AGGR_NODE: fputs("#           time node   cpus             counts unit events\n", out); break;
	case AGGR_SOCKET: fputs("#           time socket cpus             counts unit events\n", out); break;
	case AGGR_DIE: fputs("#           time die          cpus             counts unit events\n", out); break;
	case AGGR_CORE: fputs("#           time core            cpus             counts unit events\n", out); break;
	case AGGR_CLUSTER: fputs("#           time cluster         cpus             counts unit events\n", out); break;
	case AGGR_CACHE: fputs("#           time cache           cpus             counts unit events\n", out); break;
	case AGGR_THREAD: fputs("#           time             comm-pid                  counts unit events\n", out);
		break;
	default: fputs("#           time row                          cpus             counts unit events\n", out);
		break;
	}
}

void stat_perf_text_interval(struct stat_output *o, double time_s, const struct stat_table *t)
{
	char prefix[48];

	/* perf's header: before the first interval and every 25th after. */
	if (o->lines_since_header == 0 || o->lines_since_header >= 25) {
		if (!o->intervals_printed && stat_table_any_whole_system(t))
			fputs("# * counted for the whole machine (a kernel statistic, an uncore PMU or a plugin's group), "
			      "not only for the command or processes measured\n", o->out);
		interval_header(o->out, t->mode);
		o->lines_since_header = 0;
	}
	o->lines_since_header++;
	snprintf(prefix, sizeof(prefix), "%16.9f ", time_s);
	lines(o, prefix, t);
	o->intervals_printed = true;
}

void stat_output_elapsed(struct stat_output *o, double elapsed_s)
{
	const struct rusage *ru = o->child_rusage;

	fprintf(o->out, "\n %17.9f seconds time elapsed\n\n", elapsed_s);
	if (!ru)
		return;
	/* perf: the command's rusage from wait4, to the microsecond, then a blank line more. */
	fprintf(o->out, " %17.9f seconds user\n %17.9f seconds sys\n\n\n",
		(double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6,
		(double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6);
}

void stat_perf_text_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	/* As perf -I: the intervals are the output (--summary: and the totals). */
	if (o->intervals_printed && !o->summary)
		return;
	if (t->runs > 1)
		fprintf(o->out, "\n Performance counter stats for %s (%d runs):\n\n", o->title, t->runs);
	else
		fprintf(o->out, "\n Performance counter stats for %s:\n\n", o->title);
	lines(o, "", t);
	if (stat_table_any_whole_system(t))
		stat_output_whole_system_note(o);
	if (t->runs > 1)
		fprintf(o->out, "\n %17.9f +- %.9f seconds time elapsed  ( +-%6.2f%% )\n\n", elapsed_s, o->elapsed_sd,
			elapsed_s > 0 ? 100.0 * o->elapsed_sd / elapsed_s : 0.0);
	else
		stat_output_elapsed(o, elapsed_s);
}
