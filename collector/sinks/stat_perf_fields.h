/* The fields of one line of perf stat's CSV and JSON outputs, made from a
 * stat table cell, so that both print the same values in perf's order:
 * [interval] [aggregation, aggregate-number] counter-value, unit, event,
 * event-runtime, pcnt-running, metric-value, metric-unit. */
#ifndef MEMSCOPE_STAT_PERF_FIELDS_H
#define MEMSCOPE_STAT_PERF_FIELDS_H

#include <stdbool.h>

#include "sinks/stat_table.h"

struct perf_fields {
	const char *aggr_key;       /* JSON key of the row: "node", "socket", "cpu", "channel"; NULL: total */
	char aggr[96];              /* "N0", "S1", "CPU3" (JSON: "3"), a channel's name */
	int aggr_number;            /* CPUs added up; -1: none printed (total, CPU rows) */
	bool is_metric;
	bool has_counter;           /* counter-value and event-runtime have a value */
	char counter[64];           /* the value, "<not counted>" or "<not supported>"; "" for a metric */
	const char *unit;
	const char *event;          /* the event, or the metric's name */
	const char *cgroup;         /* stat -G: the cgroup the event counts in (after event), or NULL */
	unsigned long long runtime; /* ns */
	char pcnt[16];              /* "100.00" */
	char metric_value[64];      /* "" when none */
	const char *metric_unit;
	bool has_noise;             /* stat -r N: perf's variance field (spread of the mean, percent) */
	char noise[16];             /* "1.18" */
};

/* The row's fields alone (aggr_key, aggr, aggr_number). */
void perf_fields_row(const struct stat_table *t, int row, struct perf_fields *f);
/* The fields of cell (row, col); false when perf would print no line for it
 * (a value that has no meaning for the row). */
bool perf_fields_of(const struct stat_table *t, int row, int col, struct perf_fields *f);

#endif
