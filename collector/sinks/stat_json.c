#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "sinks/stat_output.h"
#include "sinks/stat_perf_fields.h"
#include "util/number_format.h"

static const char *status_text(const struct stat_cell *cell)
{
	switch (cell->status) {
	case CELL_UNSUPPORTED: return "not supported";
	case CELL_NOT_APPLICABLE: return "not applicable";
	case CELL_NOT_COUNTED: return "not counted";
	default: return NULL;
	}
}

/* {"type": "interval"|"total", "time": s, "interval": s, "aggregation": "node",
 *  "rows": [{"scope": "node0", "node": 0, "events": {"page-faults":
 *           {"value": 123, "raw": 123, "unit": "", "coverage": 1.0}},
 *           "metrics": {"mem.read_bw": {"value": 1.5e9, "unit": "B/s", "coverage": 1.0}}}]} */
json_t *stat_json_rows(const struct stat_table *t)
{
	json_t *rows = json_array();

	for (int r = 0; r < t->nr_rows; r++) {
		json_t *row = json_object(), *events = json_object(), *metrics = json_object();
		char label[64];

		stat_table_row_label(t, r, label, sizeof(label));
		json_object_set_new(row, "scope", json_string(label));
		if (stat_table_row_is_channel(t) || aggr_mode_by_place(t->mode))
			json_object_set_new(row, aggr_mode_name(t->mode), json_string(label));
		else if (t->mode != AGGR_TOTAL)
			json_object_set_new(row, aggr_mode_name(t->mode), json_integer(t->row_keys[r]));
		if (t->row_names)
			json_object_set_new(row, "comm", json_string(t->row_names[r]));
		for (int c = 0; c < t->nr_columns; c++) {
			const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];
			const char *status = status_text(cell);
			json_t *v = json_object();

			if (status) {
				json_object_set_new(v, "value", json_null());
				json_object_set_new(v, "status", json_string(status));
				if (cell->why)
					json_object_set_new(v, "why", json_string(cell->why));
			} else {
				/* Plain counts stay integers; scaled or extrapolated ones are real. */
				json_object_set_new(v, "value", cell->integer ? json_integer((json_int_t)cell->raw)
									      : json_real(cell->value));
				if (c < t->nr_event_columns)
					json_object_set_new(v, "raw", json_integer((json_int_t)cell->raw));
				json_object_set_new(v, "coverage", json_real(cell->coverage));
				if (cell->mixed_slices)
					json_object_set_new(v, "mixed_slices", json_true());
				if (cell->gauge_frames > 1) {
					/* A gauge's total: value is the peak. */
					json_object_set_new(v, "peak", json_real(cell->value));
					json_object_set_new(v, "mean", json_real(cell->gauge_mean));
					json_object_set_new(v, "last", json_real(cell->gauge_last));
				}
			}
			if (stat_table_whole_system(t, c))
				json_object_set_new(v, "whole_system", json_true());
			json_object_set_new(v, "unit", json_string(t->units[c]));
			json_object_set_new(c < t->nr_event_columns ? events : metrics, t->names[c], v);
		}
		json_object_set_new(row, "events", events);
		if (t->nr_columns > t->nr_event_columns)
			json_object_set_new(row, "metrics", metrics);
		else
			json_decref(metrics);
		json_array_append_new(rows, row);
	}
	return rows;
}

static void emit(struct stat_output *o, json_t *obj)
{
	/* As many digits as number_plain keeps: no binary noise. */
	char *text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(NUMBER_DIGITS));

	if (text) {
		fprintf(o->out, "%s\n", text);
		free(text);
	}
	json_decref(obj);
}

json_t *stat_json_perf_object(const struct stat_table *t, const struct perf_fields *f, const double *time_s)
{
	json_t *obj = json_object();

	if (time_s)
		json_object_set_new(obj, "interval", json_real(*time_s));
	if (f->aggr_key)
		json_object_set_new(obj, f->aggr_key, json_string(t->mode == AGGR_CPU ? f->aggr + 3 : f->aggr));
	if (f->aggr_number >= 0)
		json_object_set_new(obj, "aggregate-number", json_integer(f->aggr_number));
	return obj;
}

/* perf's JSON lines are written as perf writes them, "key" : value pairs
 * joined by ", ", which a reader of perf's output may match as text. */
struct perf_line {
	FILE *out;
	int pairs;
};

