#include "pipeline/sink_runner.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void run_frame(struct sink_runner *r, const struct sink_item *item)
{
	struct sink_frame f = {
		.frame = &item->buf->frame,
		.metrics = item->buf->values,
		.merged = item->merged,
		.last = item->last,
	};

	for (int i = 0; i < r->nr_sinks; i++) {
		if (r->stopped[i])
			continue;
		/* What the frame's indices mean, before its values. */
		if (f.frame->changes && r->sinks[i]->ops->series)
			r->sinks[i]->ops->series(r->sinks[i], r->queue.table, f.frame->changes);
		if (r->sinks[i]->ops->frame(r->sinks[i], &f)) {
			r->stopped[i] = true;
			r->on_stop(r->ctx);
		}
	}
	/* Indices this frame retired may be given to new series now. */
	sink_queue_done(&r->queue, item->buf->frame.seq);
}

static void run_event(struct sink_runner *r, const struct sink_item *item)
{
	struct sink_event ev = item->event;

	for (int i = 0; i < r->nr_sinks; i++) {
		struct sink *sink = r->sinks[i];

		/* Only the answering sink sees the reply. */
		ev.reply = sink->answers ? item->event.reply : NULL;
		if (sink->ops->event && sink->ops->event(sink, &ev) && !r->stopped[i]) {
			r->stopped[i] = true;
			r->on_stop(r->ctx);
		}
	}
	if (item->event.reply)
		r->on_reply(item->event.reply, r->ctx);
}

static void run_samples(struct sink_runner *r, const struct sink_item *item)
{
	for (int i = 0; i < r->nr_sinks; i++) {
		struct sink *sink = r->sinks[i];

		if (r->stopped[i] || !sink->ops->samples)
			continue;
		if (sink->ops->samples(sink, item->samples)) {
			r->stopped[i] = true;
			r->on_stop(r->ctx);
		}
	}
	sample_batch_unref(item->samples);
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
		if (item.kind == SINK_ITEM_FRAME)
			run_frame(r, &item);
		else if (item.kind == SINK_ITEM_SAMPLES)
			run_samples(r, &item);
		else
			run_event(r, &item);
		if (sink_queue_empty(&r->queue))
			run_idle(r);
	}
	return NULL;
}

int sink_runner_start(struct sink_runner *r, int queue_length, const struct series_table *table,
		      const struct metric_engine *engine, bool wait, struct ms_error *err)
{
	sigset_t all, old;
	int rc;

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
		sink_queue_destroy(&r->queue);
		return -1;
	}
	r->started = true;
	return 0;
}

void sink_runner_finish(struct sink_runner *r)
{
	if (!r->started)
		return;
	sink_queue_close(&r->queue);
	pthread_join(r->thread, NULL);
	r->started = false;
}

void sink_runner_destroy(struct sink_runner *r)
{
	sink_runner_finish(r);
	sink_queue_destroy(&r->queue);
}
