#include "sinks/top/top_model.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "pipeline/lua_session.h"
#include "metrics/metrics.h"
#include "catalog/resolver.h"
#include "sources/bpf_source.h"

/* Counters of one process or thread at the previous update: rates are the
 * difference over the time between updates. */
struct top_proc_counts {
	pid_t pid;
	char comm[32];
	uint64_t faults, oncpu_ns, offcpu_ns, migrations;
	uint64_t pages_node[TOP_MAX_NODES];
	uint64_t pages_alloc_sum;                    /* all nodes */
};

struct top_thread_counts {
	pid_t tid;
	uint64_t faults, ticks;
};

struct top_cumulative {
	struct top_proc_counts *procs, *next_procs;  /* sorted by pid; swapped each update */
	int nr_procs;
	struct bpf_process_stats *bpf;                /* read buffer */
	struct top_thread_counts *threads, *next_threads;
	int nr_threads;
	pid_t threads_of;                             /* the process the thread counts belong to */
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
};

static const char *const node_col_names[TOP_NODE_NR_COLS] = {
	"READ_B/s", "WRITE_B/s", "REMOTE%", "FAULTS/s", "ALLOC/s", "MIGR/s", "PGMIGR/s", "MISS/s", "FOREIGN/s",
};

static const char *const proc_col_names[TOP_PROC_NR_COLS] = {
	"PID", "THR", "FAULTS/s", "ALLOC/s", "REMOTE%", "CPU%", "OFFCPU%", "MIGR/s", "COMMAND",
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
	int i = topology_node_index(&m->session.host.topo, node);

	return i >= 0 && i < TOP_MAX_NODES ? i : -1;
}

/* --- setup ------------------------------------------------------------ */

static void read_cpu_model(struct top_model *m)
{
	char path[4200], line[512];
	FILE *f;

	sysfs_join(path, sizeof(path), m->session.host.roots.proc, "cpuinfo");
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
	if (!m->cpu_model[0] && m->session.resolution && m->session.resolution->cpu.known)
		snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", m->session.resolution->cpu.text);
	if (!m->cpu_model[0])
		snprintf(m->cpu_model, sizeof(m->cpu_model), "unknown CPU");
}

/* The node columns' metrics, one comma list: the session plans those this
 * host can measure and keeps the reason for the others. */
static void node_metric_list(char *names, size_t size)
{
	size_t len = 0;

	names[0] = '\0';
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		if (node_metric[c])
			len += (size_t)snprintf(names + len, size - len, "%s%s", len ? "," : "", node_metric[c]);
}

/* Every metric the --lua scripts define is a column of the node panel: ask
 * for them all, so that lua_cli_take_metrics() measures their inputs (series
 * as events, other names as catalog metrics, kept only where this host has
 * them) and hands back their engine indices. */
static int take_lua_metrics(struct top_model *m, struct session_options *opt)
{
	int nr = m->lua ? lua_engine_nr_metrics(m->lua) : 0, *indices, nr_indices;

	for (int i = 0; i < nr; i++)
		if (session_option(opt, 'm', lua_engine_metric_name(m->lua, i)) < 0)
			return -1;
	if (lua_cli_take_metrics(m->lua, opt, &indices, &nr_indices) < 0)
		return -1;
	m->nr_lua_cols = nr_indices < TOP_MAX_LUA_COLS ? nr_indices : TOP_MAX_LUA_COLS;
	m->lua_left_out = nr_indices - m->nr_lua_cols;
	for (int i = 0; i < m->nr_lua_cols; i++)
		m->lua_metric[i] = indices[i];
	free(indices);
	return 0;
}

/* Start the session: system-wide, left-out probes and events noted for the
 * help screen instead of printed under the display. */
