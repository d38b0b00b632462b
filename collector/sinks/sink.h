/* Sinks: where frames leave the pipeline (stat's printers, the recording
 * writer, Lua scripts, top, the HTTP/SSE server and Prometheus exporter).
 *
 * The session computes every metric once per frame and hands the frame and
 * its metric values to every sink. Each sink runs off the sampling thread
 * behind a bounded queue (pipeline/sink_queue.h): a sink that falls behind
 * gets frames merged (counters summed, intervals joined, gauges at their
 * latest value) and learns how many in sink_frame.merged and sink_end;
 * frames are never dropped silently and the sampler never waits for a sink.
 * Events (labels, phases, pause/resume, interval changes) are never merged
 * and reach each sink in order with its frames.
 *
 * Life cycle, all calls for one sink on one thread:
 *   open -> (series | frame | event)* -> end -> close
 * open and close may also run on the caller's thread, before the run starts
 * and after it has ended. */
#ifndef MEMSCOPE_SINK_H
#define MEMSCOPE_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "host/host.h"
#include "host/topology.h"
#include "metrics/metrics.h"
#include "sampler/frame.h"
#include "sampler/sampler.h"
#include "util/error.h"

struct sink;

/* What every sink is opened with: the data it will be given and where it
 * comes from. Pointers stay valid until close. */
struct sink_setup {
	const char *command_name;          /* "stat", for messages */
	const struct series_table *table;  /* the series of every frame; it may grow (see sink_ops.series) */
	const struct topology *topo;       /* NULL when unknown (a recording made without topology) */
	const struct metric_plan *plan;    /* catalog metrics, or NULL */
	const struct metric_engine *engine;/* reads values from sink_frame.metrics; NULL without a plan */
	const struct resolution *res;      /* why catalog metrics are unavailable, or NULL */
	const char *title;                 /* what is measured, for people: "'touchmem 50'", "system wide" */
	const char *origin;                /* "live", "recording" or "replay" */
	uint64_t interval_ns;              /* 0: one frame at the end */
};

struct sink_frame {
	const struct frame *frame;         /* its time is relative to the start of the run */
	const struct metric_values *metrics; /* this frame's metric values, or NULL without a plan */
	uint64_t merged;                   /* sampler frames this one stands for: 1, more when the sink fell behind */
	bool last;                         /* the run's final frame (often a partial interval) */
};

enum sink_event_kind {
	SINK_EVENT_LABEL,                  /* text */
	SINK_EVENT_PHASE_BEGIN,            /* text: the phase's name */
	SINK_EVENT_PHASE_END,
	SINK_EVENT_PAUSE,
	SINK_EVENT_RESUME,
	SINK_EVENT_INTERVAL,               /* interval_ns: the new interval */
};

struct sink_event {
	enum sink_event_kind kind;
	uint64_t time_ns;                  /* relative to the start of the run */
	char text[256];
	uint64_t interval_ns;
};

struct sink_end {
	enum sampler_end reason;
	int signal;                        /* SAMPLER_END_SIGNAL: which */
	const char *reason_text;           /* "the command exited", "SIGINT", "end of the recording" */
	uint64_t frames;                   /* frames the sampler produced */
	uint64_t frames_merged;            /* of those, how many reached this sink merged into another */
};

struct sink_ops {
	const char *name;                  /* "stat", "recording", "lua", "top", "http" */
	int (*open)(struct sink *sink, const struct sink_setup *setup, struct ms_error *err);
	/* Non-zero asks the run to stop (top's q, a failed write). */
	int (*frame)(struct sink *sink, const struct sink_frame *f);
	void (*event)(struct sink *sink, const struct sink_event *ev);
	/* Optional: the series table changed with the next frame (frame.h):
	 * changes->added start with it (new indices, or indices of series
	 * retired earlier), changes->retired hold their last values in it.
	 * Entries listed here and before are safe to read from the sink's
	 * thread while the sampler appends more; table->nr is not (it is the
	 * sampler's): a sink sizes what it keeps by the indices it was given.
	 * A retired index is reused only after every sink has returned from
	 * the frame that retired it (sampler_set_readers_done). */
	void (*series)(struct sink *sink, const struct series_table *table, const struct series_changes *changes);
	void (*end)(struct sink *sink, const struct sink_end *end);
	void (*close)(struct sink *sink);
};

struct sink {
	const struct sink_ops *ops;
	void *priv;
	int queue_length;                  /* frames it may fall behind before merging; 0: the default */
};

#endif
