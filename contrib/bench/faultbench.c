/* faultbench: the cost of a page fault, timed by the program itself so a
 * tracer's start-up is not part of the number.
 *
 *   faultbench MB ROUNDS
 * Each round maps MB megabytes, writes one byte per page (one fault each,
 * THP disabled) and unmaps them. Prints on stdout:
 *   faults=N ns=T ns_per_fault=X */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long mb, rounds;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long faults = 0;

	if (argc != 3 || (mb = atol(argv[1])) < 1 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: faultbench MB ROUNDS\n");
		return 2;
	}
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	double start = now_ns();

	for (long r = 0; r < rounds; r++) {
		size_t size = (size_t)mb << 20;
		volatile char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (mem == MAP_FAILED) {
			perror("faultbench: mmap");
			return 1;
		}
		for (size_t off = 0; off < size; off += page, faults++)
			mem[off] = 1;
		munmap((void *)mem, size);
	}
	double elapsed = now_ns() - start;

	printf("faults=%lu ns=%.0f ns_per_fault=%.1f\n", faults, elapsed, elapsed / (double)faults);
	return 0;
}