static int open_session(struct top_model *m, const struct top_options *topt, struct ms_error *err)
{
	/* The probes behind the per-process numbers (faults, scheduling,
	 * migrations, page allocations); only proc.pages_alloc is read as series. */
	char events[] = "proc.pages_alloc,proc.faults,proc.oncpu_ns,proc.offcpu_ns,proc.migrations";
	char metrics[512];
	struct session_options opt;
	size_t notes_len = 0;
	int ret;

	node_metric_list(metrics, sizeof(metrics));
	session_options_init(&opt, "top");
	/* Heap copies: --lua scripts may add the events and metrics they read. */
	opt.events = strdup(events);
	opt.metrics = strdup(metrics);
	if (!opt.events || !opt.metrics) {
		ms_error_set(err, "out of memory");
		goto fail;
	}
	if (topt->lua && lua_cli_open(topt->lua, &opt, LUA_OUTPUT_TEXT, &m->lua, err))
		goto fail;
	if (take_lua_metrics(m, &opt) < 0) {
		ms_error_set(err, "out of memory");
		goto fail;
	}
	opt.system_wide = true;
	opt.metrics_if_available = true;
	opt.bpf_optional = true;
	opt.bpf_top_n = TOP_MAX_PROCESSES;
	opt.notes = open_memstream(&m->notes, &notes_len);
	ret = session_open(&m->session, &opt, err);
	if (!ret)
		ret = lua_cli_start(m->lua, &m->session, &opt, "system wide", err);
	free(opt.events);
	free(opt.metrics);
	if (opt.notes)
		fclose(opt.notes);
	if (m->notes && !m->notes[0]) {
		free(m->notes);
		m->notes = NULL;
	}
	return ret ? -1 : 0;
fail:
	free(opt.events);
	free(opt.metrics);
	return -1;
}

static void find_pages_series(struct top_model *m)
{
	const struct series_table *t = &m->session.sampler.table;

	for (int i = 0; i < TOP_MAX_NODES; i++)
		m->pages_series[i] = -1;
	for (int s = 0; s < t->nr; s++) {
		int idx;

		if (strcmp(t->series[s].name, "proc.pages_alloc") != 0)
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
	m->nr_nodes = m->session.host.topo.nr_nodes;
	m->nodes = calloc((size_t)m->nr_nodes + 1, sizeof(*m->nodes));
	m->procs = calloc(TOP_MAX_PROCESSES + 1, sizeof(*m->procs));
	m->threads = calloc(TOP_MAX_THREADS, sizeof(*m->threads));
	m->lua_why = calloc(((size_t)m->nr_nodes + 1) * TOP_MAX_LUA_COLS, sizeof(*m->lua_why));
	if (!p || !m->nodes || !m->procs || !m->threads || !m->lua_why)
		return -1;
	p->procs = calloc(TOP_MAX_PROCESSES + 1, sizeof(*p->procs));
	p->next_procs = calloc(TOP_MAX_PROCESSES + 1, sizeof(*p->next_procs));
	p->bpf = calloc(TOP_MAX_PROCESSES, sizeof(*p->bpf));
	p->threads = calloc(TOP_MAX_THREADS, sizeof(*p->threads));
	p->next_threads = calloc(TOP_MAX_THREADS, sizeof(*p->next_threads));
	if (!p->procs || !p->next_procs || !p->bpf || !p->threads || !p->next_threads)
		return -1;
	for (int i = 0; i < m->nr_nodes; i++)
		m->nodes[i].node = m->session.host.topo.nodes[i];
	m->total.node = -1;
	return 0;
}

/* "perf procfs bpf": the kinds of sources in a fixed order, whatever order
 * the session created them in. */
static void name_sources(struct top_model *m)
{
	static const char *const kinds[] = { "perf", "procfs", "bpf" };
	const struct session *s = &m->session;
	size_t len = 0;

	for (int k = 0; k < (int)(sizeof(kinds) / sizeof(kinds[0])); k++)
		for (int i = 0; i < s->nr_sources; i++)
			if (!strcmp(s->sources[i].ops->name, kinds[k]))
				len += (size_t)snprintf(m->source_names + len, sizeof(m->source_names) - len, "%s%s",
							len ? " " : "", kinds[k]);
}

int top_model_open(struct top_model *m, const struct top_options *opt, struct ms_error *err)
{
	const struct session *s = &m->session;

	memset(m, 0, sizeof(*m));
	m->focus_pid = opt->focus_pid;
	m->interval_s = (double)opt->interval_ns / 1e9;
	if (gethostname(m->hostname, sizeof(m->hostname) - 1) < 0)
		snprintf(m->hostname, sizeof(m->hostname), "unknown host");
	if (open_session(m, opt, err) < 0)
		return -1;
	m->baseline_ns = monotonic_ns();
	if (alloc_tables(m) < 0) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	read_cpu_model(m);
	for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
		m->plan_metric[c] = node_metric[c] && s->plan ? metric_plan_find(s->plan, node_metric[c]) : -1;
		m->node_col_why[c] = node_metric[c] ? session_metric_why(s, node_metric[c]) : NULL;
	}
	if (s->engine && !(m->values = metric_values_new(s->engine))) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	m->bpf = session_bpf_source(&m->session);
	find_pages_series(m);
	name_sources(m);
	if (session_source_why(s, "bpf")) {
		m->bpf_why = session_source_why(s, "bpf");
		m->node_col_why[TOP_NODE_PAGES_ALLOC] = m->bpf_why;
		m->proc_offcpu_why = m->bpf_why;
	}
	/* Remote accesses of one process need core PMU events that tell local from
	 * remote DRAM; the node metric's reason says what this host lacks. */
	m->proc_remote_why = m->node_col_why[TOP_NODE_REMOTE_PCT]
				     ? m->node_col_why[TOP_NODE_REMOTE_PCT]
				     : "per-process remote accesses are not in the catalog yet (only per node)";
	m->last_ns = m->baseline_ns;
	return 0;
}

