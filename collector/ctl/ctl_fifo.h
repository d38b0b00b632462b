/* A FIFO that takes the control socket's commands one per line, for tools
 * and scripts written for NUMAscope's control FIFO (record FILE, label TEXT,
 * pause, resume, interval MS): `echo "label warm-up done" > FIFO`.
 *
 * A FIFO cannot answer, so only failed commands are reported, on stderr.
 * Safety: it is created mode 0600 (no moment with a wider mode) and owned by
 * the running user; a path that exists must already be such a FIFO - never
 * a file, a link, or a FIFO others may write - and it is checked again on the
 * opened descriptor, so it cannot be swapped in between. It is opened
 * read-write, so it stays open with no writer and the reader never sees EOF
 * between two `echo`s. */
#ifndef MEMSCOPE_CTL_FIFO_H
#define MEMSCOPE_CTL_FIFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "ctl/ctl.h"
#include "util/error.h"

struct ctl_fifo {
	int fd;                         /* -1 when none */
	int ack_fd;                     /* "ack\n" after each command done (stat --control), or -1 */
	bool own_fds;                   /* opened here: closed at close (not fd:N given by the caller) */
	bool one_read;                  /* a descriptor given may block: one read() per wake-up */
	bool eof;                       /* its writers are gone: not watched any more */
	const char *option;             /* how messages name it: "--fifo", "--control fifo:" */
	char path[PATH_MAX];
	bool created;                   /* made by us: removed at close */
	char line[CTL_MAX_MESSAGE + 1]; /* a command not yet ended by '\n' */
	size_t len;
	bool overlong;                  /* dropping the rest of a line longer than CTL_MAX_MESSAGE */
	struct ctl_limit limit;         /* commands per second (ctl_limit.h) */
	const char *command_name;       /* for the report of drops at close */
};

int ctl_fifo_open(struct ctl_fifo *fifo, const char *path, struct ms_error *err);
/* perf's --control forms: "fifo:CTL[,ACK]" opens two FIFOs that exist
 * (mkfifo; checked as above, both: a forged ack misleads as much as a forged
 * command), "fd:CTL[,ACK]" takes descriptors the caller opened. Commands
 * come one per line from CTL; each one done is acknowledged with "ack\n" on
 * ACK. err names the argument when it is wrong. */
int ctl_fifo_open_control(struct ctl_fifo *fifo, const char *spec, struct ms_error *err);
/* The FIFO is readable: run the whole lines read through handler (as
 * ctl_server_serve does); failed commands are printed to stderr, prefixed
 * "memscope COMMAND_NAME: ". Never blocks, and reads at most a budget per
 * call; commands past the rate are dropped, counted and reported
 * (ctl_limit.h). */
void ctl_fifo_serve(struct ctl_fifo *fifo, const char *command_name, ctl_handler_fn handler, void *ctx);
/* An unopened one (fd -1), safe to close. */
void ctl_fifo_init(struct ctl_fifo *fifo);
/* Close it, and remove it if ctl_fifo_open created it. */
void ctl_fifo_close(struct ctl_fifo *fifo);

#endif
