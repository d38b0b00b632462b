/* The eBPF source (bpf_source.h): memscope's probes read as proc.* series.
 * What is where:
 * - The series it serves (series_descs) and their derivation (Values).
 * - Processes: the per-process table, their series added and retired.
 * - Reading the task table the probes fill: threads gone, exits, renames.
 * - Source operations: open, enable, sample (a frame's values), close.
 * - Creating: the per-node state, the task table's size, the ring of exit
 *   records, bpf_source_init.
 * - The registry kind: which names are proc.* series, and whether this
 *   host can load the probes. */
#include "sources/bpf_source.h"
#include "sources/registry.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/memscope_bpf.h"
#include "host/privileges.h"
#include "host/sysfs.h"
#include "sources/bpf/bpf_probes.h"
#include "util/array.h"

#define DEFAULT_RING_BYTES (4u << 20)
#define EXIT_RING_BYTES (256u << 10)   /* ~800 exits between two samples before the reader is woken */
#define MIN_TASKS 4096
#define MAX_TASKS (1 << 20)
#define MAX_NAMED_OVERFLOWS 16          /* processes named when the task table is full */
#define NV MS_C_NR

/* What a series shows, computed from a task's counters. */
enum bpf_value {
	V_FAULTS, V_FAULTS_USER, V_FAULTS_KERNEL, V_FAULTS_READ, V_FAULTS_WRITE,
	V_ONCPU_NS, V_OFFCPU_NS, V_SWITCHES, V_SWITCHES_VOLUNTARY, V_SWITCHES_INVOLUNTARY,
	V_MIGRATIONS, V_MIGRATIONS_CROSS_NODE, V_NUMA_TASK_MOVES, V_NUMA_TASK_SWAPS, V_PAGES_MIGRATED,
	V_PAGES_MIGRATE_FAILED,
	V_PAGES_MIGRATE_FAILED_BY_REASON, /* one series per reason */
	V_PAGES_ALLOC,        /* one series per node */
	V_PAGES_ALLOC_UNPLACED,
	V_PROCESSES,          /* gauge */
	V_THREADS,            /* gauge: live threads */
	V_CPU,                /* gauge, per thread: the CPU it last ran on */
	V_STATE,              /* gauge, per thread: the kernel's task state at its last switch away */
	V_DROPS,
	V_NR,
};

#define P(x) BPF_PROBE_BIT(BPF_PROBE_##x)

/* Which series a desc has: the total, and per process or per thread.
 * THREAD_ONLY descs have no total (a thread's CPU has no sum). */
enum task_scope { TOTAL_ONLY, PER_PROCESS = 1, PER_THREAD = 2, PER_TASK = 3, THREAD_ONLY = 6 };

struct series_desc {
	const char *name;
	const char *unit;
	enum series_kind kind;
	enum bpf_value value;
	unsigned probes;      /* the series is valid when any of these runs; 0: always */
	enum task_scope scope;
};

static const struct series_desc series_descs[] = {
	{ "proc.faults", "", SERIES_COUNTER, V_FAULTS, P(FAULT_USER) | P(FAULT_KERNEL), PER_TASK },
	{ "proc.faults_user", "", SERIES_COUNTER, V_FAULTS_USER, P(FAULT_USER), PER_TASK },
	{ "proc.faults_kernel", "", SERIES_COUNTER, V_FAULTS_KERNEL, P(FAULT_KERNEL), PER_TASK },
	{ "proc.faults_read", "", SERIES_COUNTER, V_FAULTS_READ, P(FAULT_USER) | P(FAULT_KERNEL), PER_TASK },
	{ "proc.faults_write", "", SERIES_COUNTER, V_FAULTS_WRITE, P(FAULT_USER) | P(FAULT_KERNEL), PER_TASK },
	{ "proc.oncpu_ns", "ns", SERIES_COUNTER, V_ONCPU_NS, P(SCHED_SWITCH), PER_TASK },
	{ "proc.offcpu_ns", "ns", SERIES_COUNTER, V_OFFCPU_NS, P(SCHED_SWITCH), PER_TASK },
	{ "proc.switches", "", SERIES_COUNTER, V_SWITCHES, P(SCHED_SWITCH), PER_TASK },
	{ "proc.switches_voluntary", "", SERIES_COUNTER, V_SWITCHES_VOLUNTARY, P(SCHED_SWITCH), PER_TASK },
	{ "proc.switches_involuntary", "", SERIES_COUNTER, V_SWITCHES_INVOLUNTARY, P(SCHED_SWITCH), PER_TASK },
	{ "proc.migrations", "", SERIES_COUNTER, V_MIGRATIONS, P(MIGRATE_TASK), PER_TASK },
	{ "proc.migrations_cross_node", "", SERIES_COUNTER, V_MIGRATIONS_CROSS_NODE, P(MIGRATE_TASK), PER_TASK },
	{ "proc.numa_task_moves", "", SERIES_COUNTER, V_NUMA_TASK_MOVES, P(MOVE_NUMA), PER_TASK },
	{ "proc.numa_task_swaps", "", SERIES_COUNTER, V_NUMA_TASK_SWAPS, P(SWAP_NUMA), PER_TASK },
	{ "proc.pages_migrated", "", SERIES_COUNTER, V_PAGES_MIGRATED, P(MIGRATE_PAGES), PER_TASK },
	{ "proc.pages_migrate_failed", "", SERIES_COUNTER, V_PAGES_MIGRATE_FAILED, P(MIGRATE_PAGES), PER_TASK },
	{ "proc.pages_migrate_failed_by_reason", "", SERIES_COUNTER, V_PAGES_MIGRATE_FAILED_BY_REASON, P(MIGRATE_PAGES),
	  PER_TASK },
	{ "proc.pages_alloc", "", SERIES_COUNTER, V_PAGES_ALLOC, P(PAGE_ALLOC), PER_TASK },
	{ "proc.pages_alloc_unplaced", "", SERIES_COUNTER, V_PAGES_ALLOC_UNPLACED, P(PAGE_ALLOC), PER_TASK },
	{ "proc.processes", "", SERIES_GAUGE, V_PROCESSES, 0, TOTAL_ONLY },
	/* A thread is counted once it has a slot, and the switch probe is what
	 * gives every running thread one (the kernel's count is read there too):
	 * asked for alone, with no probe that sees threads, it read 0. */
	{ "proc.threads", "", SERIES_GAUGE, V_THREADS, P(SCHED_SWITCH), PER_PROCESS },
	{ "proc.cpu", "", SERIES_GAUGE, V_CPU, P(SCHED_SWITCH), THREAD_ONLY },
	{ "proc.state", "", SERIES_GAUGE, V_STATE, P(SCHED_SWITCH), THREAD_ONLY },
	{ "proc.bpf_drops", "", SERIES_COUNTER, V_DROPS, 0, TOTAL_ONLY },
};

