/* memscope-bench: memory-system benchmarks (bandwidth, latency, memory-level
 * parallelism, context switch, STREAM, NUMA triad contention, core-to-core
 * transfers). Plain C11 and libc only, so the same sources build for x86-64
 * and aarch64 (docs/bench.md has the methods). */
#ifndef MEMSCOPE_BENCH_H
#define MEMSCOPE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_CPUS 1024
#define BENCH_MAX_NODES 64
#define BENCH_MAX_CACHES 8
#define BENCH_MAX_LIST 256
#define BENCH_LINE 64

/* ---- topology (sysfs) ---- */

struct bench_cache {
	int level;
	char type[16];              /* Data, Instruction, Unified */
	size_t size;
	size_t line;
	char shared_cpus[64];       /* shared_cpu_list */
};

struct bench_topo {
	int nr_cpus;                /* online CPUs */
	int cpus[BENCH_MAX_CPUS];
	int cpu_node[BENCH_MAX_CPUS]; /* indexed by CPU number; -1 unknown */
	int nr_nodes;
	int nodes[BENCH_MAX_NODES];
	int nr_caches;              /* data and unified caches of the first CPU, by level */
	struct bench_cache caches[BENCH_MAX_CACHES];
};

/* Reads $MEMSCOPE_SYSFS_ROOT (default /sys)/devices/system/{cpu,node}. */
int topo_load(struct bench_topo *t, char *err, size_t errsize);
/* $MEMSCOPE_SYSFS_ROOT, or /sys. */
const char *topo_sysfs_root(void);
/* Size of the data/unified cache at level (1, 2, 3...), 0 when sysfs has none. */
/* A small text file whole, trailing white space cut: 0, or -1 when it cannot be read. */
int topo_read_text(const char *path, char *buf, size_t size);
size_t topo_cache_size(const struct bench_topo *t, int level);
size_t topo_last_level_size(const struct bench_topo *t);
int topo_node_cpus(const struct bench_topo *t, int node, int *cpus, int max);
bool topo_has_cpu(const struct bench_topo *t, int cpu);
bool topo_has_node(const struct bench_topo *t, int node);

/* ---- architecture: timer, cache maintenance ---- */

enum bench_arch { ARCH_X86_64, ARCH_AARCH64, ARCH_OTHER };
enum bench_timer { TIMER_AUTO, TIMER_CYCLES, TIMER_CLOCK };

enum bench_arch arch_this(void);
const char *arch_name(enum bench_arch a);
/* Pick and calibrate the timer. The cycle counter (TSC, cntvct_el0) is used
 * only where it ticks at a constant rate. */
void timer_init(enum bench_timer want);
const char *timer_name(void);
double timer_resolution_ns(void);
uint64_t timer_ticks(void);
double ticks_to_ns(uint64_t ticks);
double now_s(void);                 /* CLOCK_MONOTONIC */
/* Write back and invalidate every line of [p, p+size) from all caches. */
void cache_flush(const void *p, size_t size);
const char *cache_flush_insn(void);
void mem_fence(void);
const char *mem_fence_insn(void);
bool arch_has_clflushopt(void);

/* ---- placement and memory ---- */

/* Huge pages: madvise(MADV_HUGEPAGE) when asked, MADV_NOHUGEPAGE otherwise
 * (so one page is 4 KiB and page counts are predictable). */
void *mem_alloc(size_t size, bool huge);
void mem_free(void *p, size_t size);
/* Bind [p, p+size) to a node before first touch (mbind MPOL_BIND). */
int mem_bind(void *p, size_t size, int node);
/* Share of the pages of [p, p+size) that are on node (move_pages query), -1 on error. */
double mem_share_on_node(void *p, size_t size, int node);
int pin_to_cpu(int cpu);
int current_cpu(void);

/* ---- options and output ---- */

