/* perf stat --metric-only: the metrics alone, one column each. Text: a
 * header then a line per row (with -I, per interval); CSV: perf's header
 * line ([time,][aggregation,cpus,]metric,...) once, then the values, each
 * field followed by the separator as perf writes them; JSON: one object per
 * row (and interval) with the metrics as keys and their values as strings. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/stat_output.h"
#include "sinks/stat_perf_fields.h"
#include "util/csv.h"
#include "util/number_format.h"

/* "mem.read_bw (B/s)": the metric and its unit, the header and JSON key. */
static void metric_title(const struct stat_table *t, int col, char *buf, size_t size)
{
	double scale;
	const char *unit;

	if (perf_metric_scale(t, col, &scale, &unit))
		snprintf(buf, size, "%s (%s)", t->names[col], unit);
	else if (t->units[col][0])
		snprintf(buf, size, "%s (%s)", t->names[col], t->units[col]);
	else
		snprintf(buf, size, "%s", t->names[col]);
}

/* A metric with perf's ScaleUnit as perf prints it ("45.0"): true when scaled. */
static bool scaled_value(const struct stat_table *t, int col, const struct stat_cell *cell, char *buf, size_t size)
{
	double scale;
	const char *unit;

	if (cell->status != CELL_OK || !perf_metric_scale(t, col, &scale, &unit))
		return false;
	snprintf(buf, size, "%.1f", cell->value * scale);
	return true;
}

/* Plain value for CSV and JSON; "" when there is none (perf's empty metric). */
static void plain_value(const struct stat_table *t, int col, const struct stat_cell *cell, char *buf, size_t size)
{
	if (cell->status != CELL_OK)
		buf[0] = '\0';
	else if (!scaled_value(t, col, cell, buf, size))
		number_plain(buf, size, cell->value);
}

static void text_value(const struct stat_table *t, int col, const struct stat_cell *cell, char *buf, size_t size)
{
	const char *status = stat_cell_status_text(cell->status);

	if (scaled_value(t, col, cell, buf, size))
		return;
	if (status)
		snprintf(buf, size, "%s", status);
	else
		number_human(buf, size, cell->value, 0);
}

static int text_width(const struct stat_table *t, int col)
{
	char title[300];

	metric_title(t, col, title, sizeof(title));
	return strlen(title) < 16 ? 16 : (int)strlen(title);
}

static void text_header(struct stat_output *o, const struct stat_table *t, bool with_time)
{
	fputc('#', o->out);
	if (with_time)
		fprintf(o->out, "%11s", "time");
	if (t->mode != AGGR_TOTAL)
		fprintf(o->out, " %-24s", aggr_mode_name(t->mode));
	for (int c = t->nr_event_columns; c < t->nr_columns; c++) {
		char title[300];

		metric_title(t, c, title, sizeof(title));
		fprintf(o->out, " %*s", text_width(t, c), title);
	}
	fputc('\n', o->out);
}

static void text_rows(struct stat_output *o, const double *time_s, const struct stat_table *t)
{
	for (int r = 0; r < t->nr_rows; r++) {
		char label[96];

		fprintf(o->out, time_s ? "%12.3f" : " ", time_s ? *time_s : 0.0);
		if (t->mode != AGGR_TOTAL) {
			stat_table_row_label(t, r, label, sizeof(label));
			fprintf(o->out, " %-24s", label);
		}
		for (int c = t->nr_event_columns; c < t->nr_columns; c++) {
			char value[128];

			text_value(t, c, &t->cells[r * t->nr_columns + c], value, sizeof(value));
			fprintf(o->out, " %*s", text_width(t, c), value);
		}
		fputc('\n', o->out);
	}
}

