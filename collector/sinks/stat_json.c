#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>

#include "sinks/stat_output.h"

/* {"type": "interval"|"total", "time": s, "interval": s, "aggregation": "node",
 *  "rows": [{"scope": "node0", "node": 0, "events": {"page-faults":
 *           {"value": 123, "unit": "", "coverage": 1.0}}}]} */
static json_t *rows_json(const struct aggregation *a, const struct aggr_cell *cells)
{
	json_t *rows = json_array();

	for (int r = 0; r < a->nr_rows; r++) {
		json_t *row = json_object(), *events = json_object();
		char label[64];

		stat_row_label(a, r, label, sizeof(label));
		json_object_set_new(row, "scope", json_string(label));
		if (a->mode != AGGR_TOTAL)
			json_object_set_new(row, aggr_mode_name(a->mode), json_integer(a->row_keys[r]));
		for (int c = 0; c < a->nr_columns; c++) {
			const struct aggr_cell *cell = &cells[r * a->nr_columns + c];
			json_t *ev = json_object();

			if (cell->unsupported) {
				json_object_set_new(ev, "value", json_null());
				json_object_set_new(ev, "status", json_string("not supported"));
			} else if (cell->not_applicable) {
				json_object_set_new(ev, "value", json_null());
				json_object_set_new(ev, "status", json_string("not applicable"));
			} else if (!cell->valid) {
				json_object_set_new(ev, "value", json_null());
				json_object_set_new(ev, "status", json_string("not counted"));
			} else {
				/* Plain counts stay integers; scaled or extrapolated ones are real. */
				if (a->scales[c] == 1.0 && cell->value == (double)cell->raw)
					json_object_set_new(ev, "value", json_integer((json_int_t)cell->raw));
				else
					json_object_set_new(ev, "value", json_real(stat_cell_value(a, c, cell)));
				json_object_set_new(ev, "raw", json_integer((json_int_t)cell->raw));
				json_object_set_new(ev, "coverage", json_real(aggr_cell_coverage(cell)));
			}
			json_object_set_new(ev, "unit", json_string(a->units[c]));
			json_object_set_new(events, a->columns[c], ev);
		}
		json_object_set_new(row, "events", events);
		json_array_append_new(rows, row);
	}
	return rows;
}

static void emit(struct stat_output *o, json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(17));

	if (text) {
		fprintf(o->out, "%s\n", text);
		free(text);
	}
	json_decref(obj);
}

void stat_json_interval(struct stat_output *o, double time_s, double interval_s, const struct aggr_cell *cells)
{
	json_t *obj = json_object();

	json_object_set_new(obj, "type", json_string("interval"));
	json_object_set_new(obj, "time", json_real(time_s));
	json_object_set_new(obj, "interval", json_real(interval_s));
	json_object_set_new(obj, "aggregation", json_string(aggr_mode_name(o->aggr->mode)));
	json_object_set_new(obj, "rows", rows_json(o->aggr, cells));
	emit(o, obj);
}

void stat_json_totals(struct stat_output *o, double elapsed_s, const struct aggr_cell *cells)
{
	json_t *obj = json_object();

	json_object_set_new(obj, "type", json_string("total"));
	json_object_set_new(obj, "elapsed", json_real(elapsed_s));
	json_object_set_new(obj, "aggregation", json_string(aggr_mode_name(o->aggr->mode)));
	json_object_set_new(obj, "rows", rows_json(o->aggr, cells));
	emit(o, obj);
}
