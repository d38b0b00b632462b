/* Where memscope live listens: "ADDR:PORT" parsed, checked and bound.
 * Loopback (127.0.0.0/8, ::1, "localhost") is the default and the only
 * address bound without being asked for explicitly: anything else exposes
 * the machine's counters and its control to the network. */
#ifndef MEMSCOPE_HTTP_LISTEN_H
#define MEMSCOPE_HTTP_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>

#include "util/error.h"

#define HTTP_LISTEN_DEFAULT "127.0.0.1:8720"

struct http_listen {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool loopback;
	int port;                 /* as bound (":0" asks the kernel for a free one) */
	char host[64];            /* for URLs: "127.0.0.1", "[::1]" */
};

/* "127.0.0.1:8720", "[::1]:9464", "localhost:0", "0.0.0.0:9464", ":9464"
 * (every address). -1 with err naming the argument and the expected form. */
int http_listen_parse(const char *text, struct http_listen *out, struct ms_error *err);
/* A listening TCP socket bound to l (l->port updated when it was 0), or -1
 * with err saying why (address in use: who to ask, and --listen). */
int http_listen_bind(struct http_listen *l, struct ms_error *err);

#endif
