/* memscope top without a terminal or counters: rate formatting, sorting,
 * filtering and the batch text of a model filled by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sinks/top/top_layout.h"
#include "sinks/top/top_view.h"

static void test_format_rate(void)
{
	static const struct {
		double value;
		const char *text;
	} cases[] = {
		{ 0, "0.0" }, { 12.34, "12.3" }, { 99.9, "99.9" }, { 100, "100" }, { 999.4, "999" },
		{ 999.96, "1.0k" }, { 1234, "1.2k" }, { 98765, "98.8k" }, { 123456, "123k" },
		{ 4.56e6, "4.6M" }, { 7e9, "7.0G" },
	};
	char buf[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		top_format_rate(buf, sizeof(buf), cases[i].value);
		CHECK_EQ_STR(buf, cases[i].text);
	}
}

static struct top_process_row row(pid_t pid, const char *comm, double faults, double cpu, bool offcpu_valid,
				  double offcpu)
{
	struct top_process_row r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	r.nr_threads = 1;
	r.faults = faults;
	r.pages = faults;
	r.pages_node[0] = faults;
	r.cpu_pct = cpu;
	r.offcpu_pct.valid = offcpu_valid;
	r.offcpu_pct.value = offcpu;
	r.offcpu_pct.why = offcpu_valid ? NULL : "not scheduled";
	r.remote_pct.why = "no PMU";
	return r;
}

static void test_sort(void)
{
	struct top_process_row rows[4] = {
		row(30, "bash", 10, 5, true, 50),
		row(10, "touchmem", 5000, 90, true, 1),
		row(20, "cc1", 0, 40, false, 0),
		row(5, "a b", 200, 1, true, 99),
	};

	top_model_sort(rows, 4, TOP_PROC_FAULTS);
	CHECK_EQ_INT(rows[0].pid, 10);
	CHECK_EQ_INT(rows[1].pid, 5);
	CHECK_EQ_INT(rows[3].pid, 20);
	top_model_sort(rows, 4, TOP_PROC_PID);
	CHECK_EQ_INT(rows[0].pid, 5);
	CHECK_EQ_INT(rows[3].pid, 30);
	top_model_sort(rows, 4, TOP_PROC_COMMAND);
	CHECK_EQ_STR(rows[0].comm, "a b");
	CHECK_EQ_STR(rows[3].comm, "touchmem");
	top_model_sort(rows, 4, TOP_PROC_CPU_PCT);
	CHECK_EQ_INT(rows[0].pid, 10);
	CHECK_EQ_INT(rows[1].pid, 20);
	/* An unmeasured off-CPU share sorts below every measured one. */
	top_model_sort(rows, 4, TOP_PROC_OFFCPU_PCT);
	CHECK_EQ_INT(rows[0].pid, 5);
	CHECK_EQ_INT(rows[3].pid, 20);
	/* Hot bytes: an unknown one (n/a) sorts below a known 0. */
	for (int i = 0; i < 4; i++)
		rows[i].damon_hot = (struct top_value){ 0, rows[i].pid != 30, NULL };
	rows[0].damon_hot.value = 1 << 20;   /* pid 5 */
	top_model_sort(rows, 4, TOP_PROC_DAMON_HOT);
	CHECK_EQ_INT(rows[0].pid, 5);
	CHECK_EQ_INT(rows[3].pid, 30);
}

static void test_filter(void)
{
	struct top_display d;
	struct top_process_row r = row(4242, "touchmem", 1, 1, true, 1);

	memset(&d, 0, sizeof(d));
	CHECK(top_display_shows(&d, &r));
	snprintf(d.filter, sizeof(d.filter), "touch");
	CHECK(top_display_shows(&d, &r));
	snprintf(d.filter, sizeof(d.filter), "4242");
	CHECK(top_display_shows(&d, &r));
	snprintf(d.filter, sizeof(d.filter), "424");
	CHECK(!top_display_shows(&d, &r));
	snprintf(d.filter, sizeof(d.filter), "bash");
	CHECK(!top_display_shows(&d, &r));
}

/* Two nodes, one process: every field of the batch text, n/a where the
 * model says a value cannot be measured. */
