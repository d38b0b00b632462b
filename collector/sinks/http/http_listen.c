#include "sinks/http/http_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return false;
}

int http_listen_parse(const char *text, struct http_listen *out, struct ms_error *err)
{
	char host[64];
	const char *colon, *port_text;
	char *end;
	long port;

	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		goto bad;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof(host))
			goto bad;
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = '\0';
		port_text = close + 2;
	} else {
		colon = strrchr(text, ':');
		if (!colon || (size_t)(colon - text) >= sizeof(host) || memchr(text, ':', (size_t)(colon - text)))
			goto bad;
		memcpy(host, text, (size_t)(colon - text));
		host[colon - text] = '\0';
		port_text = colon + 1;
	}
	errno = 0;
	port = strtol(port_text, &end, 10);
	if (!*port_text || *end || errno || port < 0 || port > 65535)
		goto bad;
	out->port = (int)port;
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (!host[0])
		snprintf(host, sizeof(host), "0.0.0.0");
	if (strchr(host, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->addr;

		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			goto bad;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		out->addr_len = sizeof(*in6);
		snprintf(out->host, sizeof(out->host), "[%s]", host);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&out->addr;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			goto bad;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		out->addr_len = sizeof(*in);
		snprintf(out->host, sizeof(out->host), "%s", host);
	}
	out->loopback = is_loopback(&out->addr);
	return 0;
bad:
	ms_error_set(err, "--listen '%s': expected ADDRESS:PORT with a numeric address and a port 0-65535 "
		     "(127.0.0.1:8720, [::1]:8720, localhost:0, 0.0.0.0:9464)", text ? text : "");
	return -1;
}

int http_listen_bind(struct http_listen *l, struct ms_error *err)
{
	int fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		ms_error_set(err, "cannot create a TCP socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&l->addr, l->addr_len) < 0) {
		int e = errno;

		close(fd);
		if (e == EADDRINUSE)
			ms_error_set(err, "cannot listen on %s:%d: the port is in use by another program "
				     "(another memscope live?): choose another with --listen %s:PORT, or :0 for any free one",
				     l->host, l->port, l->host);
		else if (e == EADDRNOTAVAIL)
			ms_error_set(err, "cannot listen on %s:%d: no interface of this machine has that address",
				     l->host, l->port);
		else if (e == EACCES)
			ms_error_set(err, "cannot listen on %s:%d: ports below 1024 need root or CAP_NET_BIND_SERVICE; "
				     "choose a port above 1023", l->host, l->port);
		else
			ms_error_set(err, "cannot listen on %s:%d: %s", l->host, l->port, strerror(e));
		return -1;
	}
	if (listen(fd, 512) < 0) {
		ms_error_set(err, "cannot listen on %s:%d: %s", l->host, l->port, strerror(errno));
		close(fd);
		return -1;
	}
	if (l->port == 0) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
			l->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							       : ((struct sockaddr_in *)&ss)->sin_port);
	}
	return fd;
}
