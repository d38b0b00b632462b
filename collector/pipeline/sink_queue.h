/* The bounded queue between the sampling thread (the one producer) and a
 * sink's thread (the one consumer). The producer never waits for the
 * consumer, not even for a lock the consumer might hold while preempted:
 *
 *   producer: backlog (private) ──> ring (lock-free, single producer and consumer) ──> consumer
 *             free buffers <──────────── returned buffers (lock-free) <────────────────┘
 *
 * Frames are copied into preallocated buffers (with their metric values and
 * the series that start or end with them);
 * items pass through a ring of fixed size. When the ring is full, or its
 * buffers are all out, items wait in the producer's private backlog, and
 * that is where merging happens: a new frame is merged into the newest
 * backlog frame (frame_merge: counters summed, intervals joined, gauges
 * latest), or, when an event came after that one, two adjacent backlog frames
 * with no event between them merge to make room - so an event always stays
 * between the frames it came between. There always is such a pair: the
 * producer keeps SINK_QUEUE_BACKLOG buffers for the backlog, and the backlog
 * holds fewer events than that (sink_queue_event_room says no before; the
 * caller keeps its input for the next frame). Every put first moves what the
 * ring has room for out of the backlog, in order. Merged frames get their
 * metric values recomputed by the consumer, off the sampling thread.
 *
 * With `wait` (frames read from a file) nothing is merged: a put waits for
 * room instead. No call allocates, but for a frame's list of series changes
 * longer than any before (processes starting by the hundred).
 *
 * Merging with series that come and go: a series that starts with the newer
 * frame takes its sample from it; one that ended with the older keeps its
 * last values from it. The sampler reuses a retired index only once every
 * sink is done with the frame that retired it (sink_queue.done), so an index
 * never means two series within one merged frame. */
#ifndef MEMSCOPE_SINK_QUEUE_H
#define MEMSCOPE_SINK_QUEUE_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "metrics/metrics.h"
#include "sampler/frame.h"
#include "sinks/sink.h"
#include "util/error.h"

/* Frame buffers the producer keeps for its backlog (it then holds fewer
 * events than this). */
#define SINK_QUEUE_BACKLOG 2
/* Events the ring holds besides its frames: a burst of control input (a
 * thousand labels at once) fits. */
#define SINK_QUEUE_EVENTS 1024

struct sink_frame_buf {
	struct frame frame;             /* grows with the table (frame_fit), never moves */
	struct metric_values *values;   /* NULL without an engine */
	/* The frame's series changes (frame.changes points here when there are
	 * any; a merged frame has those of every frame it stands for). The lists
	 * grow when a frame has more changes than any before, and only then. */
	struct series_changes changes;
	int *added, *retired;
	int cap_added, cap_retired;
	struct sample *saved;           /* merge scratch: samples of series retired in the frame */
	int cap_saved;
};

enum sink_item_kind { SINK_ITEM_FRAME, SINK_ITEM_EVENT, SINK_ITEM_SAMPLES };

struct sink_item {
	enum sink_item_kind kind;
	struct sink_frame_buf *buf;     /* SINK_ITEM_FRAME */
	uint64_t merged;                /* sampler frames it stands for */
	bool last;
	bool stale;                     /* merged: values to recompute */
	struct sink_event event;        /* SINK_ITEM_EVENT */
	struct sample_batch *samples;   /* SINK_ITEM_SAMPLES: a reference the consumer lets go of */
};

struct sink_queue_stats {
	uint64_t frames_in;             /* frames put */
	uint64_t frames_out;            /* frames taken (each may stand for several) */
	uint64_t frames_merged;         /* frames put that were taken merged with others */
	uint64_t recomputed;            /* metric computations for merged frames */
	uint64_t waits;                 /* puts that waited for room (files only) */
	uint64_t events_refused;        /* put_event without room */
	uint64_t samples_dropped;       /* samples in batches refused: the consumer was behind */
	uint64_t changes_lost;          /* series changes a list could not grow for (out of memory) */
	int deepest;                    /* most frames queued at once */
};

