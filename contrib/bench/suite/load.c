/* What disturbs a run: before it (a short probe) and during it (from start
 * to report), the CPU time other processes used and how many of them were
 * runnable, from /proc with this process's own share taken out, and the
 * time the hypervisor stole, and the CPUs' clock where cpufreq shows it.
 * When others used enough to bend the figures, or the clock moved, a
 * warning says by how much and which figures; the JSON records it all. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
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
/* A clock whose highest reading is this much above its lowest moved enough
 * to show in bandwidths and latencies (turbo, power states, thermal limits). */
#define FREQ_MOVED 1.05

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
	const struct bench_topo *topo;
	int sampler_tid;            /* left out of the clock readings */
	double freq_min, freq_max;  /* MHz over the run's samples; NaN none */
	char freq_why[256];         /* why the clock is unknown; empty when read */
} L;

/* The CPU a thread last ran on: field 39 ("processor") of its stat line. */
static int last_cpu(char *stat)
{
	char *p = strrchr(stat, ')'), *save = NULL, *tok;
	int field = 2;      /* ")" ends field 2, comm */

	if (!p)
		return -1;
	for (tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (++field == 39)
			return atoi(tok);
	return -1;
}

/* One CPU's current clock in MHz, from cpufreq's scaling_cur_freq (kHz);
 * NaN when the kernel shows none. */
static double cpu_clock_mhz(int cpu)
{
	char path[512], text[64], *end;
	double khz;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", topo_sysfs_root(), cpu);
	if (topo_read_text(path, text, sizeof(text)) < 0)
		return NAN;
	khz = strtod(text, &end);
	return end == text || khz <= 0 ? NAN : khz / 1000;
}

/* [lo, hi] widened to take in a reading; false for none (NaN). */
static bool widen(double *lo, double *hi, double mhz)
{
	if (isnan(mhz))
		return false;
	*lo = fmin(*lo, mhz);
	*hi = fmax(*hi, mhz);
	return true;
}

/* Before the run, every CPU's clock; during it, the clocks of the CPUs this
 * benchmark's threads are on (an idle CPU's clock moving says nothing
 * about the figures). */
static bool read_clocks(bool own_cpus_only, double *lo, double *hi)
{
	char path[300], st[1024];
	bool any = false;
	DIR *d;
	struct dirent *e;

	*lo = INFINITY;
	*hi = -INFINITY;
	if (!own_cpus_only) {
		for (int i = 0; L.topo && i < L.topo->nr_cpus; i++)
			any |= widen(lo, hi, cpu_clock_mhz(L.topo->cpus[i]));
		return any;
	}
	if (!(d = opendir("/proc/self/task")))
		return false;
	while ((e = readdir(d))) {
		int cpu;

		if (e->d_name[0] == '.' || atoi(e->d_name) == L.sampler_tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if (topo_read_text(path, st, sizeof(st)) < 0 || (cpu = last_cpu(st)) < 0)
			continue;
		any |= widen(lo, hi, cpu_clock_mhz(cpu));
	}
	closedir(d);
	return any;
}

static void clocks_sample(bool own_cpus_only)
{
	double lo, hi;

	if (!read_clocks(own_cpus_only, &lo, &hi))
		return;
	L.freq_min = isnan(L.freq_min) ? lo : fmin(L.freq_min, lo);
	L.freq_max = isnan(L.freq_max) ? hi : fmax(L.freq_max, hi);
}

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
	L.sampler_tid = (int)gettid();
	while (!atomic_load(&L.stop)) {
		int n = others_running();

		if (n >= 0) {
			L.runq_sum += n;
			L.samples++;
		}
		clocks_sample(true);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

void load_start(const struct bench_topo *t)
{
	struct cpu_times a, b;
	struct timespec ts = { 0, 200 * 1000000L };
	double runq = 0;
	int n = 0;

	L.topo = t;
	L.freq_min = L.freq_max = NAN;
	L.freq_why[0] = '\0';
	/* Before: 200 ms of the machine without this benchmark's work. */
	cpu_times_now(&a);
	for (int i = 0; i < 4; i++) {
		int r = others_running();

		if (r >= 0) {
			runq += r;
			n++;
		}
		clocks_sample(false);
		ts.tv_nsec = 50 * 1000000L;
		nanosleep(&ts, NULL);
	}
	cpu_times_now(&b);
	figures_between(&a, &b, &L.before);
	L.before.run_queue = n ? runq / n : -1;
	L.before.freq_min_mhz = L.freq_min;
	L.before.freq_max_mhz = L.freq_max;
	if (isnan(L.freq_min) && t && t->nr_cpus)
		snprintf(L.freq_why, sizeof(L.freq_why),
			 "the clock was not measured: %s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq is not there "
			 "(no cpufreq driver in this kernel)",
			 topo_sysfs_root(), t->cpus[0]);
	L.freq_min = L.freq_max = NAN;
	clocks_sample(true);        /* the clock the run starts at, before anything else can change */
	cpu_times_now(&L.start);
	L.started = true;
	atomic_store(&L.stop, false);
	L.running = pthread_create(&L.sampler, NULL, sampler_main, NULL) == 0;
}

void load_finish(struct load_figures *during)
{
	struct cpu_times end;

	if (!L.started) {
		*during = (struct load_figures){ .run_queue = -1, .freq_min_mhz = NAN, .freq_max_mhz = NAN };
		return;
	}
	cpu_times_now(&end);
	if (L.running) {
		atomic_store(&L.stop, true);
		pthread_join(L.sampler, NULL);
		L.running = false;
		L.sampler_tid = 0;
	}
	clocks_sample(true);
	figures_between(&L.start, &end, during);
	during->run_queue = L.samples ? L.runq_sum / (double)L.samples : -1;
	during->freq_min_mhz = L.freq_min;
	during->freq_max_mhz = L.freq_max;
}

const char *load_freq_unknown(void)
{
	return L.freq_why;
}

bool load_freq_warning(const struct load_figures *f, char *buf, size_t n)
{
	buf[0] = '\0';
	if (isnan(f->freq_min_mhz) || f->freq_max_mhz <= f->freq_min_mhz * FREQ_MOVED)
		return false;
	snprintf(buf, n, "the CPU clock moved between %.0f and %.0f MHz during this run: every figure scales with it",
		 f->freq_min_mhz, f->freq_max_mhz);
	return true;
}

const struct load_figures *load_before(void)
{
	if (!L.started) {
		L.before.run_queue = -1;
		L.before.freq_min_mhz = L.before.freq_max_mhz = NAN;
	}
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
