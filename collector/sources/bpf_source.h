/* The `bpf` source: series counted by memscope's eBPF probes (page faults,
 * page allocations per node, on/off-CPU time, switches, migrations, NUMA
 * balancing) for a set of processes that grows with their forks, or for the
 * whole system.
 *
 * For stat, every series is summed over the target set; proc.pages_alloc has
 * one series per node. bpf_source_processes() gives the per-process numbers
 * (for top). Environment, read once at create (for checks and debugging):
 *   MEMSCOPE_BPF_BTF=PATH     kernel BTF file instead of /sys/kernel/btf/vmlinux
 *   MEMSCOPE_BPF_ATTACH=PROBE=SUBSYS:NAME[,...]   attach a probe elsewhere */
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
	int top_n;                    /* processes bpf_source_processes() keeps; 0: 20 */
	const char *btf_path;         /* NULL: MEMSCOPE_BPF_BTF or the kernel's */
	const struct bpf_pfn_table *pfn_table; /* NULL: read from the host's sysfs */
	FILE *warnings;               /* where left-out probes are reported; NULL: stderr */
	/* Optional event stream (ring buffer drained at each sample, no wakeup
	 * per event). Called from sample(); must not block. */
	void (*on_event)(const struct ms_event *event, void *arg);
	void *event_arg;
	size_t event_ring_bytes;      /* 0: 4 MiB when on_event is set */
};

/* Per-process numbers since the probes started. */
struct bpf_process_stats {
	pid_t tgid;
	int nr_threads;               /* threads seen */
	uint64_t faults, faults_user, faults_kernel, faults_write;
	uint64_t oncpu_ns, offcpu_ns;
	uint64_t switches_voluntary, switches_involuntary;
	uint64_t migrations, migrations_cross_node;
	uint64_t pages_alloc;         /* all nodes */
	uint64_t pages_alloc_node[BPF_SOURCE_MAX_NODES]; /* by node id */
};


/* Load and attach the probes now (counting starts); series come at open.
 * names: the series wanted (NULL/0: all). An error says what is missing
 * (BTF, permission) and that the other sources keep running. */
int bpf_source_create(struct source *src, const struct host *host, const struct bpf_source_options *opt,
		      const char *const *names, int nr_names, struct ms_error *err);

/* The top processes by faults (system-wide: at most top_n), highest first;
 * returns how many were written to out (at most max). */
int bpf_source_processes(struct source *src, struct bpf_process_stats *out, int max);

/* One thread of the measured processes, cumulative since the probes started:
 * value[bpf_thread_value_index(series)] for each per-thread series. */
#define BPF_THREAD_VALUES 32
struct bpf_thread_values {
	pid_t tid;
	pid_t tgid;
	uint64_t value[BPF_THREAD_VALUES];
};

/* Where a series lives in bpf_thread_values.value, or -1 when it is not kept
 * per thread (page allocations are kept per process and node). */
int bpf_thread_value_index(const char *series);
/* Every thread seen (exited ones included), by tid; returns how many were
 * written to out (at most max), or -1. Not for the hot path: reads the map. */
int bpf_source_threads(struct source *src, struct bpf_thread_values *out, int max);

/* Processes in the in-kernel target set now (filtering mode), else -1. */
int bpf_source_nr_targets(struct source *src);

#endif
