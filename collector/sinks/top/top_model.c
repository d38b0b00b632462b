#include "sinks/top/top_model.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "lua/lua_engine.h"
#include "metrics/metrics.h"
#include "catalog/resolver.h"
#include "host/cpulist.h"
#include "host/memory_tiers.h"
#include "util/array.h"

/* The per-process and per-thread series of the frames (labels pid, tid,
 * comm), gathered by task: each frame's values are the task's deltas over
 * that frame, so rates need no previous totals. */
enum top_field {
	F_FAULTS, F_ONCPU, F_OFFCPU, F_MIGRATIONS, F_THREADS, F_CPU, F_STATE,
	F_DAMON_HOT, F_DAMON_COLD,                   /* gauges: the process's series, one per node, added */
	F_PAGES,                                     /* + node index */
	F_NR = F_PAGES + TOP_MAX_NODES,
};

struct top_task {
	pid_t pid, tid;                              /* tid 0: the process; pid 0: free */
	char comm[16];
	int nr_series;                               /* live series gathered here */
	int ending;                                  /* of them, those that end in this frame */
	bool seen[F_NR];
	double value[F_NR];                          /* this frame */
	uint64_t faults_total;                       /* since top started */
	double run_faults, run_pages, run_oncpu_ns;  /* a process's totals over the run */
	double first_s;
	bool run_seen;
	int next_free;
};

struct top_cumulative {
	struct top_task *tasks;
	int nr_tasks, tasks_cap, free_task;          /* tasks[0 .. nr_tasks) used or on the free list */
	/* Per series index: the task and field it fills; task -1: none. */
	int *series_task, *series_field;
	int nr_mapped;
	/* pid/tid -> task: open addressing, 2 x tasks_cap entries, -1 empty, -2 removed. */
	int *index;
	int index_cap;
};

/* Which catalog metric fills each node column (none: from the eBPF probes). */
static const char *const node_metric[TOP_NODE_NR_COLS] = {
	[TOP_NODE_READ_BW] = "mem.read_bw",
	[TOP_NODE_WRITE_BW] = "mem.write_bw",
	[TOP_NODE_REMOTE_PCT] = "mem.remote_ratio",
	[TOP_NODE_FAULTS] = "kernel.faults",
	[TOP_NODE_PAGES_ALLOC] = NULL,
	[TOP_NODE_MIGRATIONS] = "kernel.cpu_migrations",
	[TOP_NODE_PAGES_MIGRATED] = "kernel.pages_migrated",
	[TOP_NODE_NUMA_MISS] = "numa.miss",
	[TOP_NODE_NUMA_FOREIGN] = "numa.foreign",
	[TOP_NODE_USED] = "numa.used_bytes",
	[TOP_NODE_FREE] = "numa.free_bytes",
	[TOP_NODE_PROMOTED] = "tier.promoted_pages",
	[TOP_NODE_DEMOTED] = "tier.demoted_pages",
	[TOP_NODE_DAMON_HOT] = "damon.hot_bytes",
	[TOP_NODE_DAMON_COLD] = "damon.cold_bytes",
};

static const char *const node_col_names[TOP_NODE_NR_COLS] = {
	"READ_B/s", "WRITE_B/s", "REMOTE%", "FAULTS/s", "ALLOC/s", "MIGR/s", "PGMIGR/s", "MISS/s", "FOREIGN/s",
	"USED_B", "FREE_B", "PROMO/s", "DEMO/s",
	"HOT_B", "COLD_B",
};

static const char *const proc_col_names[TOP_PROC_NR_COLS] = {
	"PID", "THR", "FAULTS/s", "ALLOC/s", "REMOTE%", "CPU%", "OFFCPU%", "MIGR/s", "HOT_B", "COLD_B", "COMMAND",
};

const char *top_node_col_name(enum top_node_col col)
{
	return col >= 0 && col < TOP_NODE_NR_COLS ? node_col_names[col] : "?";
}

const char *top_proc_col_name(enum top_proc_col col)
{
	return col >= 0 && col < TOP_PROC_NR_COLS ? proc_col_names[col] : "?";
}

int top_model_node_index(const struct top_model *m, int node)
{
	int i = topology_node_index(m->topo, node);

	return i >= 0 && i < TOP_MAX_NODES ? i : -1;
}

/* --- setup ------------------------------------------------------------ */