enum bench_format { FMT_TABLE, FMT_CSV, FMT_JSON };
enum plot_format { PLOT_PNG, PLOT_SVG, PLOT_PDF, PLOT_NR_FORMATS };
const char *plot_format_name(int f);

struct bench_opts {
	const char *command;
	enum bench_format format;
	const char *prefix;             /* PREFIX.json, PREFIX.png */
	bool plot, huge, quiet;
	bool force;                     /* replace an earlier run's files at prefix */
	unsigned plot_formats;          /* bit per enum plot_format */
	int reps;                       /* at least this many repetitions of a point */
	int max_reps;                   /* at most this many */
	double precision;               /* stop when the 95% interval is within this share of the median */
	double max_time_s;              /* or when a point has taken this long */
	double min_time_s;              /* per timed measurement */
	double phase_min_s;             /* each phase at least this long (under memscope) */
	enum bench_timer timer;
	int cpu;                        /* -1: not given */
	size_t sizes[BENCH_MAX_LIST];
	int nr_sizes;
	size_t strides[BENCH_MAX_LIST];
	int nr_strides;
	int threads[BENCH_MAX_LIST];
	int nr_threads;
	int cpus[BENCH_MAX_CPUS];
	int nr_cpus;
	int isolate[BENCH_MAX_CPUS];    /* --isolate */
	int nr_isolate;
	size_t size;                    /* stream, numa-triad, ctx: one size; 0: default */
	const char *pattern;            /* lat: seq or random */
	const char *op;                 /* bw: rd wr rdwr cp bzero all */
	const char *state;              /* c2c: M E S */
	int conf;                       /* numa-triad: 1 2 3 */
	int local_node, remote_node;    /* -1: default */
	int max_threads;                /* numa-triad: threads per group; 0: CPUs of the node */
	int ref_cpu;                    /* c2c; -1: first CPU */
	size_t heat_size;               /* c2c heat map size; 0: half of L1 */
	int procs;                      /* ctx */
	int max_par;                    /* par */
	unsigned kernels;               /* stream: bit per enum stream_kernel */
	long rounds;                    /* ctx round trips per measurement; 0: by time */
	size_t pages;                   /* touch */
	int passes;                     /* touch: reads of the whole buffer after touching it */
	int node;                       /* touch / chase: -1 none */
	struct bench_topo topo;
};

/* A result table: named columns, rows of numbers or text. */
enum col_kind { COL_NUM, COL_INT, COL_TEXT };

struct bench_col {
	const char *name;
	const char *unit;
	enum col_kind kind;
	int precision;
};

struct bench_cell {
	double num;                     /* NaN: no value */
	char text[48];
};

/* The raw samples behind a column's medians (in the JSON, so a reader can
 * recompute every median and interval). */
struct bench_sampled {
	int col;
	int n_col;                      /* its count: "n", or NAME_n where the table has an "n" already */
	char *n_name;                   /* NAME_n (allocated), NULL for "n" */
	struct samples *rows;           /* indexed by row */
};

struct bench_table {
	const char *name;               /* "results", "heatmap", ... */
	const char *title;
	struct bench_col cols[24];
	int nr_cols;
	struct bench_cell *cells;
	int nr_rows, cap_rows;
	struct bench_sampled sampled[2];
	int nr_sampled;
};

#define BENCH_MAX_TABLES 6

/* What other work did to a run (load.c). */
struct load_figures {
	double seconds;
	double other_cpus;              /* CPU time of other processes / seconds */
	double own_cpus;                /* this benchmark's */
	double steal_cpus;              /* stolen by the hypervisor */
	double run_queue;               /* runnable threads of other processes, mean; -1 unknown */
	double freq_min_mhz, freq_max_mhz; /* lowest and highest clock any CPU read; NaN unknown */
};

struct bench_report {
	const char *bench;
	struct load_figures load;
	char load_warning[256];         /* empty: the run was quiet enough */
	char freq_warning[256];         /* empty: the clock held still, or is not readable */
	struct bench_table tables[BENCH_MAX_TABLES];
	int nr_tables;
	char params[1024];              /* JSON object members: "\"op\":\"rd\",..." */
	char notes[8][256];
	int nr_notes;
};

