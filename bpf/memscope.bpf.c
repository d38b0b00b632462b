// SPDX-License-Identifier: GPL-2.0-only
/* memscope's kernel-side probes: page faults, page allocations per NUMA
 * node, scheduling (on/off-CPU time, switches, migrations), NUMA balancing,
 * fork and exit. Everything is counted in per-CPU maps here, in the kernel;
 * user space reads the maps once per interval. Only tracepoints and tp_btf
 * are used: fentry and kprobes are unavailable on many kernels.
 *
 * Filtering: with filter_tgids set, only processes in `targets` count; the
 * set grows when one of them forks and shrinks when a process exits. */
#include "memscope_kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "memscope_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Configuration, fixed before load (the verifier then prunes dead branches).
 * uapi type names: the skeleton repeats them for user space. */
const volatile bool filter_tgids = false;
const volatile bool emit_events = false;
const volatile bool switch_has_prev_state = false; /* sched_switch's 4th argument (5.18+) */
const volatile __u32 nr_pfn_ranges = 0;
const volatile struct ms_pfn_range pfn_ranges[MS_BPF_MAX_PFN_RANGES] = {};
const volatile __s32 cpu_node[MS_BPF_MAX_CPUS] = {};
const volatile __u32 nr_cpu_nodes = 0;

/* Set by user space when counting starts (bpf_ktime_get_ns clock): time a
 * thread spent on or off a CPU before it is not counted. */
__u64 count_from_ns = 0;

static __always_inline u64 since(u64 then, u64 now)
{
	u64 from = count_from_ns > then ? count_from_ns : then;

	return now > from ? now - from : 0;
}

/* Sizes below are replaced by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);            /* tgid */
	__type(value, u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);            /* tid */
	__type(value, struct ms_task_stats);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ms_node_key);
	__type(value, u64);          /* pages */
} node_pages SEC(".maps");

