#include "sampler/sampler.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/target.h"
#include "util/fd_limit.h"

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sampler_open(struct sampler *s, struct source *sources, int nr_sources, struct ms_error *err)
{
	memset(&s->table, 0, sizeof(s->table));
	s->watches = NULL;
	s->nr_watches = 0;
	s->readers_done = NULL;
	s->readers_ctx = NULL;
	s->epoll_fd = -1;
	s->timer_fd = -1;
	s->on_frame = NULL;
	s->frame_ctx = NULL;
	s->cut_stop = false;
	s->sources = sources;
	s->nr_sources = nr_sources;
	for (int i = 0; i < nr_sources; i++) {
		if (sources[i].ops->open(&sources[i], &s->table, err) < 0 ||
		    (sources[i].ops->watch && sources[i].ops->watch(&sources[i], s, err) < 0)) {
			/* Sources opened so far are closed by sampler_close(). */
			s->nr_sources = i + 1;
			return -1;
		}
	}
	if (frame_init(&s->frame, s->table.nr) < 0) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	return 0;
}

/* Series added during a run take retired indices once every reader is done
 * with the frame that retired them. */
static void update_horizon(struct sampler *s)
{
	s->table.horizon = s->readers_done ? s->readers_done(s->readers_ctx) : s->frame.seq;
}

/* The sources have filled the frame: make it as long as the table and list
 * what changed with it. */
static void seal_frame(struct sampler *s)
{
	frame_fit(&s->frame, s->table.nr);
	s->frame.changes = series_table_changes(&s->table, &s->changes) ? &s->changes : NULL;
}

/* The frame went out: retired series lose their values, the next frame
 * starts a new list of changes. */
static void frame_delivered(struct sampler *s)
{
	series_table_frame_done(&s->table, &s->frame, s->frame.seq);
	s->frame.changes = NULL;
	s->frame.seq++;
}

static void take_frame(struct sampler *s, uint64_t *last_ns)
{
	uint64_t now = monotonic_ns();

	update_horizon(s);
	for (int i = 0; i < s->nr_sources; i++)
		s->sources[i].ops->sample(&s->sources[i], &s->frame);
	seal_frame(s);
	s->frame.time_ns = now;
	s->frame.interval_ns = now - *last_ns;
	*last_ns = now;
}

int sampler_cut(struct sampler *s)
{
	if (!s->on_frame)
		return -1;
	take_frame(s, &s->last_ns);
	if (s->on_frame(&s->frame, false, s->frame_ctx))
		s->cut_stop = true;
	frame_delivered(s);
	return 0;
}

void sampler_set_counting(struct sampler *s, bool counting)
{
	for (int i = 0; i < s->nr_sources; i++) {
		const struct source_ops *ops = s->sources[i].ops;

		if (counting && ops->resume)
			ops->resume(&s->sources[i]);
		else if (!counting && ops->pause)
			ops->pause(&s->sources[i]);
	}
}