struct bench_table *report_table(struct bench_report *r, const char *name, const char *title);
void table_col(struct bench_table *t, const char *name, const char *unit, enum col_kind kind, int precision);
int table_row(struct bench_table *t);  /* new row, all NaN/empty; returns its index */
void table_set(struct bench_table *t, int row, const char *col, double v);
void table_set_text(struct bench_table *t, int row, const char *col, const char *text);
double table_get(const struct bench_table *t, int row, const char *col);
/* Columns NAME, NAME_low, NAME_high (and n, once per table) for a value
 * measured repeatedly; table_set_spread fills them from the samples and
 * keeps a copy of the samples for the JSON. */
void table_col_spread(struct bench_table *t, const char *name, const char *unit, int precision);
void table_set_spread(struct bench_table *t, int row, const char *col, const struct samples *s);
void report_param(struct bench_report *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report_note(struct bench_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print in the chosen format; write PREFIX.json and draw the plot when asked.
 * Returns 0, or 1 when a file could not be written. */
int report_finish(struct bench_report *r, const struct bench_opts *o);
void report_free(struct bench_report *r);

/* ---- repeated measurements (stats.c) ---- */

struct samples {
	double *v;
	int n, cap;
};

/* The median and a distribution-free 95% interval on it from order
 * statistics; level: the interval's coverage (>= 0.95 once n >= 6). */
struct spread {
	int n;
	double median, low, high, level;
};

void samples_add(struct samples *s, double v);
void samples_free(struct samples *s);
struct spread spread_of(const double *v, int n);
/* The same at another coverage (e.g. 0.975 for each of two intervals
 * whose ends bound a ratio at 95%). */
struct spread spread_at(const double *v, int n, double level);
/* Enough repetitions: at least --reps, then until the interval is within
 * --precision of the median, --max-reps, or --max-time spent on the point. */
bool samples_enough(const struct bench_opts *o, const struct samples *s, double spent_s);

/* ---- other work on the machine (load.c) ---- */

/* Probe the machine for 200 ms, then watch it until load_finish; the
 * clock is read on the topology's CPUs. */
void load_start(const struct bench_topo *t);
void load_finish(struct load_figures *during);
const struct load_figures *load_before(void);
bool load_unreliable(const struct load_figures *f);
size_t load_private_cache(const struct bench_topo *t);
/* "other processes used 1.7 CPUs during this run: figures above 2M are not
 * reliable" (by_size: the benchmark's figures are by buffer size). */
void load_warning(const struct bench_opts *o, const struct load_figures *f, bool by_size, char *buf, size_t n);
/* "the CPU clock moved between 2000 and 3000 MHz during this run: ..."
 * when the highest reading is over 5% above the lowest. */
bool load_freq_warning(const struct load_figures *f, char *buf, size_t n);
/* Why the clock is unknown (empty when it was read). */
const char *load_freq_unknown(void);
/* --isolate: what was done, as a JSON object for the report. */
void load_set_isolate(const char *json);
const char *load_isolate(void);

/* ---- phases (memscope markers) ---- */

/* Mark a phase's begin; returns the start time. */
double phase_begin(const struct bench_opts *o, const char *name);
/* Should a phase that started at t0 repeat its measurement to last phase_min_s? */
bool phase_wants_more(const struct bench_opts *o, double t0);
/* Mark the end and put the phase's results into the recording as a label
 * "bench-result NAME key=value ...". */
void phase_end(const struct bench_opts *o, const char *name, const char *results_fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool phase_under_memscope(void);

/* ---- helpers ---- */

int parse_size(const char *text, size_t *out);     /* 4096, 4K, 1.5M, 2G */
void format_size(size_t size, char *buf, size_t n);
double median(double *v, int n);                   /* sorts v */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
int bench_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_progress(const struct bench_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps a value alive so the compiler cannot drop the loop that made it. */
extern volatile uint64_t bench_sink;

/* ---- the benchmarks ---- */

int bench_bw(struct bench_opts *o);
int bench_lat(struct bench_opts *o);
int bench_par(struct bench_opts *o);
int bench_ctx(struct bench_opts *o);
int bench_stream(struct bench_opts *o);
int bench_numa_triad(struct bench_opts *o);
int bench_c2c(struct bench_opts *o);
int bench_touch(struct bench_opts *o);
int bench_selftest(struct bench_opts *o);

/* Kernels shared by the benchmarks and the self-test. */
enum bw_op { BW_RD, BW_WR, BW_RDWR, BW_CP, BW_BZERO };
const char *bw_op_name(enum bw_op op);
/* One pass of op over size bytes (dst used by cp); returns bytes counted. */
size_t bw_pass(enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size);
/* Build a pointer chain over buf: one element every stride bytes, visited in
 * address order (seq), as one random cycle over the whole buffer (random), or
 * at random within windows of CHAIN_WINDOW_BYTES taken one after the other
 * (window). Returns the first element. */
enum chain_order { CHAIN_SEQ, CHAIN_RANDOM, CHAIN_WINDOW };
#define CHAIN_WINDOW_BYTES (64 * 1024)
int chain_order_parse(const char *text, enum chain_order *out);
void **chain_build(void *buf, size_t size, size_t stride, enum chain_order how, unsigned seed);
void *chain_walk(void *p, uint64_t steps);
uint64_t chain_length(void *start);
/* STREAM kernels over n doubles; return bytes moved (STREAM's count). */
enum stream_kernel { ST_COPY, ST_SCALE, ST_ADD, ST_TRIAD };
const char *stream_kernel_name(enum stream_kernel k);
size_t stream_run(enum stream_kernel k, double *a, double *b, double *c, size_t n);

/* The loops of bw and stream at each vector width (simd.c): scalar, sse2,
 * avx2, avx512 on x86-64, scalar, neon and sve on aarch64. bw_pass and
 * stream_run use the selected one (default: the widest the CPU has).
 * kernel_bytes: the vector's bytes (SVE's: the CPU's length; 0 where the
 * CPU has no SVE). */
int kernel_count(void);
const char *kernel_name(int k);
int kernel_bytes(int k);
bool kernel_available(int k);
int kernel_find(const char *name);
int kernel_widest(void);
void kernel_select(int k);
int kernel_selected(void);
size_t kernel_bw_pass(int k, enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size);
size_t kernel_stream_run(int k, enum stream_kernel sk, double *a, double *b, double *c, size_t n);
#if defined(__aarch64__)
/* simd_sve.c: the SVE loops, called only where the CPU has SVE. */
int sve_vector_bytes(void);
size_t sve_bw(enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size);
size_t sve_stream(enum stream_kernel k, double *a, double *b, double *c, size_t n);
#endif

/* c2c: the steps that leave lines in a coherence state (c2c_plan.c). */
enum c2c_state { C2C_M, C2C_E, C2C_S };
enum c2c_who { C2C_PREPARER, C2C_HELPER };
enum c2c_op { C2C_FLUSH, C2C_FENCE, C2C_WRITE, C2C_READ };
struct c2c_step {
	enum c2c_who who;
	enum c2c_op op;
	const char *insn;               /* the instruction or access that does it */
};
int c2c_state_parse(const char *text, enum c2c_state *out);
const char *c2c_state_name(enum c2c_state s);
/* The preparation sequence for state s on arch (clflushopt: x86 has it).
 * Returns the number of steps. */
int c2c_plan(enum c2c_state s, enum bench_arch arch, bool clflushopt, struct c2c_step *steps, int max);
const char *c2c_op_name(enum c2c_op op);

#endif
