/* Types shared by the eBPF programs (memscope.bpf.c) and the collector that
 * loads them (collector/sources/bpf/bpf_probes.c, collector/sources/bpf_source.c).
 * Only fixed-width kernel uapi types: the same layout on both sides. */
#ifndef MEMSCOPE_BPF_H
#define MEMSCOPE_BPF_H

#include <linux/types.h>

#define MS_BPF_MAX_CPUS       1024
#define MS_BPF_MAX_NODES      64
#define MS_BPF_MAX_PFN_RANGES 512
/* Page allocations whose pfn lies in no range of the table. */
#define MS_BPF_NODE_UNKNOWN   0xffffffffu
/* Page counts kept per task: the first nodes of the host (by node index);
 * pages on later nodes count as unplaced, and the source says so. */
#define MS_BPF_SLOT_NODES     16
/* Failed page migrations are kept per reason: the kernel's enum migrate_reason
 * (include/linux/migrate_mode.h, MR_COMPACTION = 0 ... MR_DAMON = 9; new
 * reasons are appended), and one more for a reason beyond those. */
#define MS_BPF_MIGRATE_REASONS 11

/* Counters of one task, in the order user space sums them. */
enum ms_counter {
	MS_C_FAULTS_USER_READ,
	MS_C_FAULTS_USER_WRITE,
	MS_C_FAULTS_KERNEL_READ,     /* faults taken in kernel mode (copy_to_user...) */
	MS_C_FAULTS_KERNEL_WRITE,
	MS_C_ONCPU_NS,
	MS_C_OFFCPU_NS,              /* asleep or waiting on a run queue */
	MS_C_SWITCHES_VOLUNTARY,
	MS_C_SWITCHES_INVOLUNTARY,
	MS_C_MIGRATIONS,             /* sched_migrate_task: moved to another CPU */
	MS_C_MIGRATIONS_CROSS_NODE,  /* ... whose node differs from the old one */
	MS_C_NUMA_TASK_MOVES,        /* sched_move_numa (NUMA balancing moved it) */
	MS_C_NUMA_TASK_SWAPS,        /* sched_swap_numa (swapped with another task) */
	MS_C_PAGES_MIGRATED,         /* mm_migrate_pages: succeeded, in this task's context */
	MS_C_PAGES_MIGRATE_FAILED,
	MS_C_PAGES_UNPLACED,         /* allocated pages on no node of the table (or beyond the kept ones) */
	MS_C_PAGES_NODE0,            /* ... MS_BPF_SLOT_NODES of them: pages allocated on node index i */
	MS_C_MIGRATE_FAILED_REASON0 = MS_C_PAGES_NODE0 + MS_BPF_SLOT_NODES, /* ... MS_BPF_MIGRATE_REASONS */
	MS_C_NR = MS_C_MIGRATE_FAILED_REASON0 + MS_BPF_MIGRATE_REASONS,
};

/* A slot of the task table (a memory-mapped array): one per live task that
 * had an event, so the probes reach its counters with one task-local storage
 * lookup and user space reads every live task without a system call. Slot 0
 * collects what no slot could take (the table was full). */
enum ms_slot_state {
	MS_SLOT_FREE = 0,
	MS_SLOT_LIVE = 1,
	MS_SLOT_EXITED = 2,          /* final values the exit ring could not take: user space frees it */
};

struct ms_task_slot {
	__u32 state;                 /* enum ms_slot_state */
	__u32 gen;                   /* bumped each time the slot is freed */
	__u32 tid;
	__u32 tgid;
	__u32 comm_gen;              /* bumped when comm changes (exec, rename) */
	__s32 cpu;                   /* last CPU the task ran on */
	__u32 run_state;             /* the kernel's task state at its last switch away; 0: running or runnable */
	__u32 group_threads;         /* its process's live threads (signal->live) when last switched in; 0: not yet */
	char comm[16];
	__u64 counter[MS_C_NR];
};

/* Task-local storage of a followed task: where its counters are, and its
 * scheduling state. User space creates one (through a pidfd) for a thread it
 * wants shown before the thread's first event. */
struct ms_task_state {
	__u32 slot1;                 /* slot + 1; 0: none yet */
	__u32 on_cpu;
	__u64 switch_ns;             /* when it last went on or off a CPU; 0: not seen */
};

/* The final values of a task, sent through the exit ring when it is gone
 * (its slot is free again by the time user space reads this). */
struct ms_task_exit {
	__u32 slot;
	__u32 pad;
	struct ms_task_slot values;
};

/* A thread that found the task table full: named in the output. */
struct ms_overflow {
	__u32 tgid;
	__u32 tid;
	char comm[16];
};

#define MS_BPF_OVERFLOW_RING 64

/* [start_pfn, end_pfn) belongs to node; sorted by start_pfn, disjoint. */
struct ms_pfn_range {
	__u64 start_pfn;
	__u64 end_pfn;
	__u32 node;
	__u32 pad;
};

/* Why an update was dropped (index into the per-CPU `drops` array). */
enum ms_drop_reason {
	MS_DROP_TASK_TABLE_FULL,     /* a thread counted in slot 0: no slot was free */
	MS_DROP_TASK_STORAGE,        /* task-local storage could not be created: counted in slot 0 */
	MS_DROP_TARGET_MAP_FULL,
	MS_DROP_EVENT_RING_FULL,
	MS_DROP_EXIT_RING_FULL,      /* not a loss: the slot is freed by user space at the next sample */
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
