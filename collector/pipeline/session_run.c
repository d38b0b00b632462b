/* session_run: the sinks' queues and threads around the sampler. On the
 * sampling thread, each frame gets its metrics computed once and a copy goes
 * into every sink's queue; each sink's thread takes its frames and events in
 * order (over a file the reading thread calls the sinks itself); at the end
 * the queues are drained and the sinks end in the order they were added. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "util/report.h"
#include "pipeline/session_control.h"
#include "pipeline/session_pipeline.h"
#include "pipeline/session_recording.h"
#include "sources/recording_source.h"

/* Frames a recording is read ahead of a sink that takes them slower: about
 * FILE_READ_AHEAD_BYTES of samples, between FILE_READ_AHEAD and
 * FILE_READ_AHEAD_MAX frames. The two threads switch once per half of it:
 * at 32 frames those switches were a tenth of reading a recording. */
#define FILE_READ_AHEAD 32
#define FILE_READ_AHEAD_MAX 128
#define FILE_READ_AHEAD_BYTES (1u << 20)
/* At intervals up to SHORT_INTERVAL_NS a live sink is woken per BATCH_NS of
 * frames (at most half its queue) rather than per frame: at -I 1 a thread
 * switch per millisecond costs more than the sink's work, and lines that
 * reach a file or a screen 0.1 s later, in order, lose nothing. */
#define SHORT_INTERVAL_NS 10000000ull
#define BATCH_NS 100000000ull
#define SHORT_INTERVAL_QUEUE 64

static int file_read_ahead(const struct series_table *table)
{
	size_t frame_bytes = sizeof(struct sample) * (size_t)(table->nr > 0 ? table->nr : 1);
	size_t frames = FILE_READ_AHEAD_BYTES / frame_bytes;

	return frames < FILE_READ_AHEAD ? FILE_READ_AHEAD : frames > FILE_READ_AHEAD_MAX ? FILE_READ_AHEAD_MAX
											 : (int)frames;
}

int session_add_sink(struct session *s, struct sink *sink, const struct sink *follows, struct ms_error *err)
{
	if (s->nr_sinks == SESSION_MAX_SINKS) {
		ms_error_set(err, "at most %d sinks", SESSION_MAX_SINKS);
		/* Handed over all the same: the caller never closes a sink. */
		if (sink->ops->close)
			sink->ops->close(sink);
		return -1;
	}
	s->follows[s->nr_sinks] = follows;
	s->sinks[s->nr_sinks++] = sink;
	return 0;
}

uint64_t session_pipeline_now(const struct session_pipeline *p)
{
	uint64_t now = monotonic_ns(), start = p->session->sampler.start_ns;

	return now > start ? now - start : 0;
}

bool session_pipeline_event_room(struct session_pipeline *p)
{
	for (int i = 0; i < p->nr_runners; i++)
		if (!sink_runner_event_room(&p->runners[i]))
			return false;
	return true;
}

int session_pipeline_broadcast(struct session_pipeline *p, const struct sink_event *ev)
{
	/* The sampling thread is the only producer: room seen here stays. */
	if (!p->from_file && !session_pipeline_event_room(p))
		return -1;
	for (int i = 0; i < p->nr_runners; i++) {
		struct sink_event copy = *ev;
		bool answers = false;

		for (int k = 0; k < p->runners[i].nr_sinks; k++)
			answers |= p->runners[i].sinks[k]->answers;
		if (!answers)
			copy.reply = NULL;
		sink_runner_put_event(&p->runners[i], &copy);
	}
	return 0;
}

int session_event(struct session *s, const struct sink_event *ev)
{
	struct sink_event stamped = *ev;

	if (!s->pipeline)
		return -1;
	stamped.time_ns = session_pipeline_now(s->pipeline);
	stamped.reply = NULL;
	return session_pipeline_broadcast(s->pipeline, &stamped);
}

bool session_pipeline_answers(const struct session_pipeline *p)
{
	for (int i = 0; i < p->session->nr_sinks; i++)
		if (p->session->sinks[i]->answers)
			return true;
	return false;
}

