// SPDX-License-Identifier: GPL-2.0-only
/* Heap allocation sites for memscope's sampling (record --alloc): uprobes on
 * the allocator's entry points (malloc, calloc, realloc, aligned_alloc,
 * posix_memalign, free) remember, in the thread's task storage, the size of
 * a call asking for at least min_size bytes; its uretprobe sends the address
 * it returned and the call's return address through the `allocs` ring. A free (or a realloc that moves) of
 * an address that may have been sent sends a free, so user space knows which
 * allocation held an address at a sample's time: the report matches a free to
 * the allocation live at its address and ignores one that matches none.
 * Small allocations cost the size compare only.
 *
 * Nothing wakes memscope per event (BPF_RB_NO_WAKEUP): it reads the ring on
 * a timer, and is woken only when the ring is half full. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "allocs_bpf.h"

struct task_struct;

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 min_size = 4096;
const volatile __u32 self_tgid = 0;    /* memscope itself, never tracked */

__u64 dropped = 0;                     /* events the full ring could not take */

enum { CALL_MALLOC, CALL_CALLOC, CALL_REALLOC, CALL_ALIGNED, CALL_MEMALIGN, CALL_KINDS };

struct call {
	__u64 size;
	__u64 old;                     /* realloc: the address given */
	__u64 out;                     /* posix_memalign: where the address goes */
	__u64 active;                  /* entered and not yet returned */
};

/* The calls a thread is in, one per kind (calls nest: realloc calls
 * malloc): kept in the thread's own storage, found from the task without a
 * hash lookup, and ended by clearing `active` rather than a map delete. */
struct thread_calls {
	struct call kind[CALL_KINDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_calls);
} calls SEC(".maps");

/* Addresses that may be live tracked blocks: one bit per hash of (pid,
 * address), set when a block is sent and never cleared (two blocks may share
 * a bit). A free whose bit is clear was never sent; one whose bit is set is
 * sent, and the report ignores it when no allocation it knows was there. A
 * bit is set with an atomic or in the array's memory: no map update. */
#define SENT_BITS_LOG 20
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << (SENT_BITS_LOG - 6));
	__type(key, __u32);
	__type(value, __u64);
} sent SEC(".maps");

#define RING_BYTES (1 << 20)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} allocs SEC(".maps");

static __always_inline __u64 sent_hash(__u32 pid, __u64 addr)
{
	/* Blocks are 16-byte aligned: the low bits say nothing. */
	return (((addr >> 4) ^ ((__u64)pid << 40)) * 0x9e3779b97f4a7c15ull) >> (64 - SENT_BITS_LOG);
}

static __always_inline void mark_sent(__u32 pid, __u64 addr)
{
	__u64 h = sent_hash(pid, addr);
	__u32 word = (__u32)(h >> 6);
	__u64 *bits = bpf_map_lookup_elem(&sent, &word);

	if (bits)
		__sync_fetch_and_or(bits, 1ull << (h & 63));
}

static __always_inline int maybe_sent(__u32 pid, __u64 addr)
{
	__u64 h = sent_hash(pid, addr);
	__u32 word = (__u32)(h >> 6);
	__u64 *bits = bpf_map_lookup_elem(&sent, &word);

	return bits && (*bits >> (h & 63)) & 1;
}

static __always_inline void send(__u32 pid, __u32 tid, __u64 addr, __u64 size, __u64 caller)
{
	struct ms_alloc_event *e = bpf_ringbuf_reserve(&allocs, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return;
	}
	e->time_ns = bpf_ktime_get_ns();
	e->addr = addr;
	e->size = size;
	e->caller = caller;
	e->pid = pid;
	e->tid = tid;
	/* Woken only once the ring is half full; otherwise read on a timer. */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&allocs, BPF_RB_AVAIL_DATA) > RING_BYTES / 2 ? BPF_RB_FORCE_WAKEUP
											     : BPF_RB_NO_WAKEUP);
}

static __always_inline int enter(int kind, __u64 size, __u64 old, __u64 out)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_calls *tc;
	struct call *c;

	if ((__u32)(id >> 32) == self_tgid)
		return 0;
	/* A realloc shrinking a tracked block still moves or ends it. */
	if (size < min_size && (!old || !maybe_sent((__u32)(id >> 32), old)))
		return 0;
	tc = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tc || kind < 0 || kind >= CALL_KINDS) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	c = &tc->kind[kind];
	c->size = size;
	c->old = old;
	c->out = out;
	c->active = 1;
	return 0;
}

static __always_inline int leave(struct pt_regs *ctx, int kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = (__u32)(id >> 32), tid = (__u32)id;
	struct thread_calls *tc = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0, 0);
	__u64 addr = PT_REGS_RC(ctx);
	struct call *c;

	if (!tc || kind < 0 || kind >= CALL_KINDS)
		return 0;
	c = &tc->kind[kind];
	if (!c->active)
		return 0;
	c->active = 0;
	if (kind == CALL_MEMALIGN) {
		__u64 got = 0;

		if ((int)addr == 0)
			bpf_probe_read_user(&got, sizeof(got), (void *)c->out);
		addr = got;
	}
	/* A realloc that succeeded (or freed: size 0) ends the old block; the
	 * new one, moved or not, is sent below. */
	if (kind == CALL_REALLOC && c->old && (addr || !c->size) && maybe_sent(pid, c->old))
		send(pid, tid, c->old, 0, 0);
	/* The caller: a return probe runs with the instruction pointer back at
	 * the return address (what the stack held at the call's entry). */
	if (addr && c->size >= min_size) {
		mark_sent(pid, addr);
		send(pid, tid, addr, c->size, PT_REGS_IP(ctx));
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(malloc_enter, __u64 size)
{
	return enter(CALL_MALLOC, size, 0, 0);
}

SEC("uretprobe")
int malloc_leave(struct pt_regs *ctx)
{
	return leave(ctx, CALL_MALLOC);
}

SEC("uprobe")
int BPF_KPROBE(calloc_enter, __u64 n, __u64 size)
{
	return enter(CALL_CALLOC, n * size, 0, 0);
}

SEC("uretprobe")
int calloc_leave(struct pt_regs *ctx)
{
	return leave(ctx, CALL_CALLOC);
}

SEC("uprobe")
int BPF_KPROBE(realloc_enter, __u64 old, __u64 size)
{
	return enter(CALL_REALLOC, size, old, 0);
}

SEC("uretprobe")
int realloc_leave(struct pt_regs *ctx)
{
	return leave(ctx, CALL_REALLOC);
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_enter, __u64 align, __u64 size)
{
	return enter(CALL_ALIGNED, size, 0, 0);
}

SEC("uretprobe")
int aligned_alloc_leave(struct pt_regs *ctx)
{
	return leave(ctx, CALL_ALIGNED);
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_enter, __u64 out, __u64 align, __u64 size)
{
	return enter(CALL_MEMALIGN, size, 0, out);
}

SEC("uretprobe")
int posix_memalign_leave(struct pt_regs *ctx)
{
	return leave(ctx, CALL_MEMALIGN);
}

SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 addr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = (__u32)(id >> 32);

	if (addr && pid != self_tgid && maybe_sent(pid, addr))
		send(pid, (__u32)id, addr, 0, 0);
	return 0;
}