#define NR_DESCS ((int)(ARRAY_SIZE(series_descs)))
/* Series of one process or thread: every desc, pages once per kept node. */
#define MAX_TASK_SERIES (NR_DESCS + MS_BPF_SLOT_NODES + MS_BPF_MIGRATE_REASONS)

/* The instance label of each reason of proc.pages_migrate_failed_by_reason:
 * the kernel's own names (its tracepoint prints them, include/trace/events/migrate.h),
 * by the value of enum migrate_reason. */
static const char *const migrate_reasons[MS_BPF_MIGRATE_REASONS] = {
	"compaction", "memory_failure", "memory_hotplug", "syscall_or_cpuset", "mempolicy_mbind",
	"numa_misplaced", "contig_range", "longterm_pin", "demotion", "damon", "other",
};

/* How many series a desc has in the totals (and per task). */
static int desc_copies(const struct series_desc *d, int nr_nodes)
{
	if (d->value == V_PAGES_ALLOC)
		return nr_nodes;
	return d->value == V_PAGES_MIGRATE_FAILED_BY_REASON ? MS_BPF_MIGRATE_REASONS : 1;
}

static const struct series_desc *find_desc(const char *name)
{
	for (int i = 0; i < NR_DESCS; i++)
		if (!strcmp(series_descs[i].name, name))
			return &series_descs[i];
	return NULL;
}

/* One series the source fills: which value, for which node. */
struct bpf_series {
	enum bpf_value value;
	int node_slot;        /* V_PAGES_ALLOC: index into bpf_source.nodes */
	bool valid;
};

/* User space's view of one slot of the task table. */
struct shadow {
	bool used;            /* holds a task seen at a sample (or at enable) */
	bool in_proc;         /* counted in its process's nr_threads */
	bool gone;            /* gone_gen's task has exited: its slot may still read as live a moment */
	uint32_t gen, gone_gen;
	pid_t tid, tgid;
	uint32_t comm_gen;
	uint64_t value[NV];   /* counters at the last read */
};

/* Per thread (per_thread): its series and what it did since the last sample. */
struct thread_out {
	bool has_series;
	int series[MAX_TASK_SERIES];
	uint64_t delta[NV];
	pid_t tid, tgid;
	int cpu;
	uint32_t run_state;
	char comm[16];
};

/* A process with live threads (or gone since the last sample). */
struct proc {
	pid_t tgid;           /* 0: unused entry */
	char comm[16];
	int nr_threads;       /* live threads with a slot */
	int group_threads;    /* the kernel's count of its live threads (largest its slots read this sample) */
	bool named_by_leader; /* comm is the leader thread's */
	bool has_series;      /* per_process: series[] are in the table */
	uint64_t delta[NV];   /* since the last sample */
	int series[MAX_TASK_SERIES]; /* per-process series indices, -1: none */
};

