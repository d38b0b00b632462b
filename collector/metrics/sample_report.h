/* Attributed samples grouped by sort keys, as perf report groups them (the
 * key names follow perf's --sort keys where perf has one): for each group,
 * how many samples, how many were remote and local, the nodes of the data
 * and of the CPUs, latency where the hardware gave one, and the call chains
 * that led there. And the cache-line view of perf c2c: lines with loads that
 * hit a modified line (HITM), by offset within the line and code. */
#ifndef MEMSCOPE_SAMPLE_REPORT_H
#define MEMSCOPE_SAMPLE_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics/sample_attrib.h"
#include "util/error.h"

enum sort_key {
	SORT_SYM,          /* function of the sampled instruction */
	SORT_SRCLINE,      /* its source file:line */
	SORT_DSO,          /* the binary or library it is in */
	SORT_OBJ,          /* the data object of the address (perf: symbol_daddr) */
	SORT_NODE,         /* the node of the data */
	SORT_CPU_NODE,     /* the node of the CPU that ran the code */
	SORT_REMOTE,       /* remote, local or ? */
	SORT_LEVEL,        /* where the access was served (perf: mem) */
	SORT_OP,           /* load, store */
	SORT_PID,
	SORT_TID,
	SORT_COMM,
	SORT_CPU,
	SORT_EVENT,        /* the sampling event */
	SORT_CALLER,       /* the first caller of the sampled function */
	SORT_KEYS
};

#define SORT_MAX 8
#define REPORT_NODES_MAX 16
#define REPORT_CHAINS 3

struct sort_key_info {
	const char *name;
	const char *alias;        /* perf's name, when it differs; NULL */
	const char *title;        /* column heading */
	bool numeric;
};

extern const struct sort_key_info sort_keys[SORT_KEYS];

/* "sym,obj,node" into keys. Errors name the key and list the known ones. */
int sort_keys_parse(const char *text, enum sort_key *keys, int *nr, struct ms_error *err);

union key_value {
	const char *s;
	long long i;
};

struct report_chain {
	const char *text;         /* "main (app.c:40) <- __libc_start_call_main", interned */
	uint64_t samples;
};

struct report_line {
	const char *srcline;      /* interned */
	uint64_t samples;
};

/* An address range of a data object a row's samples fell in (obj key). */
struct report_range {
	uint32_t pid;
	uint64_t start, end;
};

#define REPORT_RANGES_MAX 64

struct report_row {
	union key_value keys[SORT_MAX];
	struct report_line *lines;   /* the sampled source lines, when srcline is not a key */
	int nr_lines, cap_lines;
	uint64_t samples, remote, local, unknown, hitm, peer;
	uint64_t weight_sum, weighted;
	uint64_t data_nodes[REPORT_NODES_MAX + 1];   /* last: unknown */
	uint64_t cpu_nodes[REPORT_NODES_MAX + 1];
	struct report_chain *chains;
	int nr_chains, cap_chains;
	struct report_range *ranges;   /* obj key: the object's ranges (at most REPORT_RANGES_MAX) */
	int nr_ranges, cap_ranges;
	bool hot_known;                /* DAMON monitored the object's process */
	double hot_share;              /* 0..1: sample_report_hot_shares */
};

struct sample_report {
	enum sort_key keys[SORT_MAX];
	int nr_keys;
	struct report_row *rows;
	int nr_rows, cap_rows;
	int *slots;                /* hash of key tuples -> row index, -1 free */
	int nr_slots;
	struct strtab *strings;
	uint64_t samples, remote, local, unknown, hitm;
	uint64_t node_from[NODE_FROM_COUNT];
	uint64_t lost[SAMPLE_LOST_KINDS];   /* by enum sample_lost_kind (throttled: times) */
	uint64_t decode_errors;
	const char *decode_error;  /* the first */
	bool hot_shares;           /* DAMON virtual regions gave the obj rows a hot share */
	unsigned hot_pct;          /* their hot threshold */
};

int sample_report_init(struct sample_report *r, const enum sort_key *keys, int nr_keys, struct strtab *strings);
void sample_report_free(struct sample_report *r);
int sample_report_add(struct sample_report *r, const struct attributed_sample *s);
void sample_report_lost(struct sample_report *r, const struct sample_item *item);
/* Each obj row's hot share from DAMON's virtual regions of its processes
 * (metrics/damon_hot_share.h); nothing when h holds none or obj is no key. */
struct damon_hot_share;
void sample_report_hot_shares(struct sample_report *r, const struct damon_hot_share *h);
/* Rows by samples, most first. */
void sample_report_sort(struct sample_report *r);
/* Text of key k of a row ("hot", "1", "?"). */
const char *report_key_text(const struct sample_report *r, const struct report_row *row, int k, char *buf,
			    size_t size);

/* ---- Cache lines (perf c2c) ---- */

#define C2C_LINE 64

struct c2c_offset {
	uint32_t offset;           /* within the line */
	const char *sym, *srcline; /* the code */
	uint64_t loads, stores, hitm, remote_hitm;
	uint32_t cpu_nodes;        /* bit n: seen on a CPU of node n */
	uint32_t pids_seen;        /* distinct processes, up to 2^32 */
	uint32_t last_pid;
};

struct c2c_line {
	uint64_t key;              /* line address: physical when known, else virtual */
	bool physical;
	uint32_t pid;              /* virtual lines: the process */
	const char *obj;           /* data object of the first sample */
	uint64_t vaddr;            /* a virtual address in it */
	uint64_t samples, loads, stores, hitm, remote_hitm, peer;
	struct c2c_offset *offsets;
	int nr_offsets, cap_offsets;
};

struct c2c_report {
	struct c2c_line *lines;
	int nr_lines, cap_lines;
	int *slots;
	int nr_slots;
	uint64_t samples, hitm, loads, stores;
};

int c2c_report_init(struct c2c_report *c);
void c2c_report_free(struct c2c_report *c);
int c2c_report_add(struct c2c_report *c, const struct attributed_sample *s);
/* Lines by HITM count, then samples, most first; offsets by offset. */
void c2c_report_sort(struct c2c_report *c);

#endif
