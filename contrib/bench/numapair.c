/* numapair: two arrays on two nodes, touched from one CPU, for the sampling
 * tests of the 2-node guest.
 *
 *   numapair [MIB] [SECONDS]
 *
 * Array a_remote is bound to node 1 and a_local to node 0 (mbind
 * MPOL_BIND), and the thread runs on node 0's CPUs. touch_remote() and
 * touch_local() write one byte per page of each array (first-touch faults),
 * then keep writing them for SECONDS (NUMA balancing, when on, samples those
 * accesses as hinting faults; bound pages stay where they are). So every
 * fault on a_remote is remote (node 1 data, node 0 CPU) and every fault on
 * a_local is local. Prints where the pages ended up (move_pages). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_MIB 64
#define MPOL_BIND 2
/* Let NUMA balancing scan bound memory (Linux 5.12+): hinting faults on it,
 * migration only within the bound nodes (here: none). */
#define MPOL_F_NUMA_BALANCING (1 << 13)

char a_remote[(size_t)MAX_MIB << 20] __attribute__((aligned(4096)));
char a_local[(size_t)MAX_MIB << 20] __attribute__((aligned(4096)));

static void bind_to(char *p, size_t bytes, int node)
{
	unsigned long mask = 1ul << node;

	if (syscall(SYS_mbind, p, bytes, MPOL_BIND | MPOL_F_NUMA_BALANCING, &mask, sizeof(mask) * 8, 0) != 0 &&
	    syscall(SYS_mbind, p, bytes, MPOL_BIND, &mask, sizeof(mask) * 8, 0) != 0) {
		perror("mbind");
		exit(1);
	}
}

__attribute__((noinline)) static void touch_remote(size_t bytes, char v)
{
	for (size_t i = 0; i < bytes; i += 4096)
		a_remote[i] = v; /* REMOTE-LINE */
}

__attribute__((noinline)) static void touch_local(size_t bytes, char v)
{
	for (size_t i = 0; i < bytes; i += 4096)
		a_local[i] = v; /* LOCAL-LINE */
}

/* Node 0's CPUs, from sysfs. */
static void run_on_node0(void)
{
	char text[256] = "";
	FILE *f = fopen("/sys/devices/system/node/node0/cpulist", "r");
	cpu_set_t set;
	int lo, hi;

	if (!f || !fgets(text, sizeof(text), f)) {
		perror("node0/cpulist");
		exit(1);
	}
	fclose(f);
	CPU_ZERO(&set);
	for (char *p = strtok(text, ",\n"); p; p = strtok(NULL, ",\n")) {
		if (sscanf(p, "%d-%d", &lo, &hi) == 2)
			for (int c = lo; c <= hi; c++)
				CPU_SET(c, &set);
		else if (sscanf(p, "%d", &lo) == 1)
			CPU_SET(lo, &set);
	}
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static int node_of(void *p)
{
	void *pages[1] = { p };
	int status = -1;

	syscall(SYS_move_pages, 0, 1, pages, NULL, &status, 0);
	return status;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 8;
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	struct timespec start, now;
	char v = 1;

	if (mib == 0 || mib > MAX_MIB) {
		fprintf(stderr, "usage: numapair [MIB (1-%d)] [SECONDS]\n", MAX_MIB);
		return 2;
	}
	/* One fault per 4 KiB page only holds without THP. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	run_on_node0();
	bind_to(a_remote, mib << 20, 1);
	bind_to(a_local, mib << 20, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		touch_remote(mib << 20, v);
		touch_local(mib << 20, v);
		v++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	printf("{\"a_remote_node\": %d, \"a_local_node\": %d, \"passes\": %d}\n", node_of(a_remote), node_of(a_local),
	       (int)(unsigned char)(v - 1));
	return 0;
}
