// SPDX-License-Identifier: GPL-2.0-only
/* memscope's kernel-side probes: page faults, page allocations per NUMA
 * node, scheduling (on/off-CPU time, switches, migrations), NUMA balancing,
 * fork, exec and exit. Only tracepoints and tp_btf are used: fentry and
 * kprobes are unavailable on many kernels.
 *
 * Each task that has an event gets a slot in `slots`, a memory-mapped array
 * user space reads without system calls; task-local storage remembers the
 * slot, so counting an event is one storage lookup and an array index. When
 * a task is gone (its last switch away, or its exit when scheduling is not
 * probed) its final values go through the `exits` ring and the slot is
 * freed for the next task: the table holds live tasks only, and a sample
 * costs what the live tasks cost. A task that finds the table full counts in
 * slot 0, named in `overflow` and counted in `drops`; nothing goes uncounted.
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
const volatile __s32 node_index[MS_BPF_MAX_NODES] = {};  /* node id -> its page counter, -1: none */
const volatile __u32 nr_slots = 1;
const volatile __u32 exit_ring_bytes = 4096;

/* Set by user space (.bss is memory-mapped). count_from_ns: when counting
 * started (bpf_ktime_get_ns clock); time a thread spent on or off a CPU
 * before it is not counted. switch_attached: the final switch of a task
 * frees its slot; else its exit does. */
__u64 count_from_ns = 0;
__u32 switch_attached = 0;
/* Written here, read by user space. */
__u32 next_slot = 1;             /* slots [next_slot, nr_slots) were never used */
__u32 overflow_head = 0;         /* entries written to `overflow` */
__s64 processes_delta = 0;       /* system-wide: processes forked minus exited since attach */

static __always_inline u64 since(u64 then, u64 now)
{
	u64 from = count_from_ns > then ? count_from_ns : then;

	return now > from ? now - from : 0;
}

#define task_state ms_task_state

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

/* Sizes below are replaced by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ms_task_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);
	__type(value, u32);
} free_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MS_BPF_OVERFLOW_RING);
	__type(key, u32);
	__type(value, struct ms_overflow);
} overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, u32);            /* tgid */
	__type(value, u8);
} targets SEC(".maps");

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

static __always_inline struct ms_task_slot *slot_at(u32 slot)
{
	return bpf_map_lookup_elem(&slots, &slot);
}

/* A free slot for task t, or 0 (shared, counted as a drop) when none is. */
static __always_inline u32 take_slot(struct task_struct *t)
{
	u32 slot = 0;
	struct ms_task_slot *s;

	if (bpf_map_pop_elem(&free_slots, &slot) != 0) {
		slot = 0;
		if (next_slot < nr_slots)
			slot = __sync_fetch_and_add(&next_slot, 1);
		if (slot == 0 || slot >= nr_slots) {
			u32 at = __sync_fetch_and_add(&overflow_head, 1) % MS_BPF_OVERFLOW_RING;
			struct ms_overflow *o = bpf_map_lookup_elem(&overflow, &at);

			if (o) {
				o->tgid = BPF_CORE_READ(t, tgid);
				o->tid = BPF_CORE_READ(t, pid);
				BPF_CORE_READ_STR_INTO(&o->comm, t, comm);
			}
			count_drop(MS_DROP_TASK_TABLE_FULL);
			return 0;
		}
	}
	s = slot_at(slot);
	if (!s)
		return 0;
	/* Counters are zero: a freed slot was cleared before it was queued. */
	s->tid = BPF_CORE_READ(t, pid);
	s->tgid = BPF_CORE_READ(t, tgid);
	s->cpu = -1;
	s->group_threads = (u32)BPF_CORE_READ(t, signal, live.counter);
	BPF_CORE_READ_STR_INTO(&s->comm, t, comm);
	barrier();
	s->state = MS_SLOT_LIVE;
	return slot;
}

/* The state of a followed task, created at its first event; NULL for a task
 * that is not followed (or when storage cannot be had: then slot 0 counts). */
