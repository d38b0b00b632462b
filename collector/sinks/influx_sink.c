/* --influx FILE: every frame's values in InfluxDB line protocol, a line per
 * series and frame, for `influx write` or Telegraf's file input:
 *
 *   page-faults,cpu=3 value=1200i,enabled_ns=100000000i,running_ns=100000000i 1764254400100000000
 *
 * The measurement is the series' name, the tags its labels (sorted by key,
 * as InfluxDB stores them), the fields its sample: a counter's delta over
 * the frame's interval and the times it was enabled and counted (value *
 * enabled_ns / running_ns is the count a multiplexed event would have had),
 * a gauge's value. The timestamp is the frame's wall-clock time in
 * nanoseconds: a recording's own start plus the frame's time, or for a live
 * run the wall clock at the start plus the time since. A sample not read in
 * a frame has no line in it. */
#include "sinks/sink_registry.h"
#include "util/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct influx_sink {
	FILE *out;
	char *path;
	const struct series_table *table;
	int nr_known;          /* series indices the sink was told about: safe to read */
	int64_t start_unix_ns; /* the wall-clock time of the run's start */
	bool failed;
};

/* Line protocol escapes: a measurement's commas and spaces; a tag key's or
 * value's commas, equals signs and spaces (the spec's). A newline ends a
 * line whatever precedes it, so it (and any control character) is written as
 * a space. */
static void put_escaped(FILE *out, const char *text, const char *special)
{
	for (const char *c = text; *c; c++) {
		if ((unsigned char)*c < 0x20) {
			fputc(' ', out);
			continue;
		}
		if (strchr(special, *c))
			fputc('\\', out);
		fputc(*c, out);
	}
}

static void put_tag_text(FILE *out, const char *key, const char *value)
{
	if (!value || !value[0])
		return;   /* the protocol has no empty tag values */
	fprintf(out, ",%s=", key);
	put_escaped(out, value, ", =");
}

static void put_tag_number(FILE *out, const char *key, int value)
{
	if (value != LABEL_NONE)
		fprintf(out, ",%s=%d", key, value);
}

static void put_line(struct influx_sink *is, const struct series *s, const struct sample *v, uint64_t time_ns)
{
	const struct series_labels *l = &s->labels;

	put_escaped(is->out, s->name, ", ");
	/* Sorted by key. */
	put_tag_text(is->out, "cgroup", l->cgroup);
	put_tag_text(is->out, "comm", l->comm);
	put_tag_number(is->out, "cpu", l->cpu);
	put_tag_text(is->out, "instance", l->instance);
	put_tag_number(is->out, "node", l->node);
	put_tag_number(is->out, "pid", l->pid);
	put_tag_number(is->out, "socket", l->socket);
	put_tag_number(is->out, "tid", l->tid);
	fprintf(is->out, " value=%" PRIu64 "i", v->value);
	if (s->kind == SERIES_COUNTER)
		fprintf(is->out, ",enabled_ns=%" PRIu64 "i,running_ns=%" PRIu64 "i", v->enabled_ns, v->running_ns);
	fprintf(is->out, " %" PRId64 "\n", is->start_unix_ns + (int64_t)time_ns);
}

/* Once, on stderr; the run then stops (a file that cannot take the lines). */
static int write_failed(struct influx_sink *is)
{
	if (!is->failed)
		ms_warn("--influx %s: could not write it all: %s", is->path,
			strerror(errno));
	is->failed = true;
	return 1;
}

static int influx_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct influx_sink *is = sink->priv;
	struct timespec now;

	(void)err;
	is->table = setup->table;
	is->nr_known = setup->table->nr;
	if (setup->start_unix_ns) {
		is->start_unix_ns = setup->start_unix_ns;
	} else {
		clock_gettime(CLOCK_REALTIME, &now);
		is->start_unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	}
	return 0;
}

static void influx_series(struct sink *sink, const struct series_table *table, const struct series_changes *changes)
{
	struct influx_sink *is = sink->priv;

	(void)table;
	for (int i = 0; i < changes->nr_added; i++)
		if (changes->added[i] >= is->nr_known)
			is->nr_known = changes->added[i] + 1;
}

static int influx_frame(struct sink *sink, const struct sink_frame *f)
{
	struct influx_sink *is = sink->priv;
	int nr = f->frame->nr < is->nr_known ? f->frame->nr : is->nr_known;

	if (is->failed)
		return 1;
	for (int i = 0; i < nr; i++) {
		const struct series *s = &is->table->series[i];
		const struct sample *v = &f->frame->samples[i];

		/* A series that ended (a thread that exited) is retired in the
		 * table by the time its frames get here; the frames up to its
		 * last (retired_seq) still hold its values, and its index is not
		 * given to another series until every sink is past them. */
		if (v->valid && !s->unavailable &&
		    (s->state != SERIES_RETIRED || f->frame->seq <= s->retired_seq))
			put_line(is, s, v, f->frame->time_ns);
	}
	return ferror(is->out) ? write_failed(is) : 0;
}

static void influx_idle(struct sink *sink)
{
	struct influx_sink *is = sink->priv;

	if (!is->failed && fflush(is->out) != 0)
		write_failed(is);
}

static void influx_end(struct sink *sink, const struct sink_end *end)
{
	(void)end;
	influx_idle(sink);
}

static void influx_close(struct sink *sink)
{
	struct influx_sink *is = sink->priv;

	if (!is)
		return;
	if (fclose(is->out) != 0 && !is->failed)
		write_failed(is);
	free(is->path);
	free(is);
	sink->priv = NULL;
}

static const struct sink_ops influx_ops = {
	.name = "influx",
	.open = influx_open,
	.frame = influx_frame,
	.series = influx_series,
	.idle = influx_idle,
	.end = influx_end,
	.close = influx_close,
};

static int influx_create(struct sink *sink, const char *path, struct ms_error *err)
{
	struct influx_sink *is = calloc(1, sizeof(*is));

	if (!is || !(is->path = strdup(path))) {
		free(is);
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (!(is->out = fopen(path, "we"))) {
		ms_error_set(err, "--influx %s: cannot create it: %s", path, strerror(errno));
		free(is->path);
		free(is);
		return -1;
	}
	*sink = (struct sink){ .ops = &influx_ops, .priv = is };
	return 0;
}

static bool influx_failed(const struct sink *sink)
{
	const struct influx_sink *is = sink->priv;

	return is && is->failed;
}

const struct sink_kind influx_sink_kind = {
	.name = "influx",
	.option = { "influx", "FILE", "write every frame's values to FILE in InfluxDB line protocol: a line\n"
		    "per series and frame (docs/influx.md)", true },
	.create = influx_create,
	.failed = influx_failed,
};
