/* cpuhop: moves itself to each CPU given, in order, spinning a few
 * milliseconds on each, so the scheduler migrates it exactly once per hop
 * (when it starts pinned to the first CPU, e.g. under `taskset -c 0`).
 *
 *   cpuhop CPU [CPU...] */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void spin_ms(long ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cpuhop CPU [CPU...]\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		char *end;
		long cpu = strtol(argv[i], &end, 10);
		cpu_set_t set;

		if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
			fprintf(stderr, "cpuhop: \"%s\" is not a CPU number\n", argv[i]);
			return 2;
		}
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			perror("cpuhop: sched_setaffinity");
			return 1;
		}
		spin_ms(5);
	}
	return 0;
}
