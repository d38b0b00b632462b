#include <stdio.h>

#include "sinks/stat_output.h"
#include "sinks/stat_perf_fields.h"
#include "util/csv.h"
#include "util/number_format.h"

static const char *status_text(const struct stat_cell *cell)
{
	return stat_cell_status_text(cell->status);
}

/* --self-describing: a header, then one line per (time, scope, event or
 * metric): time,scope,event,value,unit,coverage; "total" as the time of the
 * totals. */
static void self_describing_rows(struct stat_output *o, const char *time_field, const struct stat_table *t)
{
	const char *sep = o->separator;

	if (!o->csv_header_done) {
		const char *header[] = { "time", "scope", "event", "value", "unit", "coverage", "note" };

		csv_write_row(o->out, sep, header, 7);
		o->csv_header_done = 1;
	}
	for (int r = 0; r < t->nr_rows; r++) {
		char row[96];

		stat_table_row_label(t, r, row, sizeof(row));
		for (int c = 0; c < t->nr_columns; c++) {
			const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];
			const char *status = status_text(cell);
			char value[64], coverage[32], note[32];
			const char *fields[7] = { time_field, row, t->names[c], value, t->units[c], coverage,
						  stat_cell_note(t, r, c, note, sizeof(note)) };

			coverage[0] = '\0';
			if (status)
				snprintf(value, sizeof(value), "%s", status);
			else if (cell->integer)
				snprintf(value, sizeof(value), "%llu", (unsigned long long)cell->raw);
			else
				number_plain(value, sizeof(value), cell->value);
			if (!status)
				snprintf(coverage, sizeof(coverage), "%.4f", cell->coverage);
			csv_write_row(o->out, sep, fields, 7);
		}
	}
}

const char *stat_cell_note(const struct stat_table *t, int row, int col, char *buf, size_t size)
{
	const struct stat_cell *cell = &t->cells[row * t->nr_columns + col];
	bool whole = stat_table_whole_system(t, col), peak = cell->status == CELL_OK && cell->gauge_frames > 1;

	snprintf(buf, size, "%s%s%s", whole ? "whole-system" : "", whole && peak ? " " : "", peak ? "peak" : "");
	return buf;
}

/* perf stat -x SEP: [time,][aggr,[nr,]]value,unit,event,[variance%,]runtime,pcnt,metric-value,metric-unit */
static void perf_rows(struct stat_output *o, const char *time_field, const struct stat_table *t)
{
	const char *sep = o->separator;

	for (int k = 0; k < t->nr_rows * t->nr_columns; k++) {
		struct perf_fields f;
		const char *fields[13];
		char nr[16], runtime[32], noise[20], note[32];
		int n = 0, r, c;

		perf_line_cell(t, k, &r, &c);
		if (!perf_fields_of(t, r, c, &f))
			continue;
		perf_fields_shadow(t, r, c, o->span_s, "%.3f", &f);
		if (time_field)
			fields[n++] = time_field;
		if (f.aggr_key)
			fields[n++] = f.aggr;
		if (f.aggr_number >= 0) {
			snprintf(nr, sizeof(nr), "%d", f.aggr_number);
			fields[n++] = nr;
		}
		number_u64(runtime, sizeof(runtime), f.runtime);
		fields[n++] = f.counter;
		fields[n++] = f.unit;
		fields[n++] = f.event;
		if (f.cgroup)
			fields[n++] = f.cgroup;
		if (f.has_noise) {
			/* -r N: perf's spread field, after the event. */
			snprintf(noise, sizeof(noise), "%s%s", f.noise, f.noise[0] ? "%" : "");
			fields[n++] = noise;
		}
		fields[n++] = f.has_counter ? runtime : "";
		fields[n++] = f.pcnt;
		fields[n++] = f.metric_value;
		fields[n++] = f.metric_unit;
		/* memscope's one field after perf's, only when it has something to say. */
		if (*stat_cell_note(t, r, c, note, sizeof(note)))
			fields[n++] = note;
		csv_write_row(o->out, sep, fields, n);
	}
}

void stat_csv_interval(struct stat_output *o, double time_s, const struct stat_table *t)
{
	char time_field[32];

	if (o->self_describing) {
		snprintf(time_field, sizeof(time_field), "%.6f", time_s);
		self_describing_rows(o, time_field, t);
		return;
	}
	snprintf(time_field, sizeof(time_field), "%.9f", time_s);
	perf_rows(o, time_field, t);
	o->intervals_printed = true;
}

void stat_csv_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	(void)elapsed_s;
	if (o->self_describing)
		self_describing_rows(o, "total", t);
	else if (!o->intervals_printed || (o->summary && o->no_csv_summary))
		perf_rows(o, NULL, t);
	else if (o->summary)
		perf_rows(o, "         summary", t);   /* perf's: in the time field, right-aligned */
}
