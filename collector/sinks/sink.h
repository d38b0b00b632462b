/* Sinks: where frames leave the pipeline (stat's printers, the recording
 * writer, Lua scripts, top, and later the HTTP/SSE server and Prometheus).
 *
 * The session computes every metric once per frame and hands the frame and
 * its metric values to every sink. Each sink runs on a thread of its own
 * behind a bounded queue (pipeline/sink_queue.h): a sink that falls behind
 * gets frames merged (counters summed, intervals joined, gauges at their
 * latest value, metrics recomputed for the merged frame) and learns how many
 * in sink_frame.merged and sink_end.frames_merged; frames are never dropped
 * silently and live sampling never waits for a sink. Frames read from a file
 * (a recording, --replay) are never merged: the reader calls the sinks itself
 * (or, with control input, waits for room in their queues), because a report
 * must see every frame. Events (labels, phases,
 * pause/resume, interval changes, requests) are never merged and reach each
 * sink in order with its frames.
 *
 * Life cycle: open -> (series | frame | event | samples)* -> end -> close. open runs on
 * the caller's thread before the run; series, frame and event on the sink's
 * thread, or the reading thread over a file (series just before the frame it
 * describes); end
 * on the caller's thread once every sink has taken all its frames, in the
 * order the sinks were added (stat's totals before the scripts' reports);
 * close when the session closes, for every sink added (opened or not, ended
 * or not: a run that failed). A sink never runs two calls at once. */
#ifndef MEMSCOPE_SINK_H
#define MEMSCOPE_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "host/host.h"
#include "host/topology.h"
#include "metrics/metrics.h"
#include "sampler/frame.h"
#include "sampler/sample_batch.h"
#include "sampler/sampler.h"
#include "util/error.h"

struct sink;

/* What every sink is opened with: the data it will be given and where it
 * comes from. Pointers stay valid until close. */
struct sink_setup {
	const char *command_name;          /* "stat", for messages */
	const struct series_table *table;  /* the series of every frame */
	const struct host *host;           /* the machine measured (a recording's, loaded from its files), or NULL */
	const struct topology *topo;       /* NULL when unknown (a recording made without topology) */
	const struct metric_plan *plan;    /* catalog metrics, or NULL */
	const struct metric_engine *engine;/* reads sink_frame.metrics; NULL without a plan */
	const struct resolution *res;      /* why catalog metrics are unavailable, or NULL */
	const char *title;                 /* what is measured, for people: "'touchmem 50'", "system wide" */
	const char *origin;                /* "live", "recording" or "replay" */
	const char *origin_name;           /* the file read (recording, replay), else the title */
	uint64_t interval_ns;              /* 0: one frame at the end */
	bool from_file;                    /* frames come from a file, with their recorded times */
	int64_t start_unix_ns;             /* a recording's own wall-clock start (its header), 0: none or not a recording */
	bool system_wide;                  /* every process of the machine is measured (-a) */
	/* The target is a command or PIDs: values of series that count the whole
	 * machine (series_labels.whole_system) are marked as such. */
	bool task_target;
	/* Ask for another sampling interval (top's + and -), from the sink's
	 * thread; the change reaches every sink as a SINK_EVENT_INTERVAL. */
	void (*set_interval)(void *ctx, uint64_t interval_ns);
	void *ctx;
};

struct sink_frame {
	/* Times are relative to the start of the run (a file's frames keep
	 * their recorded times, which are). */
	const struct frame *frame;
	const struct metric_values *metrics; /* this frame's metric values, or NULL without a plan */
	uint64_t merged;                   /* sampler frames this one stands for: 1, more when the sink fell behind */
	bool last;                         /* the run's final frame (often a partial interval) */
};

enum sink_event_kind {
	SINK_EVENT_LABEL,                  /* text */
	SINK_EVENT_PHASE_BEGIN,            /* text: the phase's name */
	SINK_EVENT_PHASE_END,
	SINK_EVENT_PAUSE,                  /* no frames until SINK_EVENT_RESUME */
	SINK_EVENT_RESUME,
	SINK_EVENT_INTERVAL,               /* interval_ns: the new interval */
	SINK_EVENT_REQUEST,                /* text: a control request for the answering sink ("status", "record FILE") */
	SINK_EVENT_KEYS,                   /* text: bytes typed on the terminal (length of them) */
	SINK_EVENT_RESIZE,                 /* the terminal changed size */
};