/* CSV: [time,][aggregation,cpus,]metric,...; each field then the separator. */
static void csv_header(struct stat_output *o, const struct stat_table *t, bool with_time)
{
	struct perf_fields f;

	perf_fields_row(t, 0, &f);
	if (with_time)
		fprintf(o->out, "time%s", o->separator);
	if (f.aggr_key)
		fprintf(o->out, "%s%s", f.aggr_key, o->separator);
	if (f.aggr_number >= 0)
		fprintf(o->out, "cpus%s", o->separator);
	for (int c = t->nr_event_columns; c < t->nr_columns; c++) {
		char title[300];

		metric_title(t, c, title, sizeof(title));
		csv_write_field(o->out, title, o->separator);
		fputs(o->separator, o->out);
	}
	fputc('\n', o->out);
}

static void csv_rows(struct stat_output *o, const double *time_s, const struct stat_table *t)
{
	for (int r = 0; r < t->nr_rows; r++) {
		struct perf_fields f;

		perf_fields_row(t, r, &f);
		if (time_s)
			fprintf(o->out, "%.9f%s", *time_s, o->separator);
		if (f.aggr_key) {
			csv_write_field(o->out, f.aggr, o->separator);
			fputs(o->separator, o->out);
		}
		if (f.aggr_number >= 0)
			fprintf(o->out, "%d%s", f.aggr_number, o->separator);
		for (int c = t->nr_event_columns; c < t->nr_columns; c++) {
			char value[64];

			plain_value(t, c, &t->cells[r * t->nr_columns + c], value, sizeof(value));
			fprintf(o->out, "%s%s", value, o->separator);
		}
		fputc('\n', o->out);
	}
}

/* One "key" : value pair as perf writes its JSON (spaces around the colon,
 * ", " between pairs); jansson encodes the key and the value. */
static void json_pair(FILE *out, bool *first, const char *key, json_t *value)
{
	json_t *k = json_string(key);
	char *key_text = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
	char *value_text = json_dumps(value, JSON_ENCODE_ANY | JSON_REAL_PRECISION(NUMBER_DIGITS));

	if (key_text && value_text) {
		fprintf(out, "%s%s : %s", *first ? "" : ", ", key_text, value_text);
		*first = false;
	}
	free(key_text);
	free(value_text);
	json_decref(k);
}

/* perf's --metric-only -j: a line per row (and interval), {"interval" : T,
 * the aggregation's keys, "metric" : "value", ...}, written as perf writes
 * it; a row without any value is {"metric-value" : "none"}, as perf's. */
static void json_rows(struct stat_output *o, const double *time_s, const struct stat_table *t)
{
	for (int r = 0; r < t->nr_rows; r++) {
		struct perf_fields f;
		const char *key;
		json_t *obj, *value;
		bool first = true, any = false;

		perf_fields_row(t, r, &f);
		obj = stat_json_perf_object(t, &f, NULL);
		fputc('{', o->out);
		if (time_s)
			fprintf(o->out, "\"interval\" : %.9f", *time_s), first = false;
		json_object_foreach(obj, key, value)
			json_pair(o->out, &first, key, value);
		json_decref(obj);
		for (int c = t->nr_event_columns; c < t->nr_columns; c++) {
			char title[300], text[64];
			json_t *v;

			plain_value(t, c, &t->cells[r * t->nr_columns + c], text, sizeof(text));
			if (!text[0])
				continue;   /* perf leaves a metric without a value out */
			metric_title(t, c, title, sizeof(title));
			v = json_string(text);
			json_pair(o->out, &first, title, v);
			json_decref(v);
			any = true;
		}
		if (!any)
			fprintf(o->out, "%s\"metric-value\" : \"none\"", first ? "" : ", ");
		fputs("}\n", o->out);
	}
}

/* Without -m, perf's --metric-only shows the events' shadow metrics: a
 * table of them (a column per event that has one, titled by the event and
 * the unit per second or CPUs, unscaled) stands in for the metrics. Its
 * names, units and cells are the caller's to free (shadow_free). */
