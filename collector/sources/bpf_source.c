#include "sources/bpf_source.h"
#include "sources/registry.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/privileges.h"
#include "host/sysfs.h"

#include "bpf/memscope_bpf.h"
#include "sources/bpf/bpf_probes.h"

#define BATCH 256                 /* map entries per lookup_batch call */
#define DEFAULT_TOP_N 20
#define DEFAULT_RING_BYTES (4u << 20)

/* What a series shows; the sum over the target set of one map field, or more. */
enum bpf_value {
	V_FAULTS, V_FAULTS_USER, V_FAULTS_KERNEL, V_FAULTS_READ, V_FAULTS_WRITE,
	V_ONCPU_NS, V_OFFCPU_NS, V_SWITCHES, V_SWITCHES_VOLUNTARY, V_SWITCHES_INVOLUNTARY,
	V_MIGRATIONS, V_MIGRATIONS_CROSS_NODE, V_NUMA_TASK_MOVES, V_NUMA_TASK_SWAPS, V_PAGES_MIGRATED,
	V_PAGES_ALLOC,        /* one series per node */
	V_PAGES_ALLOC_UNPLACED,
	V_PROCESSES,          /* gauge */
	V_DROPS,
	V_NR,
};

#define P(x) BPF_PROBE_BIT(BPF_PROBE_##x)

struct series_desc {
	const char *name;
	const char *unit;
	enum series_kind kind;
	enum bpf_value value;
	unsigned probes;      /* the series is valid when any of these runs; 0: always */
};

static const struct series_desc series_descs[] = {
	{ "proc.faults", "", SERIES_COUNTER, V_FAULTS, P(FAULT_USER) | P(FAULT_KERNEL) },
	{ "proc.faults_user", "", SERIES_COUNTER, V_FAULTS_USER, P(FAULT_USER) },
	{ "proc.faults_kernel", "", SERIES_COUNTER, V_FAULTS_KERNEL, P(FAULT_KERNEL) },
	{ "proc.faults_read", "", SERIES_COUNTER, V_FAULTS_READ, P(FAULT_USER) | P(FAULT_KERNEL) },
	{ "proc.faults_write", "", SERIES_COUNTER, V_FAULTS_WRITE, P(FAULT_USER) | P(FAULT_KERNEL) },
	{ "proc.oncpu_ns", "ns", SERIES_COUNTER, V_ONCPU_NS, P(SCHED_SWITCH) },
	{ "proc.offcpu_ns", "ns", SERIES_COUNTER, V_OFFCPU_NS, P(SCHED_SWITCH) },
	{ "proc.switches", "", SERIES_COUNTER, V_SWITCHES, P(SCHED_SWITCH) },
	{ "proc.switches_voluntary", "", SERIES_COUNTER, V_SWITCHES_VOLUNTARY, P(SCHED_SWITCH) },
	{ "proc.switches_involuntary", "", SERIES_COUNTER, V_SWITCHES_INVOLUNTARY, P(SCHED_SWITCH) },
	{ "proc.migrations", "", SERIES_COUNTER, V_MIGRATIONS, P(MIGRATE_TASK) },
	{ "proc.migrations_cross_node", "", SERIES_COUNTER, V_MIGRATIONS_CROSS_NODE, P(MIGRATE_TASK) },
	{ "proc.numa_task_moves", "", SERIES_COUNTER, V_NUMA_TASK_MOVES, P(MOVE_NUMA) },
	{ "proc.numa_task_swaps", "", SERIES_COUNTER, V_NUMA_TASK_SWAPS, P(SWAP_NUMA) },
	{ "proc.pages_migrated", "", SERIES_COUNTER, V_PAGES_MIGRATED, P(MIGRATE_PAGES) },
	{ "proc.pages_alloc", "", SERIES_COUNTER, V_PAGES_ALLOC, P(PAGE_ALLOC) },
	{ "proc.pages_alloc_unplaced", "", SERIES_COUNTER, V_PAGES_ALLOC_UNPLACED, P(PAGE_ALLOC) },
	{ "proc.processes", "", SERIES_GAUGE, V_PROCESSES, 0 },
	{ "proc.bpf_drops", "", SERIES_COUNTER, V_DROPS, 0 },
};

