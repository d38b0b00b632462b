/* touch: first touch of N pages, bound to node K when asked: a workload whose
 * page count and placement are known (memscope validate checks faults and
 * pages per node with it). One write per 4 KiB page, no huge pages. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench.h"

int bench_touch(struct bench_opts *o)
{
	struct bench_report r = { .bench = "touch" };
	struct bench_table *t;
	size_t pages = o->pages ? o->pages : 4096, size = pages * 4096;
	char *buf = mem_alloc(size, false);
	double t0, share = NAN;
	char name[64];
	int row;

	if (!buf)
		bench_die("touch: cannot map %zu pages", pages);
	if (o->node >= 0 && mem_bind(buf, size, o->node) < 0)
		bench_die("touch: cannot bind to node %d: %s", o->node, strerror(errno));
	snprintf(name, sizeof(name), "touch:%zu:%d", pages, o->node);
	t0 = phase_begin(o, name);
	for (size_t i = 0; i < size; i += 4096)
		buf[i] = (char)i;
	/* --passes: read it all again, for traffic of a known size to a known node. */
	for (int p = 0; p < o->passes; p++)
		bw_pass(BW_RD, (uint64_t *)buf, NULL, size);
	phase_end(o, name, "pages=%zu node=%d passes=%d bytes=%.0f seconds=%.6f", pages, o->node, o->passes,
		  (double)size * o->passes, now_s() - t0);
	if (o->node >= 0)
		share = mem_share_on_node(buf, size, o->node);
	t = report_table(&r, "results", "First touch: pages and where they are");
	table_col(t, "pages", NULL, COL_INT, 0);
	table_col(t, "node", NULL, COL_INT, 0);
	table_col(t, "cpu", NULL, COL_INT, 0);
	table_col(t, "share_on_node", NULL, COL_NUM, 4);
	table_col(t, "seconds", "s", COL_NUM, 6);
	row = table_row(t);
	table_set(t, row, "pages", (double)pages);
	table_set(t, row, "node", o->node);
	table_set(t, row, "cpu", current_cpu());
	table_set(t, row, "share_on_node", share);
	table_set(t, row, "seconds", now_s() - t0);
	report_param(&r, "pages", "%zu", pages);
	report_param(&r, "node", "%d", o->node);
	report_param(&r, "passes", "%d", o->passes);
	int status = report_finish(&r, o);

	report_free(&r);
	mem_free(buf, size);
	return status;
}
