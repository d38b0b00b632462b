/* Series and frames: the one data model every source fills and every sink reads.
 *
 * A series is a name plus labels (cpu, node, socket, pid, tid, comm, pmu
 * instance, cgroup). A frame is one sample instant holding a value for every series,
 * in the order of the series table. Counter samples carry the delta over the
 * interval and the enabled/running time deltas that say how much of it was
 * counted (multiplexing); gauge samples carry a value.
 *
 * Series can appear during a run (a process starts) and end (it exits): a
 * source adds them with series_table_add_live() and retires them with
 * series_table_retire(). The table and every frame grow in place - their
 * memory is reserved up front and never moves - so a sink on another thread
 * may read entries it was told about while the sampler appends more. Each
 * frame lists what changed (frame.changes): the series that start with it
 * and those whose last values it holds. A retired index is given to a new
 * series only once every reader is done with the frame that retired it
 * (series_table.horizon), so a long run with processes coming and going
 * keeps the table as large as the most series alive at once. */
#ifndef MEMSCOPE_FRAME_H
#define MEMSCOPE_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "util/stable_array.h"

enum series_kind { SERIES_COUNTER, SERIES_GAUGE };

struct frame;

#define LABEL_NONE (-1)

struct series_labels {
	int cpu;               /* LABEL_NONE when the series is not per CPU */
	int node;
	int socket;
	int pid;
	int tid;
	char instance[64];     /* PMU instance name for uncore series, else "" */
	char comm[16];         /* process or thread name (pid/tid series), else "" */
	char *cgroup;          /* cgroup path ("/" the root) of a plugin's series, else NULL; a
				* series table owns a copy of each of its series' */
	/* Not a label to filter on: the series counts the whole machine whatever
	 * the target (a kernel statistic, an uncore PMU, a plugin's), so a value
	 * shown for a command or PID says so. */
	bool whole_system;
};

/* Where a series stands in a run. */
enum series_state {
	SERIES_LIVE,
	SERIES_RETIRING,       /* retired during this sample: the frame being built holds its last values */
	SERIES_RETIRED,        /* no values; the index waits to be given to a new series */
};

struct series {
	char *name;            /* event name, e.g. "page-faults" */
	char unit[32];
	double scale;          /* applied when values are shown, never to stored deltas */
	enum series_kind kind;
	struct series_labels labels;
	char *unavailable;     /* why this series is never counted (event refused), else NULL */
	enum series_state state;
	uint64_t retired_seq;  /* SERIES_RETIRED: the frame that held its last values */
};

/* Growable list of series indices (the table's change lists, its free list). */
struct series_index_list {
	int *index;
	int nr, cap;
	int head;              /* free list: first entry not yet reused */
};

/* What changed in the table with one frame. */
struct series_changes {
	const int *added;      /* series that start with this frame (new or reused indices) */
	int nr_added;
	const int *retired;    /* series whose last values are in this frame */
	int nr_retired;
};

#define SERIES_TABLE_MAX (1 << 20)   /* indices a table can hold, retired ones included */

struct series_table {
	struct series *series; /* never moves: entries stay where they are while the table grows */
	int nr;                /* indices in use, retired ones included: the length of each frame */
	int capacity;          /* entries usable now (memory committed) */
	struct stable_array storage;
	/* During a run */
	struct series_index_list added, retiring, free;
	int nr_retired;        /* indices now SERIES_RETIRED */
	/* Every reader is done with the frames before this one: an index retired
	 * in an earlier frame may be given to a new series. */
	uint64_t horizon;
};

void series_labels_init(struct series_labels *labels);
/* Is this a per-process or per-thread series (pid or tid label)? Sums over a
 * name (totals, catalog metrics) leave these out: the source also gives the
 * series without them. */
bool series_is_per_task(const struct series *s);
/* Add a series while sources open; returns its index or -1 on allocation failure. */
int series_table_add(struct series_table *table, const char *name, const char *unit, double scale,
		     enum series_kind kind, const struct series_labels *labels);
