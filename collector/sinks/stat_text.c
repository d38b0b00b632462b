#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sinks/stat_output.h"
#include "util/number_format.h"

/* Each output is written whole under the stream's lock: another sink's
 * thread (a Lua script's print) may write to the same stream. */
void stat_output_interval(struct stat_output *o, double time_s, double interval_s, const struct stat_table *t)
{
	flockfile(o->out);
	o->span_s = interval_s;
	switch (o->metric_only ? STAT_METRIC_ONLY : o->format) {
	case STAT_METRIC_ONLY: stat_metric_only_interval(o, time_s, t); break;
	case STAT_CSV: stat_csv_interval(o, time_s, t); break;
	case STAT_JSON: stat_json_interval(o, time_s, interval_s, t); break;
	default:
		if (o->columns)
			stat_text_interval(o, time_s, t);
		else
			stat_perf_text_interval(o, time_s, t);
		break;
	}
	if (!o->batched)
		fflush(o->out);
	funlockfile(o->out);
}

void stat_output_flush(struct stat_output *o)
{
	fflush(o->out);
}

void stat_output_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	flockfile(o->out);
	o->span_s = elapsed_s;
	switch (o->metric_only ? STAT_METRIC_ONLY : o->format) {
	case STAT_METRIC_ONLY: stat_metric_only_totals(o, elapsed_s, t); break;
	case STAT_CSV: stat_csv_totals(o, elapsed_s, t); break;
	case STAT_JSON: stat_json_totals(o, elapsed_s, t); break;
	default:
		if (o->columns)
			stat_text_totals(o, elapsed_s, t);
		else
			stat_perf_text_totals(o, elapsed_s, t);
		break;
	}
	fflush(o->out);
	funlockfile(o->out);
}

void stat_cell_text(const struct stat_cell *cell, char *buf, size_t size)
{
	const char *status = stat_cell_status_text(cell->status);
	char number[64];

	if (status) {
		snprintf(buf, size, "%s", status);
		return;
	}
	number_human(number, sizeof(number), cell->value, cell->integer);
	if (cell->coverage < 0.9999)
		snprintf(buf, size, "%s (%.1f%%%s)", number, cell->coverage * 100.0, cell->mixed_slices ? ", mixed" : "");
	else
		snprintf(buf, size, "%s%s", number, cell->mixed_slices ? " (mixed)" : "");
}

/* stat -G: the cgroup an event column counts in, or NULL. */
static const char *column_cgroup(const struct stat_table *t, int col)
{
	return t->cgroups && col < t->nr_event_columns ? t->cgroups[col] : NULL;
}

static int column_width(const struct stat_table *t, int col)
{
	int width = (int)strlen(t->names[col]);

	if (t->units[col][0])
		width += (int)strlen(t->units[col]) + 3;
	if (column_cgroup(t, col))
		width += (int)strlen(column_cgroup(t, col)) + 3;
	if (stat_table_whole_system(t, col))
		width += 2;
	return width < 16 ? 16 : width;
}

/* Width of the row column of interval lines: channel names, perf's S0-D0-C0, numbers. */
static int row_width(const struct stat_table *t)
{
	return stat_table_row_is_channel(t) || t->mode == AGGR_THREAD ? 24 : t->mode == AGGR_CORE ? 14
		: t->mode == AGGR_DIE ? 10 : aggr_mode_by_place(t->mode) ? 16 : 8;
}

static void print_header(struct stat_output *o, const struct stat_table *t)
{
	fprintf(o->out, "#%11s", "time");
	if (t->mode != AGGR_TOTAL)
		fprintf(o->out, " %*s", row_width(t), t->mode == AGGR_THREAD ? "thread" : aggr_mode_name(t->mode));
	for (int c = 0; c < t->nr_columns; c++) {
		char name[300];

		if (t->units[c][0])
			snprintf(name, sizeof(name), "%s (%s)", t->names[c], t->units[c]);
		else
			snprintf(name, sizeof(name), "%s", t->names[c]);
		if (column_cgroup(t, c))
			snprintf(name + strlen(name), sizeof(name) - strlen(name), " [%s]", column_cgroup(t, c));
		if (stat_table_whole_system(t, c))
			snprintf(name + strlen(name), sizeof(name) - strlen(name), " *");
		fprintf(o->out, " %*s", column_width(t, c), name);
	}
	fputc('\n', o->out);
}

