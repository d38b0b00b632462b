#include <stdio.h>

#include "sinks/stat_output.h"

static const char *status_text(const struct stat_cell *cell)
{
	switch (cell->status) {
	case CELL_UNSUPPORTED: return "<not supported>";
	case CELL_NOT_APPLICABLE: return "n/a";
	case CELL_NOT_COUNTED: return "<not counted>";
	default: return NULL;
	}
}

/* One line per (time, scope, event or metric): time,scope,event,value,unit,coverage.
 * Final totals use "total" in the time field. */
static void csv_rows(struct stat_output *o, const char *time_field, const struct stat_table *t)
{
	const char *sep = o->separator;

	if (!o->csv_header_done) {
		fprintf(o->out, "time%sscope%sevent%svalue%sunit%scoverage\n", sep, sep, sep, sep, sep);
		o->csv_header_done = 1;
	}
	for (int r = 0; r < t->nr_rows; r++) {
		char row[64];

		stat_table_row_label(t, r, row, sizeof(row));
		for (int c = 0; c < t->nr_columns; c++) {
			const struct stat_cell *cell = &t->cells[r * t->nr_columns + c];
			const char *status = status_text(cell);

			fprintf(o->out, "%s%s%s%s%s%s", time_field, sep, row, sep, t->names[c], sep);
			if (status)
				fprintf(o->out, "%s%s%s%s\n", status, sep, t->units[c], sep);
			else if (cell->integer)
				fprintf(o->out, "%llu%s%s%s%.4f\n", (unsigned long long)cell->raw, sep, t->units[c],
					sep, cell->coverage);
			else
				fprintf(o->out, "%.17g%s%s%s%.4f\n", cell->value, sep, t->units[c], sep, cell->coverage);
		}
	}
}

void stat_csv_interval(struct stat_output *o, double time_s, const struct stat_table *t)
{
	char time_field[32];

	snprintf(time_field, sizeof(time_field), "%.6f", time_s);
	csv_rows(o, time_field, t);
}

void stat_csv_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t)
{
	(void)elapsed_s;
	csv_rows(o, "total", t);
}