#define NR_DESCS ((int)(sizeof(series_descs) / sizeof(series_descs[0])))


static const struct series_desc *find_desc(const char *name)
{
	for (int i = 0; i < NR_DESCS; i++)
		if (!strcmp(series_descs[i].name, name))
			return &series_descs[i];
	return NULL;
}

/* Sums over the target set, cumulative since the probes started. */
struct totals {
	uint64_t value[V_NR];
	uint64_t node_pages[BPF_SOURCE_MAX_NODES]; /* by slot in bpf_source.nodes */
};

struct bpf_series {
	enum bpf_value value;
	int node_slot;        /* V_PAGES_ALLOC */
	bool valid;
};

struct bpf_source {
	struct bpf_probes probes;
	bool filter;
	int top_n;
	int ncpus;
	int max_tasks;
	bool wanted[NR_DESCS];
	int nodes[BPF_SOURCE_MAX_NODES];  /* node ids with a pages series, ascending */
	int nr_nodes;
	struct bpf_series *series;
	int nr_series;
	struct totals cur, prev;
	uint64_t last_ns;
	/* Batch buffers, allocated at create so sampling never allocates. */
	__u32 *task_keys;
	struct ms_task_stats *task_values;   /* BATCH x ncpus */
	struct ms_node_key *node_keys;
	__u64 *node_values;                  /* BATCH x ncpus */
	__u32 *target_keys;
	__u8 *target_values;
	__u64 *drop_values;                  /* ncpus */
	/* The same for bpf_source_processes() and _threads(), which a sink's
	 * thread calls while the sampler samples: buffers of their own. */
	__u32 *reader_task_keys;
	struct ms_task_stats *reader_task_values;
	struct ms_node_key *reader_node_keys;
	__u64 *reader_node_values;
	/* Per-process table for bpf_source_processes(): open addressing. */
	struct bpf_process_stats *procs;
	int procs_capacity;                  /* a power of two */
	/* Slots of procs in use since the last bpf_source_processes(): only these
	 * are cleared and sorted, not the whole (large, mostly empty) table. */
	int *procs_used;
	int nr_procs_used;
	struct bpf_process_stats *procs_sorted;
	struct ring_buffer *ring;
	void (*on_event)(const struct ms_event *event, void *arg);
	void *event_arg;
	void *visit_ctx;                     /* for visitors that fill a caller's buffer */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Walk a map with BPF_MAP_LOOKUP_BATCH, BATCH entries at a time, calling
 * visit for each key with its per-CPU values. */
typedef void (*visit_fn)(struct bpf_source *s, const void *key, const void *values);

static int read_map(struct bpf_source *s, int fd, void *keys, size_t key_size, void *values,
		    size_t values_per_key_bytes, visit_fn visit)
{
	__u64 in_token = 0, out_token = 0;
	bool first = true;

	for (;;) {
		__u32 count = BATCH;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : &in_token, &out_token, keys, values, &count, NULL);
		int saved = errno;

		for (__u32 i = 0; i < count; i++)
			visit(s, (const char *)keys + i * key_size, (const char *)values + i * values_per_key_bytes);
		if (rc < 0)
			return saved == ENOENT ? 0 : -1;
		in_token = out_token;
		first = false;
	}
}

static void sum_task_into(uint64_t *value, const struct ms_task_stats *st)
{
	value[V_FAULTS_USER] += st->faults_user_read + st->faults_user_write;
	value[V_FAULTS_KERNEL] += st->faults_kernel_read + st->faults_kernel_write;
	value[V_FAULTS_READ] += st->faults_user_read + st->faults_kernel_read;
	value[V_FAULTS_WRITE] += st->faults_user_write + st->faults_kernel_write;
	value[V_ONCPU_NS] += st->oncpu_ns;
	value[V_OFFCPU_NS] += st->offcpu_ns;
	value[V_SWITCHES_VOLUNTARY] += st->switches_voluntary;
	value[V_SWITCHES_INVOLUNTARY] += st->switches_involuntary;
	value[V_MIGRATIONS] += st->migrations;
	value[V_MIGRATIONS_CROSS_NODE] += st->migrations_cross_node;
	value[V_NUMA_TASK_MOVES] += st->numa_task_moves;
	value[V_NUMA_TASK_SWAPS] += st->numa_task_swaps;
	value[V_PAGES_MIGRATED] += st->pages_migrated;
}

