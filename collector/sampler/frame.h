/* Series and frames: the one data model every source fills and every sink reads.
 *
 * A series is a name plus labels (cpu, node, socket, pid, pmu instance). A frame
 * is one sample instant holding a value for every series, in the fixed order
 * of the series table. Counter samples carry the delta over the interval and
 * the enabled/running time deltas that say how much of it was counted
 * (multiplexing); gauge samples carry a value. */
#ifndef MEMSCOPE_FRAME_H
#define MEMSCOPE_FRAME_H

#include <stdbool.h>
#include <stdint.h>

enum series_kind { SERIES_COUNTER, SERIES_GAUGE };

#define LABEL_NONE (-1)

struct series_labels {
	int cpu;               /* LABEL_NONE when the series is not per CPU */
	int node;
	int socket;
	int pid;
	int tid;
	char instance[64];     /* PMU instance name for uncore series, else "" */
};

struct series {
	char *name;            /* event name, e.g. "page-faults" */
	char unit[32];
	double scale;          /* applied when values are shown, never to stored deltas */
	enum series_kind kind;
	struct series_labels labels;
	char *unavailable;     /* why this series is never counted (event refused), else NULL */
};

struct series_table {
	struct series *series;
	int nr;
	int capacity;
};

void series_labels_init(struct series_labels *labels);
/* Add a series; returns its index or -1 on allocation failure. */
int series_table_add(struct series_table *table, const char *name, const char *unit, double scale,
		     enum series_kind kind, const struct series_labels *labels);
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
	struct sample *samples; /* nr entries, series order */
};

/* Allocate a frame for nr series (done once, before sampling starts). */
int frame_init(struct frame *frame, int nr);
void frame_free(struct frame *frame);

/* Add a frame into a running total: counters sum (values and times), gauges
 * keep the latest value, the interval grows; validity is kept per sample. */
void frame_accumulate(struct frame *total, const struct frame *frame, const struct series_table *table);

/* Counter value scaled for multiplexing: value * enabled / running. */
double sample_scaled(const struct sample *s);
/* running / enabled in [0,1]; 1 when enabled is 0 (nothing to say). */
double sample_coverage(const struct sample *s);

#endif
