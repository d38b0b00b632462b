/* Where threads run and where pages live: sched_setaffinity, and mbind /
 * move_pages through raw system calls (the kernel's uapi header, no libnuma,
 * so the benchmark builds wherever libc does, cross builds included). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include "bench.h"

#define PAGE 4096ul

void *mem_alloc(size_t size, bool huge)
{
	size_t len = (size + PAGE - 1) & ~(PAGE - 1);
	void *p;

	if (!len)
		len = PAGE;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Ask for what the user chose, whatever the system default is. */
	madvise(p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return p;
}

void mem_free(void *p, size_t size)
{
	size_t len = (size + PAGE - 1) & ~(PAGE - 1);

	if (p)
		munmap(p, len ? len : PAGE);
}

int mem_bind(void *p, size_t size, int node)
{
	unsigned long mask[BENCH_MAX_NODES / (8 * sizeof(unsigned long)) + 1];
	size_t len = (size + PAGE - 1) & ~(PAGE - 1);

	if (node < 0 || node >= BENCH_MAX_NODES) {
		errno = EINVAL;
		return -1;
	}
	memset(mask, 0, sizeof(mask));
	mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
	/* maxnode counts bits, and the kernel reads one fewer than given. */
	return (int)syscall(SYS_mbind, p, len, MPOL_BIND, mask, sizeof(mask) * 8 + 1, 0u);
}

double mem_share_on_node(void *p, size_t size, int node)
{
	size_t n = (size + PAGE - 1) / PAGE, on = 0, known = 0;
	void **pages = malloc(n * sizeof(*pages));
	int *status = malloc(n * sizeof(*status));
	double share = -1;

	if (!pages || !status)
		goto out;
	for (size_t i = 0; i < n; i++)
		pages[i] = (char *)p + i * PAGE;
	/* nodes == NULL: move nothing, report each page's node in status. */
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (status[i] < 0)
			continue;
		known++;
		on += status[i] == node;
	}
	share = known ? (double)on / (double)known : 0;
out:
	free(pages);
	free(status);
	return share;
}

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int current_cpu(void)
{
	return sched_getcpu();
}
