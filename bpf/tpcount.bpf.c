// SPDX-License-Identifier: GPL-2.0-only
/* System-wide tracepoint counts for memscope's perf source: program N, when
 * attached to a raw tracepoint, adds one to slot N of this CPU's counters.
 * The counters are a memory-mapped array with an entry per CPU: user space
 * reads every CPU's counts from memory, without a system call, instead of one
 * read() of another CPU's perf counter group each, which the kernel serves
 * with an interrupt to that CPU. Only CPU c's programs write entry c, and a
 * program does not nest on its CPU (the kernel counts a recursion miss
 * instead), so a plain increment is exact, as in a per-CPU map. A raw
 * tracepoint program also costs the traced code less than perf's tracepoint
 * event, which fills a trace record before counting it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "tpcount_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct tpcount_slots {
	__u64 count[TPCOUNT_SLOTS];
};

/* One entry per possible CPU (max_entries is set at load). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpcount_slots);
} tp_counts SEC(".maps");

#define SLOT(n)                                                                 \
	SEC("raw_tp")                                                           \
	int tpcount_##n(void *ctx)                                              \
	{                                                                       \
		__u32 cpu = bpf_get_smp_processor_id();                         \
		struct tpcount_slots *c = bpf_map_lookup_elem(&tp_counts, &cpu); \
									        \
		if (c)                                                          \
			c->count[n]++;                                          \
		return 0;                                                       \
	}

/* Slot numbers written in octal (0NK = 8N + K): tpcount_000 .. tpcount_077. */
#define SLOTS8(n) SLOT(0##n##0) SLOT(0##n##1) SLOT(0##n##2) SLOT(0##n##3) \
		  SLOT(0##n##4) SLOT(0##n##5) SLOT(0##n##6) SLOT(0##n##7)

SLOTS8(0) SLOTS8(1) SLOTS8(2) SLOTS8(3) SLOTS8(4) SLOTS8(5) SLOTS8(6) SLOTS8(7)