static void read_cpu_model(struct top_model *m)
{
	char path[4200], line[512];
	FILE *f;

	sysfs_join(path, sizeof(path), m->host->roots.proc, "cpuinfo");
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		/* x86 says "model name"; Arm kernels have no such line. */
		if (colon && strncmp(line, "model name", 10) == 0) {
			colon++;
			colon += strspn(colon, " \t");
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", colon);
			break;
		}
	}
	if (f)
		fclose(f);
	if (!m->cpu_model[0] && m->res && m->res->cpu.known)
		snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", m->res->cpu.text);
	if (!m->cpu_model[0])
		snprintf(m->cpu_model, sizeof(m->cpu_model), "unknown CPU");
}

/* "4: 0-1, 40: 2-3 (CXL); balancing 2; demotion on": each tier's nodes,
 * fastest first, then the kernel's settings that move pages between them. */
void top_describe_tiers(char *buf, size_t size, const struct sysfs_roots *roots, const struct topology *topo)
{
	struct memory_tiers tiers;
	struct ms_error err = { "" };
	size_t len = 0;
	int last = -1;

	buf[0] = '\0';
	if (memory_tiers_load(&tiers, roots, topo, &err) < 0 || !tiers.have_tiers) {
		if (!err.text[0])
			memory_tiers_free(&tiers);
		return;
	}
	for (;;) {
		int tier = -1;
		struct cpulist nodes = { calloc((size_t)tiers.nr_nodes + 1, sizeof(int)), 0 };
		bool cxl = false;
		char list[128];

		for (int i = 0; i < tiers.nr_nodes; i++)
			if (tiers.nodes[i].tier > last && (tier < 0 || tiers.nodes[i].tier < tier))
				tier = tiers.nodes[i].tier;
		if (tier < 0 || !nodes.cpus) {
			free(nodes.cpus);
			break;
		}
		for (int i = 0; i < tiers.nr_nodes; i++)
			if (tiers.nodes[i].tier == tier) {
				nodes.cpus[nodes.nr++] = tiers.nodes[i].node;
				cxl |= tiers.nodes[i].kind == MEMORY_KIND_CXL;
			}
		cpulist_format(&nodes, list, sizeof(list));
		free(nodes.cpus);
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%d: %s%s", len ? ", " : "", tier, list,
						cxl ? " (CXL)" : "");
		last = tier;
	}
	if (tiers.numa_balancing >= 0 && len < size)
		len += (size_t)snprintf(buf + len, size - len, "; balancing %d", tiers.numa_balancing);
	if (tiers.demotion_enabled >= 0 && len < size)
		snprintf(buf + len, size - len, "; demotion %s", tiers.demotion_enabled ? "on" : "off");
	memory_tiers_free(&tiers);
}

/* The node columns' metrics, one comma list: the session plans those this
 * host can measure and keeps the reason for the others. */
void top_node_metric_list(char *names, size_t size)
{
	size_t len = 0;

	names[0] = '\0';
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		if (node_metric[c])
			len += (size_t)snprintf(names + len, size - len, "%s%s", len ? "," : "", node_metric[c]);
}

const char *top_node_col_metric(enum top_node_col col)
{
	return (int)col >= 0 && col < TOP_NODE_NR_COLS ? node_metric[col] : NULL;
}

static void find_pages_series(struct top_model *m)
{
	const struct series_table *t = m->table;

	for (int i = 0; i < TOP_MAX_NODES; i++)
		m->pages_series[i] = -1;
	for (int s = 0; s < t->nr; s++) {
		int idx;

		if (strcmp(t->series[s].name, "proc.pages_alloc") != 0 || series_is_per_task(&t->series[s]))
			continue;
		idx = top_model_node_index(m, t->series[s].labels.node);
		if (idx >= 0)
			m->pages_series[idx] = s;
	}
}

static int alloc_tables(struct top_model *m)
{
	struct top_cumulative *p = calloc(1, sizeof(*p));

	m->prev = p;
	m->nr_nodes = m->topo->nr_nodes;
	m->nodes = calloc((size_t)m->nr_nodes + 1, sizeof(*m->nodes));
	m->procs = calloc(TOP_MAX_PROCESSES + 1, sizeof(*m->procs));
	m->threads = calloc(TOP_MAX_THREADS, sizeof(*m->threads));
	m->lua_why = calloc(((size_t)m->nr_nodes + 1) * TOP_MAX_LUA_COLS, sizeof(*m->lua_why));
	m->nr_tiers = m->engine ? metric_engine_nr_scopes(m->engine, SCOPE_TIER) : 0;
	m->tier_rows = calloc((size_t)m->nr_tiers + 1, sizeof(*m->tier_rows));
	if (!p || !m->nodes || !m->procs || !m->threads || !m->lua_why || !m->tier_rows)
		return -1;
	for (int t = 0; t < m->nr_tiers; t++)
		m->tier_rows[t].node = metric_engine_scope_id(m->engine, SCOPE_TIER, t);
	p->free_task = -1;
	for (int i = 0; i < m->nr_nodes; i++)
		m->nodes[i].node = m->topo->nodes[i];
	m->total.node = -1;
	return 0;
}

