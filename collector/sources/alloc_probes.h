/* Allocation sites for sampling (record --alloc): the allocator probes of
 * bpf/allocs.bpf.c attached to the recorded processes' C library (or to a
 * static binary's own allocator), their allocations of at least a size and
 * the frees of those read from a BPF ring buffer. */
#ifndef MEMSCOPE_ALLOC_PROBES_H
#define MEMSCOPE_ALLOC_PROBES_H

#include <stdint.h>

#include "sampler/sample_item.h"
#include "sampler/target.h"
#include "util/error.h"

struct alloc_probes;

typedef void (*alloc_probes_fn)(const struct alloc_event *e, uint64_t time_ns, void *ctx);

/* Load and attach for target; NULL with a one-line reason in err when the
 * probes cannot be used here (no BPF privileges, no allocator found). */
struct alloc_probes *alloc_probes_open(const char *proc_root, const struct target *target, uint64_t min_size,
				       alloc_probes_fn fn, void *ctx, struct ms_error *err);
/* The fd to watch: readable when events wait. */
int alloc_probes_fd(const struct alloc_probes *ap);
/* Hand every waiting event to fn. */
void alloc_probes_drain(struct alloc_probes *ap);
/* Events the full ring could not take. */
uint64_t alloc_probes_dropped(const struct alloc_probes *ap);
void alloc_probes_close(struct alloc_probes *ap);

#endif
