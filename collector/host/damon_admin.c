#include "host/damon_admin.h"
#include "host/sysfs.h"
#include "util/report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Open rel below dir one component at a time, none of them a link; the
 * last with flags (and O_NOFOLLOW). */
static int open_below(int dir, const char *rel, int flags)
{
	char part[256];
	int at = dir;

	for (;;) {
		const char *slash = strchr(rel, '/');
		size_t n = slash ? (size_t)(slash - rel) : strlen(rel);
		int fd;

		if (n == 0 || n >= sizeof(part)) {
			if (at != dir)
				close(at);
			errno = EINVAL;
			return -1;
		}
		memcpy(part, rel, n);
		part[n] = '\0';
		fd = openat(at, part, slash ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
					    : flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (at != dir) {
			int saved = errno;

			close(at);
			errno = saved;
		}
		if (fd < 0 || !slash)
			return fd;
		at = fd;
		rel = slash + 1;
	}
}

/* Write text to the regular file rel below dir. */
static int write_below(int dir, const char *rel, const char *text)
{
	return sysfs_write_fd_str(open_below(dir, rel, O_WRONLY | O_TRUNC), text);
}

static int read_below(int dir, const char *rel, char *buf, size_t size)
{
	return sysfs_read_fd_str(open_below(dir, rel, O_RDONLY), buf, size);
}

static int write_u64(int dir, const char *rel, uint64_t v)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64, v);
	return write_below(dir, rel, text);
}

void damon_admin_init(struct damon_admin *a)
{
	memset(a, 0, sizeof(*a));
	a->kdamonds = -1;
	a->watchdog_pipe = -1;
	a->index = -1;
}

/* ---- The marker ---- */

/* /run/memscope, made root's and private when missing; -1 when it cannot be
 * trusted (another owner, writable by others, a link). */
static int open_run_dir(const char *path, bool create)
{
	struct stat st;
	int fd;

	if (!path)
		path = DAMON_ADMIN_RUN_DIR;
	if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

struct marker {
	long memscope, watchdog, index, kdamond;
};

static int write_marker(const struct damon_admin *a)
{
	char text[128];
	int dir = open_run_dir(a->run_dir, true), fd, rc = -1;

	if (dir < 0)
		return -1;
	fd = openat(dir, DAMON_ADMIN_MARKER ".new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		int len = snprintf(text, sizeof(text), "memscope %ld watchdog %ld kdamond %d pid %ld\n", (long)getpid(),
				   (long)a->watchdog, a->index, (long)a->kdamond_pid);

		rc = write(fd, text, (size_t)len) == len ? 0 : -1;
		close(fd);
		if (rc == 0)
			rc = renameat(dir, DAMON_ADMIN_MARKER ".new", dir, DAMON_ADMIN_MARKER);
	}
	close(dir);
	return rc;
}

