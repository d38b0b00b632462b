/* The control socket of a running memscope: `memscope ctl`, the marker API
 * (contrib/marker) and scripts send it one-line commands - label, phase,
 * pause, resume, interval, record, status - and get one acknowledgement back.
 *
 * Safety: the socket lives in a directory only its user can enter
 * ($XDG_RUNTIME_DIR/memscope, or /run/memscope for root; mode 0700), is itself
 * mode 0600, and every connection's peer credentials are checked: only the
 * user running memscope, or root, is served. A SOCK_SEQPACKET socket keeps
 * one request and one reply each a whole message. */
#ifndef MEMSCOPE_CTL_H
#define MEMSCOPE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/ctl_limit.h"
#include "util/error.h"

#define CTL_MAX_MESSAGE 1024
/* Set in the environment of a command memscope runs, so it can find the socket. */
#define CTL_SOCKET_ENV "MEMSCOPE_CTL_SOCKET"

/* Connections accepted whose request has not arrived yet. */
#define CTL_MAX_PENDING 16

struct ctl_server {
	/* What to watch: readable when a client connects or a connected one
	 * sends (an epoll set of the listening socket and the connections). */
	int fd;                  /* -1 when none */
	int listen_fd;
	char path[108];          /* sizeof(sockaddr_un.sun_path) */
	unsigned long refused;   /* requests refused by the credential check */
	struct ctl_pending {
		int fd;
		uint64_t since_ns;
	} pending[CTL_MAX_PENDING];
	int nr_pending;
	struct ctl_limit limit;
};

/* Answer one request: command is the first word ("label"), arg the rest
 * (may be ""). Write "ok: ..." or "error: ..." to reply and return
 * CTL_ANSWERED; or return CTL_ANSWER_LATER to answer once the work is done
 * (on any thread): the handler then owns client - a connection to answer
 * with ctl_reply(), or CTL_CLIENT_FIFO (the FIFO: report a failure on
 * stderr). */
enum { CTL_ANSWERED, CTL_ANSWER_LATER };
#define CTL_CLIENT_FIFO (-1)
typedef int (*ctl_handler_fn)(const char *command, const char *arg, int client, char *reply, size_t size,
			      void *ctx);

/* Where control sockets live (created 0700 if missing, checked if present). */
int ctl_socket_dir(char *buf, size_t size, bool create, struct ms_error *err);
/* The socket of memscope process pid. */
int ctl_socket_path(pid_t pid, char *buf, size_t size, bool create_dir, struct ms_error *err);

int ctl_server_open(struct ctl_server *srv, const char *path, struct ms_error *err);
/* srv->fd is readable: accept new clients, and answer those whose request
 * has arrived (credentials checked, one request, one reply). Never waits: a
 * client that connects and says nothing stays pending (at most
 * CTL_MAX_PENDING, for a second) while sampling goes on; a wakeup handles a
 * bounded number of clients, and requests past the rate (ctl_limit.h) are
 * answered with an error and counted. */
void ctl_server_serve(struct ctl_server *srv, ctl_handler_fn handler, void *ctx);
/* Close and remove the socket. */
void ctl_server_close(struct ctl_server *srv);
/* Answer a request kept with CTL_ANSWER_LATER, and close its connection. Any thread. */
void ctl_reply(int client, const char *reply);

/* Client: send request to the socket at path and wait for the reply. */
int ctl_request(const char *path, const char *request, char *reply, size_t size, struct ms_error *err);
/* The socket of pid (> 0), else of the one memscope running for this user. */
int ctl_find_socket(pid_t pid, char *buf, size_t size, struct ms_error *err);

#endif
