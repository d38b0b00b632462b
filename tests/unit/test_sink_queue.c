/* The sink queue: a sink that falls behind gets frames merged (values worked
 * out by hand below), events keep their place between frames, and frames
 * from a file wait instead of merging. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pipeline/sink_queue.h"

/* Two counters and a gauge. */
static void make_table(struct series_table *t)
{
	memset(t, 0, sizeof(*t));
	series_table_add(t, "page-faults", "", 1, SERIES_COUNTER, NULL);
	series_table_add(t, "cycles", "", 1, SERIES_COUNTER, NULL);
	series_table_add(t, "nr_free_pages", "", 1, SERIES_GAUGE, NULL);
}

static void set_frame(struct frame *f, uint64_t seq, uint64_t faults, uint64_t cycles, uint64_t enabled,
		      uint64_t running, uint64_t free_pages, bool cycles_valid, bool free_valid)
{
	f->seq = seq;
	f->time_ns = (seq + 1) * 50000000ull;
	f->interval_ns = 50000000ull;
	f->samples[0] = (struct sample){ faults, 50000000ull, 50000000ull, true };
	f->samples[1] = (struct sample){ cycles, enabled, running, cycles_valid };
	f->samples[2] = (struct sample){ free_pages, 0, 0, free_valid };
}

/* Frames a queue takes before it merges: every buffer (the ring's, the
 * backlog's, the consumer's) filled. */
static int unmerged(const struct sink_queue *q)
{
	return q->nr_bufs;
}

static void test_merge_arithmetic(void)
{
	struct series_table t;
	struct sink_queue q;
	struct frame f;
	struct sink_item item;
	struct sink_queue_stats st;
	struct ms_error err = { "" };
	int fillers;
	uint64_t a;

	make_table(&t);
	frame_init(&f, t.nr);
	CHECK(sink_queue_init(&q, 2, &t, NULL, false, &err) == 0);
	/* Nobody takes: fillers, then A takes the last buffer; B and C merge into A. */
	fillers = unmerged(&q) - 1;
	for (int i = 0; i < fillers; i++) {
		set_frame(&f, (uint64_t)i, 1, 10, 100, 100, 500, true, true);
		sink_queue_put_frame(&q, &f, NULL, false);
	}
	a = (uint64_t)fillers;
	set_frame(&f, a, 20, 2000, 100, 50, 400, true, true);
	sink_queue_put_frame(&q, &f, NULL, false);
	set_frame(&f, a + 1, 30, 3000, 100, 25, 300, true, false);
	sink_queue_put_frame(&q, &f, NULL, false);
	set_frame(&f, a + 2, 40, 4000, 100, 100, 200, true, true);
	f.interval_ns = 20000000ull;     /* a partial last interval */
	sink_queue_put_frame(&q, &f, NULL, true);

	/* What the ring holds now; the backlog follows at close. */
	for (int i = 0; i < fillers; i++) {
		if (i == 3)
			sink_queue_close(&q);
		CHECK(sink_queue_take(&q, &item));
		CHECK_EQ_INT(item.kind, SINK_ITEM_FRAME);
		CHECK_EQ_U64(item.merged, 1);
		CHECK_EQ_U64(item.buf->frame.seq, (uint64_t)i);
		CHECK_EQ_U64(item.buf->frame.samples[0].value, 1);
		CHECK(!item.last);
	}
	CHECK(sink_queue_take(&q, &item));
	CHECK_EQ_U64(item.merged, 3);
	CHECK(item.last);
	CHECK(item.stale);
	/* Counters: 20 + 30 + 40 faults; times summed: 3 x 50 ms enabled and running. */
	CHECK_EQ_U64(item.buf->frame.samples[0].value, 90);
	CHECK_EQ_U64(item.buf->frame.samples[0].enabled_ns, 150000000ull);
	CHECK_EQ_U64(item.buf->frame.samples[0].running_ns, 150000000ull);
	CHECK(item.buf->frame.samples[0].valid);
	/* Multiplexed: 9000 cycles counted in 175 of 300 ns: scaled as one
	 * interval, 9000 * 300 / 175. */
	CHECK_EQ_U64(item.buf->frame.samples[1].value, 9000);
	CHECK_EQ_U64(item.buf->frame.samples[1].enabled_ns, 300);
	CHECK_EQ_U64(item.buf->frame.samples[1].running_ns, 175);
	CHECK_NEAR(sample_scaled(&item.buf->frame.samples[1]), 9000.0 * 300 / 175, 1e-9);
	/* The gauge: the latest reading (C's), valid although B's was not. */
	CHECK_EQ_U64(item.buf->frame.samples[2].value, 200);
	CHECK(item.buf->frame.samples[2].valid);
	/* The interval covers all three; time and seq are the latest. */
	CHECK_EQ_U64(item.buf->frame.interval_ns, 120000000ull);
	CHECK_EQ_U64(item.buf->frame.time_ns, (a + 3) * 50000000ull);
	CHECK_EQ_U64(item.buf->frame.seq, a + 2);

	CHECK(!sink_queue_take(&q, &item));
	sink_queue_stats(&q, &st);
	CHECK_EQ_U64(st.frames_in, (uint64_t)fillers + 3);
	CHECK_EQ_U64(st.frames_out, (uint64_t)fillers + 1);
	CHECK_EQ_U64(st.frames_merged, 3);
	CHECK_EQ_INT(st.deepest, fillers + 1);
	sink_queue_fini(&q);
	frame_free(&f);
	series_table_free(&t);
}