struct bpf_source {
	struct bpf_probes probes;
	bool filter;
	bool per_process, per_thread;
	pid_t thread_tgid;                /* per_thread: only this process's threads; 0: all */
	int ncpus;
	bool wanted[NR_DESCS];
	int nodes[BPF_SOURCE_MAX_NODES];  /* node ids with a pages series, ascending */
	int nr_nodes;
	int node_index[BPF_SOURCE_MAX_NODES]; /* node id -> its page counter in a slot, -1: unplaced */
	struct bpf_series *series;        /* the totals' series, in table order from src->first */
	int nr_series;
	/* Per-task series: which desc/node each of the MAX_TASK_SERIES positions is. */
	struct bpf_series task_series[MAX_TASK_SERIES];
	const struct series_desc *task_desc[MAX_TASK_SERIES];
	int nr_task_series;
	struct series_table *table;       /* the sampler's, for series added during the run */
	uint64_t last_ns;
	bool enabled;
	/* Totals: this sample's change, and the gauges. */
	uint64_t delta[NV];
	uint64_t drops_prev, drops_now;
	int64_t processes_base;           /* system-wide: processes at enable, before the probes' delta */
	int live_threads;
	int finish_waits;                 /* samples since the last followed process exited */
	/* Slots as user space last saw them. */
	struct shadow *shadow;
	struct thread_out *threads;       /* per_thread: one per slot */
	struct thread_out *gone;          /* per_thread: threads gone since the last sample */
	int nr_gone, gone_cap;
	/* Per-process series of processes renamed since the last sample (exec):
	 * they end with the next frame, holding zeros there (the interval's
	 * counts go to the new name's series; a stale value would count twice). */
	struct renamed_series {
		int series[MAX_TASK_SERIES];
	} *renamed;
	int nr_renamed, renamed_cap;
	/* Processes: the live ones packed at procs[0, nr_live), found by tgid
	 * through open addressing in proc_index (position + 1, 0: empty). Packed,
	 * only as many entries are ever touched as processes lived at once; an
	 * entry per hash place made every new PID fault in another page of a
	 * table of several MB until all of it was resident. */
	struct proc *procs;               /* procs_capacity / 2 entries */
	int *proc_index;
	int procs_capacity;               /* a power of two */
	int nr_live;
	/* Reading */
	struct ring_buffer *exits;
	struct ring_buffer *ring;
	void (*on_event)(const struct ms_event *event, void *arg);
	void *event_arg;
	__u64 *drop_values;               /* ncpus */
	__u32 *target_keys;
	__u8 *target_values;
	/* A full task table is named once per process. */
	FILE *warnings;
	uint32_t overflow_seen;
	pid_t named[MAX_NAMED_OVERFLOWS];
	int nr_named;
	bool said_full;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- Values ---- */

static uint64_t derive(const struct bpf_series *ser, const uint64_t *c, const struct bpf_source *s)
{
	switch (ser->value) {
	case V_FAULTS:
		return c[MS_C_FAULTS_USER_READ] + c[MS_C_FAULTS_USER_WRITE] + c[MS_C_FAULTS_KERNEL_READ] +
		       c[MS_C_FAULTS_KERNEL_WRITE];
	case V_FAULTS_USER: return c[MS_C_FAULTS_USER_READ] + c[MS_C_FAULTS_USER_WRITE];
	case V_FAULTS_KERNEL: return c[MS_C_FAULTS_KERNEL_READ] + c[MS_C_FAULTS_KERNEL_WRITE];
	case V_FAULTS_READ: return c[MS_C_FAULTS_USER_READ] + c[MS_C_FAULTS_KERNEL_READ];
	case V_FAULTS_WRITE: return c[MS_C_FAULTS_USER_WRITE] + c[MS_C_FAULTS_KERNEL_WRITE];
	case V_ONCPU_NS: return c[MS_C_ONCPU_NS];
	case V_OFFCPU_NS: return c[MS_C_OFFCPU_NS];
	case V_SWITCHES: return c[MS_C_SWITCHES_VOLUNTARY] + c[MS_C_SWITCHES_INVOLUNTARY];
	case V_SWITCHES_VOLUNTARY: return c[MS_C_SWITCHES_VOLUNTARY];
	case V_SWITCHES_INVOLUNTARY: return c[MS_C_SWITCHES_INVOLUNTARY];
	case V_MIGRATIONS: return c[MS_C_MIGRATIONS];
	case V_MIGRATIONS_CROSS_NODE: return c[MS_C_MIGRATIONS_CROSS_NODE];
	case V_NUMA_TASK_MOVES: return c[MS_C_NUMA_TASK_MOVES];
	case V_NUMA_TASK_SWAPS: return c[MS_C_NUMA_TASK_SWAPS];
	case V_PAGES_MIGRATED: return c[MS_C_PAGES_MIGRATED];
	case V_PAGES_MIGRATE_FAILED: return c[MS_C_PAGES_MIGRATE_FAILED];
	case V_PAGES_MIGRATE_FAILED_BY_REASON: return c[MS_C_MIGRATE_FAILED_REASON0 + ser->node_slot];
	case V_PAGES_ALLOC: {
		int k = s->node_index[s->nodes[ser->node_slot]];

		return k >= 0 ? c[MS_C_PAGES_NODE0 + k] : 0;
	}
	case V_PAGES_ALLOC_UNPLACED: {
		uint64_t unplaced = c[MS_C_PAGES_UNPLACED];

		/* Nodes the host lists past the kept ones have no series. */
		for (int k = 0; k < MS_BPF_SLOT_NODES; k++) {
			bool shown = false;

			for (int i = 0; i < s->nr_nodes && !shown; i++)
				shown = s->node_index[s->nodes[i]] == k;
			if (!shown)
				unplaced += c[MS_C_PAGES_NODE0 + k];
		}
		return unplaced;
	}
	default: return 0;
	}
}

static void add_counters(uint64_t *to, const uint64_t *delta)
{
	for (int i = 0; i < NV; i++)
		to[i] += delta[i];
}

/* ---- Processes ---- */

static unsigned proc_hash(const struct bpf_source *s, pid_t tgid)
{
	return ((unsigned)tgid * 2654435761u) & (unsigned)(s->procs_capacity - 1);
}

/* Where tgid's position is in proc_index, -1: not there. */
static int proc_place(const struct bpf_source *s, pid_t tgid)
{
	unsigned mask = (unsigned)s->procs_capacity - 1;

	for (unsigned i = proc_hash(s, tgid);; i = (i + 1) & mask) {
		int at = s->proc_index[i];

		if (at == 0)
			return -1;
		if (s->procs[at - 1].tgid == tgid)
			return (int)i;
	}
}

static int proc_find(const struct bpf_source *s, pid_t tgid)
{
	int i = proc_place(s, tgid);

	return i < 0 ? -1 : s->proc_index[i] - 1;
}

/* Remove the process at position at: the last one moves there (the live
 * entries stay packed), and later places of its probe sequence move back so
 * lookups never stop at a hole. */
static void proc_remove(struct bpf_source *s, int at)
{
	unsigned mask = (unsigned)s->procs_capacity - 1, hole = (unsigned)proc_place(s, s->procs[at].tgid);
	int last = --s->nr_live;

	s->proc_index[hole] = 0;
	for (unsigned j = (hole + 1) & mask; s->proc_index[j]; j = (j + 1) & mask) {
		unsigned home = proc_hash(s, s->procs[s->proc_index[j] - 1].tgid);

		/* j may move to the hole when its home is not between hole and j. */
		if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
			s->proc_index[hole] = s->proc_index[j];
			s->proc_index[j] = 0;
			hole = j;
		}
	}
	if (at != last) {
		s->proc_index[proc_place(s, s->procs[last].tgid)] = at + 1;
		s->procs[at] = s->procs[last];
	}
	memset(&s->procs[last], 0, sizeof(s->procs[last]));
}

static void clean_comm(char *out, const char *comm);

/* /proc/TGID/comm: the leader thread's name, as ps shows the process. */
static bool leader_name(pid_t tgid, char comm[16])
{
	char path[48], text[17];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tgid);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	clean_comm(comm, text);
	return comm[0] != '\0';
}

static int proc_get(struct bpf_source *s, pid_t tgid, const char *comm, bool leader)
{
	unsigned mask = (unsigned)s->procs_capacity - 1;
	int i = proc_find(s, tgid), at;
	struct proc *p;

	if (i >= 0)
		return i;
	if (s->nr_live >= s->procs_capacity / 2)
		return -1;   /* cannot happen: twice the slots */
	for (i = (int)proc_hash(s, tgid); s->proc_index[i]; i = (int)(((unsigned)i + 1) & mask))
		;
	at = s->nr_live++;
	s->proc_index[i] = at + 1;
	p = &s->procs[at];
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	snprintf(p->comm, sizeof(p->comm), "%.15s", comm);
	/* First seen through another thread (a leader that waits while its
	 * workers run): the process's name is still its leader's. */
	p->named_by_leader = leader || leader_name(tgid, p->comm);
	for (int k = 0; k < MAX_TASK_SERIES; k++)
		p->series[k] = -1;
	return at;
}

