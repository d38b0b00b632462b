/* The `bpf` source: series counted by memscope's eBPF probes (page faults,
 * page allocations per node, on/off-CPU time, switches, migrations, NUMA
 * balancing) for a set of processes that grows with their forks, or for the
 * whole system.
 *
 * Each series is summed over the target set (proc.pages_alloc has one series
 * per node). On request it also gives the same series per process (labels
 * pid and comm, plus proc.threads) and per thread (pid, tid, comm): they
 * appear when a process or thread is first seen and are retired at the
 * sample after it is gone (sampler/frame.h), so a recording keeps what top
 * showed. A process that execs gets new series under its new name.
 * proc.cpu and proc.state exist per thread only (the CPU a thread last ran
 * on, its kernel task state at its last switch away: 0 running or runnable).
 *
 * Environment, read once at create (for checks and debugging):
 *   MEMSCOPE_BPF_BTF=PATH     kernel BTF file instead of /sys/kernel/btf/vmlinux
 *   MEMSCOPE_BPF_ATTACH=PROBE=SUBSYS:NAME[,...]   attach a probe elsewhere
 *   MEMSCOPE_BPF_TASKS=N      live threads the task table holds (default: 4 x
 *                             the threads running at start, at least 4096) */
#ifndef MEMSCOPE_BPF_SOURCE_H
#define MEMSCOPE_BPF_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "events/bpf_series.h"
#include "sources/bpf/bpf_pfn_table.h"
#include "util/error.h"
#include "host/host.h"
#include "sampler/source.h"

#define BPF_SOURCE_MAX_NODES 64

struct ms_event;

struct bpf_source_options {
	const pid_t *tgids;           /* processes to follow (with their future children) */
	int nr_tgids;
	bool system_wide;             /* every process; tgids ignored */
	bool per_process;             /* also a series per process (labels pid, comm) */
	bool per_thread;              /* also a series per thread (labels pid, tid, comm) */
	pid_t thread_tgid;            /* per_thread: only the threads of this process; 0: all */
	int max_tasks;                /* live threads the task table holds; 0: MEMSCOPE_BPF_TASKS or from the host */
	const char *btf_path;         /* NULL: MEMSCOPE_BPF_BTF or the kernel's */
	const struct bpf_pfn_table *pfn_table; /* NULL: read from the host's sysfs */
	FILE *warnings;               /* where left-out probes and a full task table are reported; NULL: stderr */
	/* Optional event stream (ring buffer drained at each sample, no wakeup
	 * per event). Called from sample(); must not block. */
	void (*on_event)(const struct ms_event *event, void *arg);
	void *event_arg;
	size_t event_ring_bytes;      /* 0: 4 MiB when on_event is set */
};

/* Load and attach the probes now (counting starts); series come at open.
 * names: the series wanted (NULL/0: all). An error says what is missing
 * (BTF, permission) and that the other sources keep running. */
int bpf_source_init(struct source *src, const struct host *host, const struct bpf_source_options *opt,
		      const char *const *names, int nr_names, struct ms_error *err);

/* Processes in the in-kernel target set now (filtering mode), else -1. */
int bpf_source_nr_targets(struct source *src);
/* Live threads the task table holds, and the most it has held at once. */
int bpf_source_table_size(struct source *src);
int bpf_source_table_peak(struct source *src);

#endif
