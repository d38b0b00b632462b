/* Shared by bpf/allocs.bpf.c and the sampling source that loads it. */
#ifndef MEMSCOPE_ALLOCS_BPF_H
#define MEMSCOPE_ALLOCS_BPF_H

/* One allocation (size > 0) or the free of a tracked one (size 0), as the
 * `allocs` ring carries it. */
struct ms_alloc_event {
	__u64 time_ns;          /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u64 addr;
	__u64 size;
	__u64 caller;           /* the call's return address */
	__u32 pid, tid;
};

#endif