/* A counter not read in one of the merged intervals: the sum misses it, so
 * the merged sample is not valid; a gauge whose latest reading failed is
 * not valid either. */
static void test_merge_validity(void)
{
	struct series_table t;
	struct frame a, b;

	make_table(&t);
	frame_init(&a, t.nr);
	frame_init(&b, t.nr);
	set_frame(&a, 0, 1, 5, 10, 10, 7, false, true);
	set_frame(&b, 1, 2, 6, 10, 10, 8, true, false);
	frame_merge(&a, &b, &t);
	CHECK(a.samples[0].valid);
	CHECK_EQ_U64(a.samples[0].value, 3);
	CHECK(!a.samples[1].valid);
	CHECK_EQ_U64(a.samples[2].value, 8);
	CHECK(!a.samples[2].valid);
	frame_free(&a);
	frame_free(&b);
	series_table_free(&t);
}

static void put_label(struct sink_queue *q, const char *text, int expect)
{
	struct sink_event ev = { .kind = SINK_EVENT_LABEL };

	snprintf(ev.text, sizeof(ev.text), "%s", text);
	CHECK_EQ_INT(sink_queue_put_event(q, &ev), expect);
}

static void expect_frame(struct sink_queue *q, uint64_t seq, uint64_t merged, uint64_t faults)
{
	struct sink_item item;

	CHECK(sink_queue_take(q, &item));
	CHECK_EQ_INT(item.kind, SINK_ITEM_FRAME);
	if (item.kind != SINK_ITEM_FRAME)
		return;
	CHECK_EQ_U64(item.buf->frame.seq, seq);
	CHECK_EQ_U64(item.merged, merged);
	CHECK_EQ_U64(item.buf->frame.samples[0].value, faults);
}

static void expect_label(struct sink_queue *q, const char *text)
{
	struct sink_item item;

	CHECK(sink_queue_take(q, &item));
	CHECK_EQ_INT(item.kind, SINK_ITEM_EVENT);
	CHECK_EQ_STR(item.event.text, text);
}

/* Events never merge and never move across a frame: when the newest item
 * is an event, the two newest frames with no event between them merge. */