/* The answer to a control request (memscope ctl), written by the sink that
 * answers: "ok: ..." or "error: ...". */
#define SINK_REPLY_MAX 1024
struct sink_reply {
	char text[SINK_REPLY_MAX];
};

struct sink_event {
	enum sink_event_kind kind;
	uint64_t time_ns;                  /* relative to the start of the run */
	char text[256];
	int length;                        /* SINK_EVENT_KEYS: bytes in text */
	uint64_t interval_ns;
	/* Non-NULL for the sink that answers control requests (sink.answers):
	 * the reply goes back to the client once event() returns. */
	struct sink_reply *reply;
};

struct sink_end {
	enum sampler_end reason;
	int signal;                        /* SAMPLER_END_SIGNAL: which */
	const char *reason_text;           /* "the command exited", "SIGINT", "end of the replayed input" */
	uint64_t frames;                   /* frames the session handed on (not those taken while paused) */
	uint64_t frames_merged;            /* of those, how many reached this sink merged with others */
	/* A live run's wall time, from its start to its last frame, spans when
	 * counting was disabled included (perf stat's "time elapsed"); 0 when
	 * the frames come from a file. */
	uint64_t elapsed_ns;
	/* Every frame handed on, added up (frame_accumulate), and its metric
	 * values (NULL without a plan): the whole run. */
	const struct frame *total;
	const struct metric_values *total_metrics;
	/* Samples read but not given to this sink: it was too far behind when
	 * their batch was handed on (a live run never waits for a sink). */
	uint64_t samples_dropped;
};

struct sink_ops {
	const char *name;                  /* "stat", "recording", "lua", "top" */
	int (*open)(struct sink *sink, const struct sink_setup *setup, struct ms_error *err);
	/* Non-zero asks the run to stop (top's q, a failed write); the sink
	 * then gets no more frames, but still its events and end. */
	int (*frame)(struct sink *sink, const struct sink_frame *f);
	/* Optional (events are then only answered for). Non-zero: as frame. */
	int (*event)(struct sink *sink, const struct sink_event *ev);
	/* Optional: the series table changed with the next frame (frame.h):
	 * changes->added start with it (new indices, or indices of series
	 * retired earlier), changes->retired hold their last values in it
	 * (for a merged frame: every change of the frames it stands for).
	 * Entries listed here and before are safe to read from the sink's
	 * thread while the sampler appends more; table->nr is not (it is the
	 * sampler's): a sink sizes what it keeps by the indices it was given.
	 * A retired index is reused only after every sink has returned from
	 * the frame that retired it (sampler_set_readers_done). */
	void (*series)(struct sink *sink, const struct series_table *table, const struct series_changes *changes);
	/* Optional: sample items (record --sample: samples, mappings, process
	 * events, losses), in their place among the frames: every item read
	 * before a frame comes before it. Samples come in batches, not one call
	 * each: hundreds of thousands a second go through the same queue as the
	 * frames (a sink without this op is not given them). Non-zero: as frame. */
	int (*samples)(struct sink *sink, const struct sample_batch *batch);
	/* Optional: nothing more is queued for the sink (its thread is about to
	 * wait): write out what it buffered. At short intervals a sink is woken
	 * once per batch of frames, so output buffered until here is written
	 * once per batch instead of once per frame. */
	void (*idle)(struct sink *sink);
	void (*end)(struct sink *sink, const struct sink_end *end);
	void (*close)(struct sink *sink);
	/* end() says itself how many frames reached it merged (the Lua sink
	 * names its scripts); for the others the session says it on stderr
	 * after their end(): merging is never silent. */
	bool says_merged;
};

struct sink {
	const struct sink_ops *ops;
	void *priv;
	int queue_length;                  /* frames it may fall behind before merging; 0: SINK_QUEUE_DEFAULT */
	bool answers;                      /* answers control requests (the recording) */
	/* Someone watches its output (a terminal): woken for every frame, even
	 * at the short intervals where other sinks are woken per batch. */
	bool prompt;
};

#define SINK_QUEUE_DEFAULT 8

#endif