static void perf_key(struct perf_line *l, const char *key)
{
	fprintf(l->out, "%s\"%s\" : ", l->pairs++ ? ", " : "{", key);
}

static void perf_string(struct perf_line *l, const char *key, const char *value)
{
	perf_key(l, key);
	fputc('"', l->out);
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(l->out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(l->out, "\\u%04x", *p);
		else
			fputc(*p, l->out);
	}
	fputc('"', l->out);
}

/* memscope's keys after perf's, only when they have something to say. */
static void add_notes(struct perf_line *l, const struct stat_table *t, int r, int c)
{
	const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];

	if (stat_table_whole_system(t, c)) {
		perf_key(l, "whole-system");
		fputs("true", l->out);
	}
	if (cell->status == CELL_OK && cell->gauge_frames > 1) {
		perf_string(l, "gauge-total", "peak");
		perf_key(l, "gauge-mean");
		fprintf(l->out, "%f", cell->gauge_mean);
		perf_key(l, "gauge-last");
		fprintf(l->out, "%f", cell->gauge_last);
	}
}

/* perf stat -j: one object per counter (or metric) and row, with perf's keys
 * in perf's order; every line ends with its metric-value and metric-unit
 * (0 and "" where the event has none), as perf's. */
static void perf_objects(struct stat_output *o, const double *time_s, const struct stat_table *t)
{
	for (int k = 0; k < t->nr_rows * t->nr_columns; k++) {
		struct perf_line l = { o->out, 0 };
		struct perf_fields f;
		int r, c;

		perf_line_cell(t, k, &r, &c);
		if (!perf_fields_of(t, r, c, &f))
			continue;
		perf_fields_shadow(t, r, c, o->span_s, "%f", &f);
		if (time_s) {
			perf_key(&l, "interval");
			fprintf(o->out, "%.9f", *time_s);
		}
		if (f.aggr_key)
			perf_string(&l, f.aggr_key, t->mode == AGGR_CPU ? f.aggr + 3 : f.aggr);
		if (f.aggr_number >= 0) {
			perf_key(&l, "aggregate-number");
			fprintf(o->out, "%d", f.aggr_number);
		}
		if (f.has_counter) {
			char value[64];

			if (f.counter[0] == '<')
				snprintf(value, sizeof(value), "%s", f.counter);
			else
				snprintf(value, sizeof(value), "%f", f.value);
			perf_string(&l, "counter-value", value);
		}
		perf_string(&l, "unit", f.unit);
		perf_string(&l, "event", f.event);
		if (f.cgroup)
			perf_string(&l, "cgroup", f.cgroup);
		if (f.noise[0]) {
			perf_key(&l, "variance");
			fprintf(o->out, "%s", f.noise);
		}
		if (f.has_counter) {
			perf_key(&l, "event-runtime");
			fprintf(o->out, "%llu", f.runtime);
		}
		perf_key(&l, "pcnt-running");
		fprintf(o->out, "%s", f.pcnt);
		perf_key(&l, "metric-value");
		if (f.metric_scaled)
			fprintf(o->out, "%f", f.value);
		else
			fprintf(o->out, "%s", f.metric_value[0] ? f.metric_value : "0.000000");
		perf_string(&l, "metric-unit", f.metric_unit);
		add_notes(&l, t, r, c);
		fputs("}\n", o->out);
	}
}

void stat_json_interval(struct stat_output *o, double time_s, double interval_s, const struct stat_table *t)
{
	json_t *obj;

	if (!o->self_describing) {
		perf_objects(o, &time_s, t);
		o->intervals_printed = true;
		return;
	}
	obj = json_object();

	json_object_set_new(obj, "type", json_string("interval"));
	json_object_set_new(obj, "time", json_real(time_s));
	json_object_set_new(obj, "interval", json_real(interval_s));
	json_object_set_new(obj, "aggregation", json_string(aggr_mode_name(t->mode)));
	json_object_set_new(obj, "rows", stat_json_rows(t));
	emit(o, obj);
}

void stat_json_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	json_t *obj;

	if (!o->self_describing) {
		if (!o->intervals_printed || o->summary)
			perf_objects(o, NULL, t);
		return;
	}
	obj = json_object();

	json_object_set_new(obj, "type", json_string("total"));
	json_object_set_new(obj, "elapsed", json_real(elapsed_s));
	json_object_set_new(obj, "aggregation", json_string(aggr_mode_name(t->mode)));
	json_object_set_new(obj, "rows", stat_json_rows(t));
	emit(o, obj);
}
