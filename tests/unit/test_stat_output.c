/* Multiplexing, aggregation and what stat prints for it: scaled values,
 * coverage shown below 100%, unsupported and not-applicable cells. Frames are
 * built by hand here because this machine has no PMU that multiplexes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics/aggregate.h"
#include "check.h"
#include "host/topology.h"
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

	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_NODE, NULL), 0);
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
	o.columns = true;
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

	/* perf's text: a line per event and node after the time, perf's widths,
	 * multiplexing as perf's (25.00%), no line where a value has no meaning;
	 * after intervals no totals (perf -I), else perf's title and elapsed line. */
	o.columns = false;
	o.lines_since_header = 0;
	text = print(&o, &a, cells, false);
	CHECK_CONTAINS(text, "#           time node   cpus             counts unit events\n");
	CHECK_CONTAINS(text, "     0.500000000 N1        1              4,000      mux  (25.00%)\n");
	CHECK_CONTAINS(text, "     0.500000000 N0        1    <not supported>      cycles\n");
	CHECK(!strstr(text, "n/a") && !strstr(text, "0.500000000 N0        1                    mux"));
	free(text);
	text = print(&o, &a, cells, true);
	CHECK(text && !*text);
	free(text);
	o.intervals_printed = false;
	text = print(&o, &a, cells, true);
	CHECK_CONTAINS(text, "\n Performance counter stats for 'test':\n\nN0        1                150      loads\n");
	CHECK_CONTAINS(text, "\nN1        1              4,000      mux  (25.00%)\n");
	CHECK_CONTAINS(text, "\n\n       1.000000000 seconds time elapsed\n\n");
	free(text);
	o.intervals_printed = false;

	o.format = STAT_CSV;
	o.self_describing = true;
	snprintf(o.separator, sizeof(o.separator), ";");
	text = print(&o, &a, cells, true);
	CHECK_CONTAINS(text, "time;scope;event;value;unit;coverage;note\n");
	CHECK_CONTAINS(text, "total;node1;mux;4000;;0.2500;\n");
	CHECK_CONTAINS(text, "total;node0;mux;n/a;;;\n");
	CHECK_CONTAINS(text, "total;node0;cycles;<not supported>;;;\n");
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
	/* perf's spacing and "%f" counter values; no task-clock: no shadow metric. */
	CHECK_CONTAINS(text, "{\"interval\" : 0.500000000, \"node\" : \"N1\", \"aggregate-number\" : 1, "
		       "\"counter-value\" : \"4000.000000\", \"unit\" : \"\", \"event\" : \"mux\", \"event-runtime\" : ");
	CHECK_CONTAINS(text, "\"pcnt-running\" : 25.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}");
	free(text);

	/* Totals of two frames are sums, and coverage is over the summed times. */
	aggregation_add(&a, &f, cells);
	CHECK_NEAR(cells[1 * 3 + 1].value, 8000, 1e-9);
	CHECK_NEAR(aggr_cell_coverage(&cells[1 * 3 + 1]), 0.25, 1e-12);

	aggregation_free(&a);
	frame_free(&f);
	series_table_free(&t);
}

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the file's directory */
	for (char *p = strchr(path + strlen(root) + 1, '/'); p; p = strchr(p + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A sysfs tree of 2 sockets x 2 dies x 2 cores x 2 threads in Linux's SMT
 * order: cpu = thread * 8 + socket * 4 + die * 2 + core; one node per socket. */
static void write_two_die_tree(const char *root)
{
	char rel[256], text[32];

	write_file(root, "devices/system/cpu/online", "0-15\n");
	write_file(root, "devices/system/node/online", "0-1\n");
	write_file(root, "devices/system/node/node0/cpulist", "0-3,8-11\n");
	write_file(root, "devices/system/node/node1/cpulist", "4-7,12-15\n");
	write_file(root, "devices/system/node/node0/distance", "10 21\n");
	write_file(root, "devices/system/node/node1/distance", "21 10\n");
	for (int cpu = 0; cpu < 16; cpu++) {
		static const char *const files[] = { "physical_package_id", "die_id", "core_id" };
		int ids[] = { (cpu / 4) % 2, (cpu / 2) % 2, cpu % 2 };

		for (int i = 0; i < 3; i++) {
			snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/%s", cpu, files[i]);
			snprintf(text, sizeof(text), "%d\n", ids[i]);
			write_file(root, rel, text);
		}
	}
}

/* --per-core and --per-die: per-CPU series gathered by the tree's topology,
 * each CPU counting 100 + its number; rows in perf's order with its names. */
static void per_core_and_die(void)
{
	char root[] = "/tmp/memscope-topology-XXXXXX";
	struct topology topo;
	struct ms_error err = { "" };
	struct series_table t = { 0 };
	struct frame f;
	struct aggregation a;
	struct aggr_cell cells[16];
	struct stat_output o = { 0 };
	char *text;

	CHECK(mkdtemp(root) != NULL);
	write_two_die_tree(root);
	CHECK_EQ_INT(topology_load(&topo, root, &err), 0);
	CHECK_EQ_INT(topo.nr_cpus, 16);
	CHECK_EQ_INT(topo.nr_dies, 4);
	CHECK_EQ_INT(topo.nr_cores, 8);
	for (int cpu = 0; cpu < 16; cpu++)
		add(&t, "loads", cpu, topology_cpu(&topo, cpu)->node);
	add(&t, "total-only", LABEL_NONE, LABEL_NONE);
	CHECK_EQ_INT(frame_init(&f, t.nr), 0);
	for (int cpu = 0; cpu < 16; cpu++)
		f.samples[cpu] = (struct sample){ 100u + (unsigned)cpu, 10, 10, true };
	f.samples[16] = (struct sample){ 5, 10, 10, true };

	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_CORE, &topo), 0);
	CHECK_EQ_INT(a.nr_rows, 8);
	aggregation_clear(&a, cells);
	aggregation_add(&a, &f, cells);
	/* S0-D0-C0 = cpu0 + cpu8; S1-D1-C1 = cpu7 + cpu15. */
	CHECK_NEAR(cells[0 * 2 + 0].value, 100 + 108, 1e-9);
	CHECK_NEAR(cells[1 * 2 + 0].value, 101 + 109, 1e-9);
	CHECK_NEAR(cells[2 * 2 + 0].value, 102 + 110, 1e-9);
	CHECK_NEAR(cells[7 * 2 + 0].value, 107 + 115, 1e-9);
	CHECK(cells[0 * 2 + 1].not_applicable);   /* a series of no CPU is in no core */
	o.format = STAT_CSV;
	snprintf(o.separator, sizeof(o.separator), ",");
	{
		struct stat_table table;
		size_t size = 0;

		text = NULL;
		CHECK_EQ_INT(stat_table_init(&table, &a, NULL, 0, NULL, NULL, NULL, NULL, 0), 0);
		CHECK_EQ_INT(stat_table_set_row_cpus(&table, &topo), 0);
		stat_table_set_events(&table, &a, cells);
		o.out = open_memstream(&text, &size);
		stat_output_totals(&o, 1.0, &table);
		fclose(o.out);
		stat_table_free(&table);
	}
	/* perf's -x: aggregation, CPUs in it, value, unit, event, runtime, pcnt, metric fields. */
	CHECK_CONTAINS(text, "S0-D0-C0,2,208,,loads,20,100.00,,\n");
	CHECK_CONTAINS(text, "S0-D1-C1,2,214,,loads,20,100.00,,\n");
	CHECK_CONTAINS(text, "S1-D0-C0,2,216,,loads,20,100.00,,\n");
	CHECK_CONTAINS(text, "S1-D1-C1,2,222,,loads,20,100.00,,\n");
	CHECK(strstr(text, "total-only") == NULL);
	CHECK(strstr(text, "S0-D0-C0") < strstr(text, "S0-D0-C1") && strstr(text, "S0-D1-C1") < strstr(text, "S1-D0-C0"));
	free(text);
	aggregation_free(&a);

	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_DIE, &topo), 0);
	CHECK_EQ_INT(a.nr_rows, 4);
	aggregation_clear(&a, cells);
	aggregation_add(&a, &f, cells);
	CHECK_NEAR(cells[0 * 2 + 0].value, 100 + 101 + 108 + 109, 1e-9);   /* S0-D0 */
	CHECK_NEAR(cells[3 * 2 + 0].value, 106 + 107 + 114 + 115, 1e-9);   /* S1-D1 */
	o.format = STAT_JSON;
	{
		struct stat_table table;
		size_t size = 0;

		text = NULL;
		CHECK_EQ_INT(stat_table_init(&table, &a, NULL, 0, NULL, NULL, NULL, NULL, 0), 0);
		CHECK_EQ_INT(stat_table_set_row_cpus(&table, &topo), 0);
		stat_table_set_events(&table, &a, cells);
		o.out = open_memstream(&text, &size);
		stat_output_totals(&o, 1.0, &table);
		fclose(o.out);
		stat_table_free(&table);
	}
	CHECK_CONTAINS(text, "{\"die\" : \"S0-D1\", \"aggregate-number\" : 4, \"counter-value\" : \"426.000000\", "
		       "\"unit\" : \"\", \"event\" : \"loads\", \"event-runtime\" : 40, \"pcnt-running\" : 100.00, "
		       "\"metric-value\" : 0.000000, \"metric-unit\" : \"\"}");
	free(text);
	aggregation_free(&a);

	/* Ids a key cannot hold are refused by name. */
	topo.cpus[3].core = AGGR_KEY_MAX_CORE + 1;
	CHECK_EQ_INT(aggr_topology_fits(&topo, &err), -1);
	CHECK_CONTAINS(err.text, "cpu3 is socket 0, die 1, core 65536");
	frame_free(&f);
	series_table_free(&t);
	topology_free(&topo);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		CHECK_EQ_INT(system(cmd), 0);
	}
}