static __always_inline struct task_state *state_of(struct task_struct *t, u32 *slot_out)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, t, 0, 0);
	u32 slot, old;

	if (!ts) {
		if (!tracked(BPF_CORE_READ(t, tgid)))
			return NULL;
		/* Events after a task's slot was freed (its last moments) go to slot 0. */
		if (BPF_CORE_READ(t, flags) & PF_EXITING) {
			*slot_out = 0;
			return NULL;
		}
		ts = bpf_task_storage_get(&task_states, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts) {
			/* Another CPU created it a moment ago, or memory is short. */
			ts = bpf_task_storage_get(&task_states, t, 0, 0);
			if (!ts) {
				count_drop(MS_DROP_TASK_STORAGE);
				*slot_out = 0;
				return NULL;
			}
		}
	}
	if (ts->slot1) {
		*slot_out = ts->slot1 - 1;
		return ts;
	}
	slot = take_slot(t);
	/* Two CPUs may give the task a slot at once: one wins, the other's goes back. */
	old = __sync_val_compare_and_swap(&ts->slot1, 0, slot + 1);
	if (old) {
		if (slot)
			bpf_map_push_elem(&free_slots, &slot, 0);
		slot = old - 1;
	}
	*slot_out = slot;
	return ts;
}

/* Counters of task t, or NULL when it is not followed. *shared: they are
 * slot 0's, which tasks on several CPUs update at once. */
static __always_inline struct ms_task_slot *counters_of(struct task_struct *t, bool *shared)
{
	u32 slot = (u32)-1;
	struct task_state *ts = state_of(t, &slot);

	if (!ts && slot == (u32)-1)
		return NULL;
	*shared = slot == 0;
	return slot_at(slot);
}

/* A task's own slot is only updated from its own CPU (or under the run
 * queue's lock): plain adds. Slot 0 is shared: atomic ones. */
#define COUNT(s, shared, index, n) do {                                      \
		if (shared)                                                  \
			__sync_fetch_and_add(&(s)->counter[index], (n));     \
		else                                                         \
			(s)->counter[index] += (n);                          \
	} while (0)

/* Task t is gone: its final values leave through the exit ring and its slot
 * is freed (or, with the ring full, left for user space to free). */
static __always_inline void release(struct task_struct *t, struct task_state *ts)
{
	u32 slot = ts->slot1 ? ts->slot1 - 1 : 0;
	struct ms_task_slot *s = slot ? slot_at(slot) : NULL;

	bpf_task_storage_delete(&task_states, t);
	if (!s)
		return;
	struct ms_task_exit *e = bpf_ringbuf_reserve(&exits, sizeof(*e), 0);

	if (!e) {
		count_drop(MS_DROP_EXIT_RING_FULL);
		s->state = MS_SLOT_EXITED;
		return;
	}
	e->slot = slot;
	e->pad = 0;
	__builtin_memcpy(&e->values, s, sizeof(*s));
	/* Wake the reader only when the ring is half full: it drains at each sample. */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&exits, BPF_RB_AVAIL_DATA) > exit_ring_bytes / 2
				      ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	s->gen++;
	s->state = MS_SLOT_FREE;
	barrier();
	__builtin_memset(s->counter, 0, sizeof(s->counter));
	bpf_map_push_elem(&free_slots, &slot, 0);
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
	struct task_struct *t = bpf_get_current_task_btf();
	bool shared;
	struct ms_task_slot *s = counters_of(t, &shared);

	if (!s)
		return 0;
	bool write = error_code & X86_PF_WRITE;

	COUNT(s, shared, user ? (write ? MS_C_FAULTS_USER_WRITE : MS_C_FAULTS_USER_READ)
			      : (write ? MS_C_FAULTS_KERNEL_WRITE : MS_C_FAULTS_KERNEL_READ), 1);
	if (emit_events) {
		u64 id = bpf_get_current_pid_tgid();

		emit(MS_EVENT_FAULT, id >> 32, (u32)id, address, error_code, user);
	}
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
	u64 pfn = BPF_CORE_READ(ctx, pfn);
	u32 order = BPF_CORE_READ(ctx, order);

	if (pfn == (u64)-1 || order > 20) /* failed allocation */
		return 0;
	struct task_struct *t = bpf_get_current_task_btf();
	bool shared;
	struct ms_task_slot *s = counters_of(t, &shared);

	if (!s)
		return 0;
	u32 node = pfn_node(pfn);
	s32 index = node < MS_BPF_MAX_NODES ? node_index[node] : -1;

	if (index >= 0 && index < MS_BPF_SLOT_NODES)
		COUNT(s, shared, MS_C_PAGES_NODE0 + index, 1ULL << order);
	else
		COUNT(s, shared, MS_C_PAGES_UNPLACED, 1ULL << order);
	if (emit_events) {
		u64 id = bpf_get_current_pid_tgid();

		emit(MS_EVENT_PAGE_ALLOC, id >> 32, (u32)id, pfn, order, node);
	}
	return 0;
}

