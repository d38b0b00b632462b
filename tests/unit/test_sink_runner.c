/* The sink runner: the same calls in the same order whether the sinks run
 * on a thread of their own behind the queue or on the thread that hands
 * the frames on (over a file), a sink that asks to stop gets no more frames
 * while the one beside it goes on, and buffered output is written at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pipeline/sink_runner.h"

#define MAX_CALLS 32

struct recorder {
	char calls[MAX_CALLS][32];
	int nr;
	bool off_caller;        /* a call came on a thread other than the test's */
	bool flushed;           /* idle came after the last other call */
	int stop_after_frames;  /* frame returns 1 at this many frames (0: never) */
	int frames;
};

static pthread_t test_thread;

static void note(struct sink *sink, const char *fmt, unsigned long long v)
{
	struct recorder *rec = sink->priv;

	if (!pthread_equal(pthread_self(), test_thread))
		rec->off_caller = true;
	rec->flushed = false;
	if (rec->nr < MAX_CALLS)
		snprintf(rec->calls[rec->nr++], sizeof(rec->calls[0]), fmt, v);
}

static int rec_frame(struct sink *sink, const struct sink_frame *f)
{
	struct recorder *rec = sink->priv;

	note(sink, "frame %llu", (unsigned long long)(f->frame->seq * 1000 + f->frame->samples[0].value));
	return rec->stop_after_frames && ++rec->frames >= rec->stop_after_frames;
}

static int rec_event(struct sink *sink, const struct sink_event *ev)
{
	note(sink, "event %llu", (unsigned long long)ev->kind);
	return 0;
}

static void rec_series(struct sink *sink, const struct series_table *table, const struct series_changes *changes)
{
	(void)table;
	note(sink, "series +%llu", (unsigned long long)changes->nr_added);
}

static int rec_samples(struct sink *sink, const struct sample_batch *batch)
{
	(void)batch;
	note(sink, "samples", 0);
	return 0;
}

/* A thread calls it whenever its queue runs dry (how often depends on
 * timing): only whether it came last is checked. */
static void rec_idle(struct sink *sink)
{
	struct recorder *rec = sink->priv;

	if (!pthread_equal(pthread_self(), test_thread))
		rec->off_caller = true;
	rec->flushed = true;
}

static const struct sink_ops recorder_ops = {
	.name = "recorder",
	.frame = rec_frame,
	.event = rec_event,
	.series = rec_series,
	.samples = rec_samples,
	.idle = rec_idle,
};

static int stops;

static void on_stop(void *ctx)
{
	(void)ctx;
	stops++;
}

static void on_reply(struct sink_reply *reply, void *ctx)
{
	(void)reply;
	(void)ctx;
}

/* Two sinks on one runner, the first asking to stop at its second frame:
 * frames 0 (a new series), a label, a batch of samples, frames 1 and 2. */
static void run(bool on_caller, struct recorder *first, struct recorder *second, struct sink_queue_stats *st,
		uint64_t *done)
{
	struct series_table t;
	struct frame f;
	struct sink sinks[2] = { { .ops = &recorder_ops, .priv = first }, { .ops = &recorder_ops, .priv = second } };
	struct sink_runner r = { .sinks = { &sinks[0], &sinks[1] }, .nr_sinks = 2, .on_stop = on_stop,
				 .on_reply = on_reply };
	struct sink_event label = { .kind = SINK_EVENT_LABEL };
	struct sample_batch *batch = sample_batch_new(4096);
	int added[] = { 0 };
	struct series_changes changes = { .added = added, .nr_added = 1 };
	struct ms_error err = { "" };

	memset(&t, 0, sizeof(t));
	series_table_add(&t, "page-faults", "", 1, SERIES_COUNTER, NULL);
	frame_init(&f, t.nr);
	memset(first, 0, sizeof(*first));
	memset(second, 0, sizeof(*second));
	first->stop_after_frames = 2;
	stops = 0;
	CHECK(batch != NULL);
	/* wait: frames from a file are never merged (the queue's file mode). */
	CHECK(sink_runner_start(&r, 4, &t, NULL, true, on_caller, &err) == 0);
	for (uint64_t seq = 0; seq < 3; seq++) {
		f.seq = seq;
		f.time_ns = (seq + 1) * 1000000ull;
		f.interval_ns = 1000000ull;
		f.samples[0] = (struct sample){ 7 + seq, 1000000ull, 1000000ull, true };
		f.changes = seq == 0 ? &changes : NULL;
		sink_runner_put_frame(&r, &f, NULL, seq == 2);
		if (seq == 0) {
			sink_runner_put_event(&r, &label);
			sink_runner_put_samples(&r, batch);
		}
	}
	sample_batch_unref(batch);
	*done = sink_runner_readers_done(&r);
	sink_runner_finish(&r);
	sink_runner_stats(&r, st);
	sink_runner_fini(&r);
	frame_free(&f);
	series_table_free(&t);
}

static void expect_calls(const struct recorder *rec, const char *const *want, int nr)
{
	CHECK_EQ_INT(rec->nr, nr);
	for (int i = 0; i < nr && i < rec->nr; i++)
		CHECK_EQ_STR(rec->calls[i], want[i]);
}

static void test_same_calls_on_either_thread(void)
{
	static const char *const first_calls[] = { "series +1", "frame 7", "event 0", "samples", "frame 1008" };
	static const char *const second_calls[] = { "series +1", "frame 7", "event 0", "samples", "frame 1008",
						    "frame 2009" };
	struct recorder first, second;
	struct sink_queue_stats st;
	uint64_t done;

	for (int on_caller = 0; on_caller < 2; on_caller++) {
		run(on_caller, &first, &second, &st, &done);
		/* The first asked to stop at its second frame: no frame after it. */
		expect_calls(&first, first_calls, 5);
		expect_calls(&second, second_calls, 6);
		/* What a sink buffered is written out after its last frame; one
		 * that asked to stop is called again only for its end. */
		CHECK(second.flushed);
		CHECK(!first.flushed);
		CHECK_EQ_INT(stops, 1);
		CHECK_EQ_U64(st.frames_in, 3);
		CHECK_EQ_U64(st.frames_out, 3);
		CHECK_EQ_U64(st.frames_merged, 0);
		/* On the caller: every call on the test's thread, and no frame left
		 * for a reader once put; on a thread: none on the test's. */
		CHECK_EQ_INT(first.off_caller, !on_caller);
		CHECK_EQ_INT(second.off_caller, !on_caller);
		if (on_caller)
			CHECK_EQ_U64(done, UINT64_MAX);
	}
}

int main(void)
{
	test_thread = pthread_self();
	test_same_calls_on_either_thread();
	return check_summary("sink_runner");
}