static void batch_wake_ups(struct session_pipeline *p, uint64_t interval_ns)
{
	int every = interval_ns && interval_ns <= SHORT_INTERVAL_NS ? (int)(BATCH_NS / interval_ns) : 1;

	if (p->from_file)
		return;
	for (int i = 0; i < p->nr_runners; i++) {
		bool prompt = false;

		for (int k = 0; k < p->runners[i].nr_sinks; k++)
			prompt |= p->runners[i].sinks[k]->prompt;
		sink_queue_set_wake_every(&p->runners[i].queue, prompt ? 1 : every);
	}
}

int session_pipeline_set_interval(struct session_pipeline *p, uint64_t interval_ns, struct ms_error *err)
{
	struct sink_event ev = { .kind = SINK_EVENT_INTERVAL, .interval_ns = interval_ns };

	if (!p->from_file && !session_pipeline_event_room(p)) {
		ms_error_set(err, "busy: a sink has fallen behind; try again");
		return -1;
	}
	if (sampler_set_interval(&p->session->sampler, interval_ns, err) < 0)
		return -1;
	batch_wake_ups(p, interval_ns);
	ev.time_ns = session_pipeline_now(p);
	return session_pipeline_broadcast(p, &ev);
}

static void wake(struct session_pipeline *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: the sampling thread has a wake-up pending anyway. */
	}
}

/* On a sink's thread. */
static void sink_stopped(void *ctx)
{
	struct session_pipeline *p = ctx;

	atomic_store(&p->stop, true);
	wake(p);
}

static void sink_replied(struct sink_reply *reply, void *ctx)
{
	struct session_pipeline *p = ctx;

	if (p->session->control)
		session_control_replied(p->session->control, reply);
}

static void sink_set_interval(void *ctx, uint64_t interval_ns)
{
	struct session_pipeline *p = ctx;

	atomic_store(&p->interval_ns, interval_ns);
	wake(p);
}

/* On the sampling thread: what sink threads asked for. An interval that no
 * queue has room to announce now is tried again at the next frame. */
static void take_requests(struct session_pipeline *p)
{
	uint64_t interval = atomic_exchange(&p->interval_ns, 0);
	struct ms_error err = { "" };

	if (interval && session_pipeline_set_interval(p, interval, &err) < 0)
		atomic_store(&p->interval_ns, interval);
}

static int on_wake(struct sampler *sampler, int fd, void *ctx)
{
	struct session_pipeline *p = ctx;
	uint64_t count;

	(void)sampler;
	if (read(fd, &count, sizeof(count)) < 0) {
		/* Nothing pending (EAGAIN): look at the requests anyway. */
	}
	take_requests(p);
	return atomic_load(&p->stop);
}

/* Series changes of frames not handed on (paused): kept for the first frame
 * handed on after them. Lists grow only past their largest size yet. */
static void keep_changes(struct session_pipeline *p, const struct series_changes *c)
{
	for (int k = 0; k < c->nr_added; k++)
		if (util_int_list_push(&p->held_added, c->added[k]) < 0)
			p->changes_lost++;
	for (int k = 0; k < c->nr_retired; k++)
		if (util_int_list_push(&p->held_retired, c->retired[k]) < 0)
			p->changes_lost++;
}

/* ---- Samples ---- */

/* The gathered items to every runner with a sink that takes samples. A live
 * sink too far behind gets none of this batch (counted for its end). */
static void publish_samples(struct session_pipeline *p)
{
	struct sample_batch *b = p->samples;

	if (!b)
		return;
	p->samples = NULL;
	for (int i = 0; i < p->nr_runners; i++)
		if (p->takes_samples[i])
			sink_runner_put_samples(&p->runners[i], b);
	sample_batch_unref(b);
}

/* A sample item, on the sampling thread: from the sampling source (times
 * made relative to the start of the run, as frames') or from a recording. */
static void take_sample_item(const struct sample_item *item, void *ctx)
{
	struct session_pipeline *p = ctx;
	uint64_t origin = p->from_file ? 0 : p->session->sampler.start_ns;
	bool wanted = false;

	for (int i = 0; i < p->nr_runners; i++)
		wanted |= p->takes_samples[i];
	/* Paused: no samples nor DAMON regions are kept (as no frames are); what maps what is. */
	if (!wanted || (p->paused && (item->kind == SAMPLE_ITEM_SAMPLE || item->kind == SAMPLE_ITEM_DAMON_REGION)))
		return;
	for (int tries = 0; tries < 2; tries++) {
		if (!p->samples && !(p->samples = sample_batch_new(SAMPLE_BATCH_BYTES)))
			break;
		if (sample_batch_append(p->samples, item, origin) == 0)
			return;
		publish_samples(p);
	}
	p->samples_unkept++;
}

