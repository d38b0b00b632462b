/* Batch output of memscope top (like top -b): plain text blocks that a script
 * can split on whitespace. Each update prints
 *
 *   top: update=N time_s=T interval_ms=I
 *   host: NAME
 *   cpu: MODEL
 *   sources: perf procfs bpf
 *   coverage_pct: P            (or n/a)
 *   recording: off
 *   scope: nodes: ...          with -p: the node panel counts the whole machine
 *   tiers: 4: 0-1, 40: 2-3 (CXL); balancing 2; demotion on   (when the kernel lists tiers)
 *   na: COLUMN: REASON         one line per column this host cannot measure (for
 *                              a Lua column: why its value is missing this time)
 *   <blank>
 *   NODE READ_B/s ...          node table: one row per node, then "all"; the
 *                              metrics --lua scripts define are its last columns
 *                              (by name, %.6g: a script's value keeps its digits)
 *                              With --per-tier: TIER READ_B/s ..., one row per
 *                              memory tier (its N, fastest first), then "all";
 *                              the Lua columns are n/a (they are per node)
 *   <blank>
 *   PID THR FAULTS/s ...       process table; COMMAND last (it may hold spaces)
 *   <blank>
 *   [threads of PID, when -p]
 *
 * Numbers are plain decimals with one fraction digit; a value this host
 * cannot measure is "n/a", never 0.
 *
 * A replay (top --input) ends with the run's totals: every process the
 * recording holds, those that exited before the end included, and what the
 * probes counted for the whole target but for no process:
 *
 *   totals: time_s=T processes=N exited=E
 *   PID FAULTS PAGES CPU_S FIRST_S ENDED_S COMMAND   ENDED_S "-": running at the end
 *   unattributed FAULTS=F                           all faults less the processes' sum
 *   all FAULTS=F                                    proc.faults of the whole target */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lua/lua_engine.h"
#include "sinks/top/top_view.h"

bool top_display_shows(const struct top_display *d, const struct top_process_row *row)
{
	char pid[16];

	if (!d->filter[0])
		return true;
	snprintf(pid, sizeof(pid), "%d", (int)row->pid);
	return strstr(row->comm, d->filter) != NULL || strcmp(pid, d->filter) == 0;
}

static void print_value(FILE *out, const struct top_value *v)
{
	if (v->valid)
		fprintf(out, " %.1f", v->value);
	else
		fprintf(out, " n/a");
}

static void print_header(FILE *out, const struct top_model *m, const struct top_display *d)
{
	fprintf(out, "top: update=%llu time_s=%.3f interval_ms=%llu\n", (unsigned long long)m->updates,
		m->elapsed_s, (unsigned long long)d->interval_ms);
	fprintf(out, "host: %s\n", m->hostname);
	fprintf(out, "cpu: %s\n", m->cpu_model);
	fprintf(out, "sources: %s\n", m->source_names);
	if (m->coverage_valid)
		fprintf(out, "coverage_pct: %.1f\n", m->coverage_pct);
	else
		fprintf(out, "coverage_pct: n/a\n");
	fprintf(out, "recording: %s\n", d->recording[0] ? d->recording : "off");
	/* -p: the node panel is still the whole machine's; the process's own values are its rows. */
	if (m->focus_pid)
		fprintf(out, "scope: nodes: the whole machine, not only pid %d\n", (int)m->focus_pid);
	if (m->tiers[0])
		fprintf(out, "tiers: %s\n", m->tiers);
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		if (m->node_col_why[c])
			fprintf(out, "na: %s: %s\n", top_node_col_name(c), m->node_col_why[c]);
	if (m->proc_remote_why)
		fprintf(out, "na: process %s: %s\n", top_proc_col_name(TOP_PROC_REMOTE_PCT), m->proc_remote_why);
	if (m->node_col_why[TOP_NODE_DAMON_HOT])
		fprintf(out, "na: process %s, %s: %s\n", top_proc_col_name(TOP_PROC_DAMON_HOT),
			top_proc_col_name(TOP_PROC_DAMON_COLD), m->proc_damon_why);
	if (m->proc_offcpu_why)
		fprintf(out, "na: process %s: %s\n", top_proc_col_name(TOP_PROC_OFFCPU_PCT), m->proc_offcpu_why);
	for (int c = 0; c < m->nr_lua_cols; c++) {
		const char *why = m->updates ? top_lua_column_why(m, c) : NULL;

		if (why)
			fprintf(out, "na: %s: %s\n", lua_engine_metric_name(m->lua, m->lua_metric[c]), why);
	}
}

