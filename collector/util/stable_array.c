#include "util/stable_array.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Commit in steps of at least this many bytes: few mprotect calls. */
#define COMMIT_STEP (64u << 10)
/* Offsets of successive arrays: a page and a cache line apart, over
 * COLOURS steps (so both the cache sets within a page and the pages within a
 * large cache's set period differ). */
#define COLOUR_STEP (4096u + 64u)
#define COLOURS 64u

static _Atomic unsigned next_colour;

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
	size_t bytes, offset;
	void *mapping;

	memset(a, 0, sizeof(*a));
	if (!elem_size || !max || max > SIZE_MAX / elem_size) {
		errno = EINVAL;
		return -1;
	}
	offset = (atomic_fetch_add_explicit(&next_colour, 1, memory_order_relaxed) % COLOURS) * COLOUR_STEP;
	if (elem_size * max > SIZE_MAX - offset - page_size()) {
		errno = EINVAL;
		return -1;
	}
	bytes = round_up(offset + elem_size * max, page_size());
	/* PROT_NONE: address space only, not counted as committed memory. */
	mapping = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mapping == MAP_FAILED)
		return -1;
	a->mapping = mapping;
	a->offset = offset;
	a->base = (char *)mapping + offset;
	a->elem_size = elem_size;
	a->max = max;
	a->reserved_bytes = bytes;
	a->committed = offset / page_size() * page_size();
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
	/* Byte counts from the start of the mapping. */
	have = a->committed;
	want = round_up(a->offset + n * a->elem_size, COMMIT_STEP);
	if (want > a->reserved_bytes)
		want = a->reserved_bytes;
	if (want > have) {
		if (mprotect((char *)a->mapping + have, want - have, PROT_READ | PROT_WRITE) < 0)
			return -1;
		a->committed = want;
	}
	/* Fresh anonymous pages read as zero. */
	a->usable = (a->committed - a->offset) / a->elem_size;
	if (a->usable > a->max)
		a->usable = a->max;
	return 0;
}

void stable_array_free(struct stable_array *a)
{
	if (a->mapping)
		munmap(a->mapping, a->reserved_bytes);
	memset(a, 0, sizeof(*a));
}
