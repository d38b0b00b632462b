/* A source of series: perf counters, BPF maps, procfs files, a replayed file,
 * or a plugin. Every source implements the same few operations; the sampler
 * knows nothing else about them.
 *
 * Life cycle: open (adds its series to the table, may fail with a clear
 * error) -> enable -> sample, sample, ... -> disable -> close. sample() runs
 * on the hot path: it must not allocate, format or block in steady state.
 *
 * Series that appear during a run (a process starts) are added from sample()
 * with series_table_add_live() on the table open() was given, followed by
 * frame_fit(frame, table->nr); their indices need not follow src->first.
 * Series that end (the process exited) are retired with series_table_retire()
 * in the sample whose frame holds their last values. */
#ifndef MEMSCOPE_SOURCE_H
#define MEMSCOPE_SOURCE_H

#include <stdbool.h>
#include <stdio.h>

#include "util/error.h"
#include "sampler/frame.h"

struct source;
struct source_kind;
struct sampler;

struct source_ops {
	const char *name;
	/* Register series in table; remember where they start. */
	int (*open)(struct source *src, struct series_table *table, struct ms_error *err);
	int (*enable)(struct source *src, struct ms_error *err);
	int (*disable)(struct source *src);
	/* Fill frame->samples[src->first .. src->first + src->count), and the
	 * series it added during the run. */
	int (*sample)(struct source *src, struct frame *frame);
	void (*close)(struct source *src);
	/* Optional: after open, say what the user should know about what was
	 * left out or restricted ("counting user space only"), one line each. */
	void (*notes)(struct source *src, FILE *out, const char *command_name);
	/* Optional: after open, add the descriptors the run must also wait on
	 * (sample ring buffers) with sampler_watch_add(). */
	int (*watch)(struct source *src, struct sampler *s, struct ms_error *err);
	/* Optional: stop counting and start again during a run (stat --control
	 * disable/enable). What a source without them counts in between is cut
	 * off by the frames taken at both ends (sampler_cut) and not handed on. */
	void (*pause)(struct source *src);
	void (*resume)(struct source *src);
};

struct source {
	const struct source_ops *ops;
	void *priv;
	int first;         /* index of this source's first series in the table */
	int count;         /* number of series it owns */
	bool finished;     /* set by a source whose target is gone (replay at EOF) */
	/* Frames come from a file (replay, recording): the source sets each
	 * frame's time and interval, and the sampler reads them as fast as they
	 * come instead of waiting for a timer. */
	bool replay;
	const struct source_kind *kind;   /* the registry kind that made it (sources/registry.h) */
};

#endif