static void visit_task_total(struct bpf_source *s, const void *key, const void *values)
{
	const struct ms_task_stats *per_cpu = values;

	for (int c = 0; c < s->ncpus; c++)
		sum_task_into(s->cur.value, &per_cpu[c]);
}

static int node_slot(const struct bpf_source *s, __u32 node)
{
	for (int i = 0; i < s->nr_nodes; i++)
		if ((__u32)s->nodes[i] == node)
			return i;
	return -1;
}

static void visit_node_total(struct bpf_source *s, const void *key, const void *values)
{
	const struct ms_node_key *k = key;
	const __u64 *per_cpu = values;
	uint64_t pages = 0;
	int slot = node_slot(s, k->node);

	for (int c = 0; c < s->ncpus; c++)
		pages += per_cpu[c];
	if (slot >= 0)
		s->cur.node_pages[slot] += pages;
	else
		s->cur.value[V_PAGES_ALLOC_UNPLACED] += pages;
}

static void visit_target(struct bpf_source *s, const void *key, const void *values)
{
	s->cur.value[V_PROCESSES]++;
}

static int read_totals(struct bpf_source *s)
{
	const struct bpf_probes *p = &s->probes;
	int rc = 0;

	memset(&s->cur, 0, sizeof(s->cur));
	rc |= read_map(s, bpf_probes_task_stats_fd(p), s->task_keys, sizeof(__u32), s->task_values,
		       (size_t)s->ncpus * sizeof(struct ms_task_stats), visit_task_total);
	rc |= read_map(s, bpf_probes_node_pages_fd(p), s->node_keys, sizeof(struct ms_node_key), s->node_values,
		       (size_t)s->ncpus * sizeof(__u64), visit_node_total);
	if (s->filter)
		rc |= read_map(s, bpf_probes_targets_fd(p), s->target_keys, sizeof(__u32), s->target_values,
			       sizeof(__u8), visit_target);
	for (__u32 reason = 0; reason < MS_DROP_NR; reason++) {
		if (bpf_map_lookup_elem(bpf_probes_drops_fd(p), &reason, s->drop_values) < 0) {
			rc = -1;
			continue;
		}
		for (int c = 0; c < s->ncpus; c++)
			s->cur.value[V_DROPS] += s->drop_values[c];
	}
	s->cur.value[V_FAULTS] = s->cur.value[V_FAULTS_USER] + s->cur.value[V_FAULTS_KERNEL];
	s->cur.value[V_SWITCHES] = s->cur.value[V_SWITCHES_VOLUNTARY] + s->cur.value[V_SWITCHES_INVOLUNTARY];
	return rc;
}

static int bpf_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct bpf_source *s = src->priv;
	int capacity = 0;

	src->first = table->nr;
	for (int d = 0; d < NR_DESCS; d++)
		if (s->wanted[d])
			capacity += series_descs[d].value == V_PAGES_ALLOC ? s->nr_nodes : 1;
	s->series = calloc((size_t)capacity + 1, sizeof(*s->series));
	if (!s->series) {
		ms_error_set(err, "bpf source: out of memory");
		return -1;
	}
	for (int d = 0; d < NR_DESCS; d++) {
		const struct series_desc *desc = &series_descs[d];
		bool valid = !desc->probes || (s->probes.attached & desc->probes);
		int copies = desc->value == V_PAGES_ALLOC ? s->nr_nodes : 1;

		if (!s->wanted[d])
			continue;
		for (int i = 0; i < copies; i++) {
			struct series_labels labels;

			series_labels_init(&labels);
			if (desc->value == V_PAGES_ALLOC)
				labels.node = s->nodes[i];
			if (series_table_add(table, desc->name, desc->unit, 1.0, desc->kind, &labels) < 0) {
				ms_error_set(err, "bpf source: out of memory adding series %s", desc->name);
				return -1;
			}
			s->series[s->nr_series++] = (struct bpf_series){ desc->value, i, valid };
		}
	}
	src->count = s->nr_series;
	return 0;
}