int top_model_open(struct top_model *m, const struct top_inputs *in, struct ms_error *err)
{
	static const struct topology no_topology;

	memset(m, 0, sizeof(*m));
	m->table = in->table;
	m->host = in->host;
	m->topo = in->topo;
	m->plan = in->plan;
	m->engine = in->engine;
	m->res = in->res;
	m->lua = in->lua;
	m->focus_pid = in->focus_pid;
	m->replay = in->replay;
	m->interval_s = (double)in->interval_ns / 1e9;
	m->nr_lua_cols = in->nr_lua_metrics < TOP_MAX_LUA_COLS ? in->nr_lua_metrics : TOP_MAX_LUA_COLS;
	m->lua_left_out = in->nr_lua_metrics - m->nr_lua_cols;
	for (int i = 0; i < m->nr_lua_cols; i++)
		m->lua_metric[i] = in->lua_metrics[i];
	snprintf(m->source_names, sizeof(m->source_names), "%s", in->source_names ? in->source_names : "");
	if (in->hostname)
		snprintf(m->hostname, sizeof(m->hostname), "%s", in->hostname);
	else if (gethostname(m->hostname, sizeof(m->hostname) - 1) < 0)
		snprintf(m->hostname, sizeof(m->hostname), "unknown host");
	/* A recording made without its machine's topology: no node rows. */
	if (!m->topo)
		m->topo = &no_topology;
	if ((in->notes && in->notes[0] && !(m->notes = strdup(in->notes))) || alloc_tables(m) < 0) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	m->faults_series = -1;
	for (int i = 0; i < in->table->nr; i++)
		if (!strcmp(in->table->series[i].name, "proc.faults") && !series_is_per_task(&in->table->series[i]) &&
		    !in->table->series[i].unavailable)
			m->faults_series = i;
	if (in->cpu_model)
		snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", in->cpu_model);
	else if (m->host)
		read_cpu_model(m);
	if (in->tiers)
		snprintf(m->tiers, sizeof(m->tiers), "%s", in->tiers);
	else if (m->host)
		top_describe_tiers(m->tiers, sizeof(m->tiers), &m->host->roots, m->topo);
	for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
		m->plan_metric[c] = node_metric[c] && m->plan ? metric_plan_find(m->plan, node_metric[c]) : -1;
		m->node_col_why[c] = in->node_col_why[c];
	}
	find_pages_series(m);
	if (in->bpf_why) {
		m->bpf_why = in->bpf_why;
		m->node_col_why[TOP_NODE_PAGES_ALLOC] = m->bpf_why;
		m->proc_offcpu_why = m->bpf_why;
	}
	/* Remote accesses of one process need core PMU events that tell local from
	 * remote DRAM; the node metric's reason says what this host lacks. */
	m->proc_remote_why = m->node_col_why[TOP_NODE_REMOTE_PCT]
				     ? m->node_col_why[TOP_NODE_REMOTE_PCT]
				     : "per-process remote accesses are not in the catalog yet (only per node)";
	/* DAMON per process: the largest processes' pages in physical regions. */
	m->proc_damon_why = m->node_col_why[TOP_NODE_DAMON_HOT]
				    ? m->node_col_why[TOP_NODE_DAMON_HOT]
				    : "DAMON's bytes per process cover the largest processes whose pages memscope reads "
				      "(docs/damon.md), and only after the first aggregation";
	return 0;
}

void top_model_close(struct top_model *m)
{
	free(m->notes);
	if (m->prev) {
		free(m->prev->tasks);
		free(m->prev->series_task);
		free(m->prev->series_field);
		free(m->prev->index);
		free(m->prev);
	}
	free(m->nodes);
	free(m->tier_rows);
	free(m->lua_why);
	free(m->procs);
	free(m->threads);
	free(m->ended);
	memset(m, 0, sizeof(*m));
}

/* --- updating ----------------------------------------------------------- */

/* The smallest share of its interval any counter was counted (only
 * multiplexed perf counters count less than all of it). */
static void update_coverage(struct top_model *m, const struct frame *frame)
{
	double lowest = 1.0;
	bool any = false;

	for (int s = 0; s < frame->nr; s++) {
		const struct sample *sample = &frame->samples[s];
		double cov;

		if (!sample->valid || !sample->enabled_ns || m->table->series[s].kind != SERIES_COUNTER)
			continue;
		cov = sample_coverage(sample);
		lowest = cov < lowest ? cov : lowest;
		any = true;
	}
	m->coverage_valid = any;
	m->coverage_pct = lowest * 100.0;
}

