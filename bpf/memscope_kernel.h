/* The few kernel types memscope's probes read, declared here instead of a
 * full vmlinux.h so the programs build on any machine with clang, whatever
 * its kernel: every record is marked preserve_access_index, so libbpf
 * relocates each field access (CO-RE) against the running kernel's BTF at
 * load time. Field names and types follow the kernel's definitions
 * (include/linux/sched.h, sched/signal.h, include/trace/events/kmem.h). */
#ifndef MEMSCOPE_KERNEL_H
#define MEMSCOPE_KERNEL_H

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef _Bool bool;
#define true 1
#define false 0

struct pt_regs;
struct page;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
	int counter;
} atomic_t;

struct thread_info {
	u32 cpu;                     /* 5.16+: task_cpu() lives here */
};

struct signal_struct {
	atomic_t live;               /* threads not yet exited; 0 once the group is dead */
};

struct task_struct {
	struct thread_info thread_info;
	unsigned int __state;        /* 5.14+ */
	long state;                  /* before 5.14 */
	unsigned int flags;
	unsigned int cpu;            /* before 5.16 */
	int pid;
	int tgid;
	char comm[16];
	struct signal_struct *signal;
};

/* Common header of every tracepoint record. */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

/* kmem:mm_page_alloc as seen by SEC("tracepoint/...") programs. */
struct trace_event_raw_mm_page_alloc {
	struct trace_entry ent;
	unsigned long pfn;
	unsigned int order;
};

/* migrate:mm_migrate_pages' record: only asked whether large_folio_split
 * exists (include/trace/events/migrate.h), which moved the reason argument. */
struct trace_event_raw_mm_migrate_pages {
	unsigned long large_folio_split;
};

#pragma clang attribute pop

#define PF_EXITING 0x00000004    /* include/linux/sched.h */
#define PF_KTHREAD 0x00200000    /* include/linux/sched.h */
#define TASK_DEAD  0x00000080    /* include/linux/sched.h: the final switch away from an exited task */
#define X86_PF_WRITE (1UL << 1)  /* arch/x86/include/asm/trap_pf.h */

#endif