static int bpf_enable(struct source *src, struct ms_error *err)
{
	struct bpf_source *s = src->priv;

	/* Counts from here on: what happened before enable is the baseline. */
	s->last_ns = now_ns();
	bpf_probes_count_from(&s->probes, s->last_ns);
	read_totals(s);
	s->prev = s->cur;
	return 0;
}

static int bpf_disable(struct source *src)
{
	return 0;
}

static uint64_t series_value(const struct bpf_source *s, const struct totals *t, const struct bpf_series *ser)
{
	return ser->value == V_PAGES_ALLOC ? t->node_pages[ser->node_slot] : t->value[ser->value];
}

static int bpf_sample(struct source *src, struct frame *frame)
{
	struct bpf_source *s = src->priv;
	uint64_t now = now_ns(), interval = now - s->last_ns;
	bool read_ok = read_totals(s) == 0;

	if (s->ring)
		ring_buffer__consume(s->ring);
	for (int i = 0; i < s->nr_series; i++) {
		const struct bpf_series *ser = &s->series[i];
		struct sample *out = &frame->samples[src->first + i];
		uint64_t cur = series_value(s, &s->cur, ser), prev = series_value(s, &s->prev, ser);

		out->valid = read_ok && ser->valid;
		out->enabled_ns = out->running_ns = interval;
		if (ser->value == V_PROCESSES)
			out->value = cur;
		else
			out->value = cur >= prev ? cur - prev : 0;
	}
	if (read_ok)
		s->prev = s->cur;
	s->last_ns = now;
	/* Everyone followed has exited. */
	if (read_ok && s->filter && s->cur.value[V_PROCESSES] == 0)
		src->finished = true;
	return read_ok ? 0 : -1;
}

static void bpf_close(struct source *src)
{
	struct bpf_source *s = src->priv;

	if (!s)
		return;
	ring_buffer__free(s->ring);
	bpf_probes_close(&s->probes);
	free(s->series);
	free(s->task_keys);
	free(s->task_values);
	free(s->node_keys);
	free(s->node_values);
	free(s->target_keys);
	free(s->target_values);
	free(s->reader_task_keys);
	free(s->reader_task_values);
	free(s->reader_node_keys);
	free(s->reader_node_values);
	free(s->drop_values);
	free(s->procs);
	free(s->procs_used);
	free(s->procs_sorted);
	free(s);
	src->priv = NULL;
}

static const struct source_ops bpf_source_ops = {
	.name = "bpf",
	.open = bpf_open,
	.enable = bpf_enable,
	.disable = bpf_disable,
	.sample = bpf_sample,
	.close = bpf_close,
};

static void add_node(struct bpf_source *s, int node)
{
	int at = 0;

	if (node < 0 || s->nr_nodes == BPF_SOURCE_MAX_NODES || node_slot(s, (__u32)node) >= 0)
		return;
	while (at < s->nr_nodes && s->nodes[at] < node)
		at++;
	memmove(&s->nodes[at + 1], &s->nodes[at], (size_t)(s->nr_nodes - at) * sizeof(int));
	s->nodes[at] = node;
	s->nr_nodes++;
}

