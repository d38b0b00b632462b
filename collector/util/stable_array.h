/* An array whose elements never move. Address space for its largest size is
 * reserved once (nothing is committed: no memory is used for it yet), and
 * pages are made usable as the array grows. A reader on another thread may
 * keep a pointer into the array while the owner grows it: the series table
 * and the sampler's frame grow between frames this way while sinks read them.
 * Successive arrays start at different offsets into their reservations:
 * reservations are large and aligned alike, and arrays that all started on
 * the same cache sets (a sink queue's frames) would evict each other. */
#ifndef MEMSCOPE_STABLE_ARRAY_H
#define MEMSCOPE_STABLE_ARRAY_H

#include <stddef.h>

struct stable_array {
	void *base;            /* NULL until init; `offset` bytes into the mapping */
	void *mapping;
	size_t offset;
	size_t elem_size;
	size_t max;            /* elements the reservation holds */
	size_t usable;         /* elements [0, usable) are committed and zero-initialised */
	size_t reserved_bytes;
	size_t committed;      /* bytes of the mapping usable (from its start) */
};

/* Reserve room for max elements of elem_size bytes. -1 (errno set) when the
 * address space cannot be reserved. */
int stable_array_init(struct stable_array *a, size_t elem_size, size_t max);
/* Make elements [0, n) usable; new ones read as zero. -1 when n > max or the
 * memory cannot be committed (errno set); the array is unchanged then. */
int stable_array_fit(struct stable_array *a, size_t n);
void stable_array_free(struct stable_array *a);

#endif
