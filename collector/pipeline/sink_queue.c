#include "pipeline/sink_queue.h"
#include "util/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sink_queue_init(struct sink_queue *q, int frames, const struct series_table *table,
		    const struct metric_engine *engine, bool wait, struct ms_error *err)
{
	memset(q, 0, sizeof(*q));
	if (frames < 1)
		frames = 1;
	q->table = table;
	q->engine = engine;
	q->wait = wait;
	q->wake_every = 1;
	/* The ring's frames, the backlog's, and the one the consumer holds. */
	q->nr_bufs = frames + SINK_QUEUE_BACKLOG + 1;
	q->ring_cap = frames + SINK_QUEUE_BACKLOG + SINK_QUEUE_EVENTS;
	q->returned_cap = q->nr_bufs;
	q->backlog_cap = q->nr_bufs + SINK_QUEUE_BACKLOG;
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	atomic_init(&q->returned_head, 0);
	atomic_init(&q->returned_tail, 0);
	atomic_init(&q->closed, false);
	atomic_init(&q->done_next, 0);
	atomic_init(&q->want_space, false);
	atomic_init(&q->wake_at, 0);
	atomic_init(&q->frames_taken, 0);
	atomic_init(&q->want_items, false);
	q->ring = calloc((size_t)q->ring_cap, sizeof(*q->ring));
	q->returned = calloc((size_t)q->returned_cap, sizeof(*q->returned));
	q->backlog = calloc((size_t)q->backlog_cap, sizeof(*q->backlog));
	q->bufs = calloc((size_t)q->nr_bufs, sizeof(*q->bufs));
	q->free_bufs = calloc((size_t)q->nr_bufs, sizeof(*q->free_bufs));
	if (!q->ring || !q->returned || !q->backlog || !q->bufs || !q->free_bufs)
		goto oom;
	for (int i = 0; i < q->nr_bufs; i++) {
		/* From a file a buffer is grown only by the side that holds it
		 * (nothing merges): its samples may move. */
		if ((wait ? frame_init_movable : frame_init)(&q->bufs[i].frame, table->nr) < 0)
			goto oom;
		if (engine && !(q->bufs[i].values = metric_values_new(engine)))
			goto oom;
		q->free_bufs[q->nr_free++] = &q->bufs[i];
	}
	if (sem_init(&q->items, 0, 0) < 0 || sem_init(&q->space, 0, 0) < 0) {
		ms_error_set(err, "sink queue: sem_init: %s", strerror(errno));
		sink_queue_fini(q);
		return -1;
	}
	q->sems = true;
	return 0;
oom:
	ms_error_set(err, "out of memory for a sink queue of %d frames x %d series", frames, table->nr);
	sink_queue_fini(q);
	return -1;
}

void sink_queue_fini(struct sink_queue *q)
{
	/* Sample batches a failed run left in the ring or the backlog. */
	if (q->ring) {
		uint64_t h = atomic_load(&q->head), t = atomic_load(&q->tail);

		for (; h < t; h++)
			if (q->ring[h % (uint64_t)q->ring_cap].kind == SINK_ITEM_SAMPLES)
				sample_batch_unref(q->ring[h % (uint64_t)q->ring_cap].samples);
	}
	for (int i = 0; q->bufs && i < q->nr_bufs; i++) {
		frame_free(&q->bufs[i].frame);
		metric_values_free(q->bufs[i].values);
		free(q->bufs[i].added);
		free(q->bufs[i].retired);
		free(q->bufs[i].saved);
	}
	if (q->sems) {
		sem_destroy(&q->items);
		sem_destroy(&q->space);
	}
	free(q->ring);
	free(q->returned);
	free(q->backlog);
	free(q->bufs);
	free(q->free_bufs);
	memset(q, 0, sizeof(*q));
}

/* ---- Producer ---- */

/* Add src's changes to the buffer's lists (after what they hold). A list
 * that cannot grow keeps what it has: the changes it misses are counted. */
static void add_changes(struct sink_queue *q, struct sink_frame_buf *b, const struct series_changes *src)
{
	struct series_changes *c = &b->changes;

	if (src && src->nr_added) {
		if (array_grow_int(&b->added, &b->cap_added, c->nr_added + src->nr_added, sizeof(int)) == 0) {
			memcpy(b->added + c->nr_added, src->added, sizeof(int) * (size_t)src->nr_added);
			c->nr_added += src->nr_added;
		} else {
			q->in.changes_lost += (uint64_t)src->nr_added;
		}
	}
	if (src && src->nr_retired) {
		if (array_grow_int(&b->retired, &b->cap_retired, c->nr_retired + src->nr_retired, sizeof(int)) == 0) {
			memcpy(b->retired + c->nr_retired, src->retired, sizeof(int) * (size_t)src->nr_retired);
			c->nr_retired += src->nr_retired;
		} else {
			q->in.changes_lost += (uint64_t)src->nr_retired;
		}
	}
	c->added = b->added;
	c->retired = b->retired;
	b->frame.changes = c->nr_added || c->nr_retired ? c : NULL;
}

