#include "pipeline/sink_runner.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void run_frame(struct sink_runner *r, const struct sink_frame *f)
{
	for (int i = 0; i < r->nr_sinks; i++) {
		if (r->stopped[i])
			continue;
		/* What the frame's indices mean, before its values. */
		if (f->frame->changes && r->sinks[i]->ops->series)
			r->sinks[i]->ops->series(r->sinks[i], r->queue.table, f->frame->changes);
		if (r->sinks[i]->ops->frame(r->sinks[i], f)) {
			r->stopped[i] = true;
			r->on_stop(r->ctx);
		}
	}
}

static void run_queued_frame(struct sink_runner *r, const struct sink_item *item)
{
	struct sink_frame f = {
		.frame = &item->buf->frame,
		.metrics = item->buf->values,
		.merged = item->merged,
		.last = item->last,
	};

	run_frame(r, &f);
	/* Indices this frame retired may be given to new series now. */
	sink_queue_done(&r->queue, item->buf->frame.seq);
}

static void run_event(struct sink_runner *r, const struct sink_event *event)
{
	struct sink_event ev = *event;

	for (int i = 0; i < r->nr_sinks; i++) {
		struct sink *sink = r->sinks[i];

		/* Only the answering sink sees the reply. */
		ev.reply = sink->answers ? event->reply : NULL;
		if (sink->ops->event && sink->ops->event(sink, &ev) && !r->stopped[i]) {
			r->stopped[i] = true;
			r->on_stop(r->ctx);
		}
	}
	if (event->reply)
		r->on_reply(event->reply, r->ctx);
}

static void run_samples(struct sink_runner *r, struct sample_batch *samples)
{
	for (int i = 0; i < r->nr_sinks; i++) {
		struct sink *sink = r->sinks[i];

		if (r->stopped[i] || !sink->ops->samples)
			continue;
		if (sink->ops->samples(sink, samples)) {
			r->stopped[i] = true;
			r->on_stop(r->ctx);
		}
	}
}

/* The queue is empty: the sinks write out what they buffered before the
 * thread waits for more. */
static void run_idle(struct sink_runner *r)
{
	for (int i = 0; i < r->nr_sinks; i++)
		if (!r->stopped[i] && r->sinks[i]->ops->idle)
			r->sinks[i]->ops->idle(r->sinks[i]);
}

static void *runner_main(void *arg)
{
	struct sink_runner *r = arg;
	struct sink_item item;
	id_t tid = (id_t)syscall(SYS_gettid);
	int nice_now;

	/* Below the sampling thread: a busy sink (a slow script) must not take
	 * the CPU the sampler needs to wake on time. Raising one's own nice
	 * value is always allowed; failing to is harmless. */
	errno = 0;
	nice_now = getpriority(PRIO_PROCESS, tid);
	if (errno == 0)
		setpriority(PRIO_PROCESS, tid, nice_now + SINK_RUNNER_NICE > 19 ? 19 : nice_now + SINK_RUNNER_NICE);

	while (sink_queue_take(&r->queue, &item)) {
		if (item.kind == SINK_ITEM_FRAME) {
			run_queued_frame(r, &item);
		} else if (item.kind == SINK_ITEM_SAMPLES) {
			run_samples(r, item.samples);
			sample_batch_unref(item.samples);
		} else {
			run_event(r, &item.event);
		}
		if (sink_queue_empty(&r->queue))
			run_idle(r);
	}
	return NULL;
}

int sink_runner_start(struct sink_runner *r, int queue_length, const struct series_table *table,
		      const struct metric_engine *engine, bool wait, bool on_caller, struct ms_error *err)
{
	sigset_t all, old;
	int rc;

	if (on_caller) {
		r->on_caller = true;
		r->queue.table = table;   /* what run_frame passes to the sinks' series() */
		return 0;
	}
	if (sink_queue_init(&r->queue, queue_length, table, engine, wait, err) < 0)
		return -1;
	/* Signals are the sampling thread's (it takes SIGCHLD, SIGINT... through
	 * a signalfd): a sink thread that could receive them would swallow them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&r->thread, NULL, runner_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		ms_error_set(err, "cannot start the thread of sink %s: %s", r->sinks[0]->ops->name, strerror(rc));
		sink_queue_fini(&r->queue);
		return -1;
	}
	r->started = true;
	return 0;
}

void sink_runner_put_frame(struct sink_runner *r, const struct frame *frame, const struct metric_values *values,
			   bool last)
{
	struct sink_frame f = { .frame = frame, .metrics = values, .merged = 1, .last = last };

	if (!r->on_caller) {
		sink_queue_put_frame(&r->queue, frame, values, last);
		return;
	}
	r->caller_stats.frames_in++;
	r->caller_stats.frames_out++;
	run_frame(r, &f);
}

void sink_runner_put_event(struct sink_runner *r, const struct sink_event *ev)
{
	if (r->on_caller)
		run_event(r, ev);
	else
		sink_queue_put_event(&r->queue, ev);
}

void sink_runner_put_samples(struct sink_runner *r, struct sample_batch *batch)
{
	if (r->on_caller)
		run_samples(r, batch);
	else
		sink_queue_put_samples(&r->queue, batch);
}

bool sink_runner_event_room(struct sink_runner *r)
{
	return r->on_caller || sink_queue_event_room(&r->queue);
}

uint64_t sink_runner_readers_done(const struct sink_runner *r)
{
	/* On the caller every frame put has been taken and let go of. */
	return r->on_caller ? UINT64_MAX : sink_queue_readers_done(&r->queue);
}

void sink_runner_stats(const struct sink_runner *r, struct sink_queue_stats *out)
{
	if (r->on_caller)
		*out = r->caller_stats;
	else
		sink_queue_stats(&r->queue, out);
}

void sink_runner_finish(struct sink_runner *r)
{
	if (r->on_caller && !r->caller_finished) {
		/* What the sinks buffered, as the thread does when its queue runs dry. */
		r->caller_finished = true;
		run_idle(r);
		return;
	}
	if (!r->started)
		return;
	sink_queue_close(&r->queue);
	pthread_join(r->thread, NULL);
	r->started = false;
}

void sink_runner_fini(struct sink_runner *r)
{
	sink_runner_finish(r);
	if (!r->on_caller)
		sink_queue_fini(&r->queue);
}
