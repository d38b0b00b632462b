/* A sink's thread: it takes frames and events from the sink's queue, in
 * order, and calls the sink. Sinks that read what another computes on the
 * same frame (stat's and top's columns of metrics a Lua script defines) share
 * that sink's runner and run after it, on the same frames.
 *
 * Over a file a runner may instead call its sinks on the reading thread
 * (on_caller): there is no sampling for a slow sink to delay, the reader
 * waits for its sinks anyway, and handing each frame to another thread cost
 * more than the sinks' own work (docs/performance.md, "Reading recordings"). */
#ifndef MEMSCOPE_SINK_RUNNER_H
#define MEMSCOPE_SINK_RUNNER_H

#include <pthread.h>
#include <stdbool.h>

#include "pipeline/sink_queue.h"
#include "sinks/sink.h"
#include "util/error.h"

#define SINK_RUNNER_MAX_SINKS 8
/* How much nicer than the sampling thread a sink's thread runs. */
#define SINK_RUNNER_NICE 5

struct sink_runner {
	struct sink *sinks[SINK_RUNNER_MAX_SINKS];
	bool stopped[SINK_RUNNER_MAX_SINKS];   /* asked the run to stop: no more frames */
	int nr_sinks;
	struct sink_queue queue;        /* not used on_caller */
	pthread_t thread;
	bool started;
	bool on_caller;                 /* the sinks run on the thread that puts */
	struct sink_queue_stats caller_stats;
	bool caller_finished;
	/* Called on the runner's thread. */
	void (*on_stop)(void *ctx);                          /* a sink asked the run to stop */
	void (*on_reply)(struct sink_reply *reply, void *ctx); /* a request was answered */
	void *ctx;
};

/* The queue, then the thread (neither on_caller). queue_length: the largest
 * of its sinks'. */
int sink_runner_start(struct sink_runner *r, int queue_length, const struct series_table *table,
		      const struct metric_engine *engine, bool wait, bool on_caller, struct ms_error *err);
/* What the session hands on, as sink_queue_put_*: into the queue, or on_caller
 * straight to the sinks (never refused, never merged). */
void sink_runner_put_frame(struct sink_runner *r, const struct frame *frame, const struct metric_values *values,
			   bool last);
void sink_runner_put_event(struct sink_runner *r, const struct sink_event *ev);
void sink_runner_put_samples(struct sink_runner *r, struct sample_batch *batch);
bool sink_runner_event_room(struct sink_runner *r);
/* As sink_queue_readers_done: UINT64_MAX when every frame put is done with. */
uint64_t sink_runner_readers_done(const struct sink_runner *r);
void sink_runner_stats(const struct sink_runner *r, struct sink_queue_stats *out);
/* Close the queue and wait until the thread has taken everything. */
void sink_runner_finish(struct sink_runner *r);
void sink_runner_fini(struct sink_runner *r);

#endif