static int on_frame(const struct frame *frame, bool last, void *ctx)
{
	struct session_pipeline *p = ctx;
	struct session *s = p->session;
	struct frame rel = *frame;   /* shares the samples: only the time (and the changes) differ */

	/* Sinks see times from the start of the run (a file's frames have them). */
	rel.time_ns = frame->time_ns > s->sampler.start_ns ? frame->time_ns - s->sampler.start_ns : 0;
	if (p->paused) {
		if (frame->changes)
			keep_changes(p, frame->changes);
		take_requests(p);
		return atomic_load(&p->stop);
	}
	if (p->bucket_ns) {
		/* A series that starts within the bucket counts from its start. */
		if (!p->bucket_open) {
			/* The grid starts where the recording's first frame began. */
			if (!p->bucket_edge_ns)
				p->bucket_edge_ns = (rel.time_ns > rel.interval_ns ? rel.time_ns - rel.interval_ns : 0) +
						    p->bucket_ns;
			frame_copy(&p->bucket, &rel);
			p->bucket_open = true;
		} else {
			frame_fit(&p->bucket, rel.nr);
			for (int k = 0; rel.changes && k < rel.changes->nr_added; k++)
				p->bucket.samples[rel.changes->added[k]] = (struct sample){ .valid = true };
			frame_merge(&p->bucket, &rel, &s->sampler.table);
		}
		if (frame->changes)
			keep_changes(p, frame->changes);
		/* Lines end on a grid of MS from the start, at the recorded frame
		 * nearest each line of the grid (a late frame is not a new line). */
		if (rel.time_ns + p->bucket_slack_ns < p->bucket_edge_ns && !last) {
			take_requests(p);
			return atomic_load(&p->stop);
		}
		p->bucket_open = false;
		while (p->bucket_edge_ns <= rel.time_ns + p->bucket_slack_ns)
			p->bucket_edge_ns += p->bucket_ns;
		rel.seq = p->bucket.seq;
		rel.time_ns = p->bucket.time_ns;
		rel.interval_ns = p->bucket.interval_ns;
		rel.nr = p->bucket.nr;
		rel.samples = p->bucket.samples;
		rel.changes = NULL;
	}
	if (p->held_added.nr || p->held_retired.nr) {
		if (frame->changes && !p->bucket_ns)
			keep_changes(p, frame->changes);
		p->held_changes = (struct series_changes){ p->held_added.v, p->held_added.nr, p->held_retired.v,
							   p->held_retired.nr };
		rel.changes = &p->held_changes;
	}
	if (s->engine) {
		metric_engine_compute(s->engine, &rel, p->values);
		p->computed++;
	}
	/* Live, the samples read before this frame go before it. A recording
	 * passes the items after a frame while this frame goes out: after it
	 * (those before the first frame before it). */
	if (!p->from_file || !p->frames)
		publish_samples(p);
	for (int i = 0; i < p->nr_runners; i++)
		sink_runner_put_frame(&p->runners[i], &rel, p->values, last);
	if (p->from_file || last)
		publish_samples(p);
	/* The whole run: a series that starts counts from here. */
	frame_fit(&p->total, rel.nr);
	for (int k = 0; rel.changes && k < rel.changes->nr_added; k++)
		p->total.samples[rel.changes->added[k]] = (struct sample){ .valid = true };
	frame_accumulate(&p->total, &rel, &s->sampler.table);
	p->frames++;
	p->held_added.nr = p->held_retired.nr = 0;
	take_requests(p);
	return atomic_load(&p->stop);
}

/* The oldest frame a sink may still read; while paused, the first frame not
 * handed on (its retired series are announced with a later frame). */
static uint64_t readers_done(void *ctx)
{
	struct session_pipeline *p = ctx;
	uint64_t oldest = p->paused ? p->paused_since : UINT64_MAX;

	for (int i = 0; i < p->nr_runners; i++) {
		uint64_t done = sink_runner_readers_done(&p->runners[i]);

		if (done < oldest)
			oldest = done;
	}
	return oldest == UINT64_MAX ? p->session->sampler.frame.seq : oldest;
}