/* A gauge per node (levels: 10 and 30 pages, then 50 and 10, then 20 and
 * 20): the total row adds the nodes of a frame (40, 60, 40) and totals over
 * frames to the peak, mean and last of those sums (60, 46.67, 40), never
 * their sum over frames (140); the text names the peak, CSV and JSON too. */
static void gauge_totals(void)
{
	static const uint64_t level[3][2] = { { 10, 30 }, { 50, 10 }, { 20, 20 } };
	struct series_table t = { 0 };
	struct series_labels l;
	struct aggregation a;
	struct aggr_cell *cells;
	struct stat_table table;
	struct stat_output o = { .format = STAT_TEXT, .title = "'test'" };
	struct frame f;
	char *text = NULL;
	size_t size = 0;

	for (int node = 0; node < 2; node++) {
		series_labels_init(&l);
		l.node = node;
		CHECK(series_table_add(&t, "mem.level", "", 1.0, SERIES_GAUGE, &l) == node);
	}
	CHECK_EQ_INT(frame_init(&f, 2), 0);
	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_TOTAL, NULL), 0);
	cells = calloc((size_t)(a.nr_rows * a.nr_columns), sizeof(*cells));
	aggregation_clear(&a, cells);
	for (int k = 0; k < 3; k++) {
		for (int node = 0; node < 2; node++)
			f.samples[node] = (struct sample){ .value = level[k][node], .valid = true };
		aggregation_add(&a, &f, cells);
	}
	CHECK_NEAR(cells[0].value, 60.0, 1e-9);
	CHECK_EQ_U64(cells[0].gauge_frames, 3);
	CHECK_NEAR(cells[0].gauge_sum / 3.0, 140.0 / 3.0, 1e-9);
	CHECK_NEAR(cells[0].gauge_last, 40.0, 1e-9);
	CHECK_EQ_INT(stat_table_init(&table, &a, NULL, 0, NULL, NULL, NULL, NULL, 0), 0);
	stat_table_set_events(&table, &a, cells);
	o.out = open_memstream(&text, &size);
	stat_output_totals(&o, 1.0, &table);
	fclose(o.out);
	CHECK_CONTAINS(text, "                60      mem.level  (peak of 3 samples; mean 46.67, last 40)\n");
	free(text);
	o.format = STAT_CSV;
	snprintf(o.separator, sizeof(o.separator), ",");
	o.out = open_memstream(&text, &size);
	stat_output_totals(&o, 1.0, &table);
	fclose(o.out);
	CHECK_CONTAINS(text, "60,,mem.level,0,100.00,,,peak\n");
	free(text);
	stat_table_free(&table);
	free(cells);
	aggregation_free(&a);
	frame_free(&f);
	series_table_free(&t);
}