/* The names the kernel gives tasks may hold any byte; labels keep text. */
static void clean_comm(char *out, const char *comm)
{
	snprintf(out, 16, "%.15s", comm);
	for (char *c = out; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
}

static void add_task_series(struct bpf_source *s, int *at, pid_t pid, pid_t tid, const char *comm, bool process)
{
	struct series_labels labels;

	series_labels_init(&labels);
	labels.pid = pid;
	labels.tid = tid;
	clean_comm(labels.comm, comm);
	for (int k = 0; k < s->nr_task_series; k++) {
		const struct series_desc *d = s->task_desc[k];

		at[k] = -1;
		if (!(d->scope & (process ? PER_PROCESS : PER_THREAD)))
			continue;
		if (d->value == V_PAGES_ALLOC)
			labels.node = s->nodes[s->task_series[k].node_slot];
		if (d->value == V_PAGES_MIGRATE_FAILED_BY_REASON)
			snprintf(labels.instance, sizeof(labels.instance), "%s",
				 migrate_reasons[s->task_series[k].node_slot]);
		/* A full table is counted in the totals: never a wrong value. */
		at[k] = series_table_add_live(s->table, d->name, d->unit, 1.0, d->kind, &labels);
		labels.node = LABEL_NONE;
		labels.instance[0] = '\0';
	}
}

static void retire_task_series(struct bpf_source *s, int *at)
{
	for (int k = 0; k < s->nr_task_series; k++) {
		if (at[k] >= 0)
			series_table_retire(s->table, at[k]);
		at[k] = -1;
	}
}

/* ---- Reading the task table ---- */

/* A task's change since the last read goes to the totals, its process and
 * (per thread) its own series. sh: the task's shadow, or NULL for a task
 * that started and ended between two samples (its slot's shadow may hold
 * the next task already). */
static void account(struct bpf_source *s, int slot, const struct ms_task_slot *cur, const uint64_t *base,
		    struct shadow *sh, struct thread_out *gone)
{
	uint64_t d[NV];
	int p;

	for (int i = 0; i < NV; i++)
		d[i] = cur->counter[i] - base[i];
	add_counters(s->delta, d);
	if (slot == 0 || !(s->per_process || s->per_thread))
		return;   /* slot 0: threads without a slot of their own count in the totals only */
	p = proc_find(s, (pid_t)cur->tgid);
	if (p < 0) {
		char comm[16];

		clean_comm(comm, cur->comm);
		p = proc_get(s, (pid_t)cur->tgid, comm, cur->tid == cur->tgid);
	}
	if (p < 0)
		return;
	add_counters(s->procs[p].delta, d);
	if (sh && cur->state == MS_SLOT_LIVE && (int)cur->group_threads > s->procs[p].group_threads)
		s->procs[p].group_threads = (int)cur->group_threads;
	if (sh && sh->used && !sh->in_proc) {
		s->procs[p].nr_threads++;
		sh->in_proc = true;
	}
	if (s->per_thread && (!s->thread_tgid || s->thread_tgid == (pid_t)cur->tgid)) {
		struct thread_out *t = sh ? &s->threads[slot] : gone;

		add_counters(t->delta, d);
		t->tid = (pid_t)cur->tid;
		t->tgid = (pid_t)cur->tgid;
		t->cpu = cur->cpu;
		t->run_state = cur->run_state;
		clean_comm(t->comm, cur->comm);
	}
}

/* Threads gone since the last sample keep their series until it is written. */
static void keep_gone_thread(struct bpf_source *s, struct thread_out *t)
{
	if (s->nr_gone == s->gone_cap) {
		int cap = s->gone_cap ? s->gone_cap * 2 : 64;
		struct thread_out *grown = realloc(s->gone, sizeof(*grown) * (size_t)cap);

		if (!grown) {
			/* Without memory its last values stay in the totals and its process. */
			if (t->has_series)
				retire_task_series(s, t->series);
			return;
		}
		s->gone = grown;
		s->gone_cap = cap;
	}
	s->gone[s->nr_gone++] = *t;
}

/* A thread is gone: its process has one thread less; its per-thread values
 * wait for the next frame, where its series end. */
static void thread_gone(struct bpf_source *s, int slot, uint32_t gen)
{
	struct shadow *sh = &s->shadow[slot];

	if (sh->used) {
		int p = proc_find(s, sh->tgid);

		s->live_threads--;
		if (sh->in_proc && p >= 0)
			s->procs[p].nr_threads--;
	}
	if (s->per_thread) {
		struct thread_out *t = &s->threads[slot];

		keep_gone_thread(s, t);
		memset(t, 0, sizeof(*t));
	}
	sh->used = sh->in_proc = false;
	sh->gone = true;
	sh->gone_gen = gen;
}

/* The final values of an exited task, from the exit ring. Before the first
 * sample (enable), what exited only sets where counting starts. */
static int on_exit_record(void *ctx, void *data, size_t size)
{
	struct bpf_source *s = ctx;
	const struct ms_task_exit *e = data;
	static const uint64_t zero[NV];
	struct shadow *sh;

	if (size < sizeof(*e) || e->slot == 0 || (int)e->slot >= s->probes.nr_slots)
		return 0;
	sh = &s->shadow[e->slot];
	if (sh->used && sh->gen == e->values.gen) {
		account(s, (int)e->slot, &e->values, sh->value, sh, NULL);
		thread_gone(s, (int)e->slot, e->values.gen);
	} else if (s->enabled) {
		/* Started and ended between two samples: the slot's shadow is not its. */
		struct thread_out gone;

		memset(&gone, 0, sizeof(gone));
		account(s, (int)e->slot, &e->values, zero, NULL, &gone);
		if (s->per_thread && gone.tid)
			keep_gone_thread(s, &gone);
	}
	return 0;
}

/* The slot's contents, unless the probes are reusing it right now. */
static bool read_slot(const volatile struct ms_task_slot *v, struct ms_task_slot *out)
{
	uint32_t gen = __atomic_load_n(&v->gen, __ATOMIC_ACQUIRE);

	memcpy(out, (const void *)v, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&v->gen, __ATOMIC_RELAXED) == gen && out->gen == gen;
}

/* The leader's name is its process's. */
static void leader_seen(struct bpf_source *s, const struct ms_task_slot *cur)
{
	int p = proc_find(s, (pid_t)cur->tgid);

	if (p >= 0 && !s->procs[p].named_by_leader) {
		clean_comm(s->procs[p].comm, cur->comm);
		s->procs[p].named_by_leader = true;
	}
}

/* A renamed process's series end with the next frame, at zero. Without
 * memory they end now (their frame value is the previous one's). */
static void end_renamed(struct bpf_source *s, int *series)
{
	if (s->nr_renamed == s->renamed_cap) {
		int cap = s->renamed_cap ? 2 * s->renamed_cap : 16;
		struct renamed_series *grown = realloc(s->renamed, (size_t)cap * sizeof(*grown));

		if (!grown) {
			retire_task_series(s, series);
			return;
		}
		s->renamed = grown;
		s->renamed_cap = cap;
	}
	memcpy(s->renamed[s->nr_renamed++].series, series, sizeof(s->renamed[0].series));
	for (int k = 0; k < MAX_TASK_SERIES; k++)
		series[k] = -1;
}

/* A new name (exec, prctl): series carry names, so the task's series end
 * and new ones begin in the next frame. */
static void renamed(struct bpf_source *s, int slot, const struct ms_task_slot *cur)
{
	struct shadow *sh = &s->shadow[slot];
	int p = proc_find(s, (pid_t)cur->tgid);

	sh->comm_gen = cur->comm_gen;
	sh->tid = (pid_t)cur->tid;
	if (s->per_thread && s->threads[slot].has_series) {
		struct thread_out *t = &s->threads[slot];

		/* What it did under the old name ends with the old series. */
		keep_gone_thread(s, t);
		memset(t->delta, 0, sizeof(t->delta));
		t->has_series = false;
		clean_comm(t->comm, cur->comm);
	}
	if (p >= 0 && cur->tid == cur->tgid) {
		struct proc *pr = &s->procs[p];

		clean_comm(pr->comm, cur->comm);
		pr->named_by_leader = true;
		if (pr->has_series) {
			end_renamed(s, pr->series);
			pr->has_series = false;
		}
	}
}

/* Give an exited task's slot back (the exit ring was full when it left). */
static void free_slot(struct bpf_source *s, int slot)
{
	volatile struct ms_task_slot *v = &s->probes.slots[slot];
	__u32 index = (__u32)slot;

	memset((void *)v->counter, 0, sizeof(v->counter));
	v->gen++;
	__atomic_store_n(&v->state, MS_SLOT_FREE, __ATOMIC_RELEASE);
	bpf_map_update_elem(bpf_probes_free_slots_fd(&s->probes), NULL, &index, BPF_ANY);
}

static void scan_slots(struct bpf_source *s)
{
	uint32_t end = __atomic_load_n(s->probes.next_slot, __ATOMIC_ACQUIRE);
	struct ms_task_slot cur;

	if (end > (uint32_t)s->probes.nr_slots)
		end = (uint32_t)s->probes.nr_slots;
	for (uint32_t i = 0; i < end; i++) {
		struct shadow *sh = &s->shadow[i];

		if (!read_slot(&s->probes.slots[i], &cur))
			continue;   /* being reused: its exit record tells the rest */
		if (cur.state != MS_SLOT_LIVE && cur.state != MS_SLOT_EXITED)
			continue;
		/* The task we knew here has left: its final values are in the exit
		 * ring already (they go there before the slot is freed). */
		if (sh->used && sh->gen != cur.gen)
			ring_buffer__consume(s->exits);
		/* An exited task, its slot not yet marked free. */
		if (!sh->used && sh->gone && sh->gone_gen == cur.gen)
			continue;
		if (!sh->used || sh->gen != cur.gen) {
			/* A task new since the last sample: all its counts are new; at
			 * enable, they are the baseline. */
			if (s->enabled)
				memset(sh->value, 0, sizeof(sh->value));
			else
				memcpy(sh->value, cur.counter, sizeof(sh->value));
			sh->used = true;
			sh->in_proc = sh->gone = false;
			sh->gen = cur.gen;
			sh->tid = (pid_t)cur.tid;
			sh->tgid = (pid_t)cur.tgid;
			sh->comm_gen = cur.comm_gen;
			if (i)
				s->live_threads++;
			if (!s->enabled)
				continue;
		} else {
			bool torn = false;

			for (int k = 0; k < NV && !torn; k++)
				torn = cur.counter[k] < sh->value[k];
			if (torn)
				continue;   /* read while the probes reset it: next time */
		}
		account(s, (int)i, &cur, sh->value, sh, NULL);
		memcpy(sh->value, cur.counter, sizeof(sh->value));
		if (i && sh->comm_gen != cur.comm_gen)
			renamed(s, (int)i, &cur);
		else if (i && cur.tid == cur.tgid)
			leader_seen(s, &cur);
		if (cur.state == MS_SLOT_EXITED && i) {
			thread_gone(s, (int)i, cur.gen);
			free_slot(s, (int)i);
		}
	}
}

/* Threads that found the task table full: named once per process. */
static void name_overflows(struct bpf_source *s)
{
	uint32_t head = __atomic_load_n(s->probes.overflow_head, __ATOMIC_ACQUIRE);

	if (head == s->overflow_seen)
		return;
	if (!s->said_full) {
		fprintf(s->warnings, "memscope: eBPF: the task table (%d threads) is full: threads started "
			"from now on count in the totals but not in their process's series; set "
			"MEMSCOPE_BPF_TASKS to a larger number to give each its own\n", s->probes.nr_slots - 1);
		s->said_full = true;
	}
	if (head - s->overflow_seen > MS_BPF_OVERFLOW_RING)
		s->overflow_seen = head - MS_BPF_OVERFLOW_RING;
	for (; s->overflow_seen != head; s->overflow_seen++) {
		__u32 at = s->overflow_seen % MS_BPF_OVERFLOW_RING;
		struct ms_overflow o;
		bool known = false;
		char comm[16];

		if (bpf_map_lookup_elem(bpf_probes_overflow_fd(&s->probes), &at, &o) < 0)
			continue;
		for (int i = 0; i < s->nr_named && !known; i++)
			known = s->named[i] == (pid_t)o.tgid;
		if (known || s->nr_named == MAX_NAMED_OVERFLOWS)
			continue;
		s->named[s->nr_named++] = (pid_t)o.tgid;
		clean_comm(comm, o.comm);
		fprintf(s->warnings, "memscope: eBPF: task table full: pid %u (%s) counted in the totals only%s\n",
			o.tgid, comm, s->nr_named == MAX_NAMED_OVERFLOWS ? "; further processes are not named" : "");
	}
}

static int read_drops(struct bpf_source *s, uint64_t *total)
{
	*total = 0;
	for (__u32 reason = 0; reason < MS_DROP_NR; reason++) {
		/* A full exit ring loses nothing: the slot is freed at the sample. */
		if (reason == MS_DROP_EXIT_RING_FULL)
			continue;
		if (bpf_map_lookup_elem(bpf_probes_drops_fd(&s->probes), &reason, s->drop_values) < 0)
			return -1;
		for (int c = 0; c < s->ncpus; c++)
			*total += s->drop_values[c];
	}
	return 0;
}

static int count_targets(struct bpf_source *s)
{
	int fd = bpf_probes_targets_fd(&s->probes), n = 0;
	__u32 key, next;
	__u32 *prev = NULL;

	/* The set is small (the followed processes): one key at a time. */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/* Processes on the system now, counted from /proc once at enable; the
 * probes count forks and exits from attach on, so this is exact when no
 * process came or went while /proc was read. */
static int64_t count_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int64_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
	closedir(d);
	return n;
}

/* ---- Source operations ---- */

static int bpf_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct bpf_source *s = src->priv;
	int capacity = 0;

	s->table = table;
	src->first = table->nr;
	for (int d = 0; d < NR_DESCS; d++)
		if (s->wanted[d])
			capacity += desc_copies(&series_descs[d], s->nr_nodes);
	s->series = calloc((size_t)capacity + 1, sizeof(*s->series));
	if (!s->series) {
		ms_error_set(err, "bpf source: out of memory");
		return -1;
	}
	for (int d = 0; d < NR_DESCS; d++) {
		const struct series_desc *desc = &series_descs[d];
		bool valid = !desc->probes || (s->probes.attached & desc->probes);
		int copies = desc_copies(desc, s->nr_nodes);

		if (!s->wanted[d])
			continue;
		if (desc->scope == THREAD_ONLY) {
			if (s->nr_task_series < MAX_TASK_SERIES) {
				s->task_series[s->nr_task_series] = (struct bpf_series){ desc->value, 0, valid };
				s->task_desc[s->nr_task_series++] = desc;
			}
			continue;
		}
		for (int i = 0; i < copies; i++) {
			struct series_labels labels;

			series_labels_init(&labels);
			if (desc->value == V_PAGES_ALLOC)
				labels.node = s->nodes[i];
			if (desc->value == V_PAGES_MIGRATE_FAILED_BY_REASON)
				snprintf(labels.instance, sizeof(labels.instance), "%s", migrate_reasons[i]);
			if (series_table_add(table, desc->name, desc->unit, 1.0, desc->kind, &labels) < 0) {
				ms_error_set(err, "bpf source: out of memory adding series %s", desc->name);
				return -1;
			}
			s->series[s->nr_series++] = (struct bpf_series){ desc->value, i, valid };
			/* The same, per process or thread: pages only on the nodes a slot keeps. */
			if (desc->scope != TOTAL_ONLY && s->nr_task_series < MAX_TASK_SERIES &&
			    (desc->value != V_PAGES_ALLOC || s->node_index[s->nodes[i]] >= 0)) {
				s->task_series[s->nr_task_series] = s->series[s->nr_series - 1];
				s->task_desc[s->nr_task_series++] = desc;
			}
		}
	}
	src->count = s->nr_series;
	return 0;
}

