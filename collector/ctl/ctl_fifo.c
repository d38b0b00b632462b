#include "ctl/ctl_fifo.h"
#include "util/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Only a FIFO of this user that nobody else may write is taken. Others
 * reading it (mkfifo's 0644) cannot send commands. */
static int check_fifo(const struct stat *st, const char *option, const char *path, struct ms_error *err)
{
	if (S_ISREG(st->st_mode)) {
		ms_error_set(err, "%s%s exists and is not a FIFO but a regular file (a command such as "
			     "'echo pause > %s' that ran before memscope made the FIFO creates one); remove it, and "
			     "make the FIFO before starting memscope: mkfifo %s", option, path, path, path);
		return -1;
	}
	if (!S_ISFIFO(st->st_mode)) {
		ms_error_set(err, "%s%s exists and is not a FIFO; give another path, or remove it", option, path);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		ms_error_set(err, "%s%s belongs to uid %u, not to this user (uid %u): another user could "
			     "send it commands; give a path of your own", option, path, (unsigned)st->st_uid,
			     (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & 022) {
		ms_error_set(err, "%s%s has mode %04o: other users may write to it; chmod go-w it, or "
			     "remove it%s", option, path, (unsigned)(st->st_mode & 07777),
			     strcmp(option, "--fifo ") ? "" : " and memscope creates it 0600");
		return -1;
	}
	return 0;
}

void ctl_fifo_init(struct ctl_fifo *fifo)
{
	memset(fifo, 0, sizeof(*fifo));
	fifo->fd = fifo->ack_fd = -1;
	fifo->option = "--fifo ";
}

int ctl_fifo_open(struct ctl_fifo *fifo, const char *path, struct ms_error *err)
{
	struct stat st;
	mode_t old_mask;
	int ret;

	ctl_fifo_init(fifo);
	fifo->own_fds = true;
	if (snprintf(fifo->path, sizeof(fifo->path), "%s", path) >= (int)sizeof(fifo->path)) {
		ms_error_set(err, "--fifo: the path is too long");
		return -1;
	}
	old_mask = umask(0177);
	ret = mkfifo(path, 0600);
	umask(old_mask);
	if (ret == 0) {
		fifo->created = true;
	} else if (errno != EEXIST) {
		ms_error_set(err, "%s%s: cannot create it: %s", fifo->option, path, strerror(errno));
		return -1;
	} else if (lstat(path, &st) == 0 && check_fifo(&st, fifo->option, path, err) < 0) {
		/* Refused before opening: opening a device or someone's file is not harmless. */
		return -1;
	}
	/* O_NOFOLLOW: a symbolic link planted at the path is refused, not followed. */
	fifo->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fifo->fd < 0) {
		ms_error_set(err, "%s%s: cannot open it: %s", fifo->option, path,
			     errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		ctl_fifo_close(fifo);
		return -1;
	}
	/* Again on what was opened: the path may have been swapped since. What
	 * fails here is not what we created: it is left where it is. */
	if (fstat(fifo->fd, &st) < 0) {
		ms_error_set(err, "%s%s: %s", fifo->option, path, strerror(errno));
		fifo->created = false;
		ctl_fifo_close(fifo);
		return -1;
	}
	if (check_fifo(&st, fifo->option, path, err) < 0) {
		fifo->created = false;
		ctl_fifo_close(fifo);
		return -1;
	}
	return 0;
}

/* --control fifo:: one FIFO that exists, opened read-write (never blocks,
 * never sees EOF), and checked on the descriptor opened. */
static int open_existing(const char *option, const char *path, struct ms_error *err)
{
	struct stat st;
	int fd;

	if (!path[0]) {
		ms_error_set(err, "%s: a FIFO path is missing: fifo:CTL[,ACK]", option);
		return -1;
	}
	if (lstat(path, &st) < 0) {
		ms_error_set(err, "%s%s: %s; make it first: mkfifo %s", option, path, strerror(errno), path);
		return -1;
	}
	if (check_fifo(&st, option, path, err) < 0)
		return -1;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ms_error_set(err, "%s%s: cannot open it: %s", option, path,
			     errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || check_fifo(&st, option, path, err) < 0) {
		if (!err->text[0])
			ms_error_set(err, "%s%s: %s", option, path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* --control fd:: a descriptor number the caller opened for reading (CTL)
 * or writing (ACK). */
static int take_fd(const char *spec, const char *text, bool write_end, struct ms_error *err)
{
	char *end;
	long n;
	int fl;

	errno = 0;
	n = strtol(text, &end, 10);
	if (errno || end == text || *end || n < 0 || n > INT_MAX) {
		ms_error_set(err, "--control %s: '%s' is not a descriptor number: fd:CTL[,ACK] takes the numbers "
			     "of descriptors open for memscope (exec {ctl}<>FIFO)", spec, text);
		return -1;
	}
	fl = fcntl((int)n, F_GETFL);
	if (fl < 0) {
		ms_error_set(err, "--control %s: descriptor %ld is not open: %s", spec, n, strerror(errno));
		return -1;
	}
	if ((fl & O_ACCMODE) == (write_end ? O_RDONLY : O_WRONLY)) {
		ms_error_set(err, "--control %s: descriptor %ld is open for %s only; %s", spec, n,
			     write_end ? "reading" : "writing",
			     write_end ? "ACK must be writable" : "CTL must be readable");
		return -1;
	}
	/* Its flags are shared with whoever opened it (O_NONBLOCK is not
	 * set on it): it is read once per wake-up instead (one_read). */
	return (int)n;
}

int ctl_fifo_open_control(struct ctl_fifo *fifo, const char *spec, struct ms_error *err)
{
	char ctl[PATH_MAX], *ack;
	bool by_fd = !strncmp(spec, "fd:", 3);

	ctl_fifo_init(fifo);
	fifo->option = "--control fifo:";
	if (!by_fd && strncmp(spec, "fifo:", 5)) {
		ms_error_set(err, "--control %s: give fd:CTL[,ACK] (descriptor numbers) or fifo:CTL[,ACK] (FIFO "
			     "paths)", spec);
		return -1;
	}
	if (snprintf(ctl, sizeof(ctl), "%s", spec + (by_fd ? 3 : 5)) >= (int)sizeof(ctl)) {
		ms_error_set(err, "--control %s: the path is too long", spec);
		return -1;
	}
	ack = strchr(ctl, ',');
	if (ack)
		*ack++ = '\0';
	snprintf(fifo->path, sizeof(fifo->path), "%s", ctl);
	if (by_fd) {
		if ((fifo->fd = take_fd(spec, ctl, false, err)) < 0 || (ack && (fifo->ack_fd = take_fd(spec, ack, true, err)) < 0)) {
			fifo->fd = fifo->ack_fd = -1;
			return -1;
		}
		fifo->one_read = true;
		if (fifo->fd == fifo->ack_fd && fifo->fd >= 0) {
			ms_error_set(err, "--control %s: CTL and ACK are the same descriptor; the acks would be read "
				     "back as commands", spec);
			fifo->fd = fifo->ack_fd = -1;
			return -1;
		}
		return 0;
	}
	fifo->own_fds = true;
	if ((fifo->fd = open_existing(fifo->option, ctl, err)) < 0 ||
	    (ack && (fifo->ack_fd = open_existing(fifo->option, ack, err)) < 0)) {
		ctl_fifo_close(fifo);
		return -1;
	}
	return 0;
}

/* A command done: its acknowledgement (perf's "ack\n"). A reader gone or
 * behind loses it; the run goes on. */
static void acknowledge(const struct ctl_fifo *fifo)
{
	if (fifo->ack_fd >= 0 && write(fifo->ack_fd, "ack\n", 4) != 4) {
		/* Nothing waits for it. */
	}
}

static void run_line(const struct ctl_fifo *fifo, char *line, const char *command_name, ctl_handler_fn handler,
		     void *ctx)
{
	char reply[CTL_MAX_MESSAGE];
	size_t n = strlen(line);
	char *arg;

	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
		line[--n] = '\0';
	if (!line[0])
		return;                     /* blank lines are harmless */
	arg = strchr(line, ' ');
	if (arg)
		*arg++ = '\0';
	reply[0] = '\0';
	if (handler(line, arg ? arg : "", CTL_CLIENT_FIFO, reply, sizeof(reply), ctx) == CTL_ANSWER_LATER)
		return;      /* the handler reports a failure itself */
	if (strncmp(reply, "ok", 2) != 0)
		ms_warn("%s: %s", strcmp(fifo->option, "--fifo ") ?
			"control" : "fifo", reply[0] ? reply : "error: no reply");
	else
		acknowledge(fifo);
}

/* Bytes read per wakeup: a writer that never stops (yes 'label x' > FIFO)
 * gets this much attention, then sampling goes on. */
#define FIFO_BUDGET (64 * 1024)

static void report_drops(struct ctl_fifo *fifo, const char *command_name, const char *when)
{
	ms_warn("fifo: %lu commands dropped %s: more than %d a second arrived", fifo->limit.dropped, when, CTL_RATE);
}

void ctl_fifo_serve(struct ctl_fifo *fifo, const char *command_name, ctl_handler_fn handler, void *ctx)
{
	char buf[4096];
	ssize_t got;
	size_t taken = 0;

	fifo->command_name = command_name;
	while (taken < FIFO_BUDGET && !fifo->eof && (got = read(fifo->fd, buf, sizeof(buf))) >= 0) {
		/* Every writer of a descriptor given (fd:) has closed it. */
		if (got == 0) {
			fifo->eof = true;
			break;
		}
		taken += fifo->one_read ? FIFO_BUDGET : (size_t)got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				if (fifo->overlong)
					ms_warn("fifo: error: a line longer than %d bytes was "
						"dropped", CTL_MAX_MESSAGE);
				else if (fifo->len > 0 && ctl_limit_take(&fifo->limit)) {
					fifo->line[fifo->len] = '\0';
					run_line(fifo, fifo->line, command_name, handler, ctx);
				}
				fifo->len = 0;
				fifo->overlong = false;
			} else if (fifo->len < CTL_MAX_MESSAGE) {
				fifo->line[fifo->len++] = buf[i];
			} else {
				fifo->overlong = true;
			}
		}
	}
	if (ctl_limit_report_due(&fifo->limit))
		report_drops(fifo, command_name, "so far");
}

void ctl_fifo_close(struct ctl_fifo *fifo)
{
	if (fifo->limit.dropped && fifo->command_name)
		report_drops(fifo, fifo->command_name, "in all");
	fifo->limit = (struct ctl_limit){ 0 };
	if (fifo->own_fds && fifo->fd >= 0)
		close(fifo->fd);
	if (fifo->own_fds && fifo->ack_fd >= 0)
		close(fifo->ack_fd);
	if (fifo->created)
		unlink(fifo->path);
	fifo->fd = fifo->ack_fd = -1;
	fifo->created = false;
}