static __always_inline long run_state_of(struct task_struct *t)
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
	u64 c = cpu;

	if (c >= nr_cpu_nodes)
		return -1;
	/* Checked again after the barrier: the compiler may not merge the
	 * checks into one the verifier cannot follow. */
	barrier_var(c);
	if (c >= MS_BPF_MAX_CPUS)
		return -1;
	return cpu_node[c];
}

SEC("tp_btf/sched_switch")
int on_sched_switch(u64 *ctx)
{
	bool preempt = ctx[0];
	struct task_struct *prev = (void *)ctx[1];
	struct task_struct *next = (void *)ctx[2];
	u64 now = bpf_ktime_get_ns();
	u32 slot = (u32)-1;
	struct task_state *ts;
	struct ms_task_slot *s;

	if (BPF_CORE_READ(prev, pid)) {
		/* The kernel's own rule (kernel/sched/core.c __schedule): a switch is
		 * voluntary when the task was not preempted and is no longer runnable. */
		long state = switch_has_prev_state ? (long)ctx[3] : run_state_of(prev);

		ts = state_of(prev, &slot);
		s = slot != (u32)-1 ? slot_at(slot) : NULL;
		if (s) {
			bool shared = slot == 0;

			if (!preempt && state)
				COUNT(s, shared, MS_C_SWITCHES_VOLUNTARY, 1);
			else
				COUNT(s, shared, MS_C_SWITCHES_INVOLUNTARY, 1);
			if (slot)
				s->run_state = preempt ? 0 : (u32)state;
			if (ts && ts->on_cpu && ts->switch_ns)
				COUNT(s, shared, MS_C_ONCPU_NS, since(ts->switch_ns, now));
		}
		if (ts) {
			/* Its last switch: nothing of it runs again. */
			if (!preempt && (state & TASK_DEAD)) {
				release(prev, ts);
			} else {
				ts->switch_ns = now;
				ts->on_cpu = 0;
			}
		}
	}
	if (BPF_CORE_READ(next, pid)) {
		slot = (u32)-1;
		ts = state_of(next, &slot);
		if (ts && (s = slot_at(slot))) {
			if (!ts->on_cpu && ts->switch_ns)
				COUNT(s, slot == 0, MS_C_OFFCPU_NS, since(ts->switch_ns, now));
			if (slot) {
				s->cpu = bpf_get_smp_processor_id();
				s->run_state = 0;
				/* The kernel's count, also of threads that never run while
				 * memscope watches (those never get a slot). */
				s->group_threads = (u32)BPF_CORE_READ(next, signal, live.counter);
			}
		}
		if (ts) {
			ts->switch_ns = now;
			ts->on_cpu = 1;
		}
	}
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	if (!BPF_CORE_READ(p, pid))
		return 0;
	bool shared;
	struct ms_task_slot *s = counters_of(p, &shared);

	if (!s)
		return 0;
	u32 orig_cpu = task_cpu(p);
	s32 from = node_of_cpu(orig_cpu), to = node_of_cpu(dest_cpu);
	bool cross = from >= 0 && to >= 0 && from != to;

	/* Not the task's own CPU: another probe may count it at the same time. */
	__sync_fetch_and_add(&s->counter[MS_C_MIGRATIONS], 1);
	if (cross)
		__sync_fetch_and_add(&s->counter[MS_C_MIGRATIONS_CROSS_NODE], 1);
	if (emit_events)
		emit(MS_EVENT_MIGRATE, BPF_CORE_READ(p, tgid), BPF_CORE_READ(p, pid), orig_cpu, dest_cpu, cross);
	return 0;
}