const char *session_end_reason(const struct session *s)
{
	switch (s->sampler.end) {
	case SAMPLER_END_SIGNAL:
		return s->sampler.end_signal == SIGINT ? "SIGINT" : s->sampler.end_signal == SIGTERM ? "SIGTERM"
											   : "SIGHUP";
	case SAMPLER_END_SOURCE:
		return "stopped";
	default:
		return s->target.kind == TARGET_COMMAND ? "the command exited"
		       : s->nr_sources && s->sources[0].replay ? "end of the replayed input"
							       : "the processes exited";
	}
}

static void fill_setup(const struct session *s, const struct session_options *opt, struct session_pipeline *p,
		       struct sink_setup *setup)
{
	const struct recording_header *h = s->recording ? session_recording_header(s) : NULL;

	*setup = (struct sink_setup){
		.command_name = opt->command_name,
		.table = &s->sampler.table,
		.host = s->host_loaded ? &s->host : NULL,
		.topo = s->host_loaded ? &s->host.topo : NULL,
		.plan = s->plan,
		.engine = s->engine,
		.res = s->resolution,
		.title = s->title,
		.origin = s->recording ? "recording" : opt->replay_path ? "replay" : "live",
		.origin_name = opt->input_path ? opt->input_path : opt->replay_path ? opt->replay_path : s->title,
		.interval_ns = (uint64_t)opt->interval_ms * 1000000ull,
		.from_file = p->from_file,
		.start_unix_ns = h ? h->start_unix_ns : 0,
		.system_wide = opt->system_wide,
		.task_target = session_task_target(s),
		.set_interval = sink_set_interval,
		.ctx = p,
	};
	/* A recording's own topology when it carries one (without -m it has no host files). */
	if (h && h->has_topology)
		setup->topo = &h->topo;
}

static int sink_index(const struct session *s, const struct sink *sink)
{
	for (int i = 0; i < s->nr_sinks; i++)
		if (s->sinks[i] == sink)
			return i;
	return -1;
}

/* One runner per sink that follows none, in the order they were added;
 * then each follower joins its leader's runner, after it. */
static int start_runners(struct session *s, struct session_pipeline *p, uint64_t interval_ns,
			 struct ms_error *err)
{
	/* Over a file the sinks run on the reading thread (sink_runner.h), unless
	 * control requests may come in while it reads: their answers are given
	 * on a sink's thread, after the request is taken. */
	bool sinks_on_reader = p->from_file && !s->control && !session_pipeline_answers(p);

	for (int i = 0; i < s->nr_sinks; i++) {
		struct sink_runner *r;

		if (s->follows[i])
			continue;
		r = &p->runners[p->nr_runners++];
		r->on_stop = sink_stopped;
		r->on_reply = sink_replied;
		r->ctx = p;
		r->sinks[r->nr_sinks++] = s->sinks[i];
		p->runner_of[i] = (int)(r - p->runners);
	}
	for (int i = 0; i < s->nr_sinks; i++) {
		int leader = s->follows[i] ? sink_index(s, s->follows[i]) : -1;
		struct sink_runner *r;

		if (!s->follows[i])
			continue;
		if (leader < 0 || s->follows[leader]) {
			ms_error_set(err, "sink %s follows a sink that is not added, or follows another",
				     s->sinks[i]->ops->name);
			return -1;
		}
		r = &p->runners[p->runner_of[leader]];
		if (r->nr_sinks == SINK_RUNNER_MAX_SINKS) {
			ms_error_set(err, "too many sinks share the thread of %s", r->sinks[0]->ops->name);
			return -1;
		}
		r->sinks[r->nr_sinks++] = s->sinks[i];
		p->runner_of[i] = p->runner_of[leader];
	}
	for (int i = 0; i < p->nr_runners; i++) {
		struct sink_runner *r = &p->runners[i];
		int length = 0;

		for (int k = 0; k < r->nr_sinks; k++)
			if (r->sinks[k]->queue_length > length)
				length = r->sinks[k]->queue_length;
		if (!length)
			length = SINK_QUEUE_DEFAULT;
		/* From a file nothing is merged (the reader waits for room): the
		 * queue only lets the reader run ahead, so the two threads hand
		 * frames over in batches rather than one wake-up each. */
		if (p->from_file && length < file_read_ahead(&s->sampler.table))
			length = file_read_ahead(&s->sampler.table);
		/* Room for the frames of one batched wake-up (batch_wake_ups). */
		if (!p->from_file && interval_ns && interval_ns <= SHORT_INTERVAL_NS && length < SHORT_INTERVAL_QUEUE)
			length = SHORT_INTERVAL_QUEUE;
		if (sink_runner_start(r, length, &s->sampler.table, s->engine, p->from_file,
				      sinks_on_reader, err) < 0)
			return -1;
	}
	return 0;
}

