/* What `memscope top` shows, as numbers: a header, one row per NUMA node,
 * one row per process and, when one process is in focus, one row per thread.
 *
 * The command measures through a system-wide session (the catalog's metrics
 * this host can measure, the eBPF probes' per-process series), or replays a
 * recording, and hands the model what it needs (top_inputs); the top sink
 * gives it each frame with its metric values, and the model turns them into
 * per-second rates. A value this host cannot measure is invalid and carries
 * the reason; it is never shown as 0. The drawing (top_view.c) and the batch
 * output (top_batch.c) only read it. */
#ifndef MEMSCOPE_TOP_MODEL_H
#define MEMSCOPE_TOP_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/host.h"
#include "host/topology.h"
#include "metrics/metrics.h"
#include "sampler/frame.h"
#include "util/error.h"

#define TOP_MAX_NODES 8          /* node columns shown per process */
#define TOP_MAX_PROCESSES 4096   /* process rows kept per update */
#define TOP_MAX_THREADS 512      /* threads of the focused process */
#define TOP_MAX_LUA_COLS 16      /* metrics --lua scripts define, shown per node */

/* A number or, when it cannot be measured here, why not. */
struct top_value {
	double value;
	bool valid;
	const char *why;             /* when !valid; owned by the model */
};

/* Node panel columns. */
enum top_node_col {
	TOP_NODE_READ_BW,            /* B/s */
	TOP_NODE_WRITE_BW,           /* B/s */
	TOP_NODE_REMOTE_PCT,         /* % of accesses served by another node */
	TOP_NODE_FAULTS,             /* faults/s on the node's CPUs */
	TOP_NODE_PAGES_ALLOC,        /* pages/s allocated on the node (eBPF) */
	TOP_NODE_MIGRATIONS,         /* task migrations/s onto the node's CPUs */
	TOP_NODE_PAGES_MIGRATED,     /* pages/s migrated (system-wide statistic) */
	TOP_NODE_NUMA_MISS,          /* pages/s: numastat numa_miss */
	TOP_NODE_NUMA_FOREIGN,       /* pages/s: numastat numa_foreign */
	TOP_NODE_USED,               /* B in use on the node (nodeN/meminfo) */
	TOP_NODE_FREE,               /* B free on the node */
	TOP_NODE_PROMOTED,           /* pages/s promoted into the node from a slower tier */
	TOP_NODE_DEMOTED,            /* pages/s demoted from the node to a slower tier */
	TOP_NODE_DAMON_HOT,          /* bytes: DAMON regions hot in the last aggregation */
	TOP_NODE_DAMON_COLD,         /* bytes: DAMON regions idle for the cold age */
	TOP_NODE_NR_COLS
};

struct top_node_row {
	int node;                    /* node id; -1 for the whole system */
	struct top_value col[TOP_NODE_NR_COLS];
	struct top_value lua[TOP_MAX_LUA_COLS]; /* the Lua columns, as the scripts compute them */
};

/* Process table columns, also the sort keys. */
enum top_proc_col {
	TOP_PROC_PID,
	TOP_PROC_THREADS,
	TOP_PROC_FAULTS,             /* faults/s */
	TOP_PROC_PAGES,              /* pages/s allocated, all nodes (sort key of the per-node columns) */
	TOP_PROC_REMOTE_PCT,
	TOP_PROC_CPU_PCT,            /* on-CPU time / wall time, % of one CPU */
	TOP_PROC_OFFCPU_PCT,         /* off-CPU share of the time its threads were switched */
	TOP_PROC_MIGRATIONS,         /* task migrations/s */
	TOP_PROC_DAMON_HOT,          /* bytes DAMON's last aggregation saw hot (physical regions, through pagemap) */
	TOP_PROC_DAMON_COLD,         /* bytes idle for the cold age */
	TOP_PROC_COMMAND,
	TOP_PROC_NR_COLS
};

