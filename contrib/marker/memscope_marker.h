/* memscope markers: let a program being recorded put labels and phases into
 * the recording (memscope record, docs/recording-format.md).
 *
 *     #include "memscope_marker.h"
 *
 *     memscope_phase_begin("solve");
 *     solve();
 *     memscope_phase_end("solve");
 *     memscope_label("checkpoint 3 written");
 *
 * Header-only, no dependency beyond libc. memscope record tells the command
 * it runs where its control socket is (MEMSCOPE_CTL_SOCKET); when that is not
 * set - the program runs without memscope - every call does nothing and
 * returns 1. Each call is one short request on the socket and waits for the
 * acknowledgement, so a marker is in the file, in order, when the call
 * returns: put them at phase boundaries, not in inner loops.
 *
 * Returns 0 when memscope acknowledged, 1 when no memscope is listening, -1
 * on an error (errno set, or EPROTO when memscope refused the request). */
#ifndef MEMSCOPE_MARKER_H
#define MEMSCOPE_MARKER_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MEMSCOPE_MARKER_MAX 1024

static inline int memscope_marker_send(const char *request)
{
	const char *path = getenv("MEMSCOPE_CTL_SOCKET");
	struct sockaddr_un addr;
	char reply[MEMSCOPE_MARKER_MAX];
	ssize_t n;
	int fd, saved;

	if (!path || !path[0])
		return 1;
	if (strlen(path) >= sizeof(addr.sun_path) || strlen(request) >= MEMSCOPE_MARKER_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		/* memscope has ended: the program goes on unmeasured. */
		return saved == ECONNREFUSED || saved == ENOENT ? 1 : -1;
	}
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0 ||
	    (n = recv(fd, reply, sizeof(reply) - 1, 0)) <= 0) {
		saved = errno;
		close(fd);
		errno = saved ? saved : EPROTO;
		return -1;
	}
	close(fd);
	if (n >= 2 && reply[0] == 'o' && reply[1] == 'k')
		return 0;
	errno = EPROTO;
	return -1;
}

static inline int memscope_marker_request(const char *verb, const char *text)
{
	char request[MEMSCOPE_MARKER_MAX];

	if ((size_t)snprintf(request, sizeof(request), "%s %s", verb, text) >= sizeof(request)) {
		errno = E2BIG;
		return -1;
	}
	return memscope_marker_send(request);
}

/* A label at this instant. */
static inline int memscope_label(const char *text)
{
	return memscope_marker_request("label", text);
}

/* Where a named phase of the program begins and ends. */
static inline int memscope_phase_begin(const char *name)
{
	return memscope_marker_request("phase begin", name);
}

static inline int memscope_phase_end(const char *name)
{
	return memscope_marker_request("phase end", name);
}

#endif