static void test_event_order(void)
{
	struct series_table t;
	struct sink_queue q;
	struct frame f;
	struct ms_error err = { "" };
	uint64_t n = 0;

	make_table(&t);
	frame_init(&f, t.nr);
	CHECK(sink_queue_init(&q, 2, &t, NULL, false, &err) == 0);
	CHECK_EQ_INT(unmerged(&q), 5);
#define PUT() do { set_frame(&f, n, n + 1, 0, 1, 1, 0, true, true); n++; \
		   sink_queue_put_frame(&q, &f, NULL, false); } while (0)
	/* 0, 1, 2 go into the ring; 3 and 4 wait in the backlog (its two buffers). */
	PUT(); PUT(); PUT(); PUT(); PUT();
	put_label(&q, "A", 0);
	/* One event is all two backlog buffers allow. */
	CHECK(!sink_queue_event_room(&q));
	put_label(&q, "B", -1);
	/* No buffer left, newest is A: 3 and 4 merge to make room for 5. */
	PUT();                      /* 5 */
	/* Newest is now frame 5: 6 merges into it. */
	PUT();                      /* 6 */
#undef PUT
	expect_frame(&q, 0, 1, 1);
	expect_frame(&q, 1, 1, 2);
	expect_frame(&q, 2, 1, 3);
	sink_queue_close(&q);
	expect_frame(&q, 4, 2, 4 + 5);
	expect_label(&q, "A");
	expect_frame(&q, 6, 2, 6 + 7);
	sink_queue_fini(&q);
	frame_free(&f);
	series_table_free(&t);
}

/* Series that come and go: merging B into A, a series A retired keeps A's
 * last values; one B added takes B's sample; the merged frame lists both
 * changes. */
static void test_merge_series_changes(void)
{
	struct series_table t;
	struct sink_queue q;
	struct frame f;
	struct sink_item item;
	struct ms_error err = { "" };
	int retired_a[] = { 1 }, added_b[] = { 3 };
	struct series_changes ca = { NULL, 0, retired_a, 1 }, cb = { added_b, 1, NULL, 0 };
	int fillers;

	make_table(&t);
	series_table_add(&t, "proc.faults", "", 1, SERIES_COUNTER, NULL);
	frame_init(&f, 3);
	CHECK(sink_queue_init(&q, 1, &t, NULL, false, &err) == 0);
	fillers = unmerged(&q) - 1;
	for (int i = 0; i < fillers; i++) {
		set_frame(&f, (uint64_t)i, 1, 10, 100, 100, 500, true, true);
		sink_queue_put_frame(&q, &f, NULL, false);
	}
	/* A: series 1 (cycles) ends with it, at 5. */
	set_frame(&f, (uint64_t)fillers, 2, 5, 100, 100, 400, true, true);
	f.changes = &ca;
	sink_queue_put_frame(&q, &f, NULL, false);
	/* B: the frame is longer; series 3 starts with it at 7; 1 is retired (invalid). */
	frame_fit(&f, 4);
	set_frame(&f, (uint64_t)fillers + 1, 3, 0, 100, 100, 300, false, true);
	f.samples[3] = (struct sample){ 7, 100, 100, true };
	f.changes = &cb;
	sink_queue_put_frame(&q, &f, NULL, true);
	f.changes = NULL;
	for (int i = 0; i < fillers; i++) {
		if (i == 1)
			sink_queue_close(&q);
		CHECK(sink_queue_take(&q, &item));
		CHECK_EQ_U64(item.merged, 1);
		CHECK(item.buf->frame.changes == NULL);
	}
	CHECK(sink_queue_take(&q, &item));
	CHECK_EQ_U64(item.merged, 2);
	CHECK_EQ_INT(item.buf->frame.nr, 4);
	CHECK_EQ_U64(item.buf->frame.samples[0].value, 5);
	CHECK(item.buf->frame.samples[1].valid);
	CHECK_EQ_U64(item.buf->frame.samples[1].value, 5);
	CHECK(item.buf->frame.samples[3].valid);
	CHECK_EQ_U64(item.buf->frame.samples[3].value, 7);
	CHECK(item.buf->frame.changes != NULL);
	if (item.buf->frame.changes) {
		CHECK_EQ_INT(item.buf->frame.changes->nr_retired, 1);
		CHECK_EQ_INT(item.buf->frame.changes->retired[0], 1);
		CHECK_EQ_INT(item.buf->frame.changes->nr_added, 1);
		CHECK_EQ_INT(item.buf->frame.changes->added[0], 3);
	}
	CHECK(!sink_queue_take(&q, &item));
	sink_queue_fini(&q);
	frame_free(&f);
	series_table_free(&t);
}