/* frame into buffer b, which held nothing of interest. */
static void copy_into(struct sink_queue *q, struct sink_frame_buf *b, const struct frame *frame,
		      const struct metric_values *values)
{
	frame_fit(&b->frame, frame->nr);
	frame_copy(&b->frame, frame);
	if (b->values && values)
		metric_values_copy(b->values, values);
	b->changes = (struct series_changes){ 0 };
	add_changes(q, b, frame->changes);
}

/* next, the frame that came right after b's, into b (see the header for
 * series that start or end). */
static void merge_into(struct sink_queue *q, struct sink_frame_buf *b, const struct frame *next)
{
	const struct series_changes *ended = &b->changes;
	int nr_saved = ended->nr_retired;

	frame_fit(&b->frame, next->nr);
	if (array_grow_int(&b->saved, &b->cap_saved, nr_saved, sizeof(struct sample)) < 0)
		nr_saved = 0;
	for (int k = 0; k < nr_saved; k++)
		b->saved[k] = b->frame.samples[ended->retired[k]];
	frame_merge(&b->frame, next, q->table);
	for (int k = 0; k < nr_saved; k++)
		b->frame.samples[ended->retired[k]] = b->saved[k];
	for (int k = 0; next->changes && k < next->changes->nr_added; k++) {
		int i = next->changes->added[k];

		b->frame.samples[i] = next->samples[i];
	}
	add_changes(q, b, next->changes);
}

/* Buffers the consumer is done with. */
static void reclaim(struct sink_queue *q)
{
	uint64_t h = atomic_load_explicit(&q->returned_head, memory_order_relaxed);
	uint64_t t = atomic_load_explicit(&q->returned_tail, memory_order_acquire);

	for (; h < t; h++) {
		q->free_bufs[q->nr_free++] = q->returned[h % (uint64_t)q->returned_cap];
		q->frames_out_there--;
	}
	atomic_store_explicit(&q->returned_head, h, memory_order_release);
}

static bool ring_room(struct sink_queue *q)
{
	uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);

	return t - atomic_load_explicit(&q->head, memory_order_acquire) < (uint64_t)q->ring_cap;
}

static void publish(struct sink_queue *q, const struct sink_item *item)
{
	uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);

	q->ring[t % (uint64_t)q->ring_cap] = *item;
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	if (item->kind == SINK_ITEM_FRAME) {
		q->frames_out_there++;
		q->frames_published++;
	}
	/* A consumer that empties the ring asks to be woken (want_items); it is
	 * woken at an event, the last frame, the end, and otherwise once enough
	 * frames are queued: from a file half the buffers (the reader never stops
	 * short of that: it only waits for room, which there is until then), live
	 * wake_every frames (fewer than the buffers: nothing merges meanwhile). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&q->want_items) &&
	    (item->kind != SINK_ITEM_FRAME || item->last ||
	     q->frames_published - atomic_load(&q->frames_taken) >=
		     (uint64_t)(q->wait ? q->nr_bufs / 2 : q->wake_every)) &&
	    atomic_exchange(&q->want_items, false))
		sem_post(&q->items);
}

static bool room_for(struct sink_queue *q, bool frame)
{
	reclaim(q);
	return ring_room(q) && (!frame || q->nr_free > 0);
}

static void sleep_on(sem_t *sem)
{
	while (sem_wait(sem) < 0 && errno == EINTR)
		;
}

/* Wait mode, and the end of a run: wait until the consumer made room. It
 * posts `space` only when asked (want_space), checked after a full fence on
 * both sides, so no wake-up is lost; whoever clears want_space owns the
 * request, so exactly one post answers it and none is left over for a later
 * wait. The consumer posts only once it has taken all but half of the frames
 * queued (wake_at): a file is read much faster than a sink takes it, and a
 * wake-up for each frame taken costs more than reading the frame. */
