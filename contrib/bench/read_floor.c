/* read_floor: the least a periodic counter reader can cost on this machine,
 * to put `stat -a -I MS`'s CPU next to (interval_rate.py runs it under
 * rusage in the same alternation as memscope and perf).
 *
 *   read_floor MODE INTERVAL_MS SECONDS
 *
 * MODE timer: wake on a timerfd every INTERVAL_MS, nothing else.
 *      ipi:   the same, and read one group of 7 software counters per CPU
 *             (system-wide, as stat -a opens them): reading another CPU's
 *             group is an inter-processor interrupt the reader waits for.
 *      local: one thread pinned to each CPU on its own timerfd, reading only
 *             its own CPU's group: no IPI, a wake-up per CPU instead.
 * All modes run for SECONDS on an absolute grid (TFD_TIMER_ABSTIME). */
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static const uint64_t software[] = {
	PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
	PERF_COUNT_SW_PAGE_FAULTS_MIN, PERF_COUNT_SW_PAGE_FAULTS_MAJ, PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_CPU_MIGRATIONS,
};
#define NR_SOFTWARE (int)(sizeof(software) / sizeof(software[0]))

static int nr_cpus;
static int *leaders;
static struct timespec first;
static long interval_ns;
static uint64_t nr_ticks;

static int open_group(int cpu)
{
	int leader = -1;

	for (int i = 0; i < NR_SOFTWARE; i++) {
		struct perf_event_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.size = sizeof(a);
		a.config = software[i];
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, leader, 0);
		if (fd < 0) {
			perror("read_floor: perf_event_open");
			exit(1);
		}
		if (leader < 0)
			leader = fd;
	}
	return leader;
}

/* Wakes every interval_ns from `first`; reads the groups of CPUs [lo, hi). */
static void run(int lo, int hi)
{
	struct itimerspec its = { .it_interval = { 0, interval_ns }, .it_value = first };
	uint64_t buf[3 + 2 * NR_SOFTWARE], ticks, done = 0;
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	if (tfd < 0 || timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		perror("read_floor: timerfd");
		exit(1);
	}
	while (done < nr_ticks) {
		if (read(tfd, &ticks, sizeof(ticks)) != sizeof(ticks))
			break;
		done += ticks;
		for (int cpu = lo; cpu < hi; cpu++)
			if (read(leaders[cpu], buf, sizeof(buf)) <= 0) {
				perror("read_floor: read");
				exit(1);
			}
	}
	close(tfd);
}

static void *pinned(void *arg)
{
	int cpu = (int)(intptr_t)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
		fprintf(stderr, "read_floor: cannot pin a thread to CPU %d\n", cpu);
		exit(1);
	}
	run(cpu, cpu + 1);
	return NULL;
}

int main(int argc, char **argv)
{
	double ms, seconds;

	if (argc != 4 || (strcmp(argv[1], "timer") && strcmp(argv[1], "ipi") && strcmp(argv[1], "local")) ||
	    (ms = atof(argv[2])) <= 0 || (seconds = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: read_floor timer|ipi|local INTERVAL_MS SECONDS\n");
		return 2;
	}
	interval_ns = (long)(ms * 1e6);
	nr_ticks = (uint64_t)(seconds * 1e3 / ms);
	nr_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	leaders = calloc((size_t)nr_cpus, sizeof(int));
	if (!leaders)
		return 1;
	if (strcmp(argv[1], "timer"))
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			leaders[cpu] = open_group(cpu);
	/* The first tick one interval from now, on the same grid for every thread. */
	clock_gettime(CLOCK_MONOTONIC, &first);
	first.tv_nsec += interval_ns;
	first.tv_sec += first.tv_nsec / 1000000000;
	first.tv_nsec %= 1000000000;
	if (!strcmp(argv[1], "timer")) {
		run(0, 0);
	} else if (!strcmp(argv[1], "ipi")) {
		run(0, nr_cpus);
	} else {
		pthread_t *threads = calloc((size_t)nr_cpus, sizeof(pthread_t));

		if (!threads)
			return 1;
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			pthread_create(&threads[cpu], NULL, pinned, (void *)(intptr_t)cpu);
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			pthread_join(threads[cpu], NULL);
		free(threads);
	}
	free(leaders);
	return 0;
}
