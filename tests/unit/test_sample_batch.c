/* Sample batches on their way to the sinks: every item comes back as it went
 * in (a sample with only its call chain and raw bytes, times made relative to
 * the start), a full batch refuses the next item, and in a sink queue a batch
 * keeps its place between the frames; a live consumer too far behind is
 * refused the batch, its samples counted as dropped. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pipeline/sink_queue.h"
#include "sampler/sample_batch.h"

static struct event_sample *make_sample(void)
{
	struct event_sample *s = calloc(1, sizeof(*s));

	s->event = 1;
	s->ip = 0x55d0c0a01201ull;
	s->user = true;
	s->pid = 4242;
	s->tid = 4243;
	s->time_ns = 1000000500ull;
	s->addr = 0x7f0000001000ull;
	s->cpu = 3;
	s->period = 64;
	s->data_src = 0x123ull;
	s->node = 1;
	s->node_from = NODE_FROM_PAGE;
	s->nr_callchain = 3;
	s->callchain[0] = 0x10;
	s->callchain[1] = 0x20;
	s->callchain[2] = 0x30;
	s->raw_size = 5;
	memcpy(s->raw, "\x01\x02\x03\x04\x05", 5);
	return s;
}

static void test_round_trip(void)
{
	struct sample_batch *b = sample_batch_new(SAMPLE_BATCH_BYTES);
	struct event_sample *s = make_sample();
	struct map_event *m = calloc(1, sizeof(*m));
	struct sample_item_storage *st = calloc(1, sizeof(*st));
	struct sample_item in, out;
	size_t at = 0;

	CHECK(b && s && m && st);
	m->pid = 4242;
	m->time_ns = 0;            /* before the start: stays 0 */
	m->start = 0x55d0c0a00000ull;
	m->len = 0x5000;
	m->executable = true;
	m->build_id_size = 2;
	m->build_id[0] = 0xb0;
	m->build_id[1] = 0x24;
	strcpy(m->path, "/usr/bin/app");
	in = (struct sample_item){ .kind = SAMPLE_ITEM_SAMPLE, .time_ns = s->time_ns, .sample = s };
	CHECK(sample_batch_append(b, &in, 1000000000ull) == 0);
	in = (struct sample_item){ .kind = SAMPLE_ITEM_MAP, .time_ns = 0, .map = m };
	CHECK(sample_batch_append(b, &in, 1000000000ull) == 0);
	in = (struct sample_item){ .kind = SAMPLE_ITEM_LOST, .time_ns = 1000002000ull, .lost_kind = LOST_RING_FULL,
				   .event = 0, .lost = 7 };
	CHECK(sample_batch_append(b, &in, 1000000000ull) == 0);
	in = (struct sample_item){ .kind = SAMPLE_ITEM_MAPS_UNREADABLE, .pid = 99, .why = "not dumpable" };
	CHECK(sample_batch_append(b, &in, 1000000000ull) == 0);
	{
		struct alloc_event ae = { 7, 8, 0x7f0000001000ull, 65536, 0x401234, false };

		in = (struct sample_item){ .kind = SAMPLE_ITEM_ALLOC, .time_ns = 1000000500ull, .alloc = &ae };
		CHECK(sample_batch_append(b, &in, 1000000000ull) == 0);
	}
	CHECK_EQ_INT(b->nr_items, 5);
	CHECK_EQ_INT(b->nr_samples, 1);

	CHECK(sample_batch_next(b, &at, st, &out));
	CHECK_EQ_INT(out.kind, SAMPLE_ITEM_SAMPLE);
	CHECK_EQ_U64(out.time_ns, 500);
	CHECK_EQ_U64(out.sample->time_ns, 500);
	CHECK_EQ_U64(out.sample->ip, 0x55d0c0a01201ull);
	CHECK_EQ_U64(out.sample->addr, 0x7f0000001000ull);
	CHECK_EQ_INT(out.sample->tid, 4243);
	CHECK_EQ_INT(out.sample->cpu, 3);
	CHECK_EQ_U64(out.sample->data_src, 0x123);
	CHECK_EQ_INT(out.sample->node, 1);
	CHECK_EQ_INT(out.sample->node_from, NODE_FROM_PAGE);
	CHECK_EQ_INT(out.sample->nr_callchain, 3);
	CHECK_EQ_U64(out.sample->callchain[2], 0x30);
	CHECK_EQ_INT(out.sample->raw_size, 5);
	CHECK(!memcmp(out.sample->raw, "\x01\x02\x03\x04\x05", 5));

	CHECK(sample_batch_next(b, &at, st, &out));
	CHECK_EQ_INT(out.kind, SAMPLE_ITEM_MAP);
	CHECK_EQ_U64(out.map->time_ns, 0);
	CHECK_EQ_U64(out.map->start, 0x55d0c0a00000ull);
	CHECK_EQ_U64(out.map->len, 0x5000);
	CHECK_EQ_INT(out.map->build_id_size, 2);
	CHECK_EQ_INT(out.map->build_id[1], 0x24);
	CHECK_EQ_STR(out.map->path, "/usr/bin/app");

	CHECK(sample_batch_next(b, &at, st, &out));
	CHECK_EQ_INT(out.kind, SAMPLE_ITEM_LOST);
	CHECK_EQ_U64(out.time_ns, 2000);
	CHECK_EQ_INT(out.lost_kind, LOST_RING_FULL);
	CHECK_EQ_INT(out.event, 0);
	CHECK_EQ_U64(out.lost, 7);

	CHECK(sample_batch_next(b, &at, st, &out));
	CHECK_EQ_INT(out.kind, SAMPLE_ITEM_MAPS_UNREADABLE);
	CHECK_EQ_INT(out.pid, 99);
	CHECK_EQ_STR(out.why, "not dumpable");

	/* An allocation: every field, its time made relative. */
	CHECK(sample_batch_next(b, &at, st, &out));
	CHECK_EQ_INT(out.kind, SAMPLE_ITEM_ALLOC);
	CHECK(out.time_ns == 500);
	CHECK(out.alloc->pid == 7 && out.alloc->tid == 8 && out.alloc->addr == 0x7f0000001000ull &&
	      out.alloc->size == 65536 && out.alloc->caller == 0x401234 && !out.alloc->free);

	CHECK(!sample_batch_next(b, &at, st, &out));
	sample_batch_unref(b);
	free(s);
	free(m);
	free(st);
}