static int read_marker(int dir, struct marker *m)
{
	struct stat st;
	char text[128];
	ssize_t n;
	int fd = openat(dir, DAMON_ADMIN_MARKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return (errno = EINVAL, -1);
	text[n] = '\0';
	if (sscanf(text, "memscope %ld watchdog %ld kdamond %ld pid %ld", &m->memscope, &m->watchdog, &m->index,
		   &m->kdamond) != 4 || m->memscope <= 0 || m->index < 0 || m->kdamond <= 0)
		return (errno = EINVAL, -1);
	return 0;
}

static bool alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static int open_kdamonds(const struct sysfs_roots *roots)
{
	char path[4200];

	sysfs_join(path, sizeof(path), roots->sys, "kernel/mm/damon/admin/kdamonds");
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Turn kdamond index off when its thread is still pid, then drop every
 * kdamond directory (nr_kdamonds 0) when index is the last one. Uses only
 * async-signal-safe calls: the watchdog runs it after fork. */
static void turn_off(int kdamonds, const char *index_text, const char *pid_text)
{
	char rel[32], text[32];
	size_t n = strlen(index_text);

	if (n + 8 >= sizeof(rel))
		return;
	memcpy(rel, index_text, n);
	memcpy(rel + n, "/pid", 5);
	if (read_below(kdamonds, rel, text, sizeof(text)) == 0 && !strcmp(text, pid_text)) {
		memcpy(rel + n, "/state", 7);
		write_below(kdamonds, rel, "off");
	}
	/* nr_kdamonds is 0 again only when memscope's was the last (and only)
	 * one: it was 0 before memscope added it. */
	if (read_below(kdamonds, "nr_kdamonds", text, sizeof(text)) == 0) {
		long nr = strtol(text, NULL, 10);

		if (nr == strtol(index_text, NULL, 10) + 1 && nr == 1)
			write_below(kdamonds, "nr_kdamonds", "0");
	}
}

int damon_admin_reap(const struct sysfs_roots *roots, const char *run_dir, char *said, size_t size)
{
	struct marker m;
	char index_text[16], pid_text[24];
	int dir = open_run_dir(run_dir, false), kdamonds;

	if (!run_dir)
		run_dir = DAMON_ADMIN_RUN_DIR;

	said[0] = '\0';
	if (dir < 0)
		return 0;
	if (read_marker(dir, &m) < 0) {
		if (errno != ENOENT)
			snprintf(said, size, "%s/%s: %s: left alone (not a marker memscope wrote)", run_dir,
				 DAMON_ADMIN_MARKER, strerror(errno));
		close(dir);
		return errno == ENOENT ? 0 : -1;
	}
	if (m.memscope == (long)getpid() || alive(m.memscope) || alive(m.watchdog)) {
		close(dir);
		return 0;
	}
	kdamonds = open_kdamonds(roots);
	if (kdamonds < 0) {
		snprintf(said, size, "kernel/mm/damon/admin/kdamonds: %s: the kdamond a dead memscope (pid %ld) left "
			 "could not be checked", strerror(errno), m.memscope);
		close(dir);
		return -1;
	}
	snprintf(index_text, sizeof(index_text), "%ld", m.index);
	snprintf(pid_text, sizeof(pid_text), "%ld", m.kdamond);
	turn_off(kdamonds, index_text, pid_text);
	close(kdamonds);
	unlinkat(dir, DAMON_ADMIN_MARKER, 0);
	close(dir);
	snprintf(said, size, "removed kdamond %ld (pid %ld) that memscope pid %ld started and left behind when it "
		 "was killed with its watchdog (marker %s/%s)", m.index, m.kdamond, m.memscope, run_dir, DAMON_ADMIN_MARKER);
	return 1;
}

int damon_admin_stale(const char *run_dir, char *said, size_t size)
{
	struct marker m;
	int dir = open_run_dir(run_dir, false), rc = 0;

	said[0] = '\0';
	if (dir < 0)
		return 0;
	if (read_marker(dir, &m) == 0 && !alive(m.memscope) && !alive(m.watchdog)) {
		snprintf(said, size, "kdamond %ld (pid %ld) was started by memscope pid %ld, which was killed with its "
			 "watchdog (marker %s/%s)", m.index, m.kdamond, m.memscope, run_dir ? run_dir : DAMON_ADMIN_RUN_DIR,
			 DAMON_ADMIN_MARKER);
		rc = 1;
	}
	close(dir);
	return rc;
}

/* ---- The watchdog ---- */

/* The child: fd 0 the pipe's read end, fd 1 the kdamonds directory, fd 2
 * the run directory (or closed). Everything else is closed so that it holds
 * nothing of memscope's (a command's exec gate, perf events). */
static void watchdog_main(int pipe_rd, int kdamonds, int run_dir, const char *index_text, const char *pid_text)
{
	struct sigaction ignore;
	char byte;
	ssize_t n;

	memset(&ignore, 0, sizeof(ignore));
	ignore.sa_handler = SIG_IGN;
	/* Ctrl-C reaches the whole process group: memscope ends its own way
	 * and tells the watchdog; the watchdog must outlive it to know. */
	sigaction(SIGINT, &ignore, NULL);
	sigaction(SIGQUIT, &ignore, NULL);
	sigaction(SIGHUP, &ignore, NULL);
	sigaction(SIGTERM, &ignore, NULL);
	sigaction(SIGPIPE, &ignore, NULL);
	prctl(PR_SET_NAME, "memscope-damon", 0, 0, 0);
	if (kdamonds == 0 || run_dir == 0 || run_dir == 1)
		_exit(1);   /* cannot happen: stdin is open */
	if (dup2(pipe_rd, 0) < 0 || dup2(kdamonds, 1) < 0)
		_exit(1);
	if (run_dir >= 0) {
		if (dup2(run_dir, 2) < 0)
			_exit(1);
	} else {
		close(2);
	}
	if (syscall(SYS_close_range, 3u, ~0u, 0) < 0)
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	do
		n = read(0, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0);   /* memscope stopped the kdamond itself */
	turn_off(1, index_text, pid_text);
	if (run_dir >= 0)
		unlinkat(2, DAMON_ADMIN_MARKER, 0);
	_exit(0);
}

static int start_watchdog(struct damon_admin *a)
{
	char index_text[16], pid_text[24];
	int fds[2], run_dir;
	pid_t pid;

	snprintf(index_text, sizeof(index_text), "%d", a->index);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)a->kdamond_pid);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	run_dir = open_run_dir(a->run_dir, true);
	pid = fork();
	if (pid == 0)
		watchdog_main(fds[0], a->kdamonds, run_dir, index_text, pid_text);
	close(fds[0]);
	if (run_dir >= 0)
		close(run_dir);
	if (pid < 0) {
		close(fds[1]);
		return -1;
	}
	a->watchdog = pid;
	a->watchdog_pipe = fds[1];
	return 0;
}

