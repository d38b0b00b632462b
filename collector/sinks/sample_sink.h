/* The sample sink: the samples of a recording (record --sample), attributed
 * as they arrive in batches beside the frames and reported at the end
 * (memscope report --sort, --c2c, --samples). It is built from the
 * recording's header (its sampling events, how to decode them, the CPU and
 * topology they ran on). Scripts with on_sample get each attributed sample
 * through a callback that runs on this sink's thread: the Lua sink follows
 * this one (session_add_sink), so the engine is only ever used from one
 * thread. */
#ifndef MEMSCOPE_SAMPLE_SINK_H
#define MEMSCOPE_SAMPLE_SINK_H

#include <stdbool.h>
#include <stdio.h>

#include "metrics/sample_report.h"
#include "recording/recording.h"
#include "sinks/sample_output.h"
#include "sinks/sink.h"
#include "util/error.h"

struct sample_sink_options {
	enum sort_key keys[SORT_MAX];
	int nr_keys;                /* 0: no sort-key table */
	bool c2c;
	bool list;                  /* every sample */
	enum sample_format format;
	int top;
	FILE *out;
	const char *file;           /* the recording, for messages */
	/* Each attributed sample, with its time in seconds since the start of
	 * the recording, or NULL. */
	void (*on_sample)(const struct attributed_sample *s, double time_s, void *ctx);
	void *ctx;
};

/* -1 with err when the recording holds no samples (why: recorded without
 * --sample, or sampling could not start then), or the decode tables cannot
 * be read. */
int sample_sink_init(struct sink *sink, const struct recording_header *h, const struct sample_sink_options *o,
		     struct ms_error *err);

/* After the run: did attributing run out of memory (no report was printed)? */
bool sample_sink_failed(const struct sink *sink);

/* Does this recording hold samples (a "sampling" header member with events)? */
bool recording_has_samples(const struct recording_header *h);

#endif
