/* What a session holds while it runs (session_run.c): one runner (queue and
 * thread) per group of sinks, this frame's metric values, the whole run's
 * total, and the way sink threads reach the sampling thread (an eventfd the
 * sampler watches: stop, a new interval). For the pipeline's own files
 * (session_run.c, session_control.c); commands use session.h. */
#ifndef MEMSCOPE_SESSION_PIPELINE_H
#define MEMSCOPE_SESSION_PIPELINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pipeline/session.h"
#include "pipeline/sink_runner.h"
#include "util/int_list.h"

struct session_pipeline {
	struct session *session;
	const char *command_name;           /* "record", for messages */
	struct sink_setup setup;            /* what the sinks were opened with (they keep pointers to it) */
	struct sink_runner runners[SESSION_MAX_SINKS];
	int nr_runners;
	int runner_of[SESSION_MAX_SINKS];   /* each sink's runner */
	struct metric_values *values;       /* this frame's, computed once */
	struct frame total;                 /* every frame handed on, added up */
	struct metric_values *total_values;
	uint64_t frames;                    /* handed on */
	uint64_t computed;                  /* metric computations on the sampling thread */
	bool from_file;
	bool paused;                        /* control: frames are not handed on */
	uint64_t paused_since;              /* seq of the first frame not handed on */
	bool counting_stopped;              /* disable (or -D -1): the sources that can stop counting have */
	/* Series changes of frames not handed on, for the next one handed on. */
	struct int_list held_added, held_retired;
	struct series_changes held_changes;
	uint64_t changes_lost;              /* out of memory keeping them */
	/* Sample items (record --sample, or a recording's) gathered on the
	 * sampling thread, handed to the sinks that take samples in batches,
	 * in order with the frames. */
	struct sample_batch *samples;
	bool takes_samples[SESSION_MAX_SINKS];   /* per runner: a sink of it takes samples */
	uint64_t samples_unkept;            /* items lost for want of memory for a batch */
	int wake_fd;                        /* eventfd: a sink thread wants the sampling thread */
	atomic_bool stop;                   /* a sink asked the run to stop */
	atomic_uint_fast64_t interval_ns;   /* a sink asked for this interval (0: none) */
	/* stat --input FILE -I MS: the recording's frames added up until they
	 * cover MS, then handed on as one. */
	uint64_t bucket_ns;                 /* 0: each frame as recorded */
	struct frame bucket;
	bool bucket_open;
	uint64_t bucket_edge_ns;            /* where the current line ends (from the start) */
	uint64_t bucket_slack_ns;           /* half a recorded frame: the frame nearest the edge ends it */
};

/* Time since the start of the run, as frames and events carry it. */
uint64_t session_pipeline_now(const struct session_pipeline *p);
/* Put ev into every sink's queue, in order with the frames. -1 (nothing
 * put) when a queue has no room for one more event now: the caller keeps its
 * input for the next frame. */
int session_pipeline_broadcast(struct session_pipeline *p, const struct sink_event *ev);
/* Can every queue take one more event now? */
bool session_pipeline_event_room(struct session_pipeline *p);
/* Does a sink answer control requests? */
bool session_pipeline_answers(const struct session_pipeline *p);
/* Change the sampling interval (on the sampling thread) and tell every
 * sink; -1 with err when a queue has no room for the event now. */
int session_pipeline_set_interval(struct session_pipeline *p, uint64_t interval_ns, struct ms_error *err);
/* Finish and free what session_run() built, and close every sink (session_close). */
void session_pipeline_close(struct session *s);

#endif