static __always_inline void count_numa_task(struct task_struct *p, bool swap)
{
	if (!BPF_CORE_READ(p, pid))
		return;
	bool shared;
	struct ms_task_slot *s = counters_of(p, &shared);

	if (s)
		__sync_fetch_and_add(&s->counter[swap ? MS_C_NUMA_TASK_SWAPS : MS_C_NUMA_TASK_MOVES], 1);
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
 * across kernel versions; reason is the last: the 7th from 5.11 (after
 * thp_split and mode, as on 6.1), the 8th on kernels whose record has
 * large_folio_split before mode. The field's presence is resolved at load
 * (CO-RE), so the verifier never sees the other branch's argument. */
SEC("tp_btf/mm_migrate_pages")
int on_mm_migrate_pages(u64 *ctx)
{
	bool shared;
	struct ms_task_slot *s = counters_of(bpf_get_current_task_btf(), &shared);

	if (s) {
		COUNT(s, shared, MS_C_PAGES_MIGRATED, ctx[0]);
		COUNT(s, shared, MS_C_PAGES_MIGRATE_FAILED, ctx[1]);
		if (ctx[1]) {
			u64 arg;
			u32 reason;

			/* Each a load at a fixed offset of ctx, in assembly: in C the
			 * compiler merged the two into one load at a variable
			 * offset, which the verifier refuses. */
			if (bpf_core_field_exists(struct trace_event_raw_mm_migrate_pages, large_folio_split))
				asm volatile("%0 = *(u64 *)(%1 + 56)" : "=r"(arg) : "r"(ctx));
			else
				asm volatile("%0 = *(u64 *)(%1 + 48)" : "=r"(arg) : "r"(ctx));
			reason = (u32)arg;
			if (reason >= MS_BPF_MIGRATE_REASONS)
				reason = MS_BPF_MIGRATE_REASONS - 1;
			COUNT(s, shared, MS_C_MIGRATE_FAILED_REASON0 + reason, ctx[1]);
		}
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 parent_tgid = BPF_CORE_READ(parent, tgid), child_tgid = BPF_CORE_READ(child, tgid);

	if (parent_tgid == child_tgid) /* a new thread: it counts with its process */
		return 0;
	if (!filter_tgids) {
		__sync_fetch_and_add(&processes_delta, 1);
		return 0;
	}
	if (!bpf_map_lookup_elem(&targets, &parent_tgid))
		return 0;
	u8 one = 1;

	if (bpf_map_update_elem(&targets, &child_tgid, &one, BPF_ANY))
		count_drop(MS_DROP_TARGET_MAP_FULL);
	emit(MS_EVENT_FORK, parent_tgid, BPF_CORE_READ(parent, pid), child_tgid, 0, 0);
	return 0;
}

/* exec: a new program name (and, when a thread other than the leader
 * executes, the leader's pid). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_sched_process_exec, struct task_struct *p, int old_pid, void *bprm)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, p, 0, 0);
	struct ms_task_slot *s = ts && ts->slot1 > 1 ? slot_at(ts->slot1 - 1) : NULL;

	if (!s)
		return 0;
	s->tid = BPF_CORE_READ(p, pid);
	BPF_CORE_READ_STR_INTO(&s->comm, p, comm);
	barrier();
	s->comm_gen++;
	return 0;
}

/* prctl(PR_SET_NAME) and the like: fires before the new name is copied. */
SEC("tp_btf/task_rename")
int BPF_PROG(on_task_rename, struct task_struct *task, const char *comm)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, task, 0, 0);
	struct ms_task_slot *s = ts && ts->slot1 > 1 ? slot_at(ts->slot1 - 1) : NULL;

	if (!s)
		return 0;
	bpf_probe_read_kernel_str(s->comm, sizeof(s->comm), comm);
	barrier();
	s->comm_gen++;
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_process_exit, struct task_struct *p)
{
	u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);
	/* signal->live drops to 0 when the last thread exits, before this
	 * tracepoint fires (kernel/exit.c do_exit). */
	bool group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	struct task_state *ts;

	if (group_dead && !filter_tgids)
		__sync_fetch_and_sub(&processes_delta, 1);
	if (!tracked(tgid))
		return 0;
	if (group_dead && filter_tgids)
		bpf_map_delete_elem(&targets, &tgid);
	emit(MS_EVENT_EXIT, tgid, tid, group_dead, 0, 0);
	/* Without the switch probe nothing sees its last switch: free it now. */
	if (!switch_attached && (ts = bpf_task_storage_get(&task_states, p, 0, 0)))
		release(p, ts);
	return 0;
}