/* The threads of the focused process get their slots now, so idle ones are
 * shown too (the others would appear at their first event). */
static void seed_threads(struct bpf_source *s)
{
	char path[64], text[512];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->thread_tgid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		char comm[16] = "", *paren;
		uint32_t run_state = 0;
		int cpu = -1;
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)s->thread_tgid, (int)tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(text, sizeof(text), f) && (paren = strrchr(text, ')')) && paren[1] == ' ') {
			char *open = strchr(text, '(');

			if (open && paren > open)
				snprintf(comm, sizeof(comm), "%.*s", (int)(paren - open - 1), open + 1);
			/* proc(5) state letter -> the kernel's state bits at a switch. */
			run_state = paren[2] == 'S' ? 1 : paren[2] == 'D' ? 2 : paren[2] == 'I' ? 0x402 :
				    paren[2] == 'T' ? 4 : paren[2] == 't' ? 8 : 0;
			/* Field 39: the CPU it last ran on. */
			for (int field = 3; field <= 39 && paren; field++)
				paren = strchr(paren + 1, ' ');
			cpu = paren ? atoi(paren + 1) : -1;
		}
		fclose(f);
		bpf_probes_seed_thread(&s->probes, tid, s->thread_tgid, comm, run_state, cpu);
	}
	if (d)
		closedir(d);
}