/* ---- Start and stop ---- */

static int configure(int kd, const struct damon_admin_setup *s, struct ms_error *err)
{
	char rel[128];
	const char *step;

	step = "contexts/nr_contexts";
	if (write_below(kd, step, "1") < 0)
		goto fail;
	step = "contexts/0/operations";
	if (write_below(kd, step, s->ops) < 0)
		goto fail;
	step = "contexts/0/monitoring_attrs/intervals/sample_us";
	if (write_u64(kd, step, s->sample_us) < 0)
		goto fail;
	step = "contexts/0/monitoring_attrs/intervals/aggr_us";
	if (write_u64(kd, step, s->aggr_us) < 0)
		goto fail;
	step = "contexts/0/monitoring_attrs/intervals/update_us";
	if (write_u64(kd, step, s->update_us) < 0)
		goto fail;
	step = "contexts/0/monitoring_attrs/nr_regions/max";
	if (write_u64(kd, step, s->max_regions) < 0)
		goto fail;
	step = "contexts/0/monitoring_attrs/nr_regions/min";
	if (write_u64(kd, step, s->min_regions) < 0)
		goto fail;
	step = "contexts/0/targets/nr_targets";
	if (write_u64(kd, step, !strcmp(s->ops, "paddr") ? 1 : (uint64_t)s->nr_pids) < 0)
		goto fail;
	if (strcmp(s->ops, "paddr") != 0) {
		for (int i = 0; i < s->nr_pids; i++) {
			snprintf(rel, sizeof(rel), "contexts/0/targets/%d/pid_target", i);
			step = rel;
			if (write_u64(kd, rel, (uint64_t)s->pids[i]) < 0)
				goto fail;
		}
		return 0;
	}
	step = "contexts/0/targets/0/regions/nr_regions";
	if (write_u64(kd, step, (uint64_t)s->nr_ranges) < 0)
		goto fail;
	for (int i = 0; i < s->nr_ranges; i++) {
		snprintf(rel, sizeof(rel), "contexts/0/targets/0/regions/%d/start", i);
		step = rel;
		if (write_u64(kd, rel, s->ranges[i].start) < 0)
			goto fail;
		snprintf(rel, sizeof(rel), "contexts/0/targets/0/regions/%d/end", i);
		if (write_u64(kd, rel, s->ranges[i].end) < 0)
			goto fail;
	}
	return 0;
fail:
	ms_error_set(err, "kernel/mm/damon/admin/kdamonds/0/%s: %s: the kernel refused memscope's kdamond setting",
		     step, strerror(errno));
	return -1;
}

int damon_admin_start(const struct sysfs_roots *roots, const struct damon_admin_setup *setup, struct damon_admin *a,
		      struct ms_error *err)
{
	char text[32];
	long nr;
	int kd;