struct top_process_row {
	pid_t pid;
	char comm[32];
	int nr_threads;
	double faults;               /* per second */
	double pages;                /* per second, all nodes */
	double pages_node[TOP_MAX_NODES]; /* per second, by node index (host topology order) */
	struct top_value remote_pct;
	double cpu_pct;
	struct top_value offcpu_pct;
	double migrations;
	struct top_value damon_hot, damon_cold;   /* bytes, all nodes */
	uint64_t faults_total;       /* since top started */
};

struct top_thread_row {
	pid_t tid;
	char comm[32];
	char state;                  /* R, S, D ... from /proc/PID/task/TID/stat */
	double faults;               /* per second (minflt + majflt) */
	double cpu_pct;              /* utime + stime */
	int cpu;                     /* last CPU it ran on */
	int node;                    /* that CPU's node */
};

/* A process over the whole run, for the totals a replay ends with: every
 * process the run had, those that exited before the end included. */
struct top_run_process {
	pid_t pid;
	char comm[16];
	double faults, pages;        /* totals over the run */
	double oncpu_s;
	double first_s;              /* run time of the first frame that held it */
	double ended_s;              /* run time of its last frame; NAN: running at the end */
};

struct lua_engine;

/* What top shows, as series: `record -a` records the same, so a recording
 * replays in top (top --input) with the rows live top showed. */
#define TOP_PROCESS_EVENTS "proc.pages_alloc,proc.faults,proc.oncpu_ns,proc.offcpu_ns,proc.migrations,proc.threads"
/* The node panel's catalog metrics, one comma list, into names. */
void top_node_metric_list(char *names, size_t size);
/* The catalog metric behind a node column, or NULL (the eBPF page allocations). */
const char *top_node_col_metric(enum top_node_col col);

/* What the model reads besides the frames, as the command found it.
 * Pointers stay valid while the model is open. */
struct top_inputs {
	const struct series_table *table;
	const struct host *host;     /* the live host (/proc, for the CPU's name); NULL: a recording's */
	const struct topology *topo; /* the measured machine's (a recording's: as recorded) */
	const struct metric_plan *plan;   /* the node columns' metrics measured, or NULL */
	const struct metric_engine *engine;
	const struct resolution *res;
	const char *bpf_why;         /* why the eBPF probes did not start, or NULL */
	const char *node_col_why[TOP_NODE_NR_COLS]; /* why a node column's metric is not measured, or NULL */
	const char *source_names;    /* "perf procfs bpf" */
	const char *hostname;        /* NULL: this host's */
	const char *cpu_model;       /* NULL: this host's (/proc/cpuinfo, else the resolver's) */
	const char *tiers;           /* NULL: this host's (top_describe_tiers) */
	const char *notes;           /* what the sources said while starting, or NULL */
	struct lua_engine *lua;      /* --lua scripts (their metrics are columns), or NULL */
	const int *lua_metrics;      /* the scripts' metrics, by engine index */
	int nr_lua_metrics;          /* all of them; past TOP_MAX_LUA_COLS they are counted, not shown */
	pid_t focus_pid;             /* 0: none */
	bool replay;                 /* frames from a recording: nothing is asked of the live host */
	uint64_t interval_ns;
};

struct top_cumulative;           /* counters at the previous update (top_model.c) */

struct top_model {
	struct lua_engine *lua;      /* --lua scripts, or NULL */
	/* Header */
	char hostname[64];
	char cpu_model[128];
	char source_names[64];       /* "perf procfs bpf" */
	char tiers[256];             /* "4: 0-1, 40: 2-3; balancing 2; demotion on", "" when unknown */
	double coverage_pct;         /* smallest running/enabled share of the perf counters */
	bool coverage_valid;
	double elapsed_s;            /* since sampling started */
	double interval_s;           /* of the last frame */
	uint64_t updates;

