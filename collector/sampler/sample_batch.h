/* A batch of sample items on their way from the sampling thread to the
 * sinks: each item copied into one buffer (a sample with only the call chain
 * and raw bytes it has, a mapping with only its path's length), read back in
 * order by every sink that takes samples. Once published a batch is not
 * changed; each sink that takes it holds a reference, and the last one to
 * let go frees it. */
#ifndef MEMSCOPE_SAMPLE_BATCH_H
#define MEMSCOPE_SAMPLE_BATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/sample_item.h"

/* Bytes of a batch: about two thousand samples with short call chains. */
#define SAMPLE_BATCH_BYTES (256u << 10)

struct sample_batch {
	atomic_int refs;
	uint32_t nr_items;
	uint32_t nr_samples;       /* of those, samples */
	size_t len, cap;
	uint8_t data[];
};

/* A batch with one reference (the caller's). NULL when out of memory. */
struct sample_batch *sample_batch_new(size_t cap);
void sample_batch_ref(struct sample_batch *b);
void sample_batch_unref(struct sample_batch *b);

/* Copy item in, its times made relative to origin_ns (0: leave them; a
 * time of 0, before the start, stays 0). -1 when the batch has no room. */
int sample_batch_append(struct sample_batch *b, const struct sample_item *item, uint64_t origin_ns);

/* The items in order: start with *at = 0; false after the last. The item's
 * pointers point into st, valid until the next call. */
bool sample_batch_next(const struct sample_batch *b, size_t *at, struct sample_item_storage *st,
		       struct sample_item *item);

#endif