	damon_admin_init(a);
	a->run_dir = setup->run_dir;
	if (geteuid() != 0) {
		ms_error_set(err, "starting a kdamond needs root (DAMON's sysfs files are root's)");
		return -1;
	}
	a->kdamonds = open_kdamonds(roots);
	if (a->kdamonds < 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds: %s", strerror(errno));
		return -1;
	}
	if (read_below(a->kdamonds, "nr_kdamonds", text, sizeof(text)) < 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds/nr_kdamonds: %s", strerror(errno));
		goto fail;
	}
	nr = strtol(text, NULL, 10);
	if (nr != 0) {
		ms_error_set(err, "DAMON's sysfs interface holds %ld kdamond%s (none running): memscope starts its own "
			     "only when nr_kdamonds is 0, because adding one rebuilds every kdamond directory and their "
			     "settings would be lost (write 0 to kernel/mm/damon/admin/kdamonds/nr_kdamonds if they "
			     "are not needed)", nr, nr == 1 ? "" : "s");
		goto fail;
	}
	if (write_below(a->kdamonds, "nr_kdamonds", "1") < 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds/nr_kdamonds: %s%s", strerror(errno),
			     errno == EBUSY ? ": a kdamond runs (DAMON adds none while one does)" : "");
		goto fail;
	}
	a->index = 0;
	kd = open_below(a->kdamonds, "0", O_RDONLY | O_DIRECTORY);
	if (kd < 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds/0: %s", strerror(errno));
		goto fail;
	}
	if (configure(kd, setup, err) < 0) {
		close(kd);
		goto fail;
	}
	if (write_below(kd, "state", "on") < 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds/0/state: on: %s%s", strerror(errno),
			     errno == EINVAL && strcmp(setup->ops, "paddr") != 0
				     ? " (is the kernel built with CONFIG_DAMON_VADDR? see avail_operations)"
				     : "");
		close(kd);
		goto fail;
	}
	if (read_below(kd, "pid", text, sizeof(text)) < 0 || (a->kdamond_pid = (pid_t)strtol(text, NULL, 10)) <= 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds/0/pid: no thread after turning it on");
		close(kd);
		goto fail;
	}
	close(kd);
	/* Both guards are best effort: without them memscope still stops
	 * its kdamond at its own end. */
	if (start_watchdog(a) < 0)
		ms_warn("damon: cannot fork the watchdog that stops the kdamond if memscope is killed: %s",
			strerror(errno));
	a->marker = write_marker(a) == 0;
	return 0;
fail:
	damon_admin_stop(a);
	return -1;
}

int damon_admin_set_targets(struct damon_admin *a, const pid_t *pids, int nr, struct ms_error *err)
{
	char rel[96];
	const char *step = "contexts/0/targets/nr_targets";
	int kd;

	if (a->kdamonds < 0 || a->index < 0 || nr <= 0) {
		ms_error_set(err, "damon: no running kdamond of memscope's to give %d target%s", nr, nr == 1 ? "" : "s");
		return -1;
	}
	snprintf(rel, sizeof(rel), "%d", a->index);
	kd = open_below(a->kdamonds, rel, O_RDONLY | O_DIRECTORY);
	if (kd < 0) {
		ms_error_set(err, "kernel/mm/damon/admin/kdamonds/%d: %s", a->index, strerror(errno));
		return -1;
	}
	if (write_u64(kd, step, (uint64_t)nr) < 0)
		goto fail;
	for (int i = 0; i < nr; i++) {
		snprintf(rel, sizeof(rel), "contexts/0/targets/%d/pid_target", i);
		step = rel;
		if (write_u64(kd, rel, (uint64_t)pids[i]) < 0)
			goto fail;
	}
	step = "state";
	if (write_below(kd, step, "commit") < 0)
		goto fail;
	close(kd);
	return 0;
fail:
	ms_error_set(err, "kernel/mm/damon/admin/kdamonds/%d/%s: %s: the kernel refused memscope's new targets",
		     a->index, step, strerror(errno));
	close(kd);
	return -1;
}

void damon_admin_stop(struct damon_admin *a)
{
	if (a->kdamonds >= 0 && a->index >= 0) {
		char index_text[16], pid_text[24];

		snprintf(index_text, sizeof(index_text), "%d", a->index);
		snprintf(pid_text, sizeof(pid_text), "%d", (int)a->kdamond_pid);
		if (a->kdamond_pid > 0)
			turn_off(a->kdamonds, index_text, pid_text);
		else
			write_below(a->kdamonds, "nr_kdamonds", "0");   /* failed before it ran */
	}
	if (a->marker) {
		int dir = open_run_dir(a->run_dir, false);

		if (dir >= 0) {
			unlinkat(dir, DAMON_ADMIN_MARKER, 0);
			close(dir);
		}
	}
	if (a->watchdog_pipe >= 0) {
		char done = 1;

		if (write(a->watchdog_pipe, &done, 1) < 0) {
			/* it is gone: nothing to tell */
		}
		close(a->watchdog_pipe);
	}
	if (a->watchdog > 0)
		while (waitpid(a->watchdog, NULL, 0) < 0 && errno == EINTR) {
		}
	if (a->kdamonds >= 0)
		close(a->kdamonds);
	damon_admin_init(a);
}