void stat_text_interval(struct stat_output *o, double time_s, const struct stat_table *t)
{
	if (o->lines_since_header == 0 || (o->header_every > 0 && o->lines_since_header >= o->header_every)) {
		print_header(o, t);
		o->lines_since_header = 0;
	}
	for (int r = 0; r < t->nr_rows; r++) {
		fprintf(o->out, "%12.3f", time_s);
		if (t->mode == AGGR_THREAD) {
			char name[64];

			stat_table_thread_label(t, r, name, sizeof(name));
			fprintf(o->out, " %*s", row_width(t), name);
		} else if (stat_table_row_is_channel(t) || aggr_mode_by_place(t->mode)) {
			char name[64];

			stat_table_row_label(t, r, name, sizeof(name));
			fprintf(o->out, " %*s", row_width(t), name);
		} else if (t->mode != AGGR_TOTAL) {
			fprintf(o->out, " %8d", t->row_keys[r]);
		}
		for (int c = 0; c < t->nr_columns; c++) {
			char cell[128];

			stat_cell_text(&t->cells[r * t->nr_columns + c], cell, sizeof(cell));
			fprintf(o->out, " %*s", column_width(t, c), cell);
		}
		fputc('\n', o->out);
		o->lines_since_header++;
	}
}

/* A gauge's total is the peak of its values over the run, named, with the
 * mean and the last beside it: a level read after the target ended (the
 * last) says little about the run. */
void stat_text_gauge_note(struct stat_output *o, const struct stat_cell *cell)
{
	char mean[64], last[64];

	/* Large means read best as whole numbers, as the peak and last are. */
	if (fabs(cell->gauge_mean) >= 100)
		number_human(mean, sizeof(mean), round(cell->gauge_mean), true);
	else
		number_human(mean, sizeof(mean), cell->gauge_mean, false);
	number_human(last, sizeof(last), cell->gauge_last, cell->gauge_last == floor(cell->gauge_last));
	fprintf(o->out, "  (peak of %llu samples; mean %s, last %s)", (unsigned long long)cell->gauge_frames, mean,
		last);
}

void stat_output_whole_system_note(struct stat_output *o)
{
	fputs("\n * counted for the whole machine (a kernel statistic, an uncore PMU or a plugin's group), "
	      "not only for the command or processes measured\n", o->out);
}

void stat_text_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	if (t->runs > 1)
		fprintf(o->out, "\n Memory-system counter stats for %s (%d runs):\n\n", o->title, t->runs);
	else
		fprintf(o->out, "\n Memory-system counter stats for %s:\n\n", o->title);
	for (int r = 0; r < t->nr_rows; r++) {
		char row[64];

		if (t->mode == AGGR_THREAD)
			stat_table_thread_label(t, r, row, sizeof(row));
		else
			stat_table_row_label(t, r, row, sizeof(row));
		for (int c = 0; c < t->nr_columns; c++) {
			const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];
			char text[128];

			stat_cell_text(cell, text, sizeof(text));
			if (t->mode != AGGR_TOTAL)
				fprintf(o->out, " %-*s",
					stat_table_row_is_channel(t) || t->mode == AGGR_THREAD ? 24
					: t->mode == AGGR_CORE ? 14 : 10, row);
			fprintf(o->out, " %22s  %s%s%s", text, t->units[c][0] ? t->units[c] : "",
				t->units[c][0] ? " " : "", t->names[c]);
			if (column_cgroup(t, c))
				/* perf's column: the cgroup after the event's name. */
				fprintf(o->out, "%*s%s", (int)(strlen(t->names[c]) < 25 ? 26 - strlen(t->names[c]) : 1),
					"", column_cgroup(t, c));
			if (stat_table_whole_system(t, c))
				fputs("  *", o->out);
			if (cell->status == CELL_OK && cell->gauge_frames > 1)
				stat_text_gauge_note(o, cell);
			if (cell->status != CELL_OK && cell->why)
				fprintf(o->out, "  (%s)", cell->why);
			if (t->noise && !isnan(t->noise[r * t->nr_columns + c]))
				fprintf(o->out, "  ( +-%6.2f%% )", t->noise[r * t->nr_columns + c]);
			fputc('\n', o->out);
		}
	}
	if (stat_table_any_whole_system(t))
		stat_output_whole_system_note(o);
	if (t->runs > 1)
		fprintf(o->out, "\n %22.9f +- %.9f seconds time elapsed  ( +-%6.2f%% )\n\n", elapsed_s, o->elapsed_sd,
			elapsed_s > 0 ? 100.0 * o->elapsed_sd / elapsed_s : 0.0);
	else
		fprintf(o->out, "\n %22.9f  seconds time elapsed\n\n", elapsed_s);
}