static int select_series(struct bpf_source *s, const char *const *names, int nr_names, unsigned *probes,
			 struct ms_error *err)
{
	*probes = 0;
	for (int d = 0; d < NR_DESCS; d++)
		s->wanted[d] = nr_names <= 0;
	for (int i = 0; i < nr_names; i++) {
		const struct series_desc *desc = find_desc(names[i]);

		if (!desc) {
			ms_error_set(err, "bpf source: unknown series \"%s\"; known: proc.faults, proc.pages_alloc, "
				     "proc.offcpu_ns, proc.migrations, ... (memscope list --events)", names[i]);
			return -1;
		}
		s->wanted[desc - series_descs] = true;
	}
	for (int d = 0; d < NR_DESCS; d++) {
		if (!s->wanted[d])
			continue;
		*probes |= series_descs[d].probes;
		/* Pages that land in no node range are shown, never silently lost. */
		if (series_descs[d].value == V_PAGES_ALLOC)
			s->wanted[find_desc("proc.pages_alloc_unplaced") - series_descs] = true;
	}
	return 0;
}

static int alloc_buffers(struct bpf_source *s, struct ms_error *err)
{
	size_t n = BATCH, cpus = (size_t)s->ncpus;

	s->procs_capacity = 1;
	while (s->procs_capacity < 2 * s->max_tasks)
		s->procs_capacity *= 2;
	s->task_keys = calloc(n, sizeof(__u32));
	s->task_values = calloc(n * cpus, sizeof(struct ms_task_stats));
	s->node_keys = calloc(n, sizeof(struct ms_node_key));
	s->node_values = calloc(n * cpus, sizeof(__u64));
	s->target_keys = calloc(n, sizeof(__u32));
	s->target_values = calloc(n, sizeof(__u64));
	s->drop_values = calloc(cpus, sizeof(__u64));
	s->reader_task_keys = calloc(n, sizeof(__u32));
	s->reader_task_values = calloc(n * cpus, sizeof(struct ms_task_stats));
	s->reader_node_keys = calloc(n, sizeof(struct ms_node_key));
	s->reader_node_values = calloc(n * cpus, sizeof(__u64));
	s->procs = calloc((size_t)s->procs_capacity, sizeof(*s->procs));
	s->procs_used = calloc((size_t)s->procs_capacity, sizeof(int));
	s->procs_sorted = calloc((size_t)s->procs_capacity, sizeof(*s->procs_sorted));
	if (!s->task_keys || !s->task_values || !s->node_keys || !s->node_values || !s->target_keys ||
	    !s->target_values || !s->drop_values || !s->procs || !s->procs_used || !s->procs_sorted ||
	    !s->reader_task_keys || !s->reader_task_values || !s->reader_node_keys || !s->reader_node_values) {
		ms_error_set(err, "bpf source: out of memory for the map read buffers");
		return -1;
	}
	return 0;
}

static int ring_event(void *ctx, void *data, size_t size)
{
	const struct bpf_source *s = ctx;

	if (size >= sizeof(struct ms_event))
		s->on_event(data, s->event_arg);
	return 0;
}

