/* What disturbs a run: before it (a short probe) and during it (from start
 * to report), the CPU time other processes used and how many of them were
 * runnable, from /proc with this process's own share taken out, and the
 * time the hypervisor stole. When others used enough to bend the figures,
 * a warning says by how much and which figures; the JSON records it all. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* Other processes' use above this many CPUs makes the figures unreliable:
 * they share the last-level cache and the memory with the benchmark. */
#define LOAD_WARN_CPUS 0.25
#define LOAD_SAMPLE_MS 50

struct cpu_times {
	double t;                   /* CLOCK_MONOTONIC seconds */
	double busy, steal;         /* all CPUs, seconds */
	double own;                 /* this process and its waited-for children, seconds */
};

static struct {
	struct cpu_times start;
	struct load_figures before;
	pthread_t sampler;
	atomic_bool stop;
	bool running;
	bool started;
	double runq_sum;            /* runnable others, summed over the samples */
	long samples;
	char isolate[256];          /* JSON object or empty */
} L;

/* utime + stime + cutime + cstime of /proc/PID/stat, in seconds. */
static double proc_cpu_s(const char *stat_path)
{
	char buf[1024], *p;
	unsigned long long ut, st;
	long long cut, cst;

	if (topo_read_text(stat_path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
		return 0;
	/* After "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ut, &st, &cut, &cst) != 4)
		return 0;
	return (double)(ut + st + (unsigned long long)cut + (unsigned long long)cst) / (double)sysconf(_SC_CLK_TCK);
}

static void cpu_times_now(struct cpu_times *c)
{
	char buf[8192];
	unsigned long long v[10] = { 0 };
	double hz = (double)sysconf(_SC_CLK_TCK);

	memset(c, 0, sizeof(*c));
	c->t = now_s();
	c->own = proc_cpu_s("/proc/self/stat");
	if (topo_read_text("/proc/stat", buf, sizeof(buf)) < 0)
		return;
	/* cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user) */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
		   &v[7]) < 8)
		return;
	c->busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
	c->steal = (double)v[7] / hz;
}

/* Runnable threads on the machine that are not this process's. */
static int others_running(void)
{
	char buf[8192], path[300], st[1024], *p;
	int running = -1, own = 0;
	DIR *d;
	struct dirent *e;

	if (topo_read_text("/proc/stat", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "procs_running ")))
		return -1;
	running = atoi(p + 14);
	if (!(d = opendir("/proc/self/task")))
		return running;
	while ((e = readdir(d))) {
		char *q;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if (topo_read_text(path, st, sizeof(st)) == 0 && (q = strrchr(st, ')')) && q[1] == ' ' && q[2] == 'R')
			own++;
	}
	closedir(d);
	return running > own ? running - own : 0;
}

static void figures_between(const struct cpu_times *a, const struct cpu_times *b, struct load_figures *f)
{
	double dt = b->t - a->t;

	f->seconds = dt;
	f->other_cpus = dt > 0 ? (b->busy - a->busy - (b->own - a->own)) / dt : 0;
	if (f->other_cpus < 0)
		f->other_cpus = 0;
	f->own_cpus = dt > 0 ? (b->own - a->own) / dt : 0;
	f->steal_cpus = dt > 0 ? (b->steal - a->steal) / dt : 0;
}

static void *sampler_main(void *arg)
{
	struct timespec ts = { 0, LOAD_SAMPLE_MS * 1000000L };

	(void)arg;
	while (!atomic_load(&L.stop)) {
		int n = others_running();

		if (n >= 0) {
			L.runq_sum += n;
			L.samples++;
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

void load_start(void)
{
	struct cpu_times a, b;
	struct timespec ts = { 0, 200 * 1000000L };
	double runq = 0;
	int n = 0;

	/* Before: 200 ms of the machine without this benchmark's work. */
	cpu_times_now(&a);
	for (int i = 0; i < 4; i++) {
		int r = others_running();

		if (r >= 0) {
			runq += r;
			n++;
		}
		ts.tv_nsec = 50 * 1000000L;
		nanosleep(&ts, NULL);
	}
	cpu_times_now(&b);
	figures_between(&a, &b, &L.before);
	L.before.run_queue = n ? runq / n : -1;
	cpu_times_now(&L.start);
	L.started = true;
	atomic_store(&L.stop, false);
	L.running = pthread_create(&L.sampler, NULL, sampler_main, NULL) == 0;
}

void load_finish(struct load_figures *during)
{
	struct cpu_times end;

	if (!L.started) {
		*during = (struct load_figures){ .run_queue = -1 };
		return;
	}
	cpu_times_now(&end);
	if (L.running) {
		atomic_store(&L.stop, true);
		pthread_join(L.sampler, NULL);
		L.running = false;
	}
	figures_between(&L.start, &end, during);
	during->run_queue = L.samples ? L.runq_sum / (double)L.samples : -1;
}

const struct load_figures *load_before(void)
{
	if (!L.started)
		L.before.run_queue = -1;
	return &L.before;
}

bool load_unreliable(const struct load_figures *f)
{
	return f->other_cpus >= LOAD_WARN_CPUS || f->steal_cpus >= LOAD_WARN_CPUS;
}

/* The largest cache of the first CPU that no other CPU shares: above it,
 * a benchmark shares caches or memory with whatever else runs. */
size_t load_private_cache(const struct bench_topo *t)
{
	size_t best = 0;

	for (int i = 0; i < t->nr_caches; i++)
		if (!strpbrk(t->caches[i].shared_cpus, ",-") && t->caches[i].size > best)
			best = t->caches[i].size;
	return best;
}

void load_warning(const struct bench_opts *o, const struct load_figures *f, bool by_size, char *buf, size_t n)
{
	char size[32];
	size_t priv = load_private_cache(&o->topo);
	/* Others took more than the CPUs the benchmark left idle: they preempted it. */
	bool preempted = f->other_cpus + f->own_cpus > o->topo.nr_cpus - 0.25;
	int len;

	len = snprintf(buf, n, "other processes used %.1f CPUs during this run", f->other_cpus);
	if (f->steal_cpus >= 0.05)
		len += snprintf(buf + len, n - (size_t)len, " and the hypervisor stole %.2f", f->steal_cpus);
	if (preempted || !by_size || !priv) {
		snprintf(buf + len, n - (size_t)len, ": %s%s", preempted ? "no figure is reliable" : "these figures are not reliable",
			 preempted ? " (every CPU was busy: this benchmark waited for one)" : "");
		return;
	}
	format_size(priv, size, sizeof(size));
	snprintf(buf + len, n - (size_t)len, ": figures above %s are not reliable (past the caches private to a core)",
		 size);
}

void load_set_isolate(const char *json)
{
	snprintf(L.isolate, sizeof(L.isolate), "%s", json);
}

const char *load_isolate(void)
{
	return L.isolate;
}