static void wait_for_room(struct sink_queue *q, bool frame)
{
	uint64_t half = (uint64_t)q->nr_bufs / 2;

	while (!room_for(q, frame)) {
		atomic_store(&q->wake_at, q->frames_published > half ? q->frames_published - half : 0);
		atomic_store(&q->want_space, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (room_for(q, frame)) {
			/* Withdraw the request; if the consumer took it first, its post is on the way. */
			if (!atomic_exchange(&q->want_space, false))
				sleep_on(&q->space);
			return;
		}
		q->in.waits++;
		sleep_on(&q->space);
	}
}

static void note_depth(struct sink_queue *q)
{
	int queued = q->frames_out_there + q->backlog_frames;

	if (queued > q->in.deepest)
		q->in.deepest = queued;
}

static void backlog_remove(struct sink_queue *q, int at)
{
	if (q->backlog[at].kind == SINK_ITEM_FRAME)
		q->backlog_frames--;
	else
		q->backlog_events--;
	memmove(&q->backlog[at], &q->backlog[at + 1], sizeof(*q->backlog) * (size_t)(q->backlog_count - at - 1));
	q->backlog_count--;
}

/* Move what the ring takes out of the backlog, in order. A frame leaves only
 * when the producer still holds SINK_QUEUE_BACKLOG buffers without it
 * (free or in the backlog): room to merge, whatever comes. */
static void flush(struct sink_queue *q)
{
	reclaim(q);
	while (q->backlog_count && ring_room(q)) {
		if (q->backlog[0].kind == SINK_ITEM_FRAME && q->nr_free + q->backlog_frames - 1 < SINK_QUEUE_BACKLOG)
			break;
		publish(q, &q->backlog[0]);
		backlog_remove(q, 0);
	}
}

/* b, the backlog item right after a, into a. */
static void merge_backlog(struct sink_queue *q, int a, int b)
{
	struct sink_item *older = &q->backlog[a], *newer = &q->backlog[b];

	merge_into(q, older->buf, &newer->buf->frame);
	older->merged += newer->merged;
	older->last = newer->last;
	older->stale = true;
	q->free_bufs[q->nr_free++] = newer->buf;
	backlog_remove(q, b);
}

static void fill(struct sink_queue *q, struct sink_item *item, const struct frame *frame,
		 const struct metric_values *values, bool last)
{
	memset(item, 0, sizeof(*item));
	item->kind = SINK_ITEM_FRAME;
	item->buf = q->free_bufs[--q->nr_free];
	copy_into(q, item->buf, frame, values);
	item->merged = 1;
	item->last = last;
}

static void put_frame_waiting(struct sink_queue *q, const struct frame *frame, const struct metric_values *values,
			      bool last)
{
	struct sink_item item;

	wait_for_room(q, true);
	fill(q, &item, frame, values, last);
	publish(q, &item);
	note_depth(q);
}

void sink_queue_put_frame(struct sink_queue *q, const struct frame *frame, const struct metric_values *values,
			  bool last)
{
	struct sink_item *tail;

	q->in.frames_in++;
	q->put_next = frame->seq + 1;
	if (q->wait) {
		put_frame_waiting(q, frame, values, last);
		return;
	}
	flush(q);
	if (!q->backlog_count && ring_room(q) && q->nr_free - 1 >= SINK_QUEUE_BACKLOG) {
		struct sink_item item;

		fill(q, &item, frame, values, last);
		publish(q, &item);
		note_depth(q);
		return;
	}
	if (q->nr_free == 0) {
		/* Every buffer is out: merge. The backlog then holds at least
		 * SINK_QUEUE_BACKLOG frames and fewer events (see the header). */
		tail = &q->backlog[q->backlog_count - 1];
		if (tail->kind != SINK_ITEM_FRAME) {
			for (int i = q->backlog_count - 1; i > 0; i--)
				if (q->backlog[i].kind == SINK_ITEM_FRAME && q->backlog[i - 1].kind == SINK_ITEM_FRAME) {
					merge_backlog(q, i - 1, i);
					break;
				}
		} else {
			merge_into(q, tail->buf, frame);
			tail->merged++;
			tail->last = last;
			tail->stale = true;
			return;
		}
	}
	fill(q, &q->backlog[q->backlog_count++], frame, values, last);
	q->backlog_frames++;
	note_depth(q);
}

bool sink_queue_event_room(struct sink_queue *q)
{
	if (q->wait)
		return true;
	flush(q);
	return (!q->backlog_count && ring_room(q)) || q->backlog_events < SINK_QUEUE_BACKLOG - 1;
}

/* An event or a sample batch goes in at once when the queue may wait (a
 * file) or has room behind no backlog; false leaves it to the caller. */
static bool publish_now(struct sink_queue *q, const struct sink_item *item)
{
	if (q->wait) {
		wait_for_room(q, false);
		publish(q, item);
		return true;
	}
	flush(q);
	if (!q->backlog_count && ring_room(q)) {
		publish(q, item);
		return true;
	}
	return false;
}

int sink_queue_put_event(struct sink_queue *q, const struct sink_event *ev)
{
	struct sink_item item = { .kind = SINK_ITEM_EVENT, .event = *ev };

	if (publish_now(q, &item))
		return 0;
	if (q->backlog_events >= SINK_QUEUE_BACKLOG - 1) {
		q->in.events_refused++;
		return -1;
	}
	q->backlog[q->backlog_count++] = item;
	q->backlog_events++;
	return 0;
}

int sink_queue_put_samples(struct sink_queue *q, struct sample_batch *batch)
{
	struct sink_item item = { .kind = SINK_ITEM_SAMPLES, .samples = batch };

	sample_batch_ref(batch);
	/* Behind a backlog it is refused and counted: published, it would jump
	 * ahead of the frames waiting there. */
	if (publish_now(q, &item))
		return 0;
	q->in.samples_dropped += batch->nr_samples;
	sample_batch_unref(batch);
	return -1;
}

void sink_queue_close(struct sink_queue *q)
{
	/* The run is over: waiting for the consumer is fine now. */
	while (q->backlog_count) {
		wait_for_room(q, false);
		publish(q, &q->backlog[0]);
		backlog_remove(q, 0);
	}
	atomic_store_explicit(&q->closed, true, memory_order_release);
	sem_post(&q->items);
}

void sink_queue_set_wake_every(struct sink_queue *q, int frames)
{
	int most = q->nr_bufs / 2;

	q->wake_every = frames < 1 ? 1 : frames > most ? most : frames;
	if (q->wake_every < 1)
		q->wake_every = 1;
}

/* ---- Consumer ---- */

static void made_room(struct sink_queue *q)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&q->want_space) && atomic_load(&q->frames_taken) >= atomic_load(&q->wake_at) &&
	    atomic_exchange(&q->want_space, false))
		sem_post(&q->space);
}

