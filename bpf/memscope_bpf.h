/* Types shared by the eBPF programs (memscope.bpf.c) and the collector that
 * loads them (collector/bpf_probes.c, collector/sources/bpf_source.c).
 * Only fixed-width kernel uapi types: the same layout on both sides. */
#ifndef MEMSCOPE_BPF_H
#define MEMSCOPE_BPF_H

#include <linux/types.h>

#define MS_BPF_MAX_CPUS       1024
#define MS_BPF_MAX_NODES      64
#define MS_BPF_MAX_PFN_RANGES 512
/* Page allocations whose pfn lies in no range of the table. */
#define MS_BPF_NODE_UNKNOWN   0xffffffffu

/* Per thread (map key: tid), one copy per CPU, summed by user space. */
struct ms_task_stats {
	__u32 tgid;
	__u32 pad;
	__u64 faults_user_read;
	__u64 faults_user_write;
	__u64 faults_kernel_read;    /* faults taken in kernel mode (copy_to_user...) */
	__u64 faults_kernel_write;
	__u64 oncpu_ns;
	__u64 offcpu_ns;             /* asleep or waiting on a run queue */
	__u64 switches_voluntary;
	__u64 switches_involuntary;
	__u64 migrations;            /* sched_migrate_task: moved to another CPU */
	__u64 migrations_cross_node; /* ... whose node differs from the old one */
	__u64 numa_task_moves;       /* sched_move_numa (NUMA balancing moved it) */
	__u64 numa_task_swaps;       /* sched_swap_numa (swapped with another task) */
	__u64 pages_migrated;        /* mm_migrate_pages: succeeded, in this task's context */
	__u64 pages_migrate_failed;
};

/* Page allocations per (tgid, node), one copy per CPU. */
struct ms_node_key {
	__u32 tgid;
	__u32 node;                  /* MS_BPF_NODE_UNKNOWN when the pfn is in no range */
};

/* [start_pfn, end_pfn) belongs to node; sorted by start_pfn, disjoint. */
struct ms_pfn_range {
	__u64 start_pfn;
	__u64 end_pfn;
	__u32 node;
	__u32 pad;
};

/* Why an update was dropped (index into the per-CPU `drops` array). */
enum ms_drop_reason {
	MS_DROP_TASK_MAP_FULL,
	MS_DROP_NODE_MAP_FULL,
	MS_DROP_TARGET_MAP_FULL,
	MS_DROP_EVENT_RING_FULL,
	MS_DROP_NR,
};

/* Records of the optional event stream (ring buffer, no wakeup per event). */
enum ms_event_kind {
	MS_EVENT_FAULT = 1,          /* arg0 = address, arg1 = error code, arg2 = 1 user / 0 kernel */
	MS_EVENT_PAGE_ALLOC = 2,     /* arg0 = pfn, arg1 = order, arg2 = node */
	MS_EVENT_FORK = 3,           /* arg0 = child tgid */
	MS_EVENT_EXIT = 4,           /* arg0 = 1 when the whole process is gone */
	MS_EVENT_MIGRATE = 5,        /* arg0 = from cpu, arg1 = to cpu, arg2 = 1 if nodes differ */
};

struct ms_event {
	__u64 time_ns;               /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u32 kind;
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u64 arg0;
	__u64 arg1;
	__u64 arg2;
};

#endif