struct producer {
	struct sink_queue *q;
	const struct series_table *t;
	int frames;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct frame f;

	frame_init(&f, p->t->nr);
	for (int i = 0; i < p->frames; i++) {
		set_frame(&f, (uint64_t)i, (uint64_t)i + 1, 0, 1, 1, 0, true, true);
		sink_queue_put_frame(p->q, &f, NULL, i == p->frames - 1);
		if (i == 3) {
			struct sink_event ev = { .kind = SINK_EVENT_LABEL, .text = "middle" };

			sink_queue_put_event(p->q, &ev);
		}
	}
	sink_queue_close(p->q);
	frame_free(&f);
	return NULL;
}

/* Frames from a file: the producer waits for the consumer, every frame
 * arrives alone and in order. */
static void test_wait_mode(void)
{
	struct series_table t;
	struct sink_queue q;
	struct sink_item item;
	struct sink_queue_stats st;
	struct ms_error err = { "" };
	struct producer p = { &q, &t, 40 };
	pthread_t thread;
	uint64_t next = 0, sum = 0;
	bool label_seen = false;

	make_table(&t);
	CHECK(sink_queue_init(&q, 2, &t, NULL, true, &err) == 0);
	pthread_create(&thread, NULL, produce, &p);
	while (sink_queue_take(&q, &item)) {
		if (item.kind == SINK_ITEM_EVENT) {
			/* After frame 3, before frame 4. */
			CHECK_EQ_U64(next, 4);
			label_seen = true;
			continue;
		}
		CHECK_EQ_U64(item.merged, 1);
		CHECK_EQ_U64(item.buf->frame.seq, next);
		next++;
		sum += item.buf->frame.samples[0].value;
	}
	pthread_join(thread, NULL);
	CHECK(label_seen);
	CHECK_EQ_U64(next, 40);
	CHECK_EQ_U64(sum, 40 * 41 / 2);
	sink_queue_stats(&q, &st);
	CHECK_EQ_U64(st.frames_merged, 0);
	sink_queue_fini(&q);
	series_table_free(&t);
}

/* From a file the reader is faster than the sink: it sleeps until half
 * the queue is taken, not once per frame (a wake-up each costs more than
 * reading a frame). */
static void test_wait_mode_batches_wake_ups(void)
{
	struct series_table t;
	struct sink_queue q;
	struct sink_item item;
	struct sink_queue_stats st;
	struct ms_error err = { "" };
	struct producer p = { &q, &t, 400 };
	pthread_t thread;
	uint64_t next = 0;
	struct timespec slow = { 0, 100000 };

	make_table(&t);
	CHECK(sink_queue_init(&q, 32, &t, NULL, true, &err) == 0);
	pthread_create(&thread, NULL, produce, &p);
	while (sink_queue_take(&q, &item))
		if (item.kind == SINK_ITEM_FRAME) {
			CHECK_EQ_U64(item.buf->frame.seq, next);
			next++;
			nanosleep(&slow, NULL);
		}
	pthread_join(thread, NULL);
	CHECK_EQ_U64(next, 400);
	sink_queue_stats(&q, &st);
	/* 35 buffers: a wait lets at least 17 frames in. */
	if (st.waits > 400 / 17 + 2)
		CHECK_FAIL("%llu waits for 400 frames", (unsigned long long)st.waits);
	sink_queue_fini(&q);
	series_table_free(&t);
}

struct growing_producer {
	struct sink_queue *q;
	struct series_table *t;
	int frames;
};

/* Every 10 frames 25 series more; sample i of frame n holds n * 10000 + i. */
static void *produce_growing(void *arg)
{
	struct growing_producer *p = arg;
	struct frame f;

	frame_init(&f, p->t->nr);
	for (int n = 0; n < p->frames; n++) {
		if (n && n % 10 == 0)
			for (int k = 0; k < 25; k++)
				series_table_add_live(p->t, "proc.faults", "", 1, SERIES_COUNTER, NULL);
		frame_fit(&f, p->t->nr);
		f.seq = (uint64_t)n;
		f.time_ns = ((uint64_t)n + 1) * 1000000ull;
		f.interval_ns = 1000000ull;
		for (int i = 0; i < f.nr; i++)
			f.samples[i] = (struct sample){ (uint64_t)n * 10000 + (uint64_t)i, 1, 1, true };
		sink_queue_put_frame(p->q, &f, NULL, n == p->frames - 1);
	}
	sink_queue_close(p->q);
	frame_free(&f);
	return NULL;
}