void top_model_close(struct top_model *m)
{
	metric_values_free(m->values);
	lua_engine_free(m->lua);
	session_close(&m->session);
	free(m->notes);
	if (m->prev) {
		free(m->prev->procs);
		free(m->prev->next_procs);
		free(m->prev->bpf);
		free(m->prev->threads);
		free(m->prev->next_threads);
		free(m->prev);
	}
	free(m->nodes);
	free(m->lua_why);
	free(m->procs);
	free(m->threads);
	memset(m, 0, sizeof(*m));
}

/* --- updating ----------------------------------------------------------- */

static void update_coverage(struct top_model *m, const struct frame *frame)
{
	double lowest = 1.0;
	bool any = false;

	for (int i = 0; i < m->session.nr_sources; i++) {
		const struct source *src = &m->session.sources[i];

		if (strcmp(src->ops->name, "perf") != 0)
			continue;
		for (int s = src->first; s < src->first + src->count; s++) {
			const struct sample *sample = &frame->samples[s];
			double cov;

			if (!sample->valid || !sample->enabled_ns)
				continue;
			cov = sample_coverage(sample);
			lowest = cov < lowest ? cov : lowest;
			any = true;
		}
	}
	m->coverage_valid = any;
	m->coverage_pct = lowest * 100.0;
}

