#include "pipeline/session_control.h"
#include "util/report.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/session_pipeline.h"
#include "util/utf8_text.h"

#define CONTROL_MAX_PENDING 64

/* A request a sink answers; the reply is the first member, so the sink's
 * pointer to it is a pointer to this. */
struct control_pending {
	struct sink_reply reply;
	atomic_bool busy;
	int client;                   /* the client's connection, or CTL_CLIENT_FIFO */
};

struct session_control {
	struct session *session;
	struct session_pipeline *p;
	struct ctl_server *srv;
	struct ctl_fifo *fifo;
	const char *command_name;
	bool read_at_phases;          /* a frame is taken at each phase marker */
	struct control_pending pending[CONTROL_MAX_PENDING];
	/* FIFO commands refused as busy: said on stderr at most once a second,
	 * and in all at the end (a flood must not flood stderr too). */
	unsigned long fifo_busy, fifo_busy_said;
	uint64_t fifo_busy_said_ns;
};

static void say_fifo_busy(struct session_control *c, const char *when)
{
	ms_warn("fifo: %lu commands not done %s: a sink was still behind on the ones "
		"before", c->fifo_busy, when);
	c->fifo_busy_said = c->fifo_busy;
	c->fifo_busy_said_ns = monotonic_ns();
}

int session_control_attach(struct session *s, struct ctl_server *srv, struct ctl_fifo *fifo, struct ms_error *err)
{
	struct session_control *c = calloc(1, sizeof(*c));

	if (!c) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	c->session = s;
	c->srv = srv;
	c->fifo = fifo;
	for (int i = 0; i < CONTROL_MAX_PENDING; i++) {
		atomic_init(&c->pending[i].busy, false);
		c->pending[i].client = CTL_CLIENT_FIFO;
	}
	s->control = c;
	return 0;
}

void session_control_read_at_phases(struct session *s)
{
	if (s->control)
		s->control->read_at_phases = true;
}

/* ---- Answers ---- */

/* A reply given later (from a sink's thread). */
static void answer(struct session_control *c, int client, const char *text)
{
	if (client != CTL_CLIENT_FIFO)
		ctl_reply(client, text);
	else if (strncmp(text, "ok", 2) != 0)
		/* A FIFO cannot answer: only what failed is said, on stderr. */
		ms_warn("fifo: %s", text[0] ? text : "error: no reply");
}

void session_control_replied(struct session_control *c, struct sink_reply *reply)
{
	struct control_pending *pd = (struct control_pending *)reply;

	answer(c, pd->client, reply->text[0] ? reply->text : "error: no reply");
	pd->client = CTL_CLIENT_FIFO;
	atomic_store_explicit(&pd->busy, false, memory_order_release);
}

static struct control_pending *free_pending(struct session_control *c)
{
	for (int i = 0; i < CONTROL_MAX_PENDING; i++)
		if (!atomic_load_explicit(&c->pending[i].busy, memory_order_acquire))
			return &c->pending[i];
	return NULL;
}

/* ---- Counting ---- */

int session_set_counting(struct session *s, bool counting, char *reply, size_t size)
{
	struct session_pipeline *p = s->pipeline;
	struct sink_event ev = { .kind = counting ? SINK_EVENT_RESUME : SINK_EVENT_PAUSE };

	if (!p || !s->sampler.on_frame) {
		snprintf(reply, size, "error: nothing is being counted now");
		return -1;
	}
	if (p->paused != counting && p->counting_stopped != counting) {
		snprintf(reply, size, counting ? "ok: already enabled" : "ok: already disabled");
		return 0;
	}
	if (!session_pipeline_event_room(p)) {
		snprintf(reply, size, "error: busy: a sink has not yet taken the commands before this one; "
			 "'%s' was not done, try again", counting ? "enable" : "disable");
		return -1;
	}
	/* Enable: what was seen while disabled goes with a frame that is not
	 * handed on (paused still). Disable: what was counted so far is. */
	if (counting || !p->paused)
		sampler_cut(&s->sampler);
	sampler_set_counting(&s->sampler, counting);
	p->counting_stopped = !counting;
	ev.time_ns = session_pipeline_now(p);
	session_pipeline_broadcast(p, &ev);
	if (!counting && !p->paused)
		p->paused_since = s->sampler.frame.seq;
	p->paused = !counting;
	snprintf(reply, size, "ok: events %s at %.3f s", counting ? "enabled" : "disabled", (double)ev.time_ns / 1e9);
	return 0;
}

/* ---- Requests ---- */