/* From a file the buffers are plain memory that moves as the frames grow
 * (a recording whose series grow): every frame arrives once, in order, with
 * every sample of its own, the last marked last, across many batches of the
 * queue and many growths of each buffer (3 series to 1,228). */
static void test_wait_mode_growing_frames(void)
{
	struct series_table t;
	struct sink_queue q;
	struct sink_item item;
	struct ms_error err = { "" };
	struct growing_producer p = { &q, &t, 500 };
	pthread_t thread;
	uint64_t next = 0, bad = 0, lasts = 0;

	make_table(&t);
	CHECK(sink_queue_init(&q, 8, &t, NULL, true, &err) == 0);
	pthread_create(&thread, NULL, produce_growing, &p);
	while (sink_queue_take(&q, &item)) {
		const struct frame *f = &item.buf->frame;
		int want = 3 + (int)(next / 10) * 25;

		CHECK_EQ_U64(f->seq, next);
		if (f->nr != want)
			CHECK_FAIL("frame %llu has %d series, not %d", (unsigned long long)next, f->nr, want);
		for (int i = 0; i < f->nr; i++)
			if (!f->samples[i].valid || f->samples[i].value != next * 10000 + (uint64_t)i)
				bad++;
		lasts += item.last;
		if (item.last)
			CHECK_EQ_U64(next, 499);
		next++;
	}
	pthread_join(thread, NULL);
	CHECK_EQ_U64(next, 500);
	CHECK_EQ_U64(lasts, 1);
	CHECK_EQ_U64(bad, 0);
	sink_queue_fini(&q);
	series_table_free(&t);
}

struct paced_producer {
	struct sink_queue *q;
	const struct series_table *t;
	int frames;
};

static void *produce_paced(void *arg)
{
	struct paced_producer *p = arg;
	struct frame f;
	struct timespec gap = { 0, 50000 };

	frame_init(&f, p->t->nr);
	for (int i = 0; i < p->frames; i++) {
		set_frame(&f, (uint64_t)i, (uint64_t)i + 1, 0, 1, 1, 0, true, true);
		sink_queue_put_frame(p->q, &f, NULL, i == p->frames - 1);
		nanosleep(&gap, NULL);
	}
	sink_queue_close(p->q);
	frame_free(&f);
	return NULL;
}

/* Live, short intervals: the consumer is woken once per wake_every frames
 * (plus the last frame and the close) and gets every frame in order. On a
 * busy machine the consumer may not run for longer than the queue holds:
 * then frames merge, as live frames must, and nothing is lost either way. */
static void test_live_batches_wake_ups(void)
{
	struct series_table t;
	struct sink_queue q;
	struct sink_item item;
	struct ms_error err = { "" };
	struct paced_producer p = { &q, &t, 400 };
	pthread_t thread;
	uint64_t frames = 0, faults = 0, next = 0, idles = 0;

	make_table(&t);
	CHECK(sink_queue_init(&q, 32, &t, NULL, false, &err) == 0);
	CHECK(sink_queue_empty(&q));
	sink_queue_set_wake_every(&q, 10);
	CHECK_EQ_INT(q.wake_every, 10);
	pthread_create(&thread, NULL, produce_paced, &p);
	while (sink_queue_take(&q, &item))
		if (item.kind == SINK_ITEM_FRAME) {
			uint64_t merged = item.merged > 1 ? item.merged : 1;

			/* In order: a merged frame carries the latest seq of those it holds. */
			CHECK_EQ_U64(item.buf->frame.seq, next + merged - 1);
			next = item.buf->frame.seq + 1;
			frames += merged;
			faults += item.buf->frame.samples[0].value;
			/* Where the runner lets its sinks write out what they buffered. */
			if (sink_queue_empty(&q))
				idles++;
		}
	pthread_join(thread, NULL);
	CHECK_EQ_U64(next, 400);
	/* Empty about once per wake-up (a frame may slip in between the look
	 * and the take), not after every frame. */
	if (idles < 1 || idles > 400 / 4)
		CHECK_FAIL("empty %llu times for 400 frames", (unsigned long long)idles);
	CHECK_EQ_U64(frames, 400);
	CHECK_EQ_U64(faults, 400 * 401 / 2);
	/* One post per request, and only once 10 frames wait (or the last, or the close). */
	if (q.sleeps > 400 / 10 + 2)
		CHECK_FAIL("%llu sleeps for 400 frames woken per 10", (unsigned long long)q.sleeps);
	sink_queue_set_wake_every(&q, 1000);     /* at most half the buffers */
	CHECK_EQ_INT(q.wake_every, q.nr_bufs / 2);
	sink_queue_fini(&q);
	series_table_free(&t);
}

