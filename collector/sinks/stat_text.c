#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sinks/stat_output.h"

double stat_cell_value(const struct aggregation *a, int col, const struct aggr_cell *cell)
{
	return cell->value * (a->scales[col] > 0 ? a->scales[col] : 1.0);
}

void stat_row_label(const struct aggregation *a, int row, char *buf, size_t size)
{
	if (a->row_keys[row] < 0)
		snprintf(buf, size, "total");
	else
		snprintf(buf, size, "%s%d", aggr_mode_name(a->mode), a->row_keys[row]);
}

void stat_output_interval(struct stat_output *o, double time_s, double interval_s,
			  const struct aggr_cell *cells)
{
	switch (o->format) {
	case STAT_CSV: stat_csv_interval(o, time_s, cells); break;
	case STAT_JSON: stat_json_interval(o, time_s, interval_s, cells); break;
	default: stat_text_interval(o, time_s, cells); break;
	}
	fflush(o->out);
}

void stat_output_totals(struct stat_output *o, double elapsed_s, const struct aggr_cell *cells)
{
	switch (o->format) {
	case STAT_CSV: stat_csv_totals(o, elapsed_s, cells); break;
	case STAT_JSON: stat_json_totals(o, elapsed_s, cells); break;
	default: stat_text_totals(o, elapsed_s, cells); break;
	}
	fflush(o->out);
}

/* 1234567 -> "1,234,567"; fractional values keep two decimals. */
static void format_number(double value, char *buf, size_t size)
{
	char digits[64];
	int len, out = 0;
	double whole = floor(fabs(value) + 0.5);

	if (fabs(value) < 1e15 && fabs(value - round(value)) > 1e-9 && fabs(value) < 1e6) {
		snprintf(buf, size, "%.2f", value);
		return;
	}
	len = snprintf(digits, sizeof(digits), "%.0f", whole);
	if (value < 0 && (size_t)out + 1 < size)
		buf[out++] = '-';
	for (int i = 0; i < len && (size_t)out + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
}

static void format_cell(const struct aggregation *a, int col, const struct aggr_cell *cell,
			char *buf, size_t size)
{
	char number[64];
	double coverage = aggr_cell_coverage(cell);

	if (cell->unsupported) {
		snprintf(buf, size, "<not supported>");
		return;
	}
	if (cell->not_applicable) {
		snprintf(buf, size, "n/a");
		return;
	}
	if (!cell->valid) {
		snprintf(buf, size, "<not counted>");
		return;
	}
	format_number(stat_cell_value(a, col, cell), number, sizeof(number));
	if (coverage < 0.9999)
		snprintf(buf, size, "%s (%.1f%%)", number, coverage * 100.0);
	else
		snprintf(buf, size, "%s", number);
}

static int column_width(const struct aggregation *a, int col)
{
	int width = (int)strlen(a->columns[col]);

	if (a->units[col][0])
		width += (int)strlen(a->units[col]) + 3;
	return width < 16 ? 16 : width;
}

static void print_header(struct stat_output *o)
{
	const struct aggregation *a = o->aggr;

	fprintf(o->out, "#%11s", "time");
	if (a->mode != AGGR_TOTAL)
		fprintf(o->out, " %8s", aggr_mode_name(a->mode));
	for (int c = 0; c < a->nr_columns; c++) {
		char name[300];

		if (a->units[c][0])
			snprintf(name, sizeof(name), "%s (%s)", a->columns[c], a->units[c]);
		else
			snprintf(name, sizeof(name), "%s", a->columns[c]);
		fprintf(o->out, " %*s", column_width(a, c), name);
	}
	fputc('\n', o->out);
}

void stat_text_interval(struct stat_output *o, double time_s, const struct aggr_cell *cells)
{
	const struct aggregation *a = o->aggr;

	if (o->lines_since_header == 0 || (o->header_every > 0 && o->lines_since_header >= o->header_every)) {
		print_header(o);
		o->lines_since_header = 0;
	}
	for (int r = 0; r < a->nr_rows; r++) {
		fprintf(o->out, "%12.3f", time_s);
		if (a->mode != AGGR_TOTAL)
			fprintf(o->out, " %8d", a->row_keys[r]);
		for (int c = 0; c < a->nr_columns; c++) {
			char cell[128];

			format_cell(a, c, &cells[r * a->nr_columns + c], cell, sizeof(cell));
			fprintf(o->out, " %*s", column_width(a, c), cell);
		}
		fputc('\n', o->out);
		o->lines_since_header++;
	}
}

void stat_text_totals(struct stat_output *o, double elapsed_s, const struct aggr_cell *cells)
{
	const struct aggregation *a = o->aggr;

	fprintf(o->out, "\n Memory-system counter stats for %s:\n\n", o->title);
	for (int r = 0; r < a->nr_rows; r++) {
		char row[64];

		stat_row_label(a, r, row, sizeof(row));
		for (int c = 0; c < a->nr_columns; c++) {
			char cell[128];

			format_cell(a, c, &cells[r * a->nr_columns + c], cell, sizeof(cell));
			if (a->mode != AGGR_TOTAL)
				fprintf(o->out, " %-10s", row);
			fprintf(o->out, " %22s  %s%s%s\n", cell, a->units[c][0] ? a->units[c] : "",
				a->units[c][0] ? " " : "", a->columns[c]);
		}
	}
	fprintf(o->out, "\n %22.9f  seconds time elapsed\n\n", elapsed_s);
}