static void metric_cell(struct top_model *m, int col, enum metric_scope scope, int index, struct top_value *out)
{
	int p = m->plan_metric[col];
	const struct metric_value *v;
	const struct catalog_metric *cm;

	if (p < 0 || !m->engine || !m->values) {
		out->valid = false;
		out->why = m->node_col_why[col] ? m->node_col_why[col] : "not measured";
		return;
	}
	v = metric_engine_value(m->engine, m->values, p, scope, index);
	if (!v || !v->valid) {
		out->valid = false;
		out->why = v && v->why ? v->why : "not measured in this scope";
		return;
	}
	cm = metric_plan_catalog_metric(m->plan, p);
	out->valid = true;
	out->why = NULL;
	out->value = v->value;
	if (cm->kind == METRIC_COUNTER)
		out->value = m->interval_s > 0 ? v->value / m->interval_s : 0;
	else if (cm->kind == METRIC_RATIO)
		out->value = v->value * 100.0;
}

/* Each tier's row: the metrics in the engine's tier scope; the page
 * allocations, which are no metric, as the sum of its nodes' (n/a when one of
 * them has none). The Lua columns are per node only. */
static void update_tiers(struct top_model *m)
{
	for (int t = 0; t < m->nr_tiers; t++) {
		struct top_node_row *row = &m->tier_rows[t];
		struct top_value *alloc = &row->col[TOP_NODE_PAGES_ALLOC];

		for (int c = 0; c < TOP_NODE_NR_COLS; c++)
			if (c != TOP_NODE_PAGES_ALLOC)
				metric_cell(m, c, SCOPE_TIER, t, &row->col[c]);
		*alloc = (struct top_value){ 0, true, NULL };
		for (int i = 0; i < m->nr_nodes; i++) {
			const struct top_value *v = &m->nodes[i].col[TOP_NODE_PAGES_ALLOC];

			if (metric_engine_node_tier(m->engine, m->nodes[i].node) != row->node)
				continue;
			if (!v->valid) {
				*alloc = *v;
				break;
			}
			alloc->value += v->value;
		}
		for (int c = 0; c < TOP_MAX_LUA_COLS; c++)
			row->lua[c] = (struct top_value){ 0, false, "the scripts' metrics are per node" };
	}
}

static void update_nodes(struct top_model *m, const struct frame *frame)
{
	double pages_total = 0;
	bool pages_any = false;

	for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
		if (c == TOP_NODE_PAGES_ALLOC)
			continue;
		metric_cell(m, c, SCOPE_SYSTEM, 0, &m->total.col[c]);
		for (int i = 0; i < m->nr_nodes; i++) {
			int scope = -1;

			for (int k = 0; m->engine && k < metric_engine_nr_scopes(m->engine, SCOPE_NODE); k++)
				if (metric_engine_scope_id(m->engine, SCOPE_NODE, k) == m->nodes[i].node)
					scope = k;
			if (scope < 0 && m->plan_metric[c] >= 0) {
				m->nodes[i].col[c].valid = false;
				m->nodes[i].col[c].why = "no counter for this node";
				continue;
			}
			metric_cell(m, c, SCOPE_NODE, scope, &m->nodes[i].col[c]);
		}
	}
	for (int i = 0; i < m->nr_nodes; i++) {
		struct top_value *v = &m->nodes[i].col[TOP_NODE_PAGES_ALLOC];
		int s = i < TOP_MAX_NODES ? m->pages_series[i] : -1;

		if (s < 0 || !frame->samples[s].valid) {
			v->valid = false;
			v->why = m->bpf_why ? m->bpf_why : "the page allocation probe is not running";
			continue;
		}
		v->valid = true;
		v->why = NULL;
		v->value = m->interval_s > 0 ? (double)frame->samples[s].value / m->interval_s : 0;
		pages_total += v->value;
		pages_any = true;
	}
	m->total.col[TOP_NODE_PAGES_ALLOC].valid = pages_any;
	m->total.col[TOP_NODE_PAGES_ALLOC].value = pages_total;
	m->total.col[TOP_NODE_PAGES_ALLOC].why =
		pages_any ? NULL : m->bpf_why ? m->bpf_why : "the page allocation probe is not running";
}

static unsigned task_hash(pid_t pid, pid_t tid, int cap)
{
	return ((unsigned)pid * 2654435761u ^ (unsigned)tid * 40503u) & (unsigned)(cap - 1);
}

