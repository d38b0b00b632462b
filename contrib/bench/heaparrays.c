/* heaparrays: heap arrays made at known lines, for allocation-site tests.
 *
 *   heaparrays [--reuse]
 *   heaparrays --churn N [BYTES]
 *
 * Two arrays are malloc'd at the lines marked COLD-ALLOC (4 MiB) and
 * HOT-ALLOC (32 MiB); hot_pass() writes one byte in every page of the hot
 * one and one page (its middle) of the cold one, so nearly every page fault
 * is in the hot array. --reuse: then a 4 MiB block is malloc'd at
 * FIRST-ALLOC, touched, freed, and another malloc'd at SECOND-ALLOC, which
 * the allocator places at the same address (both are mmap'd: the threshold
 * is fixed at 1 MiB); the second is touched in every page. Prints the
 * addresses as JSON. THP is off so every page faults once. --churn: only
 * N malloc(BYTES) (64 by default) and free pairs, printing the time a pair
 * took as JSON (for the cost of the allocator probes). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define COLD_BYTES ((size_t)4 << 20)
#define HOT_BYTES ((size_t)32 << 20)
#define REUSE_BYTES ((size_t)4 << 20)

__attribute__((noinline)) static void touch(char *p, size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < bytes; i += (size_t)page)
		p[i] = (char)i;
}

__attribute__((noinline)) static void hot_pass(char *hot, char *cold)
{
	touch(cold + COLD_BYTES / 2, 1);
	touch(hot, HOT_BYTES);
}

static int churn(long n, size_t bytes)
{
	struct timespec t0, t1, c0, c1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		volatile char *p = malloc(bytes);

		if (!p)
			return 1;
		p[0] = (char)i;
		free((void *)p);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	/* Wall time per pair, and the process's own CPU time per pair (its
	 * traps and probes, without the time it waited for a CPU). */
	printf("{\"pairs\":%ld,\"bytes\":%zu,\"ns_per_pair\":%.1f,\"cpu_ns_per_pair\":%.1f}\n", n, bytes,
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n,
	       ((double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec)) / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	int reuse = argc > 1 && !strcmp(argv[1], "--reuse");
	char *cold, *hot, *first = NULL, *second = NULL;

	if (argc > 2 && !strcmp(argv[1], "--churn"))
		return churn(atol(argv[2]) > 0 ? atol(argv[2]) : 1, argc > 3 ? (size_t)atol(argv[3]) : 64);
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	/* A fixed threshold: freed blocks go back to the kernel and the
	 * next block of that size is mapped where the last one was. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	cold = malloc(COLD_BYTES); /* COLD-ALLOC */
	hot = malloc(HOT_BYTES); /* HOT-ALLOC */
	if (!cold || !hot)
		return 1;
	hot_pass(hot, cold);
	if (reuse) {
		first = malloc(REUSE_BYTES); /* FIRST-ALLOC */
		if (!first)
			return 1;
		touch(first, REUSE_BYTES);
		free(first);
		second = malloc(REUSE_BYTES); /* SECOND-ALLOC */
		if (!second)
			return 1;
		touch(second, REUSE_BYTES);
	}
	printf("{\"cold\":\"%p\",\"hot\":\"%p\",\"first\":\"%p\",\"second\":\"%p\"}\n", (void *)cold, (void *)hot,
	       (void *)first, (void *)second);
	free(second);
	free(hot);
	free(cold);
	return 0;
}