static int parse_interval(const char *arg, uint64_t *ns)
{
	char *end;
	long ms;

	errno = 0;
	ms = strtol(arg, &end, 10);
	if (errno || end == arg || *end || ms < SESSION_MIN_INTERVAL_MS || ms > SESSION_MAX_INTERVAL_MS)
		return -1;
	*ns = (uint64_t)ms * 1000000ull;
	return 0;
}

/* Labels and phase names go into the recording as JSON, which holds only
 * UTF-8: a line with other bytes is refused with the reason, as an
 * over-long one is, and the run goes on. */
static bool text_refused(const char *what, const char *text, char *reply, size_t size)
{
	size_t len = strlen(text), bad = utf8_invalid_at(text, len);

	if (bad == len)
		return false;
	snprintf(reply, size, "error: %s: byte %zu (0x%02x) is not UTF-8 text; the %s was not recorded (labels "
		 "and phase names are written as UTF-8)", what, bad + 1, (unsigned char)text[bad], what);
	return true;
}

/* The event's copy of a label ends at a whole character. */
static void copy_text(char *dst, size_t size, const char *text)
{
	size_t n = utf8_cut(text, strlen(text), size - 1);

	memcpy(dst, text, n);
	dst[n] = '\0';
}

/* Turn one request into an event for every sink, or answer it here. The
 * answering sink (the recording) replies to what it did, later; without
 * one, the session replies once the event is queued. */
static int handle(const char *command, const char *arg, int client, char *reply, size_t size, void *ctx)
{
	struct session_control *c = ctx;
	struct session_pipeline *p = c->p;
	struct sink_event ev = { .time_ns = session_pipeline_now(p) };
	struct control_pending *pd = NULL;
	struct ms_error err = { "" };
	bool answers = session_pipeline_answers(p);

	if (!strcmp(command, "label")) {
		if (!arg[0]) {
			snprintf(reply, size, "error: label needs a text: label TEXT");
			return CTL_ANSWERED;
		}
		if (text_refused("label", arg, reply, size))
			return CTL_ANSWERED;
		ev.kind = SINK_EVENT_LABEL;
		copy_text(ev.text, sizeof(ev.text), arg);
		snprintf(reply, size, "ok: label '%s' at %.3f s", arg, (double)ev.time_ns / 1e9);
	} else if (!strcmp(command, "phase")) {
		const char *name = strchr(arg, ' ');

		if (!name || (strncmp(arg, "begin ", 6) && strncmp(arg, "end ", 4)) || !name[1]) {
			snprintf(reply, size, "error: phase begin NAME, or phase end NAME");
			return CTL_ANSWERED;
		}
		if (text_refused("phase name", name + 1, reply, size))
			return CTL_ANSWERED;
		ev.kind = arg[0] == 'b' ? SINK_EVENT_PHASE_BEGIN : SINK_EVENT_PHASE_END;
		copy_text(ev.text, sizeof(ev.text), name + 1);
		snprintf(reply, size, "ok: phase '%s' %s at %.3f s", name + 1, arg[0] == 'b' ? "begins" : "ends",
			 (double)ev.time_ns / 1e9);
	} else if (!strcmp(command, "enable") || !strcmp(command, "disable")) {
		session_set_counting(c->session, command[0] == 'e', reply, size);
		return CTL_ANSWERED;
	} else if (!strcmp(command, "ping")) {
		snprintf(reply, size, "ok: pong");
		return CTL_ANSWERED;
	} else if (!strcmp(command, "pause") || !strcmp(command, "resume")) {
		bool pause = command[0] == 'p';

		/* Counting stopped by disable starts again as enable does. */
		if (!pause && p->counting_stopped) {
			session_set_counting(c->session, true, reply, size);
			return CTL_ANSWERED;
		}
		if (p->paused == pause) {
			snprintf(reply, size, pause ? "ok: already paused" : "ok: already running");
			return CTL_ANSWERED;
		}
		ev.kind = pause ? SINK_EVENT_PAUSE : SINK_EVENT_RESUME;
		snprintf(reply, size, pause ? "ok: paused at %.3f s: no frames are handed on until resume"
					    : "ok: resumed at %.3f s", (double)ev.time_ns / 1e9);
	} else if (!strcmp(command, "interval")) {
		if (parse_interval(arg, &ev.interval_ns) < 0) {
			snprintf(reply, size, "error: interval '%s': give milliseconds between %d and %ld", arg,
				 SESSION_MIN_INTERVAL_MS, SESSION_MAX_INTERVAL_MS);
			return CTL_ANSWERED;
		}
		ev.kind = SINK_EVENT_INTERVAL;
		snprintf(reply, size, "ok: interval %llu ms from %.3f s",
			 (unsigned long long)(ev.interval_ns / 1000000ull), (double)ev.time_ns / 1e9);
	} else if (!strcmp(command, "status") || !strcmp(command, "record")) {
		if (!answers) {
			snprintf(reply, size, "error: '%s' asks about a recording, and memscope %s records none",
				 command, c->command_name);
			return CTL_ANSWERED;
		}
		ev.kind = SINK_EVENT_REQUEST;
		snprintf(ev.text, sizeof(ev.text), "%s%s%s", command, arg[0] ? " " : "", arg);
	} else {
		snprintf(reply, size, "error: unknown command '%s'; the commands are label TEXT, phase begin|end "
			 "NAME, pause, resume, enable, disable, ping, interval MS, record FILE, status", command);
		return CTL_ANSWERED;
	}
	/* Input never waits for a sink, and is never lost without a word. */
	if (!session_pipeline_event_room(p) || (answers && !(pd = free_pending(c)))) {
		if (client == CTL_CLIENT_FIFO) {
			c->fifo_busy++;
			if (monotonic_ns() - c->fifo_busy_said_ns >= 1000000000ull)
				say_fifo_busy(c, "so far");
			return CTL_ANSWER_LATER;     /* said above, not line by line */
		}
		snprintf(reply, size, "error: busy: a sink has not yet taken the commands before this one; "
			 "'%s' was not done, try again", command);
		return CTL_ANSWERED;
	}
	if (ev.kind == SINK_EVENT_INTERVAL && sampler_set_interval(&c->session->sampler, ev.interval_ns, &err) < 0) {
		snprintf(reply, size, "error: %s", err.text);
		return CTL_ANSWERED;
	}
	if (pd) {
		pd->client = client;
		pd->reply.text[0] = '\0';
		atomic_store_explicit(&pd->busy, true, memory_order_relaxed);
		ev.reply = &pd->reply;
	}
	/* The frames before a phase marker end at it: the counts of a phase
	 * are its own, not shares of frames it was part of. */
	if (c->read_at_phases && (ev.kind == SINK_EVENT_PHASE_BEGIN || ev.kind == SINK_EVENT_PHASE_END)) {
		sampler_cut(&c->session->sampler);
		ev.time_ns = session_pipeline_now(p);
	}
	session_pipeline_broadcast(p, &ev);
	if (ev.kind == SINK_EVENT_PAUSE || ev.kind == SINK_EVENT_RESUME) {
		p->paused = ev.kind == SINK_EVENT_PAUSE;
		p->paused_since = c->session->sampler.frame.seq;
	}
	return pd ? CTL_ANSWER_LATER : CTL_ANSWERED;
}