bool sink_queue_take(struct sink_queue *q, struct sink_item *item)
{
	uint64_t h, t;

	/* The frame taken last time is done with: back to the producer. */
	if (q->held) {
		t = atomic_load_explicit(&q->returned_tail, memory_order_relaxed);
		q->returned[t % (uint64_t)q->returned_cap] = q->held;
		atomic_store_explicit(&q->returned_tail, t + 1, memory_order_release);
		q->held = NULL;
		made_room(q);
	}
	for (;;) {
		/* Ask to be woken only when the ring is empty (see publish). */
		h = atomic_load_explicit(&q->head, memory_order_relaxed);
		if (h < atomic_load_explicit(&q->tail, memory_order_acquire))
			break;
		atomic_store(&q->want_items, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (h < atomic_load(&q->tail) || atomic_load(&q->closed)) {
			/* Withdraw; if the producer took the request first, its post is on the way. */
			if (!atomic_exchange(&q->want_items, false)) {
				q->sleeps++;
				sleep_on(&q->items);
			}
		} else {
			q->sleeps++;
			sleep_on(&q->items);
		}
		h = atomic_load_explicit(&q->head, memory_order_relaxed);
		t = atomic_load_explicit(&q->tail, memory_order_acquire);
		if (h < t)
			break;
		if (atomic_load_explicit(&q->closed, memory_order_acquire)) {
			sem_post(&q->items);      /* a later take sees the end too */
			return false;
		}
	}
	*item = q->ring[h % (uint64_t)q->ring_cap];
	if (item->kind == SINK_ITEM_FRAME)
		atomic_fetch_add(&q->frames_taken, 1);
	atomic_store_explicit(&q->head, h + 1, memory_order_release);
	made_room(q);
	if (item->kind != SINK_ITEM_FRAME)
		return true;
	q->held = item->buf;
	q->out.frames_out++;
	if (item->merged > 1)
		q->out.frames_merged += item->merged;
	/* Recompute a merged frame's metrics here, on the sink's thread. */
	if (item->stale && q->engine && item->buf->values) {
		metric_engine_compute(q->engine, &item->buf->frame, item->buf->values);
		q->out.recomputed++;
	}
	return true;
}

bool sink_queue_empty(struct sink_queue *q)
{
	return atomic_load_explicit(&q->head, memory_order_relaxed) >=
	       atomic_load_explicit(&q->tail, memory_order_acquire);
}

void sink_queue_done(struct sink_queue *q, uint64_t seq)
{
	atomic_store_explicit(&q->done_next, seq + 1, memory_order_release);
}

uint64_t sink_queue_readers_done(const struct sink_queue *q)
{
	uint64_t done = atomic_load_explicit(&q->done_next, memory_order_acquire);

	return done >= q->put_next ? UINT64_MAX : done;
}

void sink_queue_stats(const struct sink_queue *q, struct sink_queue_stats *out)
{
	*out = q->in;
	out->frames_out = q->out.frames_out;
	out->frames_merged = q->out.frames_merged;
	out->recomputed = q->out.recomputed;
}