static int task_find(const struct top_cumulative *c, pid_t pid, pid_t tid)
{
	if (!c->index_cap)
		return -1;
	for (unsigned i = task_hash(pid, tid, c->index_cap), n = 0; n < (unsigned)c->index_cap;
	     i = (i + 1) & (unsigned)(c->index_cap - 1), n++) {
		int k = c->index[i];

		if (k == -1)
			return -1;
		if (k >= 0 && c->tasks[k].pid == pid && c->tasks[k].tid == tid)
			return k;
	}
	return -1;
}

static int index_put(struct top_cumulative *c, int k)
{
	for (unsigned i = task_hash(c->tasks[k].pid, c->tasks[k].tid, c->index_cap);;
	     i = (i + 1) & (unsigned)(c->index_cap - 1))
		if (c->index[i] < 0) {
			c->index[i] = k;
			return 0;
		}
}

/* Room for more tasks: the index stays at most half full (removed entries
 * count until it is rebuilt). */
static int grow_tasks(struct top_cumulative *c)
{
	int cap = c->tasks_cap ? c->tasks_cap * 2 : 256;
	struct top_task *tasks = realloc(c->tasks, sizeof(*tasks) * (size_t)cap);
	int *index = malloc(sizeof(int) * (size_t)cap * 4);

	if (tasks)
		c->tasks = tasks;
	if (!tasks || !index) {
		free(index);
		return -1;
	}
	free(c->index);
	c->index = index;
	c->index_cap = cap * 4;
	c->tasks_cap = cap;
	for (int i = 0; i < c->index_cap; i++)
		c->index[i] = -1;
	for (int k = 0; k < c->nr_tasks; k++)
		if (c->tasks[k].pid)
			index_put(c, k);
	return 0;
}

static int task_get(struct top_cumulative *c, pid_t pid, pid_t tid)
{
	int k = task_find(c, pid, tid);

	if (k >= 0)
		return k;
	if (c->free_task >= 0) {
		k = c->free_task;
		c->free_task = c->tasks[k].next_free;
	} else {
		if (c->nr_tasks == c->tasks_cap && grow_tasks(c) < 0)
			return -1;
		k = c->nr_tasks++;
	}
	memset(&c->tasks[k], 0, sizeof(c->tasks[k]));
	c->tasks[k].pid = pid;
	c->tasks[k].tid = tid;
	index_put(c, k);
	return k;
}

static void task_drop(struct top_cumulative *c, int k)
{
	for (unsigned i = task_hash(c->tasks[k].pid, c->tasks[k].tid, c->index_cap);;
	     i = (i + 1) & (unsigned)(c->index_cap - 1))
		if (c->index[i] == k) {
			c->index[i] = -2;
			break;
		}
	c->tasks[k].pid = 0;
	c->tasks[k].next_free = c->free_task;
	c->free_task = k;
}

/* The field a per-task series fills, or -1. */
static int field_of(const struct top_model *m, const struct series *s)
{
	static const struct { const char *name; enum top_field field; } fields[] = {
		{ "proc.faults", F_FAULTS }, { "proc.oncpu_ns", F_ONCPU }, { "proc.offcpu_ns", F_OFFCPU },
		{ "proc.migrations", F_MIGRATIONS }, { "proc.threads", F_THREADS }, { "proc.cpu", F_CPU },
		{ "proc.state", F_STATE }, { "damon.hot_bytes", F_DAMON_HOT }, { "damon.cold_bytes", F_DAMON_COLD },
	};

	if (!strcmp(s->name, "proc.pages_alloc")) {
		int i = top_model_node_index(m, s->labels.node);

		return i >= 0 ? F_PAGES + i : -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!strcmp(s->name, fields[i].name))
			return fields[i].field;
	return -1;
}

static int map_series(struct top_model *m, const struct series_table *table, int index)
{
	struct top_cumulative *c = m->prev;
	const struct series *s = &table->series[index];
	int field, k;

	if (index >= c->nr_mapped) {
		int n = index + 256;
		int *tasks = realloc(c->series_task, sizeof(int) * (size_t)n);
		int *fields = tasks ? realloc(c->series_field, sizeof(int) * (size_t)n) : NULL;

		if (tasks)
			c->series_task = tasks;
		if (!fields)
			return -1;
		c->series_field = fields;
		for (int i = c->nr_mapped; i < n; i++)
			c->series_task[i] = -1;
		c->nr_mapped = n;
	}
	c->series_task[index] = -1;
	if (!series_is_per_task(s) || s->labels.pid == LABEL_NONE || (field = field_of(m, s)) < 0)
		return 0;
	/* Threads: only the focused process's. */
	if (s->labels.tid != LABEL_NONE && s->labels.pid != m->focus_pid)
		return 0;
	k = task_get(c, s->labels.pid, s->labels.tid == LABEL_NONE ? 0 : s->labels.tid);
	if (k < 0)
		return -1;
	snprintf(c->tasks[k].comm, sizeof(c->tasks[k].comm), "%s", s->labels.comm);
	c->tasks[k].nr_series++;
	c->series_task[index] = k;
	c->series_field[index] = field;
	return 0;
}