static void test_batch_text(void)
{
	static int nodes[] = { 0, 1 };
	struct top_node_row node_rows[2];
	struct top_process_row procs[2];
	struct top_model m;
	struct topology topo;
	struct top_display d;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	memset(&m, 0, sizeof(m));
	memset(&d, 0, sizeof(d));
	memset(node_rows, 0, sizeof(node_rows));
	snprintf(m.hostname, sizeof(m.hostname), "box");
	snprintf(m.cpu_model, sizeof(m.cpu_model), "Some CPU @ 2GHz");
	snprintf(m.source_names, sizeof(m.source_names), "perf procfs bpf");
	m.coverage_valid = true;
	m.coverage_pct = 62.5;
	m.elapsed_s = 2.5;
	m.updates = 3;
	memset(&topo, 0, sizeof(topo));
	topo.nodes = nodes;
	topo.nr_nodes = 2;
	m.topo = &topo;
	m.nr_nodes = 2;
	m.nodes = node_rows;
	for (int i = 0; i < 2; i++) {
		node_rows[i].node = nodes[i];
		for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
			node_rows[i].col[c].valid = c != TOP_NODE_READ_BW;
			node_rows[i].col[c].value = 10.0 * (i + 1) + c;
			node_rows[i].col[c].why = c == TOP_NODE_READ_BW ? "no uncore PMU" : NULL;
		}
	}
	m.total = node_rows[1];
	m.total.node = -1;
	m.node_col_why[TOP_NODE_READ_BW] = "no uncore PMU";
	procs[0] = row(77, "my prog", 1500, 12.5, false, 0);
	procs[0].pages_node[1] = 3;
	procs[0].damon_hot = (struct top_value){ 2097152, true, NULL };
	procs[0].damon_cold = (struct top_value){ 4096, true, NULL };
	procs[1] = row(78, "other", 0, 0, true, 25);
	m.procs = procs;
	m.nr_procs = 2;
	m.proc_remote_why = "no PMU";
	d.interval_ms = 250;
	snprintf(d.recording, sizeof(d.recording), "off");
	d.sort = TOP_PROC_FAULTS;

	out = open_memstream(&text, &len);
	top_batch_print(out, &m, &d);
	fclose(out);
	CHECK_EQ_STR(text,
		     "top: update=3 time_s=2.500 interval_ms=250\n"
		     "host: box\n"
		     "cpu: Some CPU @ 2GHz\n"
		     "sources: perf procfs bpf\n"
		     "coverage_pct: 62.5\n"
		     "recording: off\n"
		     "na: READ_B/s: no uncore PMU\n"
		     "na: process REMOTE%: no PMU\n"
		     "\n"
		     "NODE READ_B/s WRITE_B/s REMOTE% FAULTS/s ALLOC/s MIGR/s PGMIGR/s MISS/s FOREIGN/s USED_B FREE_B PROMO/s "
		     "DEMO/s HOT_B COLD_B\n"
		     "0 n/a 11.0 12.0 13.0 14.0 15.0 16.0 17.0 18.0 19.0 20.0 21.0 22.0 23.0 24.0\n"
		     "1 n/a 21.0 22.0 23.0 24.0 25.0 26.0 27.0 28.0 29.0 30.0 31.0 32.0 33.0 34.0\n"
		     "all n/a 21.0 22.0 23.0 24.0 25.0 26.0 27.0 28.0 29.0 30.0 31.0 32.0 33.0 34.0\n"
		     "\n"
		     "PID THR FAULTS/s ALLOC/s ALLOC_N0/s ALLOC_N1/s REMOTE% CPU% OFFCPU% MIGR/s HOT_B COLD_B COMMAND\n"
		     "77 1 1500.0 1500.0 1500.0 3.0 n/a 12.5 n/a 0.0 2097152.0 4096.0 my prog\n"
		     "78 1 0.0 0.0 0.0 0.0 n/a 0.0 25.0 0.0 n/a n/a other\n"
		     "\n");
	free(text);
}

/* Whole columns leave, highest rank first, until the rest fits. */
static void test_layout(void)
{
	/* lead 5; columns take 1 + width: 9 + 9 + 9 + 9 = 36, a row 41 wide. */
	const struct top_layout_col cols[] = { { 8, 0 }, { 8, 2 }, { 8, 1 }, { 8, 3 } };
	/* A group of equal ranks (one per node) leaves from its end; -1 stays. */
	const struct top_layout_col group[] = { { 3, -1 }, { 4, 1 }, { 4, 1 }, { 4, 0 } };
	bool shown[4];

	CHECK_EQ_INT(top_layout_fit(cols, 4, 5, 0, 41, shown), 0);
	CHECK(shown[0] && shown[1] && shown[2] && shown[3]);
	/* 40: the rank-3 column goes (32 left). */
	CHECK_EQ_INT(top_layout_fit(cols, 4, 5, 0, 40, shown), 1);
	CHECK(shown[0] && shown[1] && shown[2] && !shown[3]);
	/* 22: ranks 3, 2 then 1 go (23 was not enough: 14 left). */
	CHECK_EQ_INT(top_layout_fit(cols, 4, 5, 0, 22, shown), 3);
	CHECK(shown[0] && !shown[1] && !shown[2] && !shown[3]);
	/* Too narrow for even the lead: everything that can go goes. */
	CHECK_EQ_INT(top_layout_fit(cols, 4, 5, 0, 3, shown), 4);
	/* A flexible last column of 15 (16 with its space): 41 + 16 = 57. */
	CHECK_EQ_INT(top_layout_fit(cols, 4, 5, 15, 57, shown), 0);
	CHECK_EQ_INT(top_layout_fit(cols, 4, 5, 15, 56, shown), 1);
	/* 7 + 4 + 5 + 5 + 5 = 26. */
	CHECK_EQ_INT(top_layout_fit(group, 4, 7, 0, 26, shown), 0);
	CHECK_EQ_INT(top_layout_fit(group, 4, 7, 0, 25, shown), 1);
	CHECK(shown[0] && shown[1] && !shown[2] && shown[3]);
	CHECK_EQ_INT(top_layout_fit(group, 4, 7, 0, 16, shown), 2);
	CHECK(shown[0] && !shown[1] && !shown[2] && shown[3]);
	CHECK_EQ_INT(top_layout_fit(group, 4, 7, 0, 1, shown), 3);
	CHECK(shown[0] && !shown[3]);
}

int main(void)
{
	test_layout();
	test_format_rate();
	test_sort();
	test_filter();
	test_batch_text();
	return check_summary("top");
}
