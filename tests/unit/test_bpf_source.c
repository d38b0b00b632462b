/* The bpf source on the live kernel: real probes, real workloads (the
 * programs in contrib/bench, found beside this test in the build tree),
 * numbers checked against perf's own counters or known amounts. Needs root
 * (or CAP_BPF + CAP_PERFMON) and at least 2 CPUs. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/memscope_bpf.h"
#include "sources/bpf/bpf_pfn_table.h"
#include "check.h"
#include "host/host.h"
#include "sampler/sampler.h"
#include "sources/bpf_source.h"

static char bench_dir[PATH_MAX];

static void find_bench_dir(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	/* <build>/tests/unit/test_bpf_source -> <build>/contrib/bench */
	snprintf(bench_dir, sizeof(bench_dir), "%s/../../contrib/bench", dirname(exe));
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A forked workload held before exec until released, so probes can be
 * attached first (like `memscope stat -- CMD`). */
struct workload {
	pid_t pid;
	int gate;
	int status;
};

static void workload_spawn(struct workload *w, const char *prog, const char *const *args, int pin_cpu)
{
	char path[PATH_MAX + 64];
	char *argv[16];
	int fds[2], n = 0;

	snprintf(path, sizeof(path), "%s/%s", bench_dir, prog);
	argv[n++] = path;
	for (; args && args[n - 1] && n < 15; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	if (pipe(fds) < 0) {
		perror("pipe");
		exit(1);
	}
	w->pid = fork();
	if (w->pid == 0) {
		char byte;

		close(fds[1]);
		if (pin_cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(pin_cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		while (read(fds[0], &byte, 1) < 0 && errno == EINTR)
			;
		execv(path, argv);
		_exit(127);
	}
	close(fds[0]);
	w->gate = fds[1];
}

static void workload_start(struct workload *w)
{
	close(w->gate);
}

static int workload_wait(struct workload *w)
{
	waitpid(w->pid, &w->status, 0);
	return WIFEXITED(w->status) ? WEXITSTATUS(w->status) : 128;
}

/* A source measuring one workload, with its series table and one frame. */
struct measure {
	struct source src;
	struct series_table table;
	struct frame frame;
	uint64_t workload_ns;   /* from starting the workload to reaping it (measure_workload) */
};

static int measure_open(struct measure *m, const struct host *host, struct bpf_source_options *opt,
			const char *const *names, int nr_names, struct ms_error *err)
{
	memset(m, 0, sizeof(*m));
	if (bpf_source_init(&m->src, host, opt, names, nr_names, err) < 0)
		return -1;
	if (m->src.ops->open(&m->src, &m->table, err) < 0 || m->src.ops->enable(&m->src, err) < 0 ||
	    frame_init(&m->frame, m->table.nr) < 0)
		return -1;
	return 0;
}

static int measure_sample(struct measure *m)
{
	return m->src.ops->sample(&m->src, &m->frame);
}

static void measure_close(struct measure *m)
{
	if (m->src.ops)
		m->src.ops->close(&m->src);
	frame_free(&m->frame);
	series_table_free(&m->table);
}

/* The sample of series name (on node, or LABEL_NONE); NULL if absent. */
static const struct sample *find_sample(const struct measure *m, const char *name, int node)
{
	for (int i = 0; i < m->src.count; i++) {
		const struct series *s = &m->table.series[m->src.first + i];

		if (!strcmp(s->name, name) && s->labels.node == node)
			return &m->frame.samples[m->src.first + i];
	}
	return NULL;
}

static uint64_t value_of(const struct measure *m, const char *name, int node)
{
	const struct sample *s = find_sample(m, name, node);

	if (!s || !s->valid) {
		CHECK_FAIL("series %s (node %d) is %s", name, node, s ? "not valid" : "missing");
		return 0;
	}
	return s->value;
}

/* Per-process and per-thread series summed over the frames sampled: what a
 * recording of the run would hold for each task. */
struct task_sum {
	int pid, tid;
	char comm[16];
	char name[32];
	uint64_t total;
	int frames;        /* frames it had a value in */
	bool retired;
};

struct task_sums {
	struct task_sum sum[512];
	int nr;
	int at[1 << 16];   /* series index -> sum + 1; 0: none */
};

static void sums_take(struct task_sums *ts, const struct measure *m)
{
	const struct series_changes *c;
	struct series_changes own;

	c = series_table_changes(&m->table, &own) ? &own : NULL;
	for (int i = 0; c && i < c->nr_added; i++) {
		const struct series *s = &m->table.series[c->added[i]];

		if (ts->nr == 512 || c->added[i] >= (1 << 16))
			continue;
		struct task_sum *t = &ts->sum[ts->nr];

		memset(t, 0, sizeof(*t));
		t->pid = s->labels.pid;
		t->tid = s->labels.tid;
		snprintf(t->comm, sizeof(t->comm), "%s", s->labels.comm);
		snprintf(t->name, sizeof(t->name), "%s", s->name);
		ts->at[c->added[i]] = ++ts->nr;
	}
	for (int i = 0; i < m->frame.nr && i < (1 << 16); i++)
		if (ts->at[i] && m->frame.samples[i].valid) {
			ts->sum[ts->at[i] - 1].total += m->frame.samples[i].value;
			ts->sum[ts->at[i] - 1].frames++;
		}
	for (int i = 0; c && i < c->nr_retired; i++)
		if (c->retired[i] < (1 << 16) && ts->at[c->retired[i]]) {
			ts->sum[ts->at[c->retired[i]] - 1].retired = true;
			ts->at[c->retired[i]] = 0;
		}
}

/* Sample, then what a sampler does after a frame went out. */
static int measure_frame(struct measure *m, struct task_sums *ts)
{
	int ret = measure_sample(m);

	frame_fit(&m->frame, m->table.nr);
	if (ts)
		sums_take(ts, m);
	series_table_frame_done(&m->table, &m->frame, m->frame.seq);
	m->frame.seq++;
	m->table.horizon = m->frame.seq;
	return ret;
}

/* The sum for (pid, tid, name); NULL when there is none. */
static const struct task_sum *sum_of(const struct task_sums *ts, int pid, int tid, const char *name)
{
	for (int i = 0; i < ts->nr; i++)
		if (ts->sum[i].pid == pid && ts->sum[i].tid == tid && !strcmp(ts->sum[i].name, name))
			return &ts->sum[i];
	return NULL;
}

static int perf_page_faults(pid_t pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.inherit = 1,
	};

	return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
}

static void test_faults_match_perf(const struct host *host)
{
	const char *args[] = { "64", NULL };
	const char *names[] = { "proc.faults", "proc.faults_user", "proc.faults_kernel", "proc.faults_write" };
	struct workload w;
	struct measure m;
	struct ms_error err;
	uint64_t perf_count = 0;

	workload_spawn(&w, "touchmem", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1 };

	if (measure_open(&m, host, &opt, names, 4, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
		measure_close(&m);
		return;
	}
	int perf_fd = perf_page_faults(w.pid);

	CHECK(perf_fd >= 0);
	workload_start(&w);
	CHECK_EQ_INT(workload_wait(&w), 0);
	CHECK_EQ_INT(measure_sample(&m), 0);
	CHECK(read(perf_fd, &perf_count, sizeof(perf_count)) == sizeof(perf_count));
	close(perf_fd);
	uint64_t faults = value_of(&m, "proc.faults", LABEL_NONE);

	fprintf(stderr, "faults: bpf %llu (user %llu, kernel %llu, write %llu), perf page-faults %llu, touched %d\n",
		(unsigned long long)faults, (unsigned long long)value_of(&m, "proc.faults_user", LABEL_NONE),
		(unsigned long long)value_of(&m, "proc.faults_kernel", LABEL_NONE),
		(unsigned long long)value_of(&m, "proc.faults_write", LABEL_NONE), (unsigned long long)perf_count,
		64 * 256);
	CHECK(faults >= 64 * 256);
	CHECK_NEAR((double)faults, (double)perf_count, 0.01 * (double)perf_count);
	CHECK(value_of(&m, "proc.faults_write", LABEL_NONE) >= 64 * 256);
	measure_close(&m);
}

/* Pages the workload allocates on each node, with the real table: one node
 * here, so all of them on node 0. */
static void test_pages_on_node0(const struct host *host)
{
	const char *args[] = { "64", NULL };
	const char *names[] = { "proc.pages_alloc", "proc.faults_user" };
	struct workload w;
	struct measure m;
	struct ms_error err;

	workload_spawn(&w, "touchmem", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1 };

	if (measure_open(&m, host, &opt, names, 2, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
		measure_close(&m);
		return;
	}
	workload_start(&w);
	CHECK_EQ_INT(workload_wait(&w), 0);
	CHECK_EQ_INT(measure_sample(&m), 0);
	uint64_t node0 = value_of(&m, "proc.pages_alloc", 0);
	uint64_t unplaced = value_of(&m, "proc.pages_alloc_unplaced", LABEL_NONE);

	fprintf(stderr, "pages: node0 %llu, unplaced %llu, touched %d\n", (unsigned long long)node0,
		(unsigned long long)unplaced, 64 * 256);
	CHECK_EQ_U64(unplaced, 0);
	/* The touched pages, plus page tables and the program's own start-up
	 * (ld.so, libc, stack): at most 3% more. */
	CHECK(node0 >= 64 * 256);
	CHECK(node0 <= 64 * 256 * 103 / 100);
	measure_close(&m);
}

/* An injected 2-node table (through a sysfs fixture tree, so the sysfs
 * reader is exercised too): memory blocks alternate between node 0 and 1.
 * The event stream gives each allocation's pfn; the per-node counts from the
 * kernel must split exactly as the table says for those pfns. */
struct alloc_split {
	const struct bpf_pfn_table *table;
	uint64_t pages[2];
	uint64_t unplaced;
	uint64_t events;
};

static void on_alloc_event(const struct ms_event *ev, void *arg)
{
	struct alloc_split *split = arg;

	if (ev->kind != MS_EVENT_PAGE_ALLOC)
		return;
	int node = bpf_pfn_table_node(split->table, ev->arg0);
	uint64_t pages = 1ull << ev->arg1;

	split->events++;
	if (node == 0 || node == 1)
		split->pages[node] += pages;
	else
		split->unplaced += pages;
	if ((uint32_t)ev->arg2 != (uint32_t)(node < 0 ? MS_BPF_NODE_UNKNOWN : (uint32_t)node))
		CHECK_FAIL("pfn %llu: kernel said node %u, the table says %d", (unsigned long long)ev->arg0,
			   (unsigned)ev->arg2, node);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void test_injected_two_node_table(const struct host *host)
{
	const char *args[] = { "128", NULL };
	const char *names[] = { "proc.pages_alloc", "proc.bpf_drops" };
	char root[] = "/tmp/memscope-pfn-XXXXXX", path[PATH_MAX];
	struct bpf_pfn_table real, table;
	struct ms_error err;
	struct workload w;
	struct measure m;
	uint64_t block_pfns = (64ull << 20) / (uint64_t)sysconf(_SC_PAGESIZE);

	if (bpf_pfn_table_load(&real, "/sys", &err) < 0) {
		CHECK_FAIL("real pfn table: %s", err.text);
		return;
	}
	uint64_t max_pfn = real.ranges[real.nr - 1].end_pfn;

	bpf_pfn_table_free(&real);
	CHECK(mkdtemp(root) != NULL);
	{
		char cmd[PATH_MAX * 2];

		snprintf(cmd, sizeof(cmd), "mkdir -p %s/devices/system/memory %s/devices/system/node/node0 "
			 "%s/devices/system/node/node1", root, root, root);
		CHECK_EQ_INT(system(cmd), 0);
	}
	snprintf(path, sizeof(path), "%s/devices/system/memory/block_size_bytes", root);
	CHECK_EQ_INT(write_file(path, "4000000\n"), 0); /* 64 MiB blocks */
	for (uint64_t block = 0; block * block_pfns < max_pfn; block++) {
		snprintf(path, sizeof(path), "%s/devices/system/node/node%d/memory%llu", root, (int)(block % 2),
			 (unsigned long long)block);
		CHECK_EQ_INT(mkdir(path, 0755), 0);
	}
	if (bpf_pfn_table_load(&table, root, &err) < 0) {
		CHECK_FAIL("fixture pfn table: %s", err.text);
		return;
	}
	CHECK(table.nr > 2);
	CHECK_EQ_INT(bpf_pfn_table_node(&table, 0), 0);
	CHECK_EQ_INT(bpf_pfn_table_node(&table, block_pfns), 1);
	CHECK_EQ_INT(bpf_pfn_table_node(&table, 2 * block_pfns + 5), 0);

	struct alloc_split split = { .table = &table };

	workload_spawn(&w, "touchmem", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1, .pfn_table = &table,
					  .on_event = on_alloc_event, .event_arg = &split };

	if (measure_open(&m, host, &opt, names, 2, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
	} else {
		workload_start(&w);
		CHECK_EQ_INT(workload_wait(&w), 0);
		CHECK_EQ_INT(measure_sample(&m), 0);
		uint64_t node0 = value_of(&m, "proc.pages_alloc", 0), node1 = value_of(&m, "proc.pages_alloc", 1);

		fprintf(stderr, "2-node table: kernel node0 %llu node1 %llu; from %llu pfns: node0 %llu node1 %llu\n",
			(unsigned long long)node0, (unsigned long long)node1, (unsigned long long)split.events,
			(unsigned long long)split.pages[0], (unsigned long long)split.pages[1]);
		CHECK_EQ_U64(node0, split.pages[0]);
		CHECK_EQ_U64(node1, split.pages[1]);
		CHECK_EQ_U64(value_of(&m, "proc.pages_alloc_unplaced", LABEL_NONE), split.unplaced);
		CHECK(node0 > 0 && node1 > 0);
		CHECK(node0 + node1 >= 128 * 256);
		CHECK_EQ_U64(value_of(&m, "proc.bpf_drops", LABEL_NONE), 0);
	}
	measure_close(&m);
	bpf_pfn_table_free(&table);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK_EQ_INT(system(path), 0);
}

/* Measure one workload with the given series; returns 0 when the source
 * opened. The caller checks and closes m. */
static int measure_workload(const struct host *host, struct measure *m, const char *prog, const char *const *args,
			    int pin_cpu, const char *const *names, int nr_names)
{
	struct workload w;
	struct ms_error err;

	workload_spawn(&w, prog, args, pin_cpu);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1 };

	if (measure_open(m, host, &opt, names, nr_names, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
		return -1;
	}
	m->workload_ns = monotonic_ns();
	workload_start(&w);
	CHECK_EQ_INT(workload_wait(&w), 0);
	m->workload_ns = monotonic_ns() - m->workload_ns;
	CHECK_EQ_INT(measure_sample(m), 0);
	return 0;
}

static void test_offcpu_sleep(const struct host *host)
{
	const char *args[] = { "0", "--sleep-ms", "300", NULL };
	const char *names[] = { "proc.offcpu_ns", "proc.oncpu_ns", "proc.switches_voluntary" };
	struct measure m;

	if (measure_workload(host, &m, "touchmem", args, -1, names, 3) == 0) {
		uint64_t off = value_of(&m, "proc.offcpu_ns", LABEL_NONE);
		uint64_t on = value_of(&m, "proc.oncpu_ns", LABEL_NONE);

		fprintf(stderr, "sleep 300 ms: off-CPU %.1f ms, on-CPU %.1f ms, voluntary switches %llu, "
			"workload lived %.1f ms\n", off / 1e6, on / 1e6,
			(unsigned long long)value_of(&m, "proc.switches_voluntary", LABEL_NONE), m.workload_ns / 1e6);
		/* At least the sleep; at most the workload's life without its time
		 * on a CPU. On a quiet machine both bounds are ~300 ms; on a busy one
		 * waiting for a CPU after the sleep is off-CPU time too, and the
		 * workload's life grows by the same wait. */
		CHECK(off >= 295000000ull);
		CHECK(off + on <= m.workload_ns);
		CHECK(value_of(&m, "proc.switches_voluntary", LABEL_NONE) >= 1);
	}
	measure_close(&m);
}

static void test_one_migration(const struct host *host)
{
	const char *args[] = { "1", NULL };
	const char *names[] = { "proc.migrations", "proc.migrations_cross_node" };
	struct measure m;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		CHECK_FAIL("the migration test needs 2 online CPUs");
		return;
	}
	/* Pinned to CPU 0 before exec, then the workload moves itself to CPU 1. */
	if (measure_workload(host, &m, "cpuhop", args, 0, names, 2) == 0) {
		fprintf(stderr, "cpu 0 -> 1: migrations %llu, cross-node %llu\n",
			(unsigned long long)value_of(&m, "proc.migrations", LABEL_NONE),
			(unsigned long long)value_of(&m, "proc.migrations_cross_node", LABEL_NONE));
		CHECK_EQ_U64(value_of(&m, "proc.migrations", LABEL_NONE), 1);
		CHECK_EQ_U64(value_of(&m, "proc.migrations_cross_node", LABEL_NONE), 0); /* one node here */
	}
	measure_close(&m);
}

/* forktree 3 8: the workload forks a child, which forks a grandchild, which
 * forks a great-grandchild touching 8 MB: all four are followed, each with
 * its own series, and all four are retired in the frame after they exited. */
static void test_descendants_followed(const struct host *host)
{
	const char *args[] = { "3", "8", NULL };
	const char *names[] = { "proc.faults", "proc.processes", "proc.threads" };
	static struct task_sums ts;
	struct workload w;
	struct measure m;
	struct ms_error err;
	int processes = 0, retired = 0;
	uint64_t biggest = 0, sum = 0;

	memset(&ts, 0, sizeof(ts));
	workload_spawn(&w, "forktree", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1, .per_process = true };

	if (measure_open(&m, host, &opt, names, 3, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
		measure_close(&m);
		return;
	}
	workload_start(&w);
	CHECK_EQ_INT(workload_wait(&w), 0);
	CHECK_EQ_INT(measure_frame(&m, &ts), 0);
	for (int i = 0; i < ts.nr; i++) {
		if (strcmp(ts.sum[i].name, "proc.faults"))
			continue;
		processes++;
		retired += ts.sum[i].retired;
		sum += ts.sum[i].total;
		biggest = ts.sum[i].total > biggest ? ts.sum[i].total : biggest;
		CHECK_EQ_STR(ts.sum[i].comm, "forktree");
		CHECK_EQ_INT(ts.sum[i].tid, LABEL_NONE);
	}
	fprintf(stderr, "forktree: %d processes with series, %d retired, faults %llu (biggest %llu)\n", processes,
		retired, (unsigned long long)value_of(&m, "proc.faults", LABEL_NONE), (unsigned long long)biggest);
	CHECK_EQ_INT(processes, 4);
	CHECK_EQ_INT(retired, 4);
	CHECK(sum_of(&ts, w.pid, LABEL_NONE, "proc.faults") != NULL);
	CHECK(biggest >= 8 * 256);
	/* The processes' series add up to the total. */
	CHECK_EQ_U64(sum, value_of(&m, "proc.faults", LABEL_NONE));
	CHECK(value_of(&m, "proc.faults", LABEL_NONE) >= 8 * 256);
	/* All exited: the set is empty again. */
	CHECK_EQ_U64(value_of(&m, "proc.processes", LABEL_NONE), 0);
	CHECK_EQ_U64(value_of(&m, "proc.threads", LABEL_NONE), 0);
	CHECK_EQ_INT(bpf_source_nr_targets(&m.src), 0);
	CHECK_EQ_INT(series_table_live(&m.table), m.src.count);
	CHECK(m.src.finished);
	measure_close(&m);
}

static void test_exited_pid_dropped(const struct host *host)
{
	const char *args[] = { "0", "--sleep-ms", "300", NULL };
	struct workload w;
	struct measure m;
	struct ms_error err;

	workload_spawn(&w, "touchmem", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1 };

	if (measure_open(&m, host, &opt, NULL, 0, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
	} else {
		workload_start(&w);
		sleep_ms(100);
		CHECK_EQ_INT(bpf_source_nr_targets(&m.src), 1);
		CHECK_EQ_INT(workload_wait(&w), 0);
		CHECK_EQ_INT(bpf_source_nr_targets(&m.src), 0);
	}
	measure_close(&m);
}

/* System-wide: every process counts; the workload has its own series, named
 * and with its faults, and proc.processes counts the processes there are. */
static void test_system_wide_processes(const struct host *host)
{
	const char *args[] = { "32", NULL };
	const char *names[] = { "proc.faults", "proc.processes", "proc.threads" };
	struct bpf_source_options opt = { .system_wide = true, .per_process = true };
	static struct task_sums ts;
	struct workload w;
	struct measure m;
	struct ms_error err;
	const struct task_sum *mine;
	uint64_t processes;

	memset(&ts, 0, sizeof(ts));
	if (measure_open(&m, host, &opt, names, 3, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		measure_close(&m);
		return;
	}
	workload_spawn(&w, "touchmem", args, -1);
	workload_start(&w);
	CHECK_EQ_INT(workload_wait(&w), 0);
	CHECK_EQ_INT(measure_frame(&m, &ts), 0);
	mine = sum_of(&ts, w.pid, LABEL_NONE, "proc.faults");
	processes = value_of(&m, "proc.processes", LABEL_NONE);
	fprintf(stderr, "system-wide: %d series of processes, workload %llu faults (%s), all %llu; "
		"%llu processes, %llu threads seen\n", ts.nr, mine ? (unsigned long long)mine->total : 0ull,
		mine ? mine->comm : "-", (unsigned long long)value_of(&m, "proc.faults", LABEL_NONE),
		(unsigned long long)processes, (unsigned long long)value_of(&m, "proc.threads", LABEL_NONE));
	CHECK(mine && mine->total >= 32 * 256 && mine->retired);
	CHECK(mine && !strcmp(mine->comm, "touchmem"));
	CHECK(value_of(&m, "proc.faults", LABEL_NONE) >= 32 * 256);
	/* This test process and its parents at least; /proc's count a moment apart. */
	{
		DIR *d = opendir("/proc");
		struct dirent *e;
		long n = 0;

		while (d && (e = readdir(d)))
			n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
		if (d)
			closedir(d);
		CHECK(processes >= 3);
		CHECK_NEAR((double)processes, (double)n, 20.0);
	}
	CHECK_EQ_INT(bpf_source_nr_targets(&m.src), -1);
	measure_close(&m);
}

/* churn forks 300 short-lived processes a second: the task table frees
 * each one's slot when it is gone, so it never holds more than the few
 * alive at once, and the faults add up to perf's count of the same run. */
static void churn_run(const struct host *host, int max_tasks, const char *what)
{
	const char *args[] = { "300", "1", "1", NULL };
	const char *names[] = { "proc.faults", "proc.threads", "proc.bpf_drops" };
	static struct task_sums ts;
	struct workload w;
	struct measure m;
	struct ms_error err;
	uint64_t faults = 0, drops = 0, perf_count = 0;
	int frames = 0;
	char *notes = NULL;
	size_t notes_len = 0;

	memset(&ts, 0, sizeof(ts));
	workload_spawn(&w, "churn", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1, .per_process = true,
					  .max_tasks = max_tasks, .warnings = open_memstream(&notes, &notes_len) };

	if (measure_open(&m, host, &opt, names, 3, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
		measure_close(&m);
		fclose(opt.warnings);
		free(notes);
		return;
	}
	int perf_fd = perf_page_faults(w.pid);

	workload_start(&w);
	while (!m.src.finished && frames < 100) {
		sleep_ms(50);
		CHECK_EQ_INT(measure_frame(&m, &ts), 0);
		faults += value_of(&m, "proc.faults", LABEL_NONE);
		drops += value_of(&m, "proc.bpf_drops", LABEL_NONE);
		frames++;
	}
	CHECK_EQ_INT(workload_wait(&w), 0);
	CHECK(read(perf_fd, &perf_count, sizeof(perf_count)) == sizeof(perf_count));
	close(perf_fd);
	fprintf(stderr, "churn (%s): %d frames, %llu faults (perf %llu), %d process series, table peak %d of %d, "
		"drops %llu, live series at the end %d\n", what, frames, (unsigned long long)faults,
		(unsigned long long)perf_count, ts.nr / 2, bpf_source_table_peak(&m.src),
		bpf_source_table_size(&m.src), (unsigned long long)drops, series_table_live(&m.table));
	/* Every fault counted, whether the table had room or not. */
	CHECK_NEAR((double)faults, (double)perf_count, 0.01 * (double)perf_count + 10);
	CHECK(faults >= 250 * 17);
	if (max_tasks == 0 || max_tasks >= 64) {
		/* ~300 processes of two threads came and went; few were alive at once. */
		CHECK(ts.nr / 2 >= 250);
		CHECK(bpf_source_table_peak(&m.src) < 64);
		CHECK_EQ_U64(drops, 0);
	} else {
		/* A full table (the parent holds the one slot): each child's threads
		 * count as drops, in the totals, and the output names them. */
		fflush(opt.warnings);
		CHECK(drops >= 250);
		CHECK_CONTAINS(notes, "the task table (1 threads) is full");
		CHECK_CONTAINS(notes, "(churn) counted in the totals only");
	}
	/* Every process series was retired: only the totals are left. */
	CHECK_EQ_INT(series_table_live(&m.table), m.src.count);
	measure_close(&m);
	fclose(opt.warnings);
	free(notes);
}

static void test_churn(const struct host *host)
{
	churn_run(host, 0, "default table");
	churn_run(host, 1, "a table of 1 thread");
}

/* threads 3 0 0 400 2 100: per-thread series for each thread, with the
 * thread's own faults (2 MB each), named, and retired when it exits. */
static void test_per_thread_series(const struct host *host)
{
	const char *args[] = { "3", "0", "0", "400", "2", "100", NULL };
	const char *names[] = { "proc.faults", "proc.cpu", "proc.state" };
	static struct task_sums ts;
	struct workload w;
	struct measure m;
	struct ms_error err;
	int workers = 0;

	memset(&ts, 0, sizeof(ts));
	workload_spawn(&w, "threads", args, -1);
	pid_t tgid = w.pid;
	struct bpf_source_options opt = { .tgids = &tgid, .nr_tgids = 1, .per_thread = true };

	if (measure_open(&m, host, &opt, names, 3, &err) < 0) {
		CHECK_FAIL("bpf source: %s", err.text);
		workload_start(&w);
		workload_wait(&w);
		measure_close(&m);
		return;
	}
	workload_start(&w);
	while (!m.src.finished) {
		sleep_ms(100);
		CHECK_EQ_INT(measure_frame(&m, &ts), 0);
	}
	workload_wait(&w);
	for (int i = 0; i < ts.nr; i++) {
		const struct task_sum *s = &ts.sum[i];

		if (strcmp(s->name, "proc.faults") || s->tid == w.pid)
			continue;
		workers++;
		fprintf(stderr, "thread %d (%s): %llu faults in %d frames%s\n", s->tid, s->comm,
			(unsigned long long)s->total, s->frames, s->retired ? ", retired" : "");
		CHECK_EQ_INT(s->pid, w.pid);
		/* 2 MB every 100 ms from 100 ms to 400 ms: three or four rounds of 512 faults. */
		CHECK(s->total >= 2 * 512 && s->total <= 4 * 512 + 100);
		CHECK(s->retired);
		CHECK(sum_of(&ts, w.pid, s->tid, "proc.cpu") != NULL);
	}
	CHECK_EQ_INT(workers, 3);
	CHECK(sum_of(&ts, w.pid, w.pid, "proc.faults") != NULL);
	CHECK_EQ_INT(series_table_live(&m.table), m.src.count);
	measure_close(&m);
}

/* --- degraded paths ---------------------------------------------------- */

static void test_missing_btf(const struct host *host)
{
	pid_t self = getpid();
	struct bpf_source_options opt = { .tgids = &self, .nr_tgids = 1, .btf_path = "/nonexistent/vmlinux" };
	struct source src;
	struct ms_error err;

	CHECK_EQ_INT(bpf_source_init(&src, host, &opt, NULL, 0, &err), -1);
	CHECK_CONTAINS(err.text, "no kernel BTF at /nonexistent/vmlinux");
	CHECK_CONTAINS(err.text, "CONFIG_DEBUG_INFO_BTF");
	CHECK_CONTAINS(err.text, "other sources (perf events, procfs) keep running");
}

static void test_missing_tracepoint(const struct host *host)
{
	const char *names[] = { "proc.faults_user", "proc.faults_kernel" };
	pid_t self = getpid();
	char log[4096] = "";
	FILE *warnings = fmemopen(log, sizeof(log) - 1, "w");
	struct bpf_source_options opt = { .tgids = &self, .nr_tgids = 1, .warnings = warnings };
	struct measure m;
	struct ms_error err;

	setenv("MEMSCOPE_BPF_ATTACH", "page_fault_user=exceptions:no_such_tracepoint", 1);
	int rc = measure_open(&m, host, &opt, names, 2, &err);

	unsetenv("MEMSCOPE_BPF_ATTACH");
	fclose(warnings);
	CHECK_EQ_INT(rc, 0);
	CHECK_CONTAINS(log, "no tracepoint exceptions:no_such_tracepoint");
	CHECK_CONTAINS(log, "lost: user-mode page faults");
	CHECK_CONTAINS(log, "the other probes run");
	if (rc == 0) {
		CHECK_EQ_INT(measure_sample(&m), 0);
		CHECK(!find_sample(&m, "proc.faults_user", LABEL_NONE)->valid);
		CHECK(find_sample(&m, "proc.faults_kernel", LABEL_NONE)->valid);
	}
	measure_close(&m);
}

/* Without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN (dropped in a child). */
static void test_no_permission(const struct host *host)
{
	int fds[2];
	pid_t child;

	CHECK_EQ_INT(pipe(fds), 0);
	child = fork();
	if (child == 0) {
		cap_t none = cap_init();
		pid_t self = getpid();
		struct bpf_source_options opt = { .tgids = &self, .nr_tgids = 1 };
		struct source src;
		struct ms_error err = { "" };

		close(fds[0]);
		if (cap_set_proc(none) < 0)
			_exit(3);
		if (bpf_source_init(&src, host, &opt, NULL, 0, &err) == 0)
			_exit(4);
		if (write(fds[1], err.text, strlen(err.text)) < 0)
			_exit(5);
		_exit(0);
	}
	close(fds[1]);
	char text[1024] = "";
	ssize_t n = read(fds[0], text, sizeof(text) - 1);
	int status;

	text[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(child, &status, 0);
	CHECK_EQ_INT(WEXITSTATUS(status), 0);
	CHECK_CONTAINS(text, "need root, or CAP_BPF and CAP_PERFMON");
	CHECK_CONTAINS(text, "lacks CAP_BPF and CAP_PERFMON");
	CHECK_CONTAINS(text, "sudo setcap cap_perfmon,cap_bpf,cap_sys_ptrace+ep $(command -v memscope)");
}

static void test_pfn_table_merge(void)
{
	struct bpf_pfn_table t = { 0 };
	struct ms_error err;

	CHECK_EQ_INT(bpf_pfn_table_add(&t, 100, 200, 1, &err), 0);
	CHECK_EQ_INT(bpf_pfn_table_add(&t, 0, 100, 0, &err), 0);
	CHECK_EQ_INT(bpf_pfn_table_add(&t, 200, 300, 1, &err), 0); /* merges with [100, 200) */
	CHECK_EQ_INT(t.nr, 2);
	CHECK_EQ_INT(bpf_pfn_table_add(&t, 250, 260, 0, &err), -1);
	CHECK_CONTAINS(err.text, "overlaps");
	CHECK_EQ_INT(bpf_pfn_table_node(&t, 99), 0);
	CHECK_EQ_INT(bpf_pfn_table_node(&t, 100), 1);
	CHECK_EQ_INT(bpf_pfn_table_node(&t, 299), 1);
	CHECK_EQ_INT(bpf_pfn_table_node(&t, 300), -1);
	bpf_pfn_table_free(&t);
}

int main(void)
{
	struct host host;
	struct ms_error err;

	find_bench_dir();
	test_pfn_table_merge();
	if (host_load(&host, &err) < 0) {
		fprintf(stderr, "host: %s\n", err.text);
		return 1;
	}
	test_missing_btf(&host);
	test_no_permission(&host);
	test_missing_tracepoint(&host);
	test_faults_match_perf(&host);
	test_pages_on_node0(&host);
	test_injected_two_node_table(&host);
	test_offcpu_sleep(&host);
	test_one_migration(&host);
	test_descendants_followed(&host);
	test_exited_pid_dropped(&host);
	test_system_wide_processes(&host);
	test_churn(&host);
	test_per_thread_series(&host);
	host_free(&host);
	return check_summary("bpf_source");
}
