/* What `memscope stat` prints: interval lines and final totals, as aligned
 * text (vmstat-like, header repeated), CSV (-x SEP) or JSON (one object per
 * line). All three print the same stat table. */
#ifndef MEMSCOPE_STAT_OUTPUT_H
#define MEMSCOPE_STAT_OUTPUT_H

#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/resource.h>

#include "sinks/stat_table.h"

/* STAT_METRIC_ONLY is not a format of its own: the printers' switch takes it
 * for --metric-only in any of the three. */
enum stat_format { STAT_TEXT, STAT_CSV, STAT_JSON, STAT_METRIC_ONLY };

struct stat_output {
	enum stat_format format;
	FILE *out;
	char separator[8];        /* CSV */
	bool self_describing;     /* CSV/JSON: memscope's own form, not perf stat's */
	bool columns;             /* text: memscope's column table (stat_text.c), not perf's lines (stat_perf_text.c) */
	bool no_big_num;          /* perf's text: counts without thousands separators */
	bool summary;             /* perf's --summary: the totals after -I's lines too */
	bool no_csv_summary;      /* ... in CSV without perf's "summary" time field */
	bool metric_only;         /* perf's --metric-only: a column per metric, no events (stat_metric_only.c) */
	const char *title;        /* what was measured, for the totals heading */
	int header_every;         /* text: repeat the header every N lines */
	int lines_since_header;
	int csv_header_done;
	bool intervals_printed;
	/* Not a terminal: intervals stay in the stream's buffer until the sink
	 * has nothing more queued (stat_output_flush), one write per batch. */
	bool batched;
	double span_s;            /* the wall time the table being printed covers (perf's shadow metrics) */
	/* perf's "seconds user" and "seconds sys" after the elapsed time: the
	 * command's resource use once it was reaped (a command counted alone,
	 * once, in text); NULL: not printed. */
	const struct rusage *child_rusage;
	double elapsed_sd;        /* stat -r N: the elapsed time's sd of the mean (its mean is the elapsed time) */   /* perf's forms then leave the totals out, as perf stat -I does */
};

void stat_output_interval(struct stat_output *o, double time_s, double interval_s, const struct stat_table *t);
void stat_output_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t);
void stat_output_flush(struct stat_output *o);

/* For other printers of stat tables (report --regions): a cell as stat's
 * text shows it ("1,234", "n/a", "<not counted>", coverage when < 100%),
 * and the rows as stat's JSON gives them ([{"scope", "events", "metrics"}]). */
void stat_cell_text(const struct stat_cell *cell, char *buf, size_t size);
/* Text: a gauge total's name and company: "  (peak of N samples; mean M, last L)". */
void stat_text_gauge_note(struct stat_output *o, const struct stat_cell *cell);

/* Text: the footnote of the marker '*' on values that count the whole machine
 * although the target is a command or PIDs. */
void stat_output_whole_system_note(struct stat_output *o);
/* perf's footer after the totals: the elapsed time, then the command's user
 * and system time where child_rusage says (a run, not -r N's mean). */
void stat_output_elapsed(struct stat_output *o, double elapsed_s);
/* CSV and JSON: what a cell's value is beyond perf's fields, or "" (perf's
 * line unchanged): "whole-system" (the whole machine's, for a command or PID
 * target), "peak" (a gauge's total: the peak of its values). */
const char *stat_cell_note(const struct stat_table *t, int row, int col, char *buf, size_t size);
json_t *stat_json_rows(const struct stat_table *t);
/* A perf stat -j object begun with perf's first keys: interval, the
 * aggregation (socket, core, cpu...) and aggregate-number, as f gives them. */
struct perf_fields;
json_t *stat_json_perf_object(const struct stat_table *t, const struct perf_fields *f, const double *time_s);
/* --metric-only in the three forms: a header naming the metrics, then a line
 * per row (and interval). time_s: NULL for the totals. */
void stat_metric_only_interval(struct stat_output *o, double time_s, const struct stat_table *t);
void stat_metric_only_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t);

void stat_perf_text_interval(struct stat_output *o, double time_s, const struct stat_table *t);
void stat_perf_text_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t);
void stat_text_interval(struct stat_output *o, double time_s, const struct stat_table *t);
void stat_text_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t);
void stat_csv_interval(struct stat_output *o, double time_s, const struct stat_table *t);
void stat_csv_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t);
void stat_json_interval(struct stat_output *o, double time_s, double interval_s, const struct stat_table *t);
void stat_json_totals(struct stat_output *o, double elapsed_s, const struct stat_table *t);

#endif
