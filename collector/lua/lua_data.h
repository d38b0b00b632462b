/* What scripts read, kept on the C side: every series' value in the current
 * frame, its total since the start and a window of the last N frames (a ring
 * allocated once), with lookups by name and labels. Lua only ever asks for
 * the few numbers it uses; nothing here allocates per frame. */
#ifndef MEMSCOPE_LUA_DATA_H
#define MEMSCOPE_LUA_DATA_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "sampler/frame.h"

#define LABEL_ANY INT_MIN

/* Which series of a name to add up; LABEL_ANY (or "" instance) matches all. */
struct label_filter {
	int cpu, node, socket, pid, tid;
	const char *instance;
};

void label_filter_init(struct label_filter *f);

/* A series that ended during the run (its process exited): its totals and
 * labels, kept after its index goes to another series, so that totals, label
 * lists and series() cover every series the run had. */
struct lua_ended_series {
	char *name;
	char unit[32];
	enum series_kind kind;
	struct series_labels labels;  /* cgroup left out (NULL) */
	char *unavailable;
	double total;                 /* counter: sum; gauge: last value */
	double peak, mean;            /* gauges: over the frames that read it */
	double start_s, end_s;        /* first and last frame that read it, run time */
	bool seen;
	int index;                    /* its index until the next frame, then -1 */
};

/* The series of one name that ended (indices into ended[]). */
struct lua_ended_group {
	const char *name;             /* the first one's */
	int *idx;
	int nr, cap;
};

/* Gauge summary of a series over the frames that read it. */
struct lua_gauge_stats {
	double peak, sum;
	uint64_t reads;
};

struct lua_data {
	const struct series_table *table;
	int nr_series;
	/* Series grouped by name: name i owns by_name[name_first[i] .. name_first[i+1]). */
	int nr_names;
	const char **names;
	int *name_first;
	int *by_name;             /* table indices */
	int *name_group;          /* per name: its groups[] entry of ended series, or -1 */
	int *hash;                /* open addressing over names, -1 empty */
	int hash_size;
	/* Current frame, in shown units (value x scale); NaN when not read. */
	uint64_t seq;
	double time_s, interval_s;
	double *current;
	double *totals;           /* counters: sum; gauges: last value */
	/* Per series, what push needs of the table's entry, packed: its shown
	 * scale, 0 for a series never counted, negated for a gauge (the table's
	 * entries are large; reading three fields of each per frame was a third
	 * of the push). */
	double *push_scale;
	bool *seen;               /* read at least once */
	bool *ended_index;        /* its series ended and went to ended[] (until the index is reused) */
	double *start_s;          /* run time of the first frame that read it */
	struct lua_gauge_stats *gauge;
	struct lua_ended_series *ended;
	int nr_ended, cap_ended;
	struct lua_ended_group *groups;
	int nr_groups;
	int *group_hash;          /* open addressing over groups by name, -1 empty */
	int group_hash_size;
	int *ended_slot;          /* ended[] entry of a series the last frame held for the last time, else -1 */
	int first_pending;        /* ended[first_pending..] still hold their indices */
	/* History ring of the last history_cap frames. */
	int history_cap, history_len, history_head;  /* head: next slot to write */
	double *history;          /* history_cap x nr_series */
	double *history_time;
	double *history_interval;
	uint64_t frames;          /* frames seen */
	uint64_t start_ns;
};

int lua_data_init(struct lua_data *d, const struct series_table *table, int history);
void lua_data_free(struct lua_data *d);
void lua_data_push(struct lua_data *d, const struct frame *frame);

/* What a by_name entry stands for: its name, labels, unit, kind and why it
 * is not counted, for a live series or an ended one alike. */
struct lua_data_entry {
	const char *name, *unit, *unavailable;
	enum series_kind kind;
	const struct series_labels *labels;
	bool ended, seen;
	double total, peak, mean, last, start_s, end_s;
};
void lua_data_entry(const struct lua_data *d, int by_name_value, struct lua_data_entry *out);

/* The series of name index `name` that ended: how many, and their ended[]
 * indices (lua_data_entry takes -1 - index). */
int lua_data_ended_of(const struct lua_data *d, int name, const int **ended);

/* Every series of name index `name`, live and ended: how many, and member
 * k of them as a value for lua_data_entry. */
int lua_data_nr_members(const struct lua_data *d, int name);
int lua_data_member(const struct lua_data *d, int name, int k);

/* Name index, or -1. */
int lua_data_find(const struct lua_data *d, const char *name);
bool lua_data_series_matches(const struct lua_data *d, int series, const struct label_filter *f);

enum lua_data_what { LUA_DATA_CURRENT, LUA_DATA_TOTAL };

/* Sum over the series of a name that match: returns how many were read
 * (0: no value; *sum untouched). */
int lua_data_sum(const struct lua_data *d, int name, const struct label_filter *f, enum lua_data_what what,
		 double *sum);
/* Same over one history slot: age 0 is the current frame, 1 the one before... */
int lua_data_sum_history(const struct lua_data *d, int name, const struct label_filter *f, int age, double *sum);

#endif
