#include "sinks/top/top_sink.h"
#include "util/array.h"
#include "util/report.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* How often top asks whether a `memscope record` is running. */
#define RECORDING_CHECK_NS (2ull * 1000000000ull)

/* The intervals + and - step through: down to the shortest -I takes. */
static const long interval_steps_ms[] = { TOP_MIN_INTERVAL_MS, 25, 50, 100, 250, 500, 1000, 2000, 5000, 10000 };
#define NR_STEPS ((int)(ARRAY_SIZE(interval_steps_ms)))

struct top_sink {
	struct top_sink_options opt;
	const struct sink_setup *setup;
	struct top_model model;
	bool model_open;
	long updates;
	bool quit;
	uint64_t recording_checked_ns;
	uint64_t shown_interval_ns;   /* a replay: the recorded interval of the frame on the screen */
};

static void check_recording(struct top_sink *t, uint64_t now_ns)
{
	t->recording_checked_ns = now_ns;
	if (t->opt.check_recording)
		t->opt.check_recording(t->opt.ctx, t->opt.display.recording, sizeof(t->opt.display.recording));
}

static int top_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct top_sink *t = sink->priv;
	struct top_inputs in = t->opt.inputs;

	t->setup = setup;
	in.table = setup->table;
	in.host = setup->host;
	in.topo = setup->topo;
	in.plan = setup->plan;
	in.engine = setup->engine;
	in.res = setup->res;
	if (top_model_open(&t->model, &in, err) < 0)
		return -1;
	t->model_open = true;
	if (!t->opt.inputs.replay)
		check_recording(t, 0);
	if (t->opt.view)
		top_view_draw(t->opt.view, &t->model, &t->opt.display);
	return 0;
}

static int top_event(struct sink *sink, const struct sink_event *ev);

/* A recording on the full screen: each frame stays up for its recorded
 * interval, and keys work meanwhile (read here: the sampler reads a file,
 * it watches no terminal). Non-zero: q was pressed. UINT64_MAX: until q. */
