/* Multiplexing, aggregation and what stat prints for it: scaled values,
 * coverage shown below 100%, unsupported and not-applicable cells. Frames are
 * built by hand here because this machine has no PMU that multiplexes. */
#include <stdlib.h>

#include "metrics/aggregate.h"
#include "check.h"
#include "sampler/frame.h"
#include "sinks/stat_output.h"
#include "sinks/stat_table.h"

static int add(struct series_table *t, const char *name, int cpu, int node)
{
	struct series_labels l;

	series_labels_init(&l);
	l.cpu = cpu;
	l.node = node;
	l.socket = node;
	return series_table_add(t, name, "", 1.0, SERIES_COUNTER, &l);
}

static void scaling(void)
{
	struct sample s = { .value = 1000, .enabled_ns = 100, .running_ns = 25, .valid = true };

	CHECK_NEAR(sample_scaled(&s), 4000.0, 1e-9);
	CHECK_NEAR(sample_coverage(&s), 0.25, 1e-12);
	s.running_ns = 100;
	CHECK_NEAR(sample_scaled(&s), 1000.0, 1e-9);
	CHECK_NEAR(sample_coverage(&s), 1.0, 1e-12);
	s.enabled_ns = s.running_ns = 0;  /* nothing known: no extrapolation */
	CHECK_NEAR(sample_scaled(&s), 1000.0, 1e-9);
}

static char *print(struct stat_output *o, const struct aggregation *a, const struct aggr_cell *cells,
		   bool totals)
{
	char *text = NULL;
	size_t size = 0;
	struct stat_table table;

	CHECK_EQ_INT(stat_table_init(&table, a, NULL, 0, NULL, NULL, NULL, NULL, 0), 0);
	CHECK_EQ_INT(table.nr_rows, a->nr_rows);
	CHECK_EQ_INT(table.nr_columns, a->nr_columns);
	stat_table_set_events(&table, a, cells);
	o->out = open_memstream(&text, &size);
	if (totals)
		stat_output_totals(o, 1.0, &table);
	else
		stat_output_interval(o, 0.5, 0.5, &table);
	stat_table_free(&table);
	fclose(o->out);
	return text;
}

static void per_node_with_multiplexing(void)
{
	struct series_table t = { 0 };
	struct frame f;
	struct aggregation a;
	struct aggr_cell cells[8];
	struct stat_output o = { 0 };
	char *text;
	int unsupported;

	/* Two CPUs on node 0, one on node 1; "mux" ran a quarter of the time on cpu2. */
	add(&t, "loads", 0, 0);
	add(&t, "loads", 1, 0);
	add(&t, "loads", 2, 1);
	add(&t, "mux", 2, 1);
	unsupported = add(&t, "cycles", LABEL_NONE, LABEL_NONE);
	t.series[unsupported].unavailable = strdup("no PMU");
	CHECK_EQ_INT(frame_init(&f, t.nr), 0);
	f.samples[0] = (struct sample){ 100, 10, 10, true };
	f.samples[1] = (struct sample){ 50, 10, 10, true };
	f.samples[2] = (struct sample){ 7, 10, 10, true };
	f.samples[3] = (struct sample){ 1000, 100, 25, true };
	f.samples[4] = (struct sample){ 0, 0, 0, false };

	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_NODE), 0);
	CHECK_EQ_INT(a.nr_rows, 2);
	CHECK_EQ_INT(a.nr_columns, 3);
	CHECK_EQ_INT(a.row_keys[0], 0);
	CHECK_EQ_INT(a.row_keys[1], 1);
	aggregation_clear(&a, cells);
	aggregation_add(&a, &f, cells);
	CHECK_NEAR(cells[0 * 3 + 0].value, 150, 1e-9);       /* node0 loads */
	CHECK_NEAR(cells[1 * 3 + 0].value, 7, 1e-9);         /* node1 loads */
	CHECK_NEAR(cells[1 * 3 + 1].value, 4000, 1e-9);      /* node1 mux, scaled */
	CHECK(cells[0 * 3 + 1].not_applicable);              /* mux has no node0 series */
	CHECK(cells[0 * 3 + 2].unsupported && cells[1 * 3 + 2].unsupported);

	o.format = STAT_TEXT;
	o.title = "'test'";
	text = print(&o, &a, cells, false);
	CHECK_CONTAINS(text, "4,000 (25.0%)");
	CHECK_CONTAINS(text, "n/a");
	CHECK_CONTAINS(text, "<not supported>");
	free(text);
	text = print(&o, &a, cells, true);
	CHECK_CONTAINS(text, "Memory-system counter stats for 'test'");
	CHECK_CONTAINS(text, " node1               4,000 (25.0%)  mux\n");
	free(text);

	o.format = STAT_CSV;
	o.self_describing = true;
	snprintf(o.separator, sizeof(o.separator), ";");
	text = print(&o, &a, cells, true);
	CHECK_CONTAINS(text, "time;scope;event;value;unit;coverage\n");
	CHECK_CONTAINS(text, "total;node1;mux;4000;;0.2500\n");
	CHECK_CONTAINS(text, "total;node0;mux;n/a;;\n");
	CHECK_CONTAINS(text, "total;node0;cycles;<not supported>;;\n");
	free(text);

	o.format = STAT_JSON;
	text = print(&o, &a, cells, false);
	CHECK_CONTAINS(text, "\"type\":\"interval\"");
	CHECK_CONTAINS(text, "\"mux\":{\"value\":4000.0,\"raw\":1000,\"coverage\":0.25");
	CHECK_CONTAINS(text, "\"cycles\":{\"value\":null,\"status\":\"not supported\"");
	free(text);

	/* perf stat's forms: a row per counter and node, no line where a value has
	 * no meaning (mux on node0), <not supported> where perf says so. */
	o.self_describing = false;
	o.format = STAT_CSV;
	text = print(&o, &a, cells, true);
	CHECK_CONTAINS(text, "N1;1;4000;;mux;");
	CHECK_CONTAINS(text, ";25.00;;\n");
	CHECK_CONTAINS(text, "N0;1;<not supported>;;cycles;");
	CHECK(!strstr(text, "N0;1;n/a") && !strstr(text, "time;scope"));
	free(text);
	o.format = STAT_JSON;
	o.intervals_printed = false;
	text = print(&o, &a, cells, false);
	CHECK_CONTAINS(text, "{\"interval\":0.5,\"node\":\"N1\",\"aggregate-number\":1,\"counter-value\":\"4000\","
		       "\"unit\":\"\",\"event\":\"mux\",\"event-runtime\":");
	CHECK_CONTAINS(text, "\"pcnt-running\":25.0}");
	free(text);

	/* Totals of two frames are sums, and coverage is over the summed times. */
	aggregation_add(&a, &f, cells);
	CHECK_NEAR(cells[1 * 3 + 1].value, 8000, 1e-9);
	CHECK_NEAR(aggr_cell_coverage(&cells[1 * 3 + 1]), 0.25, 1e-12);

	aggregation_free(&a);
	frame_free(&f);
	series_table_free(&t);
}

int main(void)
{
	scaling();
	per_node_with_multiplexing();
	return check_summary("test_stat_output");
}
