/* A sink's thread: it takes frames and events from the sink's queue, in
 * order, and calls the sink. Sinks that read what another computes on the
 * same frame (stat's and top's columns of metrics a Lua script defines) share
 * that sink's runner and run after it, on the same frames. */
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
	struct sink_queue queue;
	pthread_t thread;
	bool started;
	/* Called on the runner's thread. */
	void (*on_stop)(void *ctx);                          /* a sink asked the run to stop */
	void (*on_reply)(struct sink_reply *reply, void *ctx); /* a request was answered */
	void *ctx;
};

/* The queue, then the thread. queue_length: the largest of its sinks'. */
int sink_runner_start(struct sink_runner *r, int queue_length, const struct series_table *table,
		      const struct metric_engine *engine, bool wait, struct ms_error *err);
/* Close the queue and wait until the thread has taken everything. */
void sink_runner_finish(struct sink_runner *r);
void sink_runner_destroy(struct sink_runner *r);

#endif