static void metric_cell(struct top_model *m, int col, enum metric_scope scope, int index, struct top_value *out)
{
	int p = m->plan_metric[col];
	const struct metric_value *v;
	const struct catalog_metric *cm;

	if (p < 0 || !m->session.engine) {
		out->valid = false;
		out->why = m->node_col_why[col] ? m->node_col_why[col] : "not measured";
		return;
	}
	v = metric_engine_value(m->session.engine, m->values, p, scope, index);
	if (!v || !v->valid) {
		out->valid = false;
		out->why = v && v->why ? v->why : "not measured in this scope";
		return;
	}
	cm = &m->session.catalog->metrics[m->session.plan->metrics[p].metric];
	out->valid = true;
	out->why = NULL;
	out->value = v->value;
	if (cm->kind == METRIC_COUNTER)
		out->value = m->interval_s > 0 ? v->value / m->interval_s : 0;
	else if (cm->kind == METRIC_RATIO)
		out->value = v->value * 100.0;
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

			for (int k = 0; m->session.engine && k < metric_engine_nr_scopes(m->session.engine, SCOPE_NODE); k++)
				if (metric_engine_scope_id(m->session.engine, SCOPE_NODE, k) == m->nodes[i].node)
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

static int cmp_counts_pid(const void *a, const void *b)
{
	const struct top_proc_counts *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct top_proc_counts *find_prev(const struct top_cumulative *c, pid_t pid)
{
	struct top_proc_counts key = { .pid = pid };

	return bsearch(&key, c->procs, (size_t)c->nr_procs, sizeof(key), cmp_counts_pid);
}

/* /proc/PID/comm; false when the process is gone. */
static bool read_comm(const struct top_model *m, pid_t pid, pid_t tid, char *comm, size_t size)
{
	char rel[64], path[4200];

	if (tid)
		snprintf(rel, sizeof(rel), "%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(rel, sizeof(rel), "%d/comm", (int)pid);
	sysfs_join(path, sizeof(path), m->session.host.roots.proc, rel);
	return sysfs_read_str(path, comm, size) == 0;
}

static double rate(uint64_t now, uint64_t before, double seconds)
{
	return now > before && seconds > 0 ? (double)(now - before) / seconds : 0;
}

static void fill_process(struct top_model *m, const struct bpf_process_stats *b,
			 const struct top_proc_counts *before, struct top_proc_counts *now, double seconds)
{
	struct top_process_row *row = &m->procs[m->nr_procs];
	static const struct top_proc_counts zero;
	uint64_t d_on, d_off;
	bool idle, alive;

	if (!before)
		before = &zero;  /* new since the last update: all its counts are recent */
	idle = b->faults == before->faults && b->oncpu_ns == before->oncpu_ns && b->offcpu_ns == before->offcpu_ns &&
	       b->pages_alloc == before->pages_alloc_sum;
	/* The probes' maps keep processes that have exited; one that did nothing
	 * since the last update and is gone has no row. kill(pid, 0) is one
	 * system call, cheaper than opening /proc. */
	alive = kill(b->tgid, 0) == 0 || errno == EPERM;
	if (!(idle && !alive))
		m->nr_procs++;
	memset(row, 0, sizeof(*row));
	row->pid = b->tgid;
	row->nr_threads = b->nr_threads;
	row->faults_total = b->faults;
	row->faults = rate(b->faults, before->faults, seconds);
	row->migrations = rate(b->migrations, before->migrations, seconds);
	d_on = b->oncpu_ns > before->oncpu_ns ? b->oncpu_ns - before->oncpu_ns : 0;
	d_off = b->offcpu_ns > before->offcpu_ns ? b->offcpu_ns - before->offcpu_ns : 0;
	row->cpu_pct = seconds > 0 ? (double)d_on / 1e9 / seconds * 100.0 : 0;
	row->offcpu_pct.valid = d_on + d_off > 0;
	row->offcpu_pct.value = row->offcpu_pct.valid ? (double)d_off * 100.0 / (double)(d_on + d_off) : 0;
	row->offcpu_pct.why = row->offcpu_pct.valid ? NULL : "not switched in or out this interval";
	row->remote_pct.valid = false;
	row->remote_pct.why = m->proc_remote_why;

	memset(now, 0, sizeof(*now));
	now->pid = b->tgid;
	now->faults = b->faults;
	now->oncpu_ns = b->oncpu_ns;
	now->offcpu_ns = b->offcpu_ns;
	now->migrations = b->migrations;
	now->pages_alloc_sum = b->pages_alloc;
	for (int i = 0; i < m->nr_nodes && i < TOP_MAX_NODES; i++) {
		int node = m->session.host.topo.nodes[i];
		uint64_t pages = node < BPF_SOURCE_MAX_NODES ? b->pages_alloc_node[node] : 0;

		now->pages_node[i] = pages;
		row->pages_node[i] = rate(pages, before->pages_node[i], seconds);
		row->pages += row->pages_node[i];
	}
	/* An exec changes the name and always faults: read it again only then. */
	if (before->comm[0] && row->faults == 0 && before->faults == b->faults) {
		memcpy(now->comm, before->comm, sizeof(now->comm));
	} else if (!read_comm(m, b->tgid, 0, now->comm, sizeof(now->comm))) {
		if (before->comm[0])
			memcpy(now->comm, before->comm, sizeof(now->comm));
		else
			snprintf(now->comm, sizeof(now->comm), "<exited>");
	}
	memcpy(row->comm, now->comm, sizeof(row->comm));
}

static void update_processes(struct top_model *m, double seconds)
{
	struct top_cumulative *c = m->prev;
	struct top_proc_counts *swap;
	int n;
	bool focus_seen = false;

	m->nr_procs = 0;
	if (!m->bpf)
		return;
	n = bpf_source_processes(m->bpf, c->bpf, TOP_MAX_PROCESSES);
	for (int i = 0; i < n; i++) {
		fill_process(m, &c->bpf[i], find_prev(c, c->bpf[i].tgid), &c->next_procs[i], seconds);
		focus_seen |= c->bpf[i].tgid == m->focus_pid;
	}
	/* A focused process the probes have not seen yet still gets its row. */
	if (m->focus_pid && !focus_seen && m->focus_alive) {
		struct top_process_row *row = &m->procs[m->nr_procs++];

		memset(row, 0, sizeof(*row));
		row->pid = m->focus_pid;
		row->nr_threads = m->nr_threads;
		read_comm(m, m->focus_pid, 0, row->comm, sizeof(row->comm));
		row->remote_pct.why = m->proc_remote_why;
		row->offcpu_pct.why = "not switched in or out since top started";
	}
	qsort(c->next_procs, (size_t)(n > 0 ? n : 0), sizeof(*c->next_procs), cmp_counts_pid);
	swap = c->procs;
	c->procs = c->next_procs;
	c->next_procs = swap;
	c->nr_procs = n > 0 ? n : 0;
}

/* Fields of /proc/PID/task/TID/stat after the command (see proc(5)). */
static bool read_thread_stat(const struct top_model *m, pid_t pid, pid_t tid, struct top_thread_row *row,
			     uint64_t *faults, uint64_t *ticks)
{
	char rel[64], path[4200], text[1024];
	char *p, *tok, *save = NULL;
	unsigned long long minflt = 0, majflt = 0, utime = 0, stime = 0;
	int field = 3;

	snprintf(rel, sizeof(rel), "%d/task/%d/stat", (int)pid, (int)tid);
	sysfs_join(path, sizeof(path), m->session.host.roots.proc, rel);
	if (sysfs_read_str(path, text, sizeof(text)) < 0)
		return false;
	p = strrchr(text, ')');
	if (!p)
		return false;
	row->cpu = -1;
	for (tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
		switch (field) {
		case 3: row->state = tok[0]; break;
		case 10: minflt = strtoull(tok, NULL, 10); break;
		case 12: majflt = strtoull(tok, NULL, 10); break;
		case 14: utime = strtoull(tok, NULL, 10); break;
		case 15: stime = strtoull(tok, NULL, 10); break;
		case 39: row->cpu = atoi(tok); break;
		default: break;
		}
	}
	*faults = minflt + majflt;
	*ticks = utime + stime;
	return true;
}

static int cmp_thread_tid(const void *a, const void *b)
{
	const struct top_thread_counts *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_thread_row(const void *a, const void *b)
{
	const struct top_thread_row *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void update_threads(struct top_model *m, double seconds)
{
	struct top_cumulative *c = m->prev;
	struct top_thread_counts *swap;
	char rel[64], path[4200];
	struct dirent *d;
	DIR *dir;
	long hz = sysconf(_SC_CLK_TCK);
	int n = 0;

	m->nr_threads = 0;
	snprintf(rel, sizeof(rel), "%d/task", (int)m->focus_pid);
	sysfs_join(path, sizeof(path), m->session.host.roots.proc, rel);
	dir = opendir(path);
	m->focus_alive = dir != NULL;
	if (!dir)
		return;
	if (c->threads_of != m->focus_pid) {
		c->nr_threads = 0;
		c->threads_of = m->focus_pid;
	}
	while ((d = readdir(dir)) && n < TOP_MAX_THREADS) {
		struct top_thread_row *row = &m->threads[n];
		struct top_thread_counts key, *before;
		const struct cpu_place *place;
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0)
			continue;
		memset(row, 0, sizeof(*row));
		row->tid = tid;
		if (!read_thread_stat(m, m->focus_pid, tid, row, &key.faults, &key.ticks))
			continue;   /* exited between readdir and read */
		read_comm(m, m->focus_pid, tid, row->comm, sizeof(row->comm));
		key.tid = tid;
		before = bsearch(&key, c->threads, (size_t)c->nr_threads, sizeof(key), cmp_thread_tid);
		row->faults = rate(key.faults, before ? before->faults : 0, seconds);
		row->cpu_pct = hz > 0 ? rate(key.ticks, before ? before->ticks : 0, seconds) / (double)hz * 100.0 : 0;
		if (!before) {
			/* First sight: its counts cover its whole life, not this interval. */
			row->faults = 0;
			row->cpu_pct = 0;
		}
		place = row->cpu >= 0 ? topology_cpu(&m->session.host.topo, row->cpu) : NULL;
		row->node = place ? place->node : -1;
		c->next_threads[n++] = key;
	}
	closedir(dir);
	m->nr_threads = n;
	qsort(m->threads, (size_t)n, sizeof(*m->threads), cmp_thread_row);
	qsort(c->next_threads, (size_t)n, sizeof(*c->next_threads), cmp_thread_tid);
	swap = c->threads;
	c->threads = c->next_threads;
	c->next_threads = swap;
	c->nr_threads = n;
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

void top_model_compute(struct top_model *m, const struct frame *frame)
{
	if (m->values)
		metric_engine_compute(m->session.engine, frame, m->values);
}

void top_model_update(struct top_model *m, const struct frame *frame)
{
	uint64_t now = frame->time_ns;
	double seconds = now > m->last_ns ? (double)(now - m->last_ns) / 1e9 : 0;

	m->interval_s = (double)frame->interval_ns / 1e9;
	m->elapsed_s = now > m->session.sampler.start_ns ? (double)(now - m->session.sampler.start_ns) / 1e9 : 0;
	update_coverage(m, frame);
	update_nodes(m, frame);
	update_lua_columns(m);
	if (m->focus_pid)
		update_threads(m, seconds);
	update_processes(m, seconds);
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