int bpf_source_create(struct source *src, const struct host *host, const struct bpf_source_options *opt,
		      const char *const *names, int nr_names, struct ms_error *err)
{
	struct bpf_source *s = calloc(1, sizeof(*s));
	struct bpf_pfn_table own_table = { 0 };
	const struct bpf_pfn_table *table = opt->pfn_table;
	int *cpu_node = NULL;
	int max_cpu = host->topo.max_cpu;
	unsigned probes;
	struct bpf_probe_config cfg;
	FILE *warnings = opt->warnings ? opt->warnings : stderr;
	size_t ring_bytes = opt->on_event ? (opt->event_ring_bytes ? opt->event_ring_bytes : DEFAULT_RING_BYTES) : 0;

	memset(src, 0, sizeof(*src));
	if (!s) {
		ms_error_set(err, "bpf source: out of memory");
		return -1;
	}
	src->ops = &bpf_source_ops;
	src->priv = s;
	s->filter = !opt->system_wide;
	s->top_n = opt->top_n > 0 ? opt->top_n : DEFAULT_TOP_N;
	s->max_tasks = s->filter ? 8192 : 65536;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		ms_error_set(err, "bpf source: cannot count the possible CPUs (%s)", strerror(-s->ncpus));
		goto fail;
	}
	if (s->filter && opt->nr_tgids <= 0) {
		ms_error_set(err, "bpf source: no process to follow (give pids, or system-wide)");
		goto fail;
	}
	if (select_series(s, names, nr_names, &probes, err) < 0 || alloc_buffers(s, err) < 0)
		goto fail;

	if (!table) {
		struct ms_error table_err;

		if (bpf_pfn_table_load(&own_table, host->roots.sys, &table_err) == 0) {
			table = &own_table;
		} else if (host->topo.nr_nodes == 1) {
			/* One node owns every page; no table needed. */
			bpf_pfn_table_add(&own_table, 0, UINT64_MAX, host->topo.nodes[0], &table_err);
			table = &own_table;
		} else if (probes & P(PAGE_ALLOC)) {
			fprintf(warnings, "memscope: %s; page allocations are counted in proc.pages_alloc_unplaced\n",
				table_err.text);
		}
	}
	for (int i = 0; i < host->topo.nr_nodes; i++)
		add_node(s, host->topo.nodes[i]);
	for (int i = 0; table && i < table->nr; i++)
		add_node(s, table->ranges[i].node);

	cpu_node = malloc((size_t)(max_cpu > 0 ? max_cpu : 1) * sizeof(int));
	if (!cpu_node) {
		ms_error_set(err, "bpf source: out of memory");
		goto fail;
	}
	for (int c = 0; c < max_cpu; c++)
		cpu_node[c] = -1;
	for (int i = 0; i < host->topo.nr_cpus; i++)
		cpu_node[host->topo.cpus[i].cpu] = host->topo.cpus[i].node;

	cfg = (struct bpf_probe_config){
		.wanted = probes,
		.filter_tgids = s->filter,
		.tgids = opt->tgids,
		.nr_tgids = opt->nr_tgids,
		.max_tasks = s->max_tasks,
		.max_processes = s->filter ? 4096 : 1,
		.event_ring_bytes = ring_bytes,
		.pfn_table = table,
		.cpu_node = cpu_node,
		.nr_cpu_node = max_cpu,
		.btf_path = opt->btf_path ? opt->btf_path : getenv("MEMSCOPE_BPF_BTF"),
		.attach_override = getenv("MEMSCOPE_BPF_ATTACH"),
	};
	if (bpf_probes_open(&s->probes, &cfg, err) < 0)
		goto fail;
	if (s->probes.warnings[0])
		fprintf(warnings, "memscope: %s", s->probes.warnings);
	if (opt->on_event) {
		s->on_event = opt->on_event;
		s->event_arg = opt->event_arg;
		s->ring = ring_buffer__new(bpf_probes_events_fd(&s->probes), ring_event, s, NULL);
		if (!s->ring) {
			ms_error_set(err, "bpf source: cannot map the event ring buffer (%s)", strerror(errno));
			goto fail;
		}
	}
	free(cpu_node);
	bpf_pfn_table_free(&own_table);
	s->last_ns = now_ns();
	return 0;
fail:
	free(cpu_node);
	bpf_pfn_table_free(&own_table);
	bpf_close(src);
	memset(src, 0, sizeof(*src));
	return -1;
}

/* --- per-process view ------------------------------------------------- */

static struct bpf_process_stats *proc_slot(struct bpf_source *s, __u32 tgid)
{
	unsigned mask = (unsigned)s->procs_capacity - 1;

	for (unsigned i = (tgid * 2654435761u) & mask, n = 0; n < (unsigned)s->procs_capacity; i = (i + 1) & mask, n++) {
		struct bpf_process_stats *p = &s->procs[i];

		if (p->tgid == (pid_t)tgid)
			return p;
		if (p->tgid == 0) {
			p->tgid = (pid_t)tgid;
			s->procs_used[s->nr_procs_used++] = (int)i;
			return p;
		}
	}
	return NULL;
}

