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
	double value;               /* the counter's value (for JSON's "%f"), 0 when none */
	char metric_value[64];      /* "" when none */
	bool metric_scaled;         /* a metric with a scale_unit: value is the scaled value (JSON's "%f") */
	const char *metric_unit;
	double shadow;              /* perf's shadow metric of a software event (perf_fields_shadow) */
	char shadow_unit[24];       /* "CPUs utilized", "K/sec"; "" when the event has none */
	double shadow_plain;        /* the same without perf's K/M/G ("/sec": per second) */
	const char *shadow_plain_unit; /* "CPUs utilized", "/sec", "GHz"; NULL when none */
	bool has_noise;             /* stat -r N: perf's variance field (spread of the mean, percent) */
	char noise[16];             /* "1.18" */
};

/* A metric column with perf's ScaleUnit (catalog scale_unit "100%"): its
 * factor and unit ("%"); false for any other column. */
bool perf_metric_scale(const struct stat_table *t, int col, double *scale, const char **unit);
/* The row's fields alone (aggr_key, aggr, aggr_number). */
void perf_fields_row(const struct stat_table *t, int row, struct perf_fields *f);
/* The fields of cell (row, col); false when perf would print no line for it
 * (a value that has no meaning for the row). */
bool perf_fields_of(const struct stat_table *t, int row, int col, struct perf_fields *f);
/* perf's shadow metric of an event of cell (row, col) over span_s seconds
 * of wall time (the interval, or the run): task-clock and cpu-clock in
 * "CPUs utilized", other counts as a rate per second of the row's
 * task-clock ("K/sec"), cycles in GHz. Sets shadow and shadow_unit; and
 * metric_value/metric_unit with printf_format ("%f" JSON, "%.3f" CSV)
 * where the cell is not a metric. */
void perf_fields_shadow(const struct stat_table *t, int row, int col, double span_s, const char *printf_format,
			struct perf_fields *f);
/* perf's order of lines: per CPU (-A) and per thread each event over the
 * rows; otherwise each row with its events. The k-th line's cell. */
void perf_line_cell(const struct stat_table *t, int k, int *row, int *col);
/* The event's name without perf's modifiers (":u", ":k"...): "task-clock:u" is a task-clock. */
bool perf_event_is(const char *event, const char *name);

#endif