	/* Node panel: rows[0 .. nr_nodes-1] by node, then the system total */
	struct top_node_row *nodes;
	int nr_nodes;
	struct top_node_row total;
	/* The same columns per memory tier (node = the tier's N, fastest first):
	 * the catalog metrics summed over the tier's nodes by the metric engine,
	 * the eBPF page allocations by the model. None when the kernel lists no
	 * tiers. */
	struct top_node_row *tier_rows;
	int nr_tiers;
	const char *node_col_why[TOP_NODE_NR_COLS]; /* the reason a whole column is n/a, else NULL */
	/* Lua columns: each metric the --lua scripts define (memscope.metric{}),
	 * for every node and the system, in the order they were defined. */
	int nr_lua_cols;
	int lua_metric[TOP_MAX_LUA_COLS];          /* its index in the Lua engine */
	char (*lua_why)[256];                      /* [row * TOP_MAX_LUA_COLS + col]: why a value is n/a */
	int lua_left_out;                          /* metrics beyond TOP_MAX_LUA_COLS, not shown */

	/* Process table, unsorted */
	struct top_process_row *procs;
	int nr_procs;
	const char *proc_remote_why;
	const char *proc_damon_why;  /* why a process has no HOT_B/COLD_B */
	const char *proc_offcpu_why;
	const char *bpf_why;         /* the eBPF probes could not start: no process table */

	/* Focused process */
	pid_t focus_pid;
	bool replay;                 /* frames from a recording: nothing is asked of the live host */
	bool focus_alive;
	struct top_thread_row *threads;
	int nr_threads;

	/* What it reads (top_inputs) */
	const struct series_table *table;
	const struct host *host;
	const struct metric_plan *plan;
	const struct metric_engine *engine;
	const struct resolution *res;
	const struct metric_values *values; /* the latest frame's metrics */
	const struct topology *topo; /* the measured host's (a recording's: as recorded) */
	char *notes;                 /* what the sources reported while starting (left-out probes) */
	uint64_t last_ns;            /* time of the previous update */
	struct top_cumulative *prev;
	int pages_series[TOP_MAX_NODES]; /* series index of proc.pages_alloc per node, or -1 */
	/* Run totals: processes that ended (their rows are gone), and the faults
	 * of the whole target (proc.faults without a pid), which the processes'
	 * add up to but for what the probes could not give a process. */
	struct top_run_process *ended;
	int nr_ended, cap_ended;
	int faults_series;           /* proc.faults of the whole target, or -1 */
	double run_faults;
	bool run_faults_seen;
	int plan_metric[TOP_NODE_NR_COLS]; /* plan index of each node column's metric, or -1 */
};

/* Ready the model for what in describes (copied). */
int top_model_open(struct top_model *m, const struct top_inputs *in, struct ms_error *err);
/* Take a frame into the model: node rates, processes, threads. Its time is
 * from the start of the run; values are its metrics (NULL without a plan). */
void top_model_update(struct top_model *m, const struct frame *frame, const struct metric_values *values);
void top_model_close(struct top_model *m);

/* Every process of the run so far with its totals, most faults first (then
 * by pid), in a new array the caller frees; -1 when out of memory. Batch
 * output and the full screen's end-of-replay view list the same rows. */
int top_model_run_totals(const struct top_model *m, struct top_run_process **out);

/* Sort rows by a column, highest first (PID and COMMAND ascending). */
void top_model_sort(struct top_process_row *rows, int nr, enum top_proc_col col);
const char *top_proc_col_name(enum top_proc_col col);
const char *top_node_col_name(enum top_node_col col);

/* Why a Lua column has no value: the whole system's reason, else the first
 * node's without a value; NULL when every row has one. */
const char *top_lua_column_why(const struct top_model *m, int col);

/* Node index in host topology order of a node id, for pages_node[], or -1. */
int top_model_node_index(const struct top_model *m, int node);

/* "4: 0-1, 40: 2-3 (CXL); balancing 2; demotion on" of the machine whose sysfs
 * and procfs are under roots; "" when its kernel lists no tiers. */
void top_describe_tiers(char *buf, size_t size, const struct sysfs_roots *roots, const struct topology *topo);

#endif