/* Add a series during a run (from a source's sample()): a retired index
 * every reader is done with, else a new one at the end. It is listed in the
 * changes of the frame being built; the source then makes the frame hold it
 * (frame_fit). Returns its index, or -1 when the table is full or memory
 * runs out (the caller counts what it could not show). */
int series_table_add_live(struct series_table *table, const char *name, const char *unit, double scale,
			  enum series_kind kind, const struct series_labels *labels);
/* The series ends: the frame being built holds its last values. */
void series_table_retire(struct series_table *table, int index);
/* The changes of the frame being built, or false when there are none. */
bool series_table_changes(const struct series_table *table, struct series_changes *out);
/* After the frame with sequence number seq went out: its retiring series
 * become retired (their samples in frame are made invalid), and the change
 * lists start again. */
void series_table_frame_done(struct series_table *table, struct frame *frame, uint64_t seq);
/* Series that are live now (not retired or retiring). */
int series_table_live(const struct series_table *table);
void series_table_free(struct series_table *table);

struct sample {
	uint64_t value;        /* counter delta, or gauge value */
	uint64_t enabled_ns;   /* counter: time enabled during the interval */
	uint64_t running_ns;   /* counter: time counted; < enabled_ns when multiplexed */
	bool valid;            /* false when the source could not read it this time */
};

struct frame {
	uint64_t seq;          /* 0, 1, 2 ... */
	uint64_t time_ns;      /* CLOCK_MONOTONIC at the sample */
	uint64_t interval_ns;  /* since the previous frame (or since enable) */
	int nr;
	struct sample *samples; /* nr entries, series order; never moves when the frame grows */
	const struct series_changes *changes; /* series that start or end with this frame, or NULL */
	struct stable_array storage;
	int movable_cap;       /* frame_init_movable: samples allocated (0: a stable frame) */
};

/* Make a frame for nr series (before sampling starts); it can grow to
 * SERIES_TABLE_MAX without moving. */
int frame_init(struct frame *frame, int nr);
/* A frame whose samples may move when it grows (plain heap memory): for
 * frames that one owner at a time reads and grows, such as the buffers of a
 * sink queue reading a file (a stable frame's reservation, commit and
 * release cost more than reading the frames of a short recording). */
int frame_init_movable(struct frame *frame, int nr);
/* Grow to nr series (new samples invalid); never shrinks, nor moves but a
 * movable frame. -1 when memory runs out. */
int frame_fit(struct frame *frame, int nr);
void frame_free(struct frame *frame);

/* Add a frame into a running total: counters sum (values and times), gauges
 * keep the latest value, the interval grows; validity is kept per sample. */
void frame_accumulate(struct frame *total, const struct frame *frame, const struct series_table *table);

/* dst = src's time and samples (dst grows to src's length first; its
 * changes are left alone). */
void frame_copy(struct frame *dst, const struct frame *src);

/* Merge next, the frame that came right after dst, into dst, so that dst
 * stands for both (a sink that fell behind gets one frame for several):
 * counters add up (values, enabled and running times: the scaled value stays
 * what both intervals counted), gauges take next's sample (value and
 * validity: the latest reading), the interval covers both and the time,
 * sequence number are next's. A counter is valid only when both were read:
 * a sum missing one interval is not the sum of both. dst grows to next's
 * length first. Series that start or end (frame.changes) are the caller's
 * to treat: this is the arithmetic. */
void frame_merge(struct frame *dst, const struct frame *next, const struct series_table *table);

/* Counter value scaled for multiplexing: value * enabled / running.
 * Inline: reading a recording scales every value of every frame. */
static inline double sample_scaled(const struct sample *s)
{
	/* Multiplexed counters are extrapolated to the whole enabled time, as perf does. */
	if (s->running_ns == 0 || s->running_ns >= s->enabled_ns)
		return (double)s->value;
	return (double)s->value * (double)s->enabled_ns / (double)s->running_ns;
}
/* running / enabled in [0,1]; 1 when enabled is 0 (nothing to say). */
double sample_coverage(const struct sample *s);

#endif