/* A label or control record met while replaying a recording: an event, in
 * its place among the frames (the reader waits for room: nothing is lost). */
static void recorded_event(const struct recording_record *rec, void *ctx)
{
	struct session_pipeline *p = ctx;
	struct sink_event ev = { .time_ns = rec->t_ns, .interval_ns = rec->interval_ns };

	if (rec->kind == RECORD_SAMPLE_ITEM) {
		take_sample_item(&rec->item, p);
		return;
	}
	if (rec->kind == RECORD_LABEL) {
		ev.kind = !strcmp(rec->phase, "begin") ? SINK_EVENT_PHASE_BEGIN
			  : !strcmp(rec->phase, "end") ? SINK_EVENT_PHASE_END : SINK_EVENT_LABEL;
		snprintf(ev.text, sizeof(ev.text), "%s", rec->text);
	} else if (rec->kind == RECORD_CONTROL && !strcmp(rec->control, "pause")) {
		ev.kind = SINK_EVENT_PAUSE;
	} else if (rec->kind == RECORD_CONTROL && !strcmp(rec->control, "resume")) {
		ev.kind = SINK_EVENT_RESUME;
	} else if (rec->kind == RECORD_CONTROL && !strcmp(rec->control, "interval")) {
		ev.kind = SINK_EVENT_INTERVAL;
	} else {
		return;
	}
	session_pipeline_broadcast(p, &ev);
}

static int open_pipeline(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	struct session_pipeline *p = calloc(1, sizeof(*p));

	if (!p)
		goto oom;
	s->pipeline = p;
	p->session = s;
	p->command_name = opt->command_name;
	p->wake_fd = -1;
	/* -D -1: handed on from the first enable (session_set_counting). */
	p->paused = opt->start_disabled;
	p->counting_stopped = opt->start_disabled;
	p->from_file = s->nr_sources > 0;
	for (int i = 0; i < s->nr_sources; i++)
		p->from_file &= s->sources[i].replay;
	atomic_init(&p->stop, false);
	atomic_init(&p->interval_ns, 0);
	if (frame_init(&p->total, s->sampler.table.nr) < 0)
		goto oom;
	/* -I as recorded: the frames as they are. */
	if (s->recording && opt->interval_ms > 0 &&
	    (uint64_t)opt->interval_ms * 1000000ull != session_recording_header(s)->interval_ns) {
		p->bucket_ns = (uint64_t)opt->interval_ms * 1000000ull;
		p->bucket_slack_ns = session_recording_header(s)->interval_ns / 2;
		if (frame_init(&p->bucket, s->sampler.table.nr) < 0)
			goto oom;
	}
	if (s->engine && (!(p->values = metric_values_new(s->engine)) ||
			  !(p->total_values = metric_values_new(s->engine))))
		goto oom;
	fill_setup(s, opt, p, &p->setup);
	for (int i = 0; i < s->nr_sinks; i++) {
		if (s->sinks[i]->ops->open(s->sinks[i], &p->setup, err) < 0)
			return -1;
		s->sink_opened[i] = true;
	}
	if (start_runners(s, p, (uint64_t)opt->interval_ms * 1000000ull, err) < 0)
		return -1;
	batch_wake_ups(p, (uint64_t)opt->interval_ms * 1000000ull);
	for (int i = 0; i < s->nr_sinks; i++)
		if (s->sinks[i]->ops->samples)
			p->takes_samples[p->runner_of[i]] = true;
	s->sample_hub.deliver = take_sample_item;
	s->sample_hub.ctx = p;
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->wake_fd < 0) {
		ms_error_set(err, "eventfd: %s", strerror(errno));
		return -1;
	}
	if (sampler_watch_add(&s->sampler, p->wake_fd, on_wake, p, err) < 0)
		return -1;
	sampler_set_readers_done(&s->sampler, readers_done, p);
	if (s->control && session_control_start(s->control, p, err) < 0)
		return -1;
	if (s->recording)
		recording_source_on_record(&s->sources[0], recorded_event, p);
	return 0;