static double rate(double delta, double seconds)
{
	return seconds > 0 ? delta / seconds : 0;
}

static void process_row(struct top_model *m, struct top_task *t, double seconds)
{
	struct top_process_row *row = &m->procs[m->nr_procs++];
	double on = t->value[F_ONCPU], off = t->value[F_OFFCPU];

	memset(row, 0, sizeof(*row));
	row->pid = t->pid;
	snprintf(row->comm, sizeof(row->comm), "%s", t->comm);
	row->nr_threads = (int)t->value[F_THREADS];
	t->faults_total += (uint64_t)t->value[F_FAULTS];
	row->faults_total = t->faults_total;
	row->faults = rate(t->value[F_FAULTS], seconds);
	row->migrations = rate(t->value[F_MIGRATIONS], seconds);
	row->cpu_pct = rate(on / 1e9, seconds) * 100.0;
	row->offcpu_pct.valid = on + off > 0;
	row->offcpu_pct.value = row->offcpu_pct.valid ? off * 100.0 / (on + off) : 0;
	row->offcpu_pct.why = row->offcpu_pct.valid ? NULL : "not switched in or out this interval";
	row->remote_pct.valid = false;
	row->remote_pct.why = m->proc_remote_why;
	row->damon_hot = (struct top_value){ t->value[F_DAMON_HOT], t->seen[F_DAMON_HOT],
					     t->seen[F_DAMON_HOT] ? NULL : m->proc_damon_why };
	row->damon_cold = (struct top_value){ t->value[F_DAMON_COLD], t->seen[F_DAMON_COLD],
					      t->seen[F_DAMON_COLD] ? NULL : m->proc_damon_why };
	for (int i = 0; i < m->nr_nodes && i < TOP_MAX_NODES; i++) {
		row->pages_node[i] = rate(t->value[F_PAGES + i], seconds);
		row->pages += row->pages_node[i];
	}
}

/* The kernel's task state at the last switch away, as ps shows it. */
static char state_letter(bool seen, double state)
{
	unsigned s = (unsigned)state;

	if (!seen)
		return '?';
	if (s == 0)
		return 'R';
	if ((s & 0x402) == 0x402)   /* TASK_IDLE: uninterruptible, not counted as load */
		return 'I';
	if (s & 2)
		return 'D';
	if (s & 1)
		return 'S';
	if (s & 4)
		return 'T';
	if (s & 8)
		return 't';
	return '?';
}

static void thread_row(struct top_model *m, const struct top_task *t, double seconds)
{
	struct top_thread_row *row;
	const struct cpu_place *place;

	if (m->nr_threads == TOP_MAX_THREADS)
		return;
	row = &m->threads[m->nr_threads++];
	memset(row, 0, sizeof(*row));
	row->tid = t->tid;
	snprintf(row->comm, sizeof(row->comm), "%s", t->comm);
	row->state = state_letter(t->seen[F_STATE], t->value[F_STATE]);
	row->faults = rate(t->value[F_FAULTS], seconds);
	row->cpu_pct = rate(t->value[F_ONCPU] / 1e9, seconds) * 100.0;
	row->cpu = t->seen[F_CPU] ? (int)t->value[F_CPU] : -1;
	place = row->cpu >= 0 ? topology_cpu(m->topo, row->cpu) : NULL;
	row->node = place ? place->node : -1;
}

