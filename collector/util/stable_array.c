#include "util/stable_array.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Commit in steps of at least this many bytes: few mprotect calls. */
#define COMMIT_STEP (64u << 10)

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

int stable_array_init(struct stable_array *a, size_t elem_size, size_t max)
{
	size_t bytes;

	memset(a, 0, sizeof(*a));
	if (!elem_size || !max || max > SIZE_MAX / elem_size) {
		errno = EINVAL;
		return -1;
	}
	bytes = round_up(elem_size * max, page_size());
	/* PROT_NONE: address space only, not counted as committed memory. */
	a->base = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->base == MAP_FAILED) {
		a->base = NULL;
		return -1;
	}
	a->elem_size = elem_size;
	a->max = max;
	a->reserved_bytes = bytes;
	return 0;
}

int stable_array_fit(struct stable_array *a, size_t n)
{
	size_t have, want;

	if (n <= a->usable)
		return 0;
	if (!a->base || n > a->max) {
		errno = ENOSPC;
		return -1;
	}
	have = round_up(a->usable * a->elem_size, page_size());
	want = round_up(n * a->elem_size, COMMIT_STEP);
	if (want > a->reserved_bytes)
		want = a->reserved_bytes;
	if (want > have && mprotect((char *)a->base + have, want - have, PROT_READ | PROT_WRITE) < 0)
		return -1;
	/* Fresh anonymous pages read as zero. */
	a->usable = want / a->elem_size;
	return 0;
}

void stable_array_free(struct stable_array *a)
{
	if (a->base)
		munmap(a->base, a->reserved_bytes);
	memset(a, 0, sizeof(*a));
}
