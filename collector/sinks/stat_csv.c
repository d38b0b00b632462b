#include <stdio.h>

#include "sinks/stat_output.h"

/* One line per (time, scope, event): time,scope,event,value,unit,coverage.
 * Final totals use "total" in the time field. */
static void csv_rows(struct stat_output *o, const char *time_field, const struct aggr_cell *cells)
{
	const struct aggregation *a = o->aggr;
	const char *sep = o->separator;

	if (!o->csv_header_done) {
		fprintf(o->out, "time%sscope%sevent%svalue%sunit%scoverage\n", sep, sep, sep, sep, sep);
		o->csv_header_done = 1;
	}
	for (int r = 0; r < a->nr_rows; r++) {
		char row[64];

		stat_row_label(a, r, row, sizeof(row));
		for (int c = 0; c < a->nr_columns; c++) {
			const struct aggr_cell *cell = &cells[r * a->nr_columns + c];

			fprintf(o->out, "%s%s%s%s%s%s", time_field, sep, row, sep, a->columns[c], sep);
			if (cell->unsupported)
				fprintf(o->out, "<not supported>%s%s%s\n", sep, a->units[c], sep);
			else if (cell->not_applicable)
				fprintf(o->out, "n/a%s%s%s\n", sep, a->units[c], sep);
			else if (!cell->valid)
				fprintf(o->out, "<not counted>%s%s%s\n", sep, a->units[c], sep);
			else
				fprintf(o->out, "%.17g%s%s%s%.4f\n", stat_cell_value(a, c, cell), sep,
					a->units[c], sep, aggr_cell_coverage(cell));
		}
	}
}

void stat_csv_interval(struct stat_output *o, double time_s, const struct aggr_cell *cells)
{
	char time_field[32];

	snprintf(time_field, sizeof(time_field), "%.6f", time_s);
	csv_rows(o, time_field, cells);
}

void stat_csv_totals(struct stat_output *o, double elapsed_s, const struct aggr_cell *cells)
{
	(void)elapsed_s;
	csv_rows(o, "total", cells);
}