static int pidfd_open_compat(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Ask a command that is still running to end, and collect its status. */
static void stop_command(struct target *target)
{
	pid_t pid = target->pids[0];

	if (target->child_exited)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (wait4(pid, &target->child_status, WNOHANG, &target->child_rusage) == pid) {
			target->child_exited = true;
			return;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	if (wait4(pid, &target->child_status, 0, &target->child_rusage) == pid)
		target->child_exited = true;
}

/* epoll data: 0 signals, 1 the timer, 2 + i pidfd i, and watches by their
 * fd above WATCH_BASE. */
#define WATCH_BASE (UINT64_C(1) << 32)

static int watch_register(struct sampler *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WATCH_BASE + (uint64_t)fd };

	return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

int sampler_watch_add(struct sampler *s, int fd, sampler_ready_fn on_ready, void *ctx, struct ms_error *err)
{
	struct sampler_watch *grown = realloc(s->watches, sizeof(*grown) * (size_t)(s->nr_watches + 1));

	if (!grown) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	s->watches = grown;
	if (s->epoll_fd >= 0 && watch_register(s, fd) < 0) {
		ms_error_set(err, "cannot watch descriptor %d: %s", fd, strerror(errno));
		return -1;
	}
	s->watches[s->nr_watches++] = (struct sampler_watch){ fd, on_ready, ctx };
	return 0;
}

void sampler_watch_remove(struct sampler *s, int fd)
{
	for (int i = 0; i < s->nr_watches; i++) {
		if (s->watches[i].fd != fd)
			continue;
		if (s->epoll_fd >= 0)
			epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
		s->watches[i] = s->watches[--s->nr_watches];
		return;
	}
}

/* The watch of fd, or NULL when it was removed after epoll reported it. */
static const struct sampler_watch *find_watch(const struct sampler *s, int fd)
{
	for (int i = 0; i < s->nr_watches; i++)
		if (s->watches[i].fd == fd)
			return &s->watches[i];
	return NULL;
}

/* A tick every interval_ns from the CLOCK_MONOTONIC instant first_ns on. */
static int arm_timer(int tfd, uint64_t first_ns, uint64_t interval_ns)
{
	struct itimerspec its = {
		.it_interval = { (time_t)(interval_ns / 1000000000ull), (long)(interval_ns % 1000000000ull) },
		.it_value = { (time_t)(first_ns / 1000000000ull), (long)(first_ns % 1000000000ull) },
	};

	return timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

int sampler_set_interval(struct sampler *s, uint64_t interval_ns, struct ms_error *err)
{
	if (s->timer_fd < 0) {
		ms_error_set(err, "this run has no interval timer (started without -I)");
		return -1;
	}
	if (arm_timer(s->timer_fd, monotonic_ns() + interval_ns, interval_ns) < 0) {
		ms_error_set(err, "cannot change the interval timer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static bool replaying(const struct sampler *s)
{
	for (int i = 0; i < s->nr_sources; i++)
		if (!s->sources[i].replay)
			return false;
	return s->nr_sources > 0;
}

/* Sources that read frames from a file: no timer, no target; the frames keep
 * the times they were recorded with, and the run ends at the end of the file. */
static int replay_run(struct sampler *s, sampler_frame_fn on_frame, void *ctx, struct ms_error *err)
{
	bool last = false;

	for (int i = 0; i < s->nr_sources; i++)
		if (s->sources[i].ops->enable(&s->sources[i], err) < 0)
			return -1;
	s->start_ns = 0;
	while (!last) {
		update_horizon(s);
		for (int i = 0; i < s->nr_sources; i++) {
			s->sources[i].ops->sample(&s->sources[i], &s->frame);
			last |= s->sources[i].finished;
		}
		seal_frame(s);
		if (on_frame(&s->frame, last, ctx)) {
			s->end = SAMPLER_END_SOURCE;
			break;
		}
		frame_delivered(s);
	}
	if (last)
		s->end = SAMPLER_END_TARGET;
	for (int i = 0; i < s->nr_sources; i++)
		s->sources[i].ops->disable(&s->sources[i]);
	return 0;
}

int sampler_run(struct sampler *s, struct target *target, uint64_t interval_ns,
		sampler_frame_fn on_frame, void *ctx, struct ms_error *err)
{
	sigset_t mask, old;
	int sfd, tfd = -1, epfd, live_pids = 0, ret = -1;
	int *pidfds = NULL;
	bool running = true;
	struct epoll_event ev;

	if (replaying(s))
		return replay_run(s, on_frame, ctx, err);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || epfd < 0) {
		char why[256];
		int e = errno;

		if (fd_limit_hit(e))
			fd_limit_explain(e, 0, why, sizeof(why));
		ms_error_set(err, "cannot set up the sampling loop: %s", fd_limit_hit(e) ? why : strerror(e));
		goto out;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = 0;
	epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);

	if (interval_ns) {
		/* Armed once the sources are enabled (below), so that frame k is
		 * taken at start + k intervals. */
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd < 0) {
			ms_error_set(err, "cannot create the interval timer: %s", strerror(errno));
			goto out;
		}
		ev.data.u64 = 1;
		epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);
		s->timer_fd = tfd;
	}
	s->epoll_fd = epfd;
	for (int i = 0; i < s->nr_watches; i++) {
		if (watch_register(s, s->watches[i].fd) < 0) {
			ms_error_set(err, "cannot watch descriptor %d: %s", s->watches[i].fd, strerror(errno));
			goto out;
		}
	}
	if (target->kind == TARGET_PIDS) {
		pidfds = malloc(sizeof(int) * (size_t)target->nr_pids);
		if (!pidfds) {
			ms_error_set(err, "out of memory");
			goto out;
		}
		for (int i = 0; i < target->nr_pids; i++) {
			pidfds[i] = pidfd_open_compat(target->pids[i]);
			if (pidfds[i] < 0)
				continue; /* already gone: it adds nothing more */
			ev.data.u64 = 2 + (uint64_t)i;
			epoll_ctl(epfd, EPOLL_CTL_ADD, pidfds[i], &ev);
			live_pids++;
		}
		if (live_pids == 0)
			running = false;
	}

	for (int i = 0; i < s->nr_sources; i++)
		if (s->sources[i].ops->enable(&s->sources[i], err) < 0)
			goto out;
	s->start_ns = s->last_ns = monotonic_ns();
	s->on_frame = on_frame;
	s->frame_ctx = ctx;
	s->cut_stop = false;
	if (tfd >= 0 && arm_timer(tfd, s->start_ns + interval_ns, interval_ns) < 0) {
		ms_error_set(err, "cannot start the interval timer: %s", strerror(errno));
		goto out;
	}
	if (target->kind == TARGET_COMMAND && target_start_command(target, err) < 0)
		goto out;

	while (running) {
		struct epoll_event events[8];
		int n = epoll_wait(epfd, events, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ms_error_set(err, "epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n && running; i++) {
			uint64_t what = events[i].data.u64;

			if (what == 1) {
				uint64_t expirations;

				if (read(tfd, &expirations, sizeof(expirations)) < 0)
					continue;
				take_frame(s, &s->last_ns);
				if (on_frame(&s->frame, false, ctx)) {
					s->end = SAMPLER_END_SOURCE;
					running = false;
				}
				frame_delivered(s);
			} else if (what >= WATCH_BASE) {
				int fd = (int)(what - WATCH_BASE);
				const struct sampler_watch *w = find_watch(s, fd);

				if ((w && w->on_ready(s, fd, w->ctx)) || s->cut_stop) {
					s->end = SAMPLER_END_SOURCE;
					running = false;
				}
			} else if (what == 0) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) != sizeof(si))
					continue;
				if (si.ssi_signo == SIGCHLD) {
					if (target->kind == TARGET_COMMAND &&
					    wait4(target->pids[0], &target->child_status, WNOHANG, &target->child_rusage) ==
					    target->pids[0]) {
						target->child_exited = true;
						s->end = SAMPLER_END_TARGET;
						running = false;
					}
					continue;
				}
				s->end = SAMPLER_END_SIGNAL;
				s->end_signal = (int)si.ssi_signo;
				running = false;
			} else {
				int index = (int)(what - 2);

				epoll_ctl(epfd, EPOLL_CTL_DEL, pidfds[index], NULL);
				close(pidfds[index]);
				pidfds[index] = -1;
				if (--live_pids == 0) {
					s->end = SAMPLER_END_TARGET;
					running = false;
				}
			}
		}
	}
	/* The last frame covers everything since the previous one, so the sum of
	 * all frames equals the total. */
	take_frame(s, &s->last_ns);
	for (int i = 0; i < s->nr_sources; i++)
		s->sources[i].ops->disable(&s->sources[i]);
	on_frame(&s->frame, true, ctx);
	frame_delivered(s);
	if (target->kind == TARGET_COMMAND)
		stop_command(target);
	ret = 0;
out:
	if (ret < 0 && target->kind == TARGET_COMMAND && !target->child_exited && target->nr_pids)
		stop_command(target);
	if (pidfds) {
		for (int i = 0; i < target->nr_pids; i++)
			if (pidfds[i] >= 0)
				close(pidfds[i]);
		free(pidfds);
	}
	if (tfd >= 0)
		close(tfd);
	s->on_frame = NULL;
	s->frame_ctx = NULL;
	s->timer_fd = -1;
	s->epoll_fd = -1;
	if (epfd >= 0)
		close(epfd);
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void sampler_close(struct sampler *s)
{
	for (int i = 0; i < s->nr_sources; i++)
		if (s->sources[i].ops && s->sources[i].ops->close)
			s->sources[i].ops->close(&s->sources[i]);
	series_table_free(&s->table);
	frame_free(&s->frame);
	free(s->watches);
	s->watches = NULL;
	s->nr_watches = 0;
}

void sampler_set_readers_done(struct sampler *s, uint64_t (*readers_done)(void *ctx), void *ctx)
{
	s->readers_done = readers_done;
	s->readers_ctx = ctx;
}