static int bpf_enable(struct source *src, struct ms_error *err)
{
	struct bpf_source *s = src->priv;

	if (s->per_thread && s->thread_tgid > 0)
		seed_threads(s);

	/* Counts from here on: what happened before enable is the baseline. */
	s->last_ns = now_ns();
	bpf_probes_count_from(&s->probes, s->last_ns);
	s->enabled = false;
	scan_slots(s);
	ring_buffer__consume(s->exits);
	s->enabled = true;
	memset(s->delta, 0, sizeof(s->delta));
	for (int i = 0; i < s->nr_live; i++)
		memset(s->procs[i].delta, 0, sizeof(s->procs[0].delta));
	read_drops(s, &s->drops_prev);
	if (!s->filter) {
		int64_t before = __atomic_load_n(s->probes.processes_delta, __ATOMIC_ACQUIRE), after, n;

		for (int tries = 0;; tries++) {
			n = count_processes();
			after = __atomic_load_n(s->probes.processes_delta, __ATOMIC_ACQUIRE);
			if (after == before || tries == 3)
				break;
			before = after;
		}
		s->processes_base = n - after;
	}
	return 0;
}

static int bpf_disable(struct source *src)
{
	return 0;
}

static void put_task_values(struct bpf_source *s, const int *series, const uint64_t *delta, int nr_threads,
			    const struct thread_out *thread, struct frame *frame)
{
	for (int k = 0; k < s->nr_task_series; k++) {
		struct sample *out;

		if (series[k] < 0)
			continue;
		out = &frame->samples[series[k]];
		out->valid = s->task_series[k].valid;
		switch (s->task_desc[k]->value) {
		case V_THREADS: out->value = (uint64_t)(nr_threads > 0 ? nr_threads : 0); break;
		case V_CPU:
			out->valid &= thread->cpu >= 0;
			out->value = thread->cpu >= 0 ? (uint64_t)thread->cpu : 0;
			break;
		case V_STATE: out->value = thread->run_state; break;
		default: out->value = derive(&s->task_series[k], delta, s); break;
		}
		out->enabled_ns = out->running_ns = frame->interval_ns;
	}
}