static void visit_task_process(struct bpf_source *s, const void *key, const void *values)
{
	const struct ms_task_stats *per_cpu = values;
	uint64_t v[V_NR] = { 0 };
	__u32 tgid = 0;

	for (int c = 0; c < s->ncpus; c++) {
		sum_task_into(v, &per_cpu[c]);
		if (per_cpu[c].tgid)
			tgid = per_cpu[c].tgid;
	}
	struct bpf_process_stats *p = tgid ? proc_slot(s, tgid) : NULL;

	if (!p)
		return;
	p->nr_threads++;
	p->faults_user += v[V_FAULTS_USER];
	p->faults_kernel += v[V_FAULTS_KERNEL];
	p->faults += v[V_FAULTS_USER] + v[V_FAULTS_KERNEL];
	p->faults_write += v[V_FAULTS_WRITE];
	p->oncpu_ns += v[V_ONCPU_NS];
	p->offcpu_ns += v[V_OFFCPU_NS];
	p->switches_voluntary += v[V_SWITCHES_VOLUNTARY];
	p->switches_involuntary += v[V_SWITCHES_INVOLUNTARY];
	p->migrations += v[V_MIGRATIONS];
	p->migrations_cross_node += v[V_MIGRATIONS_CROSS_NODE];
}

static void visit_node_process(struct bpf_source *s, const void *key, const void *values)
{
	const struct ms_node_key *k = key;
	const __u64 *per_cpu = values;
	uint64_t pages = 0;
	struct bpf_process_stats *p = proc_slot(s, k->tgid);

	if (!p)
		return;
	for (int c = 0; c < s->ncpus; c++)
		pages += per_cpu[c];
	p->pages_alloc += pages;
	if (k->node < BPF_SOURCE_MAX_NODES)
		p->pages_alloc_node[k->node] += pages;
}

static int by_faults_desc(const void *a, const void *b)
{
	const struct bpf_process_stats *x = a, *y = b;

	if (x->faults != y->faults)
		return x->faults < y->faults ? 1 : -1;
	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns < y->oncpu_ns ? 1 : -1;
	return x->tgid - y->tgid;
}

int bpf_source_processes(struct source *src, struct bpf_process_stats *out, int max)
{
	struct bpf_source *s = src->priv;
	int n = 0, keep;

	int rc = 0;

	if (read_map(s, bpf_probes_task_stats_fd(&s->probes), s->reader_task_keys, sizeof(__u32),
		     s->reader_task_values, (size_t)s->ncpus * sizeof(struct ms_task_stats), visit_task_process) < 0 ||
	    read_map(s, bpf_probes_node_pages_fd(&s->probes), s->reader_node_keys, sizeof(struct ms_node_key),
		     s->reader_node_values, (size_t)s->ncpus * sizeof(__u64), visit_node_process) < 0)
		rc = -1;
	for (int i = 0; i < s->nr_procs_used; i++) {
		struct bpf_process_stats *p = &s->procs[s->procs_used[i]];

		s->procs_sorted[n++] = *p;
		memset(p, 0, sizeof(*p)); /* ready for the next call */
	}
	s->nr_procs_used = 0;
	if (rc < 0)
		return -1;
	qsort(s->procs_sorted, (size_t)n, sizeof(*s->procs_sorted), by_faults_desc);
	keep = n < max ? n : max;
	if (keep > s->top_n)
		keep = s->top_n;
	memcpy(out, s->procs_sorted, (size_t)keep * sizeof(*out));
	return keep;
}

int bpf_source_nr_targets(struct source *src)
{
	struct bpf_source *s = src->priv;

	if (!s->filter)
		return -1;
	s->cur.value[V_PROCESSES] = 0;
	if (read_map(s, bpf_probes_targets_fd(&s->probes), s->target_keys, sizeof(__u32), s->target_values,
		     sizeof(__u8), visit_target) < 0)
		return -1;
	return (int)s->cur.value[V_PROCESSES];
}

/* Per-thread values, for stat --per-thread. */

int bpf_thread_value_index(const char *series)
{
	const struct series_desc *d = find_desc(series);

	_Static_assert(V_NR <= BPF_THREAD_VALUES, "bpf_thread_values.value is too small");
	if (!d || d->value == V_PAGES_ALLOC || d->value == V_PAGES_ALLOC_UNPLACED ||
	    d->value == V_PROCESSES || d->value == V_DROPS)
		return -1;
	return (int)d->value;
}