/* A batch with room for two samples (header and body, 8-byte aligned)
 * refuses the third and keeps the two. */
static void test_full(void)
{
	struct event_sample *s = make_sample();
	struct sample_item_storage *st = calloc(1, sizeof(*st));
	struct sample_item in = { .kind = SAMPLE_ITEM_SAMPLE, .sample = s }, out;
	struct sample_batch *probe = sample_batch_new(SAMPLE_BATCH_BYTES), *b;
	size_t one, at = 0;
	int n = 0;

	CHECK(probe && s && st);
	CHECK(sample_batch_append(probe, &in, 0) == 0);
	one = probe->len;
	sample_batch_unref(probe);
	b = sample_batch_new(2 * one + one / 2);
	CHECK(sample_batch_append(b, &in, 0) == 0);
	CHECK(sample_batch_append(b, &in, 0) == 0);
	CHECK(sample_batch_append(b, &in, 0) == -1);
	CHECK_EQ_INT(b->nr_samples, 2);
	while (sample_batch_next(b, &at, st, &out)) {
		CHECK_EQ_U64(out.sample->callchain[1], 0x20);
		n++;
	}
	CHECK_EQ_INT(n, 2);
	sample_batch_unref(b);
	free(s);
	free(st);
}

static void make_table(struct series_table *t)
{
	memset(t, 0, sizeof(*t));
	series_table_add(t, "page-faults", "", 1, SERIES_COUNTER, NULL);
}