static int cmp_thread_row(const void *a, const void *b)
{
	const struct top_thread_row *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void add_run_totals(struct top_model *m, struct top_task *t)
{
	bool any = false;

	for (int f = 0; f < F_NR; f++)
		any |= t->seen[f];
	if (!any)
		return;
	if (!t->run_seen)
		t->first_s = m->elapsed_s;
	t->run_seen = true;
	t->run_faults += t->value[F_FAULTS];
	t->run_oncpu_ns += t->value[F_ONCPU];
	for (int i = 0; i < m->nr_nodes && i < TOP_MAX_NODES; i++)
		t->run_pages += t->value[F_PAGES + i];
}

static void run_process(const struct top_task *t, double ended_s, struct top_run_process *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = t->pid;
	snprintf(out->comm, sizeof(out->comm), "%s", t->comm);
	out->faults = t->run_faults;
	out->pages = t->run_pages;
	out->oncpu_s = t->run_oncpu_ns / 1e9;
	out->first_s = t->first_s;
	out->ended_s = ended_s;
}

/* A process's series all ended: its totals stay for the run's. Without
 * memory it is left out of them (the whole target's faults still count it). */
static void keep_ended(struct top_model *m, const struct top_task *t)
{
	if (m->nr_ended == m->cap_ended) {
		int cap = m->cap_ended ? 2 * m->cap_ended : 64;
		struct top_run_process *grown = realloc(m->ended, (size_t)cap * sizeof(*grown));

		if (!grown)
			return;
		m->ended = grown;
		m->cap_ended = cap;
	}
	run_process(t, m->elapsed_s, &m->ended[m->nr_ended++]);
}

static int cmp_run_faults(const void *a, const void *b)
{
	const struct top_run_process *x = a, *y = b;

	if (x->faults != y->faults)
		return x->faults < y->faults ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

int top_model_run_totals(const struct top_model *m, struct top_run_process **out)
{
	const struct top_cumulative *c = m->prev;
	int n = m->nr_ended;

	*out = malloc(((size_t)m->nr_ended + (size_t)(c ? c->nr_tasks : 0) + 1) * sizeof(**out));
	if (!*out)
		return -1;
	/* No process ended (a replay without processes): m->ended is still NULL. */
	if (m->nr_ended)
		memcpy(*out, m->ended, (size_t)m->nr_ended * sizeof(**out));
	for (int k = 0; c && k < c->nr_tasks; k++)
		if (c->tasks[k].pid && !c->tasks[k].tid)
			run_process(&c->tasks[k], NAN, &(*out)[n++]);
	qsort(*out, (size_t)n, sizeof(**out), cmp_run_faults);
	return n;
}

/* Rows from the frame's per-task series; tasks whose series end in this
 * frame show their last interval and are then forgotten. */
static void update_tasks(struct top_model *m, const struct frame *frame, double seconds)
{
	struct top_cumulative *c = m->prev;
	const struct series_table *table = m->table;
	const struct series_changes *ch = frame->changes;
	bool focus_seen = false;

	m->nr_procs = m->nr_threads = 0;
	for (int i = 0; ch && i < ch->nr_added; i++)
		map_series(m, table, ch->added[i]);
	for (int k = 0; k < c->nr_tasks; k++) {
		memset(c->tasks[k].value, 0, sizeof(c->tasks[k].value));
		memset(c->tasks[k].seen, 0, sizeof(c->tasks[k].seen));
	}
	for (int i = 0; i < c->nr_mapped && i < frame->nr; i++) {
		int k = c->series_task[i];

		if (k < 0 || !frame->samples[i].valid)
			continue;
		c->tasks[k].value[c->series_field[i]] += (double)frame->samples[i].value;
		c->tasks[k].seen[c->series_field[i]] = true;
	}
	for (int i = 0; ch && i < ch->nr_retired; i++) {
		int index = ch->retired[i], k = index < c->nr_mapped ? c->series_task[index] : -1;

		if (k >= 0)
			c->tasks[k].ending++;
	}
	for (int k = 0; k < c->nr_tasks; k++) {
		struct top_task *t = &c->tasks[k];
		bool exited = t->ending > 0 && t->ending == t->nr_series;

		t->ending = 0;
		if (!t->pid)
			continue;
		if (!t->tid)
			add_run_totals(m, t);
		/* A process that exited without a fault in its last interval has
		 * nothing to show: short-lived ones would fill the list with them. */
		if (!t->tid && exited && t->value[F_FAULTS] == 0)
			continue;
		if (!t->tid && m->nr_procs < TOP_MAX_PROCESSES) {
			process_row(m, t, seconds);
			focus_seen |= t->pid == m->focus_pid;
		} else if (t->tid) {
			thread_row(m, t, seconds);
		}
	}
	for (int i = 0; ch && i < ch->nr_retired; i++) {
		int index = ch->retired[i], k = index < c->nr_mapped ? c->series_task[index] : -1;

		if (k < 0)
			continue;
		c->series_task[index] = -1;
		if (--c->tasks[k].nr_series == 0) {
			if (!c->tasks[k].tid)
				keep_ended(m, &c->tasks[k]);
			task_drop(c, k);
		}
	}
	qsort(m->threads, (size_t)m->nr_threads, sizeof(*m->threads), cmp_thread_row);
	if (m->focus_pid) {
		/* Live, a focused process that has not run since top started still
		 * exists; a recording knows only what it recorded. */
		m->focus_alive = focus_seen || (!m->replay && (kill(m->focus_pid, 0) == 0 || errno == EPERM));
		if (!focus_seen && m->focus_alive && m->nr_procs < TOP_MAX_PROCESSES) {
			struct top_process_row *row = &m->procs[m->nr_procs++];

			memset(row, 0, sizeof(*row));
			row->pid = m->focus_pid;
			snprintf(row->comm, sizeof(row->comm), "?");
			row->remote_pct.why = m->proc_remote_why;
			row->offcpu_pct.why = "not switched in or out since top started";
			row->damon_hot.why = row->damon_cold.why = m->proc_damon_why;
		}
	}
}

/* The Lua columns, as the scripts computed them for this frame: values
 * as they are (a script's metric says its own unit), n/a with the reason. */
static void update_lua_columns(struct top_model *m)
{
	for (int i = 0; i <= m->nr_nodes; i++) {
		struct top_node_row *row = i < m->nr_nodes ? &m->nodes[i] : &m->total;

		for (int c = 0; c < m->nr_lua_cols; c++) {
			struct top_value *v = &row->lua[c];
			char *why = m->lua_why[i * TOP_MAX_LUA_COLS + c];

			v->valid = lua_engine_metric_value(m->lua, m->lua_metric[c], row->node, &v->value);
			v->why = NULL;
			if (!v->valid) {
				lua_engine_metric_why(m->lua, m->lua_metric[c], row->node, why, sizeof(m->lua_why[0]));
				v->why = why;
			}
		}
	}
}

const char *top_lua_column_why(const struct top_model *m, int col)
{
	if (!m->total.lua[col].valid)
		return m->total.lua[col].why ? m->total.lua[col].why : "no frame yet";
	for (int i = 0; i < m->nr_nodes; i++)
		if (!m->nodes[i].lua[col].valid)
			return m->nodes[i].lua[col].why ? m->nodes[i].lua[col].why : "no frame yet";
	return NULL;
}

void top_model_update(struct top_model *m, const struct frame *frame, const struct metric_values *values)
{
	uint64_t now = frame->time_ns;

	m->values = values;
	m->interval_s = (double)frame->interval_ns / 1e9;
	m->elapsed_s = (double)now / 1e9;
	update_coverage(m, frame);
	update_nodes(m, frame);
	update_tiers(m);
	update_lua_columns(m);
	update_tasks(m, frame, m->interval_s);
	if (m->faults_series >= 0 && m->faults_series < frame->nr && frame->samples[m->faults_series].valid) {
		m->run_faults += (double)frame->samples[m->faults_series].value;
		m->run_faults_seen = true;
	}
	m->last_ns = now;
	m->updates++;
}

/* --- sorting ------------------------------------------------------------ */

static double sort_key(const struct top_process_row *r, enum top_proc_col col)
{
	switch (col) {
	case TOP_PROC_THREADS: return r->nr_threads;
	case TOP_PROC_FAULTS: return r->faults;
	case TOP_PROC_PAGES: return r->pages;
	case TOP_PROC_REMOTE_PCT: return r->remote_pct.valid ? r->remote_pct.value : -1;
	case TOP_PROC_CPU_PCT: return r->cpu_pct;
	case TOP_PROC_OFFCPU_PCT: return r->offcpu_pct.valid ? r->offcpu_pct.value : -1;
	case TOP_PROC_MIGRATIONS: return r->migrations;
	case TOP_PROC_DAMON_HOT: return r->damon_hot.valid ? r->damon_hot.value : -1;
	case TOP_PROC_DAMON_COLD: return r->damon_cold.valid ? r->damon_cold.value : -1;
	default: return 0;
	}
}

static int compare_rows(const void *a, const void *b, void *arg)
{
	const struct top_process_row *x = a, *y = b;
	enum top_proc_col col = *(const enum top_proc_col *)arg;
	double kx, ky;
	int by_name;

	if (col == TOP_PROC_PID)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (col == TOP_PROC_COMMAND) {
		by_name = strcmp(x->comm, y->comm);
		return by_name ? by_name : (x->pid > y->pid) - (x->pid < y->pid);
	}
	kx = sort_key(x, col);
	ky = sort_key(y, col);
	if (kx != ky)
		return kx < ky ? 1 : -1;
	/* Ties: busiest since start first, then by pid, so the order is stable. */
	if (x->faults_total != y->faults_total)
		return x->faults_total < y->faults_total ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

void top_model_sort(struct top_process_row *rows, int nr, enum top_proc_col col)
{
	qsort_r(rows, (size_t)nr, sizeof(*rows), compare_rows, &col);
}