struct thread_walk {
	struct bpf_thread_values *out;
	int max;
	int nr;
};

static void visit_task_thread(struct bpf_source *s, const void *key, const void *values)
{
	const struct ms_task_stats *per_cpu = values;
	struct thread_walk *walk = s->visit_ctx;
	struct bpf_thread_values *t;

	if (walk->nr >= walk->max)
		return;
	t = &walk->out[walk->nr++];
	memset(t, 0, sizeof(*t));
	t->tid = (pid_t)*(const __u32 *)key;
	for (int c = 0; c < s->ncpus; c++) {
		sum_task_into(t->value, &per_cpu[c]);
		if (per_cpu[c].tgid)
			t->tgid = (pid_t)per_cpu[c].tgid;
	}
	t->value[V_FAULTS] = t->value[V_FAULTS_USER] + t->value[V_FAULTS_KERNEL];
	t->value[V_SWITCHES] = t->value[V_SWITCHES_VOLUNTARY] + t->value[V_SWITCHES_INVOLUNTARY];
}

static int by_tid(const void *a, const void *b)
{
	const struct bpf_thread_values *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

int bpf_source_threads(struct source *src, struct bpf_thread_values *out, int max)
{
	struct bpf_source *s = src->priv;
	struct thread_walk walk = { out, max, 0 };
	int rc;

	s->visit_ctx = &walk;
	rc = read_map(s, bpf_probes_task_stats_fd(&s->probes), s->reader_task_keys, sizeof(__u32),
		      s->reader_task_values, (size_t)s->ncpus * sizeof(struct ms_task_stats), visit_task_thread);
	s->visit_ctx = NULL;
	if (rc < 0)
		return -1;
	qsort(out, (size_t)walk.nr, sizeof(*out), by_tid);
	return walk.nr;
}

/* ---- The registry kind: the proc.* series ---- */

static bool bpf_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	return bpf_series_name_known(name);
}

static int bpf_kind_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			   struct ms_error *err)
{
	struct bpf_source_options bopt;

	memset(&bopt, 0, sizeof(bopt));
	bopt.tgids = req->target->pids;
	bopt.nr_tgids = req->target->nr_pids;
	bopt.system_wide = req->target->system_wide;
	bopt.top_n = req->top_n;
	bopt.warnings = req->notes;
	if (bpf_source_create(src, req->host, &bopt, req->names, req->nr_names, err) < 0)
		return 1;
	src->kind = kind;
	return 0;
}

/* The probes need the privileges to load tracing programs and the kernel's
 * BTF (CO-RE); whether every probe attaches is known only when they load. */
static bool bpf_present(const struct source_kind *kind, const struct host *host, struct ms_error *why)
{
	struct privileges priv;
	char btf[4096];
	const char *env = getenv("MEMSCOPE_BPF_BTF");

	(void)kind;
	privileges_read(&priv);
	if (!privileges_allow_bpf(&priv)) {
		ms_error_set(why, "loading eBPF probes needs root, or CAP_BPF with CAP_PERFMON "
			     "(sudo setcap cap_perfmon,cap_bpf+ep $(command -v memscope))");
		return false;
	}
	if (env && env[0])
		snprintf(btf, sizeof(btf), "%s", env);
	else
		sysfs_join(btf, sizeof(btf), host->roots.sys, "kernel/btf/vmlinux");
	if (access(btf, R_OK) < 0) {
		ms_error_set(why, "no kernel BTF at %s (CONFIG_DEBUG_INFO_BTF): the probes are compiled once "
			     "and need it to run on this kernel", btf);
		return false;
	}
	return true;
}

const struct source_kind bpf_source_kind = {
	.name = "bpf",
	.description = "memscope's eBPF probes: faults, page placement, scheduling, NUMA balancing (proc.*)",
	.mode = SOURCE_LIVE,
	.claims = bpf_claims,
	.present = bpf_present,
	.create = bpf_kind_create,
	.optional = true,
};
