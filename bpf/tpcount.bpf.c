// SPDX-License-Identifier: GPL-2.0-only
/* System-wide tracepoint counts for memscope's perf source: program N, when
 * attached to a raw tracepoint, adds one to slot N of this CPU's counters.
 * User space reads every CPU's counters with one map lookup per interval,
 * instead of one read() of another CPU's perf counter group each, which the
 * kernel serves with an interrupt to that CPU. A raw tracepoint program also
 * costs the traced code less than perf's tracepoint event, which fills a
 * trace record before counting it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "tpcount_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct tpcount_slots {
	__u64 count[TPCOUNT_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpcount_slots);
} tp_counts SEC(".maps");

#define SLOT(n)                                                                 \
	SEC("raw_tp")                                                           \
	int tpcount_##n(void *ctx)                                              \
	{                                                                       \
		__u32 zero = 0;                                                 \
		struct tpcount_slots *c = bpf_map_lookup_elem(&tp_counts, &zero); \
									        \
		if (c)                                                          \
			c->count[n]++;                                          \
		return 0;                                                       \
	}

/* Slot numbers written in octal (0NK = 8N + K): tpcount_000 .. tpcount_077. */
#define SLOTS8(n) SLOT(0##n##0) SLOT(0##n##1) SLOT(0##n##2) SLOT(0##n##3) \
		  SLOT(0##n##4) SLOT(0##n##5) SLOT(0##n##6) SLOT(0##n##7)

SLOTS8(0) SLOTS8(1) SLOTS8(2) SLOTS8(3) SLOTS8(4) SLOTS8(5) SLOTS8(6) SLOTS8(7)