struct live_producer {
	struct sink_queue *q;
	const struct series_table *t;
	int frames;
	int events;                     /* accepted */
};

static void *produce_live(void *arg)
{
	struct live_producer *p = arg;
	struct frame f;

	frame_init(&f, p->t->nr);
	for (int i = 0; i < p->frames; i++) {
		set_frame(&f, (uint64_t)i, (uint64_t)i + 1, 0, 1, 1, 0, true, true);
		sink_queue_put_frame(p->q, &f, NULL, i == p->frames - 1);
		if (i % 7 == 3) {
			struct sink_event ev = { .kind = SINK_EVENT_LABEL };

			snprintf(ev.text, sizeof(ev.text), "%d", i);
			if (sink_queue_event_room(p->q) && sink_queue_put_event(p->q, &ev) == 0)
				p->events++;
		}
	}
	sink_queue_close(p->q);
	frame_free(&f);
	return NULL;
}

/* Live, with a consumer that now and then falls behind: every count arrives
 * (merged or not), each event right after the frame it followed. */
static void test_live_threads(void)
{
	struct series_table t;
	struct sink_queue q;
	struct sink_item item;
	struct ms_error err = { "" };
	struct live_producer p = { &q, &t, 20000, 0 };
	pthread_t thread;
	uint64_t sum = 0, covered = 0, last_seq = UINT64_MAX;
	int events = 0, taken = 0, order_errors = 0;
	bool last = false;

	make_table(&t);
	CHECK(sink_queue_init(&q, 3, &t, NULL, false, &err) == 0);
	pthread_create(&thread, NULL, produce_live, &p);
	while (sink_queue_take(&q, &item)) {
		if (item.kind == SINK_ITEM_EVENT) {
			events++;
			order_errors += last_seq != (uint64_t)atoll(item.event.text);
			continue;
		}
		if (last_seq != UINT64_MAX && item.buf->frame.seq < last_seq + item.merged)
			order_errors++;
		last_seq = item.buf->frame.seq;
		sum += item.buf->frame.samples[0].value;
		covered += item.merged;
		last = item.last;
		if (++taken % 100 == 0)
			usleep(2000);     /* behind for a while */
	}
	pthread_join(thread, NULL);
	CHECK_EQ_INT(order_errors, 0);
	CHECK_EQ_U64(covered, 20000);
	CHECK(taken < 20000);         /* it did fall behind: some frames came merged */
	CHECK_EQ_U64(sum, 20000ull * 20001 / 2);
	CHECK_EQ_U64(last_seq, 19999);
	CHECK(last);
	CHECK_EQ_INT(events, p.events);
	CHECK(p.events > 0);
	sink_queue_fini(&q);
	series_table_free(&t);
}

int main(void)
{
	test_merge_arithmetic();
	test_merge_validity();
	test_event_order();
	test_merge_series_changes();
	test_wait_mode();
	test_wait_mode_batches_wake_ups();
	test_wait_mode_growing_frames();
	test_live_batches_wake_ups();
	test_live_threads();
	return check_summary("sink_queue");
}