static bool shadow_table(const struct stat_output *o, const struct stat_table *t, struct stat_table *out)
{
	int *cols = calloc((size_t)t->nr_columns + 1, sizeof(int)), n = 0;
	const char **units = calloc((size_t)t->nr_columns + 1, sizeof(char *));

	memset(out, 0, sizeof(*out));
	if (!cols || !units)
		goto fail;
	for (int c = 0; c < t->nr_event_columns; c++) {
		struct perf_fields f;

		for (int r = 0; r < t->nr_rows; r++)
			if (perf_fields_of(t, r, c, &f)) {
				perf_fields_shadow(t, r, c, o->span_s, "%f", &f);
				if (f.shadow_plain_unit) {
					units[n] = f.shadow_plain_unit;
					cols[n++] = c;
					break;
				}
			}
	}
	*out = *t;
	out->nr_columns = n;
	out->nr_event_columns = 0;
	out->names = calloc((size_t)n + 1, sizeof(char *));
	out->units = units;
	out->cgroups = NULL;
	out->noise = NULL;
	out->perf_scales = NULL;   /* the shadow metrics have no ScaleUnit */
	out->perf_units = NULL;
	out->cells = calloc((size_t)(n * t->nr_rows) + 1, sizeof(*out->cells));
	if (!out->names || !out->cells)
		goto fail;
	for (int k = 0; k < n; k++) {
		out->names[k] = t->names[cols[k]];
		for (int r = 0; r < t->nr_rows; r++) {
			struct stat_cell *cell = &out->cells[r * n + k];
			struct perf_fields f;

			cell->status = CELL_NOT_COUNTED;
			if (!perf_fields_of(t, r, cols[k], &f))
				continue;
			perf_fields_shadow(t, r, cols[k], o->span_s, "%f", &f);
			if (!f.shadow_plain_unit)
				continue;
			cell->status = CELL_OK;
			cell->value = f.shadow_plain;
			cell->coverage = 1.0;
		}
	}
	free(cols);
	return true;
fail:
	free(cols);
	free(out->names);
	free(out->cells);
	free(units);
	memset(out, 0, sizeof(*out));
	return false;
}

static void shadow_free(struct stat_table *t)
{
	free(t->names);
	free(t->units);
	free(t->cells);
}

static void interval_of(struct stat_output *o, double time_s, const struct stat_table *t);
static void totals_of(struct stat_output *o, double elapsed_s, const struct stat_table *t);

void stat_metric_only_interval(struct stat_output *o, double time_s, const struct stat_table *t)
{
	struct stat_table shadows;

	if (t->nr_columns > t->nr_event_columns) {
		interval_of(o, time_s, t);
	} else if (shadow_table(o, t, &shadows)) {
		interval_of(o, time_s, &shadows);
		shadow_free(&shadows);
	}
}

void stat_metric_only_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	struct stat_table shadows;

	if (t->nr_columns > t->nr_event_columns) {
		totals_of(o, elapsed_s, t);
	} else if (shadow_table(o, t, &shadows)) {
		totals_of(o, elapsed_s, &shadows);
		shadow_free(&shadows);
	}
}

static void interval_of(struct stat_output *o, double time_s, const struct stat_table *t)
{
	switch (o->format) {
	case STAT_CSV:
		if (!o->csv_header_done) {
			csv_header(o, t, true);
			o->csv_header_done = 1;
		}
		csv_rows(o, &time_s, t);
		break;
	case STAT_JSON:
		json_rows(o, &time_s, t);
		break;
	default:
		if (o->lines_since_header == 0 || (o->header_every > 0 && o->lines_since_header >= o->header_every)) {
			text_header(o, t, true);
			o->lines_since_header = 0;
		}
		text_rows(o, &time_s, t);
		o->lines_since_header += t->nr_rows;
		break;
	}
	o->intervals_printed = true;
}

static void totals_of(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	switch (o->format) {
	case STAT_CSV:
		/* As perf stat -I: the interval lines are the output. */
		if (o->intervals_printed)
			return;
		csv_header(o, t, false);
		csv_rows(o, NULL, t);
		return;
	case STAT_JSON:
		if (!o->intervals_printed)
			json_rows(o, NULL, t);
		return;
	default:
		fprintf(o->out, "\n Performance counter stats for %s:\n\n", o->title);
		text_header(o, t, false);
		text_rows(o, NULL, t);
		fprintf(o->out, "\n %22.9f  seconds time elapsed\n\n", elapsed_s);
		return;
	}
}