/* Measured for a command, a column that counts the whole machine is marked
 * ('*' and a footnote; CSV: a field after perf's); the others are not. */
static void whole_system_marks(void)
{
	struct series_table t = { 0 };
	struct series_labels l;
	struct aggregation a;
	struct aggr_cell *cells;
	struct stat_table table;
	struct stat_output o = { .format = STAT_TEXT, .title = "'test'" };
	struct frame f;
	char *text = NULL;
	size_t size = 0;

	series_labels_init(&l);
	CHECK(series_table_add(&t, "page-faults", "", 1.0, SERIES_COUNTER, &l) == 0);
	l.whole_system = true;
	CHECK(series_table_add(&t, "numastat/numa_hit", "", 1.0, SERIES_COUNTER, &l) == 1);
	CHECK_EQ_INT(frame_init(&f, 2), 0);
	f.samples[0] = (struct sample){ .value = 75, .valid = true };
	f.samples[1] = (struct sample){ .value = 80450, .valid = true };
	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_TOTAL, NULL), 0);
	cells = calloc((size_t)(a.nr_rows * a.nr_columns), sizeof(*cells));
	aggregation_clear(&a, cells);
	aggregation_add(&a, &f, cells);
	CHECK_EQ_INT(stat_table_init(&table, &a, NULL, 0, NULL, NULL, NULL, NULL, 0), 0);
	CHECK_EQ_INT(stat_table_mark_whole_system(&table, &t, NULL), 0);
	stat_table_set_events(&table, &a, cells);
	o.out = open_memstream(&text, &size);
	stat_output_totals(&o, 1.0, &table);
	fclose(o.out);
	CHECK_CONTAINS(text, "                75      page-faults\n");
	CHECK_CONTAINS(text, "            80,450      numastat/numa_hit  *\n");
	CHECK_CONTAINS(text, "\n * counted for the whole machine");
	free(text);
	o.format = STAT_CSV;
	snprintf(o.separator, sizeof(o.separator), ",");
	o.out = open_memstream(&text, &size);
	stat_output_totals(&o, 1.0, &table);
	fclose(o.out);
	CHECK_CONTAINS(text, "75,,page-faults,0,100.00,,\n");
	CHECK_CONTAINS(text, "80450,,numastat/numa_hit,0,100.00,,,whole-system\n");
	free(text);
	stat_table_free(&table);
	free(cells);
	aggregation_free(&a);
	frame_free(&f);
	series_table_free(&t);
}

int main(void)
{
	scaling();
	gauge_totals();
	whole_system_marks();
	per_node_with_multiplexing();
	per_core_and_die();
	return check_summary("test_stat_output");
}
