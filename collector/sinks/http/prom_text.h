/* The Prometheus text exposition format (0.0.4) and OpenMetrics 1.0: metric
 * names per Prometheus conventions and the text of families and samples.
 *
 * Names: "memscope_" + the memscope name in lower case, every other
 * character an underscore; base units in the name (bytes, seconds, with
 * values converted: ns and msec become seconds); counters end in _total,
 * gauges do not. "mem.read_bytes" (B, counter) is memscope_mem_read_bytes_total,
 * "mem.read_bw" (B/s, gauge) memscope_mem_read_bw_bytes_per_second,
 * "task-clock" (msec) memscope_task_clock_seconds_total. */
#ifndef MEMSCOPE_PROM_TEXT_H
#define MEMSCOPE_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/text_buf.h"

enum prom_format { PROM_TEXT, PROM_OPENMETRICS };
enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_INFO };

#define PROM_TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* The format a scraper asked for in its Accept header. */
enum prom_format prom_format_from_accept(const char *accept);

struct prom_name {
	char family[160];      /* without _total: OpenMetrics' family name */
	char sample[168];      /* what sample lines carry: family + "_total" for counters */
	char unit[32];         /* OpenMetrics UNIT ("bytes", "seconds"), or "" */
	double factor;         /* multiply a stored value by this for the base unit (prom_value) */
};

/* A stored value in the base unit: divided where the factor is a power of
 * ten below one (ns to s: 1781890765 / 1e9, not * 1e-9, which is not exact). */
double prom_value(const struct prom_name *n, double v);

/* Name a memscope series or metric. unit: memscope's ("B", "B/s", "ns",
 * "msec", "faults", ""); scale: what a stored value is multiplied by to be
 * in that unit (1 for catalog metrics). */
void prom_name_of(const char *name, const char *unit, double scale, enum prom_type type, struct prom_name *out);

struct prom_label {
	const char *name;
	const char *value;     /* escaped when written */
};

/* # HELP / # TYPE (/ # UNIT) of a family. help may be NULL. */
void prom_family(struct text_buf *b, enum prom_format fmt, const struct prom_name *n, enum prom_type type,
		 const char *help);
/* One sample line: name{labels} value. */
void prom_sample(struct text_buf *b, enum prom_format fmt, const struct prom_name *n, enum prom_type type,
		 const struct prom_label *labels, int nr_labels, double value);
/* The end of the page (OpenMetrics: "# EOF"). */
void prom_end(struct text_buf *b, enum prom_format fmt);

/* The shortest text that reads back as exactly v (integers without a
 * fraction, NaN, +Inf); out needs 32 bytes. Shared with the stream, so the
 * page and /metrics show the same digits. */
void prom_format_double(double v, char *out, size_t size);

#endif