/* ---- Input ---- */

static int on_ready(struct sampler *sampler, int fd, void *ctx)
{
	struct session_control *c = ctx;

	if (c->srv && fd == c->srv->fd)
		ctl_server_serve(c->srv, handle, c);
	else if (c->fifo && fd == c->fifo->fd) {
		ctl_fifo_serve(c->fifo, c->command_name, handle, c);
		if (c->fifo->eof)
			sampler_watch_remove(sampler, fd);
	}
	return 0;
}

int session_control_start(struct session_control *c, struct session_pipeline *p, struct ms_error *err)
{
	c->p = p;
	c->command_name = p->command_name;
	if (c->srv && c->srv->fd >= 0 && sampler_watch_add(&c->session->sampler, c->srv->fd, on_ready, c, err) < 0)
		return -1;
	if (c->fifo && c->fifo->fd >= 0 && !c->fifo->eof && sampler_watch_add(&c->session->sampler, c->fifo->fd, on_ready, c, err) < 0)
		return -1;
	return 0;
}

void session_control_stop(struct session_control *c)
{
	if (!c)
		return;
	if (c->fifo_busy > c->fifo_busy_said || (c->fifo_busy && c->fifo_busy_said_ns))
		say_fifo_busy(c, "in all");
	if (c->srv && c->srv->fd >= 0)
		sampler_watch_remove(&c->session->sampler, c->srv->fd);
	if (c->fifo && c->fifo->fd >= 0 && !c->fifo->eof)
		sampler_watch_remove(&c->session->sampler, c->fifo->fd);
}

void session_control_free(struct session_control *c)
{
	free(c);
}
