/* Loading and attaching memscope's eBPF programs (bpf/memscope.bpf.c), with
 * clear messages when the kernel or the permissions do not allow them.
 *
 * Fatal (bpf_probes_open fails): no kernel BTF, no permission (root or
 * CAP_BPF + CAP_PERFMON), a load the verifier refuses. Not fatal: a
 * tracepoint this kernel lacks, or one that fails to attach - that probe is
 * left out, the others run, and a warning names what is missing and what
 * still works. */
#ifndef MEMSCOPE_BPF_PROBES_H
#define MEMSCOPE_BPF_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/bpf/bpf_pfn_table.h"
#include "util/error.h"

enum bpf_probe {
	BPF_PROBE_FAULT_USER,
	BPF_PROBE_FAULT_KERNEL,
	BPF_PROBE_PAGE_ALLOC,
	BPF_PROBE_SCHED_SWITCH,
	BPF_PROBE_MIGRATE_TASK,
	BPF_PROBE_MOVE_NUMA,
	BPF_PROBE_SWAP_NUMA,
	BPF_PROBE_MIGRATE_PAGES,
	BPF_PROBE_FORK,
	BPF_PROBE_EXIT,
	BPF_PROBE_EXEC,
	BPF_PROBE_RENAME,
	BPF_PROBE_NR,
};

#define BPF_PROBE_BIT(p) (1u << (p))

struct bpf_probe_config {
	unsigned wanted;              /* BPF_PROBE_BIT set; fork, exit, exec and rename are always added */
	bool filter_tgids;            /* false: every process (system-wide) */
	const pid_t *tgids;           /* initial set when filtering */
	int nr_tgids;
	int max_tasks;                /* live threads the task table holds (slot 0 takes the rest) */
	int max_processes;            /* tgids the target set can hold */
	size_t exit_ring_bytes;       /* the ring of exited tasks' final values; a power of 2 >= page size */
	const int *node_index;        /* node id -> its page counter per task (< MS_BPF_SLOT_NODES), -1: none */
	int nr_node_index;
	size_t event_ring_bytes;      /* 0: no event stream; else a power of 2 >= page size */
	const struct bpf_pfn_table *pfn_table;
	const int *cpu_node;          /* node of each cpu number, -1 if unknown */
	int nr_cpu_node;
	const char *btf_path;         /* NULL: the kernel's /sys/kernel/btf/vmlinux */
	/* "probe=subsys:name[,...]" attaches a probe elsewhere; used to check
	 * the message for a tracepoint the kernel lacks. NULL: none. */
	const char *attach_override;
};

struct memscope_bpf;
struct ms_task_slot;

struct bpf_probes {
	struct memscope_bpf *skel;
	unsigned attached;            /* BPF_PROBE_BIT of the probes running */
	char warnings[2048];          /* one line per probe left out; "" when none */
	int nr_slots;
	struct ms_task_slot *slots;   /* the task table, memory-mapped (nr_slots entries) */
	size_t slots_bytes;
	/* The programs' globals, memory-mapped: read with __atomic loads. */
	const volatile uint32_t *next_slot;
	const volatile uint32_t *overflow_head;
	const volatile long long *processes_delta;
};

/* The tracepoint a probe listens to, "subsys:name". */
const char *bpf_probe_tracepoint(enum bpf_probe probe);

int bpf_probes_open(struct bpf_probes *probes, const struct bpf_probe_config *cfg, struct ms_error *err);
bool bpf_probes_running(const struct bpf_probes *probes, enum bpf_probe probe);
/* Map file descriptors for the readers. */
int bpf_probes_free_slots_fd(const struct bpf_probes *probes);
int bpf_probes_exits_fd(const struct bpf_probes *probes);
int bpf_probes_overflow_fd(const struct bpf_probes *probes);
int bpf_probes_targets_fd(const struct bpf_probes *probes);
int bpf_probes_drops_fd(const struct bpf_probes *probes);
int bpf_probes_events_fd(const struct bpf_probes *probes);
/* Give an existing thread a slot before its first event (top -p shows every
 * thread of the process, idle ones too). -1 when it cannot (gone, a kernel
 * without thread pidfds, a full table): it gets one at its first event. */
int bpf_probes_seed_thread(struct bpf_probes *probes, pid_t tid, pid_t tgid, const char *comm, uint32_t run_state,
			   int cpu);
/* Count on/off-CPU time from this CLOCK_MONOTONIC instant on. */
void bpf_probes_count_from(struct bpf_probes *probes, uint64_t monotonic_ns);
void bpf_probes_close(struct bpf_probes *probes);

#endif