struct sink_queue {
	const struct series_table *table;
	const struct metric_engine *engine;
	bool wait;
	/* Shared: the ring of items, and the buffers coming back. */
	struct sink_item *ring;
	int ring_cap;
	_Atomic uint64_t head, tail;    /* consumer, producer */
	struct sink_frame_buf **returned;
	int returned_cap;
	_Atomic uint64_t returned_head, returned_tail; /* producer, consumer */
	sem_t items;                    /* posted to wake the waiting consumer, and at close */
	sem_t space;                    /* posted per take while the producer waits for room */
	atomic_bool want_space;         /* the producer waits (wait mode, or closing) */
	_Atomic uint64_t wake_at;       /* ... until the consumer has taken this many frames */
	_Atomic uint64_t frames_taken;  /* by the consumer */
	atomic_bool want_items;         /* the consumer waits on an empty ring */
	atomic_bool closed;
	bool sems;
	/* The producer's own. */
	struct sink_item *backlog;
	int backlog_cap, backlog_count, backlog_frames, backlog_events;
	struct sink_frame_buf **free_bufs;
	int nr_free;
	int frames_out_there;           /* frames published and not yet returned */
	uint64_t frames_published;
	int wake_every;                 /* live: wake a waiting consumer per this many frames */
	struct sink_frame_buf *bufs;
	int nr_bufs;
	/* The consumer's own. */
	struct sink_frame_buf *held;    /* taken last; returned at the next take */
	uint64_t sleeps;                /* takes that slept on an empty ring */
	/* 1 + the seq of the newest frame put; of the newest the consumer has
	 * finished with (sink_queue_done): when they are equal, the consumer
	 * holds no frame at all. */
	uint64_t put_next;
	_Atomic uint64_t done_next;
	struct sink_queue_stats in, out;  /* producer's counters, consumer's counters */
};

/* frames: how many frames the ring holds (>= 1). engine may be NULL. */
int sink_queue_init(struct sink_queue *q, int frames, const struct series_table *table,
		    const struct metric_engine *engine, bool wait, struct ms_error *err);
void sink_queue_fini(struct sink_queue *q);

/* Producer side. values: the frame's, computed once by the session (NULL
 * without an engine). */
void sink_queue_put_frame(struct sink_queue *q, const struct frame *frame, const struct metric_values *values,
			  bool last);
/* 0, or -1 when no event can be queued now (never in wait mode: it waits). */
int sink_queue_put_event(struct sink_queue *q, const struct sink_event *ev);
/* A batch of samples, in order with the frames, never merged. Live, a batch
 * goes in only when nothing waits in the backlog and the ring has room (the
 * sink keeps up); else it is refused and its samples counted as dropped for
 * this sink (-1). Wait mode (files) waits for room. The queue takes its own
 * reference. */
int sink_queue_put_samples(struct sink_queue *q, struct sample_batch *batch);
/* Can put_event take one more now? */
bool sink_queue_event_room(struct sink_queue *q);
/* Everything is put: the backlog goes into the ring (waiting for room: the
 * run is over), then take returns false once the ring is empty. */
void sink_queue_close(struct sink_queue *q);

/* Live mode, producer side: wake a waiting consumer once per `frames`
 * frames (at least 1, at most half the queue) instead of per frame; events,
 * the last frame and the close still wake it at once. For short intervals:
 * a consumer woken per 10 ms instead of per ms takes the same frames, in
 * order, with fewer thread switches. */
void sink_queue_set_wake_every(struct sink_queue *q, int frames);

/* Consumer side: wait for the next item, in order. A frame's buffer stays
 * the consumer's until its next take (its values recomputed when merged).
 * false when the queue is closed and empty. */
bool sink_queue_take(struct sink_queue *q, struct sink_item *item);
/* Consumer side: nothing is queued now (a take would wait). */
bool sink_queue_empty(struct sink_queue *q);

/* Consumer: done with the frame item it took last (its seq): the producer
 * may now reuse what it retired. */
void sink_queue_done(struct sink_queue *q, uint64_t seq);
/* Producer: the oldest frame seq the consumer may still read (every frame
 * before it is done with), or UINT64_MAX when it is done with all put. */
uint64_t sink_queue_readers_done(const struct sink_queue *q);

/* The counters of both sides (once the consumer has stopped taking). */
void sink_queue_stats(const struct sink_queue *q, struct sink_queue_stats *out);

#endif