static int replay_pace(struct sink *sink, uint64_t interval_ns)
{
	struct top_sink *t = sink->priv;
	bool until_quit = interval_ns == UINT64_MAX;
	uint64_t until = until_quit ? UINT64_MAX : monotonic_ns() + interval_ns;

	for (;;) {
		uint64_t now = monotonic_ns();
		struct pollfd pfd[2] = {
			{ .fd = top_view_input_fd(t->opt.view), .events = POLLIN },
			{ .fd = t->opt.signal_fd, .events = POLLIN },
		};
		struct sink_event ev = { .kind = SINK_EVENT_KEYS };
		bool resized;

		if (now >= until && !t->opt.display.paused)
			return 0;
		/* Paused: the screen stays until p again (or q). */
		if (poll(pfd, t->opt.signal_fd >= 0 ? 2 : 1,
			 until_quit ? -1 : t->opt.display.paused ? 250 : (int)((until - now) / 1000000 + 1)) <= 0)
			continue;
		/* SIGINT, SIGTERM, SIGHUP: the replay ends as with q. */
		if (t->opt.signal_fd >= 0 && (pfd[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			/* Taken here, so that it is not delivered when the command
			 * unblocks it. */
			if (read(t->opt.signal_fd, &si, sizeof(si)) < 0) {
				/* Taken by the command's drain already. */
			}
			t->quit = true;
			return 1;
		}
		ev.length = top_view_read_input(t->opt.view, ev.text, sizeof(ev.text), &resized);
		if ((resized && top_event(sink, &(struct sink_event){ .kind = SINK_EVENT_RESIZE })) ||
		    (ev.length && top_event(sink, &ev)))
			return 1;
	}
}

static int top_frame(struct sink *sink, const struct sink_frame *f)
{
	struct top_sink *t = sink->priv;
	struct top_display *d = &t->opt.display;
	bool replay = t->opt.inputs.replay;

	/* The final frame only closes the run; it is usually a partial interval.
	 * A recording's last frame is what it recorded last: shown. */
	if (t->quit || (f->last && (!replay || f->frame->interval_ns == 0)))
		return 1;
	if (t->opt.view && replay && t->model.updates && replay_pace(sink, f->frame->interval_ns))
		return 1;
	if (!replay && f->frame->time_ns - t->recording_checked_ns >= RECORDING_CHECK_NS)
		check_recording(t, f->frame->time_ns);
	if (t->opt.view) {
		/* Paused: the screen keeps the values it shows; frames go on. */
		if (!d->paused) {
			top_model_update(&t->model, f->frame, f->metrics);
			top_view_draw(t->opt.view, &t->model, d);
		}
		t->shown_interval_ns = f->frame->interval_ns;
	} else {
		top_model_update(&t->model, f->frame, f->metrics);
		flockfile(stdout);
		top_batch_print(stdout, &t->model, d);
		fflush(stdout);
		funlockfile(stdout);
	}
	return t->opt.max_updates && ++t->updates >= t->opt.max_updates;
}

/* Move steps along interval_steps_ms (+ longer, - shorter). */
static void change_interval(struct top_sink *t, int steps)
{
	struct top_display *d = &t->opt.display;
	long now = (long)d->interval_ms, next;
	int at = 0;

	/* The step nearest the current interval (which -I may have set anywhere). */
	for (int i = 0; i < NR_STEPS; i++)
		if (labs(interval_steps_ms[i] - now) < labs(interval_steps_ms[at] - now))
			at = i;
	/* Off the ladder: reaching the nearest step is the first step. */
	if (steps > 0 && interval_steps_ms[at] > now)
		steps--;
	if (steps < 0 && interval_steps_ms[at] < now)
		steps++;
	at += steps;
	at = at < 0 ? 0 : at >= NR_STEPS ? NR_STEPS - 1 : at;
	next = interval_steps_ms[at];
	if (next == now) {
		snprintf(d->notice, sizeof(d->notice), "interval stays %ld ms (range %ld-%ld ms)", now,
			 interval_steps_ms[0], interval_steps_ms[NR_STEPS - 1]);
		return;
	}
	/* The sampling thread changes the timer; frames come at the new pace. */
	t->setup->set_interval(t->setup->ctx, (uint64_t)next * 1000000ull);
	d->interval_ms = (uint64_t)next;
	snprintf(d->notice, sizeof(d->notice), "interval %ld ms", next);
}

static int top_event(struct sink *sink, const struct sink_event *ev)
{
	struct top_sink *t = sink->priv;
	struct top_display *d = &t->opt.display;
	int requests, steps;

	if (ev->kind == SINK_EVENT_INTERVAL) {
		d->interval_ms = ev->interval_ns / 1000000ull;
		return 0;
	}
	if (!t->opt.view || (ev->kind != SINK_EVENT_KEYS && ev->kind != SINK_EVENT_RESIZE))
		return 0;
	requests = top_view_keys(t->opt.view, &t->model, d, ev->text, ev->kind == SINK_EVENT_KEYS ? ev->length : 0,
				 ev->kind == SINK_EVENT_RESIZE, &steps);
	if (requests & TOP_REQ_QUIT) {
		t->quit = true;     /* q ends the run now */
		return 1;
	}
	/* A recording keeps its own pace. */
	if ((requests & TOP_REQ_INTERVAL) && !t->opt.inputs.replay)
		change_interval(t, steps);
	if (requests & TOP_REQ_LABEL) {
		check_recording(t, t->recording_checked_ns);
		if (t->opt.add_label)
			t->opt.add_label(t->opt.ctx, top_view_label(t->opt.view), t->model.elapsed_s, d->notice,
					 sizeof(d->notice));
	}
	if (requests != TOP_REQ_NONE)
		top_view_draw(t->opt.view, &t->model, d);
	return 0;
}

static void top_end(struct sink *sink, const struct sink_end *end)
{
	struct top_sink *t = sink->priv;

	bool totals = t->opt.inputs.replay && t->model_open && t->model.updates;

	(void)end;
	/* A replay that reached its end (not one q cut short) shows the run's
	 * totals on the screen, until q: what the user reads before leaving.
	 * The last frame stays up for its interval first, as every frame does. */
	if (t->opt.view && totals && !t->quit && !replay_pace(sink, t->shown_interval_ns)) {
		t->opt.display.ended = true;
		top_view_draw(t->opt.view, &t->model, &t->opt.display);
		replay_pace(sink, UINT64_MAX);
	}
	/* The screen goes before anything else is printed (the scripts' reports). */
	if (t->opt.view)
		totals = false;     /* shown on the screen: stdout is the terminal's */
	top_view_close(t->opt.view);
	t->opt.view = NULL;
	/* Batch output of a replay ends with the run's totals: every process, those that exited too. */
	if (totals) {
		flockfile(stdout);
		if (top_batch_print_totals(stdout, &t->model) < 0)
			ms_warn("out of memory for the run's totals");
		funlockfile(stdout);
	}
}

static void top_close(struct sink *sink)
{
	struct top_sink *t = sink->priv;

	if (!t)
		return;
	top_view_close(t->opt.view);
	if (t->model_open)
		top_model_close(&t->model);
	free(t);
	sink->priv = NULL;
}

static const struct sink_ops top_sink_ops = {
	.name = "top",
	.open = top_open,
	.frame = top_frame,
	.event = top_event,
	.end = top_end,
	.close = top_close,
};

int top_sink_init(struct sink *sink, const struct top_sink_options *opt, struct ms_error *err)
{
	struct top_sink *t = calloc(1, sizeof(*t));

	memset(sink, 0, sizeof(*sink));
	if (!t) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	t->opt = *opt;
	sink->ops = &top_sink_ops;
	sink->priv = t;
	/* A screen shows the latest: two frames behind is enough. */
	sink->queue_length = 2;
	return 0;
}