/* The per-process series of live processes; those with no thread left end here. */
static void fill_processes(struct bpf_source *s, struct frame *frame)
{
	static const uint64_t nothing[NV];

	for (int i = 0; i < s->nr_renamed; i++) {
		put_task_values(s, s->renamed[i].series, nothing, 0, NULL, frame);
		retire_task_series(s, s->renamed[i].series);
	}
	s->nr_renamed = 0;
	for (int i = 0; i < s->nr_live; i++) {
		struct proc *p = &s->procs[i];

		if (s->per_process) {
			if (!p->has_series) {
				add_task_series(s, p->series, p->tgid, LABEL_NONE, p->comm, true);
				p->has_series = true;
				frame_fit(frame, s->table->nr);
			}
			/* THR: the kernel's count where a thread read it, not only the
			 * threads that ran while memscope watched; none once it is gone. */
			put_task_values(s, p->series, p->delta, p->nr_threads > 0 && p->group_threads > p->nr_threads
					? p->group_threads : p->nr_threads, NULL, frame);
		}
		memset(p->delta, 0, sizeof(p->delta));
		p->group_threads = 0;
		if (p->nr_threads <= 0) {
			if (p->has_series)
				retire_task_series(s, p->series);
			proc_remove(s, i);
			i--;   /* the last live entry moved here */
		}
	}
}

/* Per-thread series: live threads, then those gone since the last sample
 * (their last values; the series end with this frame). */
static void fill_threads(struct bpf_source *s, struct frame *frame)
{
	uint32_t end = __atomic_load_n(s->probes.next_slot, __ATOMIC_ACQUIRE);

	if (end > (uint32_t)s->probes.nr_slots)
		end = (uint32_t)s->probes.nr_slots;
	for (uint32_t i = 1; i < end; i++) {
		struct thread_out *t = &s->threads[i];

		if (!s->shadow[i].used)
			continue;
		if (!t->has_series && t->tid) {
			add_task_series(s, t->series, t->tgid, t->tid, t->comm, false);
			t->has_series = true;
			frame_fit(frame, s->table->nr);
		}
		if (t->has_series)
			put_task_values(s, t->series, t->delta, 0, t, frame);
		memset(t->delta, 0, sizeof(t->delta));
	}
	for (int i = 0; i < s->nr_gone; i++) {
		struct thread_out *t = &s->gone[i];

		if (!t->has_series && t->tid) {
			add_task_series(s, t->series, t->tgid, t->tid, t->comm, false);
			t->has_series = true;
			frame_fit(frame, s->table->nr);
		}
		if (t->has_series) {
			put_task_values(s, t->series, t->delta, 0, t, frame);
			retire_task_series(s, t->series);
		}
	}
	s->nr_gone = 0;
}

static int bpf_sample(struct source *src, struct frame *frame)
{
	struct bpf_source *s = src->priv;
	uint64_t now = now_ns(), interval = now - s->last_ns;
	int targets = s->filter ? count_targets(s) : -1;
	bool read_ok;

	/* Exits first: a slot freed since the last sample may hold a new task. */
	ring_buffer__consume(s->exits);
	scan_slots(s);
	if (s->ring)
		ring_buffer__consume(s->ring);
	read_ok = read_drops(s, &s->drops_now) == 0;
	name_overflows(s);
	for (int i = 0; i < s->nr_series; i++) {
		const struct bpf_series *ser = &s->series[i];
		struct sample *out = &frame->samples[src->first + i];

		out->valid = ser->valid;
		out->enabled_ns = out->running_ns = interval;
		switch (ser->value) {
		case V_PROCESSES:
			if (s->filter) {
				out->value = (uint64_t)(targets > 0 ? targets : 0);
			} else {
				int64_t n = s->processes_base + __atomic_load_n(s->probes.processes_delta, __ATOMIC_ACQUIRE);

				out->value = n > 0 ? (uint64_t)n : 0;
			}
			break;
		case V_THREADS:
			out->value = s->live_threads > 0 ? (uint64_t)s->live_threads : 0;
			break;
		case V_DROPS:
			out->valid = read_ok;
			out->value = s->drops_now >= s->drops_prev ? s->drops_now - s->drops_prev : 0;
			break;
		default:
			out->value = derive(ser, s->delta, s);
			break;
		}
	}
	if (read_ok)
		s->drops_prev = s->drops_now;
	memset(s->delta, 0, sizeof(s->delta));
	if (s->per_thread)
		fill_threads(s, frame);
	fill_processes(s, frame);
	s->last_ns = now;
	/* Everyone followed has exited, and so have their threads: a thread
	 * passes its exit (and a joined thread wakes its joiner) before its last
	 * switch frees its slot, so the process can be gone first. A few samples
	 * at most for those last switches, then the run ends regardless. */
	if (s->filter && targets == 0) {
		if (s->live_threads <= 0 || ++s->finish_waits > 3)
			src->finished = true;
	} else {
		s->finish_waits = 0;
	}
	return 0;
}