/* When each tracked thread last went on or off a CPU. */
struct switch_state {
	u64 time_ns;
	u32 on_cpu;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);            /* tid */
	__type(value, struct switch_state);
} switches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MS_DROP_NR);
	__type(key, u32);
	__type(value, u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

static __always_inline void count_drop(u32 reason)
{
	u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		(*n)++;
}

static __always_inline bool tracked(u32 tgid)
{
	if (!filter_tgids)
		return tgid != 0; /* every process, not the idle tasks */
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline struct ms_task_stats *stats_of(u32 tid, u32 tgid)
{
	struct ms_task_stats *st = bpf_map_lookup_elem(&task_stats, &tid);

	if (st)
		return st;
	struct ms_task_stats zero = { .tgid = tgid };
	long rc = bpf_map_update_elem(&task_stats, &tid, &zero, BPF_NOEXIST);

	if (rc && rc != -17 /* EEXIST: another CPU added it */) {
		count_drop(MS_DROP_TASK_MAP_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&task_stats, &tid);
}

static __always_inline void emit(u32 kind, u32 tgid, u32 tid, u64 a0, u64 a1, u64 a2)
{
	if (!emit_events)
		return;
	struct ms_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(MS_DROP_EVENT_RING_FULL);
		return;
	}
	e->time_ns = bpf_ktime_get_ns();
	e->kind = kind;
	e->tgid = tgid;
	e->tid = tid;
	e->cpu = bpf_get_smp_processor_id();
	e->arg0 = a0;
	e->arg1 = a1;
	e->arg2 = a2;
	/* No wakeup per event: a wakeup per fault preempts the measured task
	 * thousands of times; user space drains the ring on its own timer. */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

static __always_inline int count_fault(unsigned long address, unsigned long error_code, bool user)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id;

	if (!tracked(tgid))
		return 0;
	struct ms_task_stats *st = stats_of(tid, tgid);

	if (!st)
		return 0;
	bool write = error_code & X86_PF_WRITE;

	if (user) {
		if (write)
			st->faults_user_write++;
		else
			st->faults_user_read++;
	} else {
		if (write)
			st->faults_kernel_write++;
		else
			st->faults_kernel_read++;
	}
	emit(MS_EVENT_FAULT, tgid, tid, address, error_code, user);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_page_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return count_fault(address, error_code, true);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(on_page_fault_kernel, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return count_fault(address, error_code, false);
}

/* Node of a pfn through the table built from sysfs memory blocks. */
static __always_inline u32 pfn_node(u64 pfn)
{
	u32 lo = 0, hi = nr_pfn_ranges;

	if (hi > MS_BPF_MAX_PFN_RANGES)
		hi = MS_BPF_MAX_PFN_RANGES;
	for (int i = 0; i < 10 && lo < hi; i++) { /* 2^10 > MS_BPF_MAX_PFN_RANGES */
		u32 mid = (lo + hi) / 2;

		if (mid >= MS_BPF_MAX_PFN_RANGES)
			break;
		if (pfn < pfn_ranges[mid].start_pfn)
			hi = mid;
		else if (pfn >= pfn_ranges[mid].end_pfn)
			lo = mid + 1;
		else
			return pfn_ranges[mid].node;
	}
	return MS_BPF_NODE_UNKNOWN;
}

/* A tracepoint, not tp_btf: the record carries the pfn, while tp_btf would
 * give a struct page * whose pfn depends on the memory model. */
SEC("tracepoint/kmem/mm_page_alloc")
int on_mm_page_alloc(struct trace_event_raw_mm_page_alloc *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;

	if (!tracked(tgid))
		return 0;
	u64 pfn = BPF_CORE_READ(ctx, pfn);
	u32 order = BPF_CORE_READ(ctx, order);

	if (pfn == (u64)-1 || order > 20) /* failed allocation */
		return 0;
	u64 pages = 1ULL << order;
	struct ms_node_key key = { .tgid = tgid, .node = pfn_node(pfn) };
	u64 *n = bpf_map_lookup_elem(&node_pages, &key);

	if (n) {
		*n += pages;
	} else {
		long rc = bpf_map_update_elem(&node_pages, &key, &pages, BPF_NOEXIST);

		if (rc == -17) {
			n = bpf_map_lookup_elem(&node_pages, &key);
			if (n)
				*n += pages;
		} else if (rc) {
			count_drop(MS_DROP_NODE_MAP_FULL);
		}
	}
	emit(MS_EVENT_PAGE_ALLOC, tgid, (u32)id, pfn, order, key.node);
	return 0;
}

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ(t, state);
}

static __always_inline u32 task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(t, cpu);
}

static __always_inline s32 node_of_cpu(u32 cpu)
{
	if (cpu >= MS_BPF_MAX_CPUS || cpu >= nr_cpu_nodes)
		return -1;
	return cpu_node[cpu];
}

/* Update in place when the thread has an entry: a map update replaces the
 * element and can fail under lock contention, which would lose a switch. */
static __always_inline void set_switch_state(struct switch_state *sw, u32 tid, u64 now, u32 on_cpu)
{
	if (sw) {
		sw->time_ns = now;
		sw->on_cpu = on_cpu;
		return;
	}
	struct switch_state fresh = { .time_ns = now, .on_cpu = on_cpu };

	long rc = bpf_map_update_elem(&switches, &tid, &fresh, BPF_NOEXIST);

	if (rc && rc != -17 /* EEXIST */)
		count_drop(MS_DROP_TASK_MAP_FULL);
}

SEC("tp_btf/sched_switch")
int on_sched_switch(u64 *ctx)
{
	bool preempt = ctx[0];
	struct task_struct *prev = (void *)ctx[1];
	struct task_struct *next = (void *)ctx[2];
	u64 now = bpf_ktime_get_ns();
	u32 prev_tid = BPF_CORE_READ(prev, pid), prev_tgid = BPF_CORE_READ(prev, tgid);
	u32 next_tid = BPF_CORE_READ(next, pid), next_tgid = BPF_CORE_READ(next, tgid);

	if (prev_tid && tracked(prev_tgid)) {
		struct ms_task_stats *st = stats_of(prev_tid, prev_tgid);
		/* The kernel's own rule (kernel/sched/core.c __schedule): a switch is
		 * voluntary when the task was not preempted and is no longer runnable. */
		long state = switch_has_prev_state ? (long)ctx[3] : task_state(prev);
		struct switch_state *sw = bpf_map_lookup_elem(&switches, &prev_tid);

		if (st) {
			if (!preempt && state)
				st->switches_voluntary++;
			else
				st->switches_involuntary++;
			if (sw && sw->on_cpu)
				st->oncpu_ns += since(sw->time_ns, now);
		}
		if (BPF_CORE_READ(prev, flags) & PF_EXITING)
			bpf_map_delete_elem(&switches, &prev_tid);
		else
			set_switch_state(sw, prev_tid, now, 0);
	}
	if (next_tid && tracked(next_tgid)) {
		struct switch_state *sw = bpf_map_lookup_elem(&switches, &next_tid);

		if (sw && !sw->on_cpu) {
			struct ms_task_stats *st = stats_of(next_tid, next_tgid);

			if (st)
				st->offcpu_ns += since(sw->time_ns, now);
		}
		set_switch_state(sw, next_tid, now, 1);
	}
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	if (!tid || !tracked(tgid))
		return 0;
	struct ms_task_stats *st = stats_of(tid, tgid);

	if (!st)
		return 0;
	u32 orig_cpu = task_cpu(p);
	s32 from = node_of_cpu(orig_cpu), to = node_of_cpu(dest_cpu);
	bool cross = from >= 0 && to >= 0 && from != to;

	st->migrations++;
	if (cross)
		st->migrations_cross_node++;
	emit(MS_EVENT_MIGRATE, tgid, tid, orig_cpu, dest_cpu, cross);
	return 0;
}

static __always_inline void count_numa_task(struct task_struct *p, bool swap)
{
	u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	if (!tid || !tracked(tgid))
		return;
	struct ms_task_stats *st = stats_of(tid, tgid);

	if (!st)
		return;
	if (swap)
		st->numa_task_swaps++;
	else
		st->numa_task_moves++;
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(on_sched_move_numa, struct task_struct *p, int src_cpu, int dst_cpu)
{
	count_numa_task(p, false);
	return 0;
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(on_sched_swap_numa, struct task_struct *src, int src_cpu, struct task_struct *dst, int dst_cpu)
{
	count_numa_task(src, true);
	if (dst) /* may be NULL: the kernel's tracepoint allows it */
		count_numa_task(dst, true);
	return 0;
}

/* Only the first two arguments (succeeded, failed) have kept their place
 * across kernel versions; the later ones changed. */
SEC("tp_btf/mm_migrate_pages")
int on_mm_migrate_pages(u64 *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id;

	if (!tracked(tgid))
		return 0;
	struct ms_task_stats *st = stats_of(tid, tgid);

	if (st) {
		st->pages_migrated += ctx[0];
		st->pages_migrate_failed += ctx[1];
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 parent_tgid = BPF_CORE_READ(parent, tgid), child_tgid = BPF_CORE_READ(child, tgid);

	if (!filter_tgids || parent_tgid == child_tgid) /* a new thread is already covered */
		return 0;
	if (!bpf_map_lookup_elem(&targets, &parent_tgid))
		return 0;
	u8 one = 1;

	if (bpf_map_update_elem(&targets, &child_tgid, &one, BPF_ANY))
		count_drop(MS_DROP_TARGET_MAP_FULL);
	emit(MS_EVENT_FORK, parent_tgid, BPF_CORE_READ(parent, pid), child_tgid, 0, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_process_exit, struct task_struct *p)
{
	u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	if (!tracked(tgid))
		return 0;
	/* signal->live drops to 0 when the last thread exits, before this
	 * tracepoint fires (kernel/exit.c do_exit). */
	bool group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;

	if (group_dead && filter_tgids)
		bpf_map_delete_elem(&targets, &tgid);
	emit(MS_EVENT_EXIT, tgid, tid, group_dead, 0, 0);
	return 0;
}