static void print_nodes(FILE *out, const struct top_model *m, const struct top_display *d)
{
	int nr = d->per_tier ? m->nr_tiers : m->nr_nodes;
	const struct top_node_row *rows = d->per_tier ? m->tier_rows : m->nodes;

	fprintf(out, "\n%s", d->per_tier ? "TIER" : "NODE");
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		fprintf(out, " %s", top_node_col_name(c));
	for (int c = 0; c < m->nr_lua_cols; c++)
		fprintf(out, " %s", lua_engine_metric_name(m->lua, m->lua_metric[c]));
	fprintf(out, "\n");
	for (int i = 0; i <= nr; i++) {
		const struct top_node_row *row = i < nr ? &rows[i] : &m->total;

		if (row->node >= 0)
			fprintf(out, "%d", row->node);
		else
			fprintf(out, "all");
		for (int c = 0; c < TOP_NODE_NR_COLS; c++)
			print_value(out, &row->col[c]);
		/* A script's metric keeps its digits: ratios are not rounded to 0.0. */
		for (int c = 0; c < m->nr_lua_cols; c++)
			if (row->lua[c].valid)
				fprintf(out, " %.6g", row->lua[c].value);
			else
				fprintf(out, " n/a");
		fprintf(out, "\n");
	}
}

static void print_processes(FILE *out, const struct top_model *m, const struct top_display *d)
{
	int shown_nodes = m->nr_nodes < TOP_MAX_NODES ? m->nr_nodes : TOP_MAX_NODES;

	fprintf(out, "\nPID THR FAULTS/s ALLOC/s");
	for (int i = 0; i < shown_nodes; i++)
		fprintf(out, " ALLOC_N%d/s", m->topo->nodes[i]);
	fprintf(out, " REMOTE%% CPU%% OFFCPU%% MIGR/s HOT_B COLD_B COMMAND\n");
	for (int i = 0; i < m->nr_procs; i++) {
		const struct top_process_row *r = &m->procs[i];

		if (!top_display_shows(d, r))
			continue;
		if (m->focus_pid && r->pid != m->focus_pid)
			continue;
		fprintf(out, "%d %d %.1f %.1f", (int)r->pid, r->nr_threads, r->faults, r->pages);
		for (int n = 0; n < shown_nodes; n++)
			fprintf(out, " %.1f", r->pages_node[n]);
		print_value(out, &r->remote_pct);
		fprintf(out, " %.1f", r->cpu_pct);
		print_value(out, &r->offcpu_pct);
		fprintf(out, " %.1f", r->migrations);
		print_value(out, &r->damon_hot);
		print_value(out, &r->damon_cold);
		fprintf(out, " %s\n", r->comm);
	}
}

static void print_threads(FILE *out, const struct top_model *m)
{
	fprintf(out, "\nthreads: pid=%d alive=%s\n", (int)m->focus_pid, m->focus_alive ? "yes" : "no");
	fprintf(out, "TID S CPU NODE FAULTS/s CPU%% COMMAND\n");
	for (int i = 0; i < m->nr_threads; i++) {
		const struct top_thread_row *t = &m->threads[i];

		fprintf(out, "%d %c %d %d %.1f %.1f %s\n", (int)t->tid, t->state ? t->state : '?', t->cpu, t->node,
			t->faults, t->cpu_pct, t->comm);
	}
}

int top_batch_print_totals(FILE *out, const struct top_model *m)
{
	struct top_run_process *p;
	int n = top_model_run_totals(m, &p);
	double listed = 0;

	if (n < 0)
		return -1;
	fprintf(out, "totals: time_s=%.3f processes=%d exited=%d\n", m->elapsed_s, n, m->nr_ended);
	fprintf(out, "PID FAULTS PAGES CPU_S FIRST_S ENDED_S COMMAND\n");
	for (int i = 0; i < n; i++) {
		fprintf(out, "%d %.0f %.0f %.3f %.3f ", (int)p[i].pid, p[i].faults, p[i].pages, p[i].oncpu_s,
			p[i].first_s);
		if (isnan(p[i].ended_s))
			fprintf(out, "- %s\n", p[i].comm);
		else
			fprintf(out, "%.3f %s\n", p[i].ended_s, p[i].comm);
		listed += p[i].faults;
	}
	if (m->run_faults_seen) {
		fprintf(out, "unattributed FAULTS=%.0f\n", m->run_faults - listed);
		fprintf(out, "all FAULTS=%.0f\n", m->run_faults);
	}
	fprintf(out, "\n");
	fflush(out);
	free(p);
	return 0;
}

void top_batch_print(FILE *out, struct top_model *m, const struct top_display *d)
{
	top_model_sort(m->procs, m->nr_procs, d->sort);
	print_header(out, m, d);
	print_nodes(out, m, d);
	print_processes(out, m, d);
	if (m->focus_pid)
		print_threads(out, m);
	fprintf(out, "\n");
	fflush(out);
}