static void bpf_close(struct source *src)
{
	struct bpf_source *s = src->priv;

	if (!s)
		return;
	ring_buffer__free(s->ring);
	ring_buffer__free(s->exits);
	bpf_probes_close(&s->probes);
	free(s->series);
	free(s->shadow);
	free(s->threads);
	free(s->gone);
	free(s->renamed);
	free(s->procs);
	free(s->proc_index);
	free(s->drop_values);
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

/* ---- Creating ---- */

static int node_slot(const struct bpf_source *s, int node)
{
	for (int i = 0; i < s->nr_nodes; i++)
		if (s->nodes[i] == node)
			return i;
	return -1;
}

static void add_node(struct bpf_source *s, int node)
{
	int at = 0;

	if (node < 0 || node >= BPF_SOURCE_MAX_NODES || s->nr_nodes == BPF_SOURCE_MAX_NODES || node_slot(s, node) >= 0)
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

/* Live threads now, from /proc/loadavg's "running/total" field. */
static int threads_now(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	int running = 0, total = 0;

	if (f) {
		if (fscanf(f, "%*s %*s %*s %d/%d", &running, &total) != 2)
			total = 0;
		fclose(f);
	}
	return total;
}

static int table_size(const struct bpf_source_options *opt, FILE *warnings)
{
	const char *env = getenv("MEMSCOPE_BPF_TASKS");
	long n = opt->max_tasks;

	if (!n && env && *env) {
		char *end;

		n = strtol(env, &end, 10);
		if (*end || n < 2 || n > MAX_TASKS) {
			fprintf(warnings, "memscope: MEMSCOPE_BPF_TASKS=%s is not a number of threads from 2 to %d; "
				"the default is used\n", env, MAX_TASKS);
			n = 0;
		}
	}
	if (!n) {
		/* Room for the threads there are and as many again twice over. */
		n = 4L * threads_now();
		if (n < MIN_TASKS)
			n = MIN_TASKS;
		if (n > MAX_TASKS)
			n = MAX_TASKS;
	}
	return (int)n + 1;   /* slot 0 is the shared one */
}

static int alloc_state(struct bpf_source *s, struct ms_error *err)
{
	int slots = s->probes.nr_slots;

	s->procs_capacity = 64;
	while (s->procs_capacity < 2 * slots)
		s->procs_capacity *= 2;
	s->shadow = calloc((size_t)slots, sizeof(*s->shadow));
	s->procs = calloc((size_t)s->procs_capacity / 2, sizeof(*s->procs));
	s->proc_index = calloc((size_t)s->procs_capacity, sizeof(int));
	s->drop_values = calloc((size_t)s->ncpus, sizeof(__u64));
	if (s->per_thread)
		s->threads = calloc((size_t)slots, sizeof(*s->threads));
	if (!s->shadow || !s->procs || !s->proc_index || !s->drop_values || (s->per_thread && !s->threads)) {
		ms_error_set(err, "bpf source: out of memory for the task table's state");
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

int bpf_source_init(struct source *src, const struct host *host, const struct bpf_source_options *opt,
		      const char *const *names, int nr_names, struct ms_error *err)
{
	struct bpf_source *s = calloc(1, sizeof(*s));
	struct bpf_pfn_table own_table = { 0 };
	const struct bpf_pfn_table *table = opt->pfn_table;
	int *cpu_node = NULL;
	int max_cpu = host->topo.max_cpu, kept = 0;
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
	s->warnings = warnings;
	s->filter = !opt->system_wide;
	s->per_process = opt->per_process;
	s->per_thread = opt->per_thread;
	s->thread_tgid = opt->thread_tgid;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		ms_error_set(err, "bpf source: cannot count the possible CPUs (%s)", strerror(-s->ncpus));
		goto fail;
	}
	if (s->filter && opt->nr_tgids <= 0) {
		ms_error_set(err, "bpf source: no process to follow (give pids, or system-wide)");
		goto fail;
	}
	if (select_series(s, names, nr_names, &probes, err) < 0)
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
	/* Each task keeps pages for the first MS_BPF_SLOT_NODES nodes. */
	for (int n = 0; n < BPF_SOURCE_MAX_NODES; n++)
		s->node_index[n] = -1;
	for (int i = 0; i < s->nr_nodes; i++)
		s->node_index[s->nodes[i]] = kept < MS_BPF_SLOT_NODES ? kept++ : -1;
	if (s->nr_nodes > MS_BPF_SLOT_NODES && (probes & P(PAGE_ALLOC)))
		fprintf(warnings, "memscope: eBPF: pages on the %d nodes after node %d are counted in "
			"proc.pages_alloc_unplaced (per-task counters keep %d nodes)\n",
			s->nr_nodes - MS_BPF_SLOT_NODES, s->nodes[MS_BPF_SLOT_NODES - 1], MS_BPF_SLOT_NODES);

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
		.max_tasks = table_size(opt, warnings),
		.max_processes = s->filter ? 4096 : 1,
		.exit_ring_bytes = EXIT_RING_BYTES,
		.node_index = s->node_index,
		.nr_node_index = BPF_SOURCE_MAX_NODES,
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
	if (alloc_state(s, err) < 0)
		goto fail;
	s->exits = ring_buffer__new(bpf_probes_exits_fd(&s->probes), on_exit_record, s, NULL);
	if (!s->exits) {
		ms_error_set(err, "bpf source: cannot map the exit ring buffer (%s)", strerror(errno));
		goto fail;
	}
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

int bpf_source_nr_targets(struct source *src)
{
	struct bpf_source *s = src->priv;

	return s->filter ? count_targets(s) : -1;
}

int bpf_source_table_size(struct source *src)
{
	struct bpf_source *s = src->priv;

	return s->probes.nr_slots - 1;
}

int bpf_source_table_peak(struct source *src)
{
	struct bpf_source *s = src->priv;
	uint32_t next = __atomic_load_n(s->probes.next_slot, __ATOMIC_ACQUIRE);

	return (int)(next < (uint32_t)s->probes.nr_slots ? next : (uint32_t)s->probes.nr_slots) - 1;
}

/* ---- The registry kind: the proc.* series ---- */

static bool bpf_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	return bpf_series_name_known(name);
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
			     "(" PRIVILEGES_SETCAP ")");
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

static int bpf_kind_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			   struct ms_error *err)
{
	struct bpf_source_options bopt;

	memset(&bopt, 0, sizeof(bopt));
	bopt.tgids = req->target->pids;
	bopt.nr_tgids = req->target->nr_pids;
	bopt.system_wide = req->target->system_wide;
	bopt.per_process = req->per_process;
	bopt.per_thread = req->per_thread || req->thread_pid > 0;
	bopt.thread_tgid = req->thread_pid;
	bopt.warnings = req->notes;
	if (bpf_source_init(src, req->host, &bopt, req->names, req->nr_names, err) < 0)
		return -1;
	src->kind = kind;
	return 0;
}

const struct source_kind bpf_source_kind = {
	.name = "bpf",
	.description = "memscope's eBPF probes: faults, page placement, scheduling, NUMA balancing (proc.*)",
	.mode = SOURCE_LIVE,
	.claims = bpf_claims,
	.present = bpf_present,
	.create = bpf_kind_create,
	.optional = true,
	.per_task = true,
};