static void put(struct sink_queue *q, struct frame *f, uint64_t seq)
{
	f->seq = seq;
	f->time_ns = (seq + 1) * 50000000ull;
	f->interval_ns = 50000000ull;
	f->samples[0] = (struct sample){ seq + 1, 50000000ull, 50000000ull, true };
	sink_queue_put_frame(q, f, NULL, false);
}

static void expect(struct sink_queue *q, enum sink_item_kind kind, uint64_t seq, const struct sample_batch *b)
{
	struct sink_item item;

	CHECK(sink_queue_take(q, &item));
	CHECK_EQ_INT(item.kind, kind);
	if (item.kind == SINK_ITEM_FRAME && kind == SINK_ITEM_FRAME)
		CHECK_EQ_U64(item.buf->frame.seq, seq);
	if (item.kind == SINK_ITEM_SAMPLES && kind == SINK_ITEM_SAMPLES) {
		CHECK(item.samples == b);
		sample_batch_unref(item.samples);   /* the consumer lets go of its reference */
	}
}

static void test_queue_order(void)
{
	struct series_table t;
	struct sink_queue q;
	struct frame f;
	struct sink_queue_stats st;
	struct ms_error err = { "" };
	struct event_sample *s = make_sample();
	struct sample_item in = { .kind = SAMPLE_ITEM_SAMPLE, .sample = s };
	struct sample_batch *b1 = sample_batch_new(SAMPLE_BATCH_BYTES), *b2 = sample_batch_new(SAMPLE_BATCH_BYTES);

	CHECK(b1 && b2 && s);
	for (int i = 0; i < 3; i++)
		CHECK(sample_batch_append(b1, &in, 0) == 0);
	CHECK(sample_batch_append(b2, &in, 0) == 0);
	make_table(&t);
	frame_init(&f, t.nr);
	CHECK(sink_queue_init(&q, 2, &t, NULL, false, &err) == 0);
	/* frame 0, samples read during frame 1, frame 1 */
	put(&q, &f, 0);
	CHECK(sink_queue_put_samples(&q, b1) == 0);
	put(&q, &f, 1);
	/* The queue holds its own reference: the producer's can go. */
	CHECK_EQ_INT(atomic_load(&b1->refs), 2);
	sample_batch_unref(b1);
	expect(&q, SINK_ITEM_FRAME, 0, NULL);
	expect(&q, SINK_ITEM_SAMPLES, 0, b1);
	expect(&q, SINK_ITEM_FRAME, 1, NULL);

	/* Nobody takes: frames fill the ring, then wait in the backlog; a batch
	 * behind them is refused rather than put ahead of them. */
	for (uint64_t seq = 2; seq < 7; seq++)
		put(&q, &f, seq);
	CHECK(sink_queue_put_samples(&q, b2) == -1);
	CHECK_EQ_INT(atomic_load(&b2->refs), 1);
	sink_queue_stats(&q, &st);
	CHECK_EQ_U64(st.samples_dropped, 1);
	sink_queue_close(&q);
	/* Only the frames come out (some merged: the consumer was behind). */
	{
		struct sink_item item;
		uint64_t last = 0, merged = 0;

		while (sink_queue_take(&q, &item)) {
			CHECK_EQ_INT(item.kind, SINK_ITEM_FRAME);
			if (item.kind != SINK_ITEM_FRAME)
				break;
			last = item.buf->frame.seq;
			merged += item.merged;
		}
		CHECK_EQ_U64(last, 6);
		CHECK_EQ_U64(merged, 5);
	}
	sample_batch_unref(b2);
	sink_queue_fini(&q);
	frame_free(&f);
	series_table_free(&t);
	free(s);
}

int main(void)
{
	test_round_trip();
	test_full();
	test_queue_order();
	return check_summary("sample_batch");
}