oom:
	ms_error_set(err, "out of memory");
	return -1;
}

static void print_stats(const struct session *s, const char *command_name)
{
	const struct session_pipeline *p = s->pipeline;

	ms_warn("pipeline: %llu frames, %llu metric computations",
		(unsigned long long)p->frames, (unsigned long long)p->computed);
	for (int i = 0; i < s->nr_sinks; i++) {
		struct sink_queue_stats st;

		sink_runner_stats(&p->runners[p->runner_of[i]], &st);
		ms_warn("pipeline: sink %s: %llu frames taken, %llu of %llu frames merged, "
			"%llu metric recomputations, deepest queue %d, %llu waits",
			s->sinks[i]->ops->name, (unsigned long long)st.frames_out,
			(unsigned long long)st.frames_merged, (unsigned long long)st.frames_in,
			(unsigned long long)st.recomputed, st.deepest, (unsigned long long)st.waits);
	}
}

static void end_sinks(struct session *s)
{
	struct session_pipeline *p = s->pipeline;
	struct sink_end end = {
		.reason = s->sampler.end,
		.signal = s->sampler.end_signal,
		.reason_text = session_end_reason(s),
		.frames = p->frames,
		.elapsed_ns = p->from_file ? 0 : s->sampler.last_ns - s->sampler.start_ns,
		.total = &p->total,
	};

	if (s->engine) {
		metric_engine_compute(s->engine, &p->total, p->total_values);
		end.total_metrics = p->total_values;
	}
	for (int i = 0; i < s->nr_sinks; i++) {
		struct sink_queue_stats st;

		sink_runner_stats(&p->runners[p->runner_of[i]], &st);
		end.frames_merged = st.frames_merged;
		end.samples_dropped = st.samples_dropped + p->samples_unkept;
		s->sinks[i]->ops->end(s->sinks[i], &end);
		/* Each merged frame covers the intervals it stands for: nothing is
		 * lost, but the output has fewer, longer intervals than asked for. */
		if (st.frames_merged && !s->sinks[i]->ops->says_merged)
			ms_warn("sink %s received %llu of %llu frames merged (it fell behind)", s->sinks[i]->ops->name, (unsigned long long)st.frames_merged,
				(unsigned long long)p->frames);
	}
}

int session_run(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	struct session_pipeline *p;
	int ret;

	if (open_pipeline(s, opt, err) < 0)
		return -1;
	p = s->pipeline;
	ret = sampler_run(&s->sampler, &s->target, (uint64_t)opt->interval_ms * 1000000ull, on_frame, p, err);
	/* Items after the last frame (a recording's), then every sink takes
	 * what is queued for it. */
	publish_samples(p);
	s->sample_hub.deliver = NULL;
	for (int i = 0; i < p->nr_runners; i++)
		sink_runner_finish(&p->runners[i]);
	if (s->control)
		session_control_stop(s->control);
	if (ret < 0 || session_recording_end(s, opt->command_name, err) < 0)
		return -1;
	end_sinks(s);
	if (getenv("MEMSCOPE_PIPELINE_STATS"))
		print_stats(s, opt->command_name);
	return 0;
}

void session_pipeline_close(struct session *s)
{
	struct session_pipeline *p = s->pipeline;

	if (p) {
		for (int i = 0; i < p->nr_runners; i++)
			sink_runner_finish(&p->runners[i]);
		if (s->control)
			session_control_stop(s->control);
	}
	/* Every sink added, opened or not: it may hold what its maker gave it. */
	for (int i = 0; i < s->nr_sinks; i++)
		if (s->sinks[i]->ops->close)
			s->sinks[i]->ops->close(s->sinks[i]);
	if (p) {
		for (int i = 0; i < p->nr_runners; i++)
			sink_runner_fini(&p->runners[i]);
		if (p->wake_fd >= 0)
			close(p->wake_fd);
		sample_batch_unref(p->samples);
		frame_free(&p->total);
		if (p->bucket_ns)
			frame_free(&p->bucket);
		free(p->held_added.v);
		free(p->held_retired.v);
		metric_values_free(p->values);
		metric_values_free(p->total_values);
		free(p);
	}
	session_control_free(s->control);
	s->control = NULL;
	s->pipeline = NULL;
	s->nr_sinks = 0;
}
