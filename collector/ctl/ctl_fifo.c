#include "ctl/ctl_fifo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Only a FIFO of this user that nobody else may write is taken. Others
 * reading it (mkfifo's 0644) cannot send commands. */
static int check_fifo(const struct stat *st, const char *path, struct ms_error *err)
{
	if (S_ISREG(st->st_mode)) {
		ms_error_set(err, "--fifo %s exists and is not a FIFO but a regular file (a command such as "
			     "'echo pause > %s' that ran before memscope made the FIFO creates one); remove it, and "
			     "make the FIFO before starting memscope: mkfifo %s", path, path, path);
		return -1;
	}
	if (!S_ISFIFO(st->st_mode)) {
		ms_error_set(err, "--fifo %s exists and is not a FIFO; give another path, or remove it", path);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		ms_error_set(err, "--fifo %s belongs to uid %u, not to this user (uid %u): another user could "
			     "send it commands; give a path of your own", path, (unsigned)st->st_uid,
			     (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & 022) {
		ms_error_set(err, "--fifo %s has mode %04o: other users may write to it; chmod go-w it, or "
			     "remove it and memscope creates it 0600", path, (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

int ctl_fifo_open(struct ctl_fifo *fifo, const char *path, struct ms_error *err)
{
	struct stat st;
	mode_t old_mask;
	int ret;

	memset(fifo, 0, sizeof(*fifo));
	fifo->fd = -1;
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
		ms_error_set(err, "--fifo %s: cannot create it: %s", path, strerror(errno));
		return -1;
	} else if (lstat(path, &st) == 0 && check_fifo(&st, path, err) < 0) {
		/* Refused before opening: opening a device or someone's file is not harmless. */
		return -1;
	}
	/* O_NOFOLLOW: a symbolic link planted at the path is refused, not followed. */
	fifo->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fifo->fd < 0) {
		ms_error_set(err, "--fifo %s: cannot open it: %s", path,
			     errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		ctl_fifo_close(fifo);
		return -1;
	}
	/* Again on what was opened: the path may have been swapped since. What
	 * fails here is not what we created: it is left where it is. */
	if (fstat(fifo->fd, &st) < 0) {
		ms_error_set(err, "--fifo %s: %s", path, strerror(errno));
		fifo->created = false;
		ctl_fifo_close(fifo);
		return -1;
	}
	if (check_fifo(&st, path, err) < 0) {
		fifo->created = false;
		ctl_fifo_close(fifo);
		return -1;
	}
	return 0;
}

static void run_line(char *line, const char *command_name, ctl_handler_fn handler, void *ctx)
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
		fprintf(stderr, "memscope %s: fifo: %s\n", command_name, reply[0] ? reply : "error: no reply");
}

/* Bytes read per wakeup: a writer that never stops (yes 'label x' > FIFO)
 * gets this much attention, then sampling goes on. */
#define FIFO_BUDGET (64 * 1024)

static void report_drops(struct ctl_fifo *fifo, const char *command_name, const char *when)
{
	fprintf(stderr, "memscope %s: fifo: %lu commands dropped %s: more than %d a second arrived\n",
		command_name, fifo->limit.dropped, when, CTL_RATE);
}

void ctl_fifo_serve(struct ctl_fifo *fifo, const char *command_name, ctl_handler_fn handler, void *ctx)
{
	char buf[4096];
	ssize_t got;
	size_t taken = 0;

	fifo->command_name = command_name;
	while (taken < FIFO_BUDGET && (got = read(fifo->fd, buf, sizeof(buf))) > 0) {
		taken += (size_t)got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				if (fifo->overlong)
					fprintf(stderr, "memscope %s: fifo: error: a line longer than %d bytes was "
						"dropped\n", command_name, CTL_MAX_MESSAGE);
				else if (fifo->len > 0 && ctl_limit_take(&fifo->limit)) {
					fifo->line[fifo->len] = '\0';
					run_line(fifo->line, command_name, handler, ctx);
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
	if (fifo->fd >= 0)
		close(fifo->fd);
	if (fifo->created)
		unlink(fifo->path);
	fifo->fd = -1;
	fifo->created = false;
}
