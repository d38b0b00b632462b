#include "sinks/http/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sinks/http/mhd_api.h"
#include "sinks/http/peer_uid.h"
#include "util/array.h"

struct http_server {
	struct MHD_Daemon *daemon;
	struct http_listen listen;
	struct http_token token;       /* reads and controls */
	struct http_token read_token;  /* reads only (--read-token-file), or empty */
	struct http_route routes[HTTP_MAX_ROUTES];
	int nr_routes;
	int web_fd;                    /* O_PATH directory, or -1 */
	uid_t uid;                     /* who runs memscope */
	/* Connections per client: on loopback per local user (the owner
	 * unbounded but for the total), elsewhere per address (MHD's limit).
	 * Touched on the server's thread only. */
	unsigned per_client, others_max;
	struct { uid_t uid; unsigned n; } clients[HTTP_MAX_CLIENT_USERS];
	int nr_clients;
	unsigned others;               /* open connections of users other than the owner */
	bool pending_known;            /* the connection accept_policy just let in */
	uid_t pending_uid;
	char url[256];
	_Atomic unsigned long long requests, refused, connections;
};

/* Per connection: whose socket is at the other end (asked once). */
struct conn_state {
	bool asked;
	bool same_user;
	bool counted;                  /* in the owner-or-other counts (loopback) */
	uid_t uid;
};

/* Per request: the POST body as it arrives. */
struct request_state {
	char body[HTTP_MAX_BODY + 1];
	size_t len;
	bool too_long;
};

enum MHD_Result http_respond(struct MHD_Connection *conn, unsigned status, const char *content_type,
			     const char *text, size_t len)
{
	struct MHD_Response *r = mhd.MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	mhd.MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = mhd.MHD_queue_response(conn, status, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_respond_error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
{
	char text[1100];
	size_t len = 0;
	va_list ap;

	len = (size_t)snprintf(text, sizeof(text), "error: ");
	va_start(ap, fmt);
	vsnprintf(text + len, sizeof(text) - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(text);
	text[len++] = '\n';
	return http_respond(conn, status, "text/plain; charset=utf-8", text, len);
}

bool http_static_path_ok(const char *path)
{
	const char *seg = path;

	if (!path || path[0] != '/')
		return false;
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '\\' || *p == 0x7f)
			return false;
	/* Every segment after the first '/' (the root itself is index.html). */
	if (!strcmp(path, "/"))
		return true;
	while (*seg == '/') {
		const char *next = strchr(seg + 1, '/');
		size_t len = next ? (size_t)(next - seg - 1) : strlen(seg + 1);

		/* Empty (//, a trailing /), dot files, "." and "..". */
		if (len == 0 || seg[1] == '.')
			return false;
		if (!next)
			break;
		seg = next;
	}
	return true;
}

static const char *content_type_of(const char *path)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < ARRAY_SIZE(types); i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

/* Open rel beneath the web root, never outside it (no "..", no symbolic
 * link, no mount point crossed on the way). */
static int open_beneath(int dir, const char *rel)
{
	struct open_how how = {
		/* O_NONBLOCK: a FIFO put here opens without waiting for a writer
		 * (and is then refused as not a regular file), so it cannot stall
		 * the server's one thread. */
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, dir, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		/* Kernels before 5.6: the path was checked segment by segment. */
		fd = openat(dir, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	return (int)fd;
}

static enum MHD_Result serve_static(struct http_server *s, struct MHD_Connection *conn, const char *path,
				    const char *set_cookie)
{
	const char *rel = !strcmp(path, "/") ? "index.html" : path + 1;
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat st;
	int fd;

	if (s->web_fd < 0)
		return http_respond_error(conn, MHD_HTTP_NOT_FOUND,
					  "this memscope serves no page (--no-ui, or the page is not installed): "
					  "/metrics and /api/stream still answer");
	if (!http_static_path_ok(path)) {
		atomic_fetch_add(&s->refused, 1);
		return http_respond_error(conn, MHD_HTTP_FORBIDDEN, "%s: not a path beneath the page's directory",
					  path);
	}
	fd = open_beneath(s->web_fd, rel);
	if (fd < 0) {
		if (errno == EXDEV || errno == ELOOP) {
			atomic_fetch_add(&s->refused, 1);
			return http_respond_error(conn, MHD_HTTP_FORBIDDEN, "%s: leads outside the page's directory",
						  path);
		}
		return http_respond_error(conn, MHD_HTTP_NOT_FOUND, "%s: no such file", path);
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return http_respond_error(conn, MHD_HTTP_NOT_FOUND, "%s: no such file", path);
	}
	r = mhd.MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type_of(rel));
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	mhd.MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	mhd.MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
				"connect-src 'self'; frame-ancestors 'none'");
	if (set_cookie) {
		char cookie[HTTP_TOKEN_MAX + 80];

		snprintf(cookie, sizeof(cookie), "memscope_token=%s; Path=/; HttpOnly; SameSite=Strict",
			 set_cookie);
		mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	}
	ret = mhd.MHD_queue_response(conn, MHD_HTTP_OK, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

enum token_grant { TOKEN_NONE, TOKEN_READ, TOKEN_FULL };

/* What the text after prefix grants: the token, the read-only token, or
 * nothing. */
static enum token_grant token_in(const struct http_server *s, const char *value, const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0;

	if (!value)
		return TOKEN_NONE;
	if (plen) {
		if (strncasecmp(value, prefix, plen))
			return TOKEN_NONE;
		value += plen;
	}
	if (http_token_equal(&s->token, value, strlen(value)))
		return TOKEN_FULL;
	if (s->read_token.text[0] && http_token_equal(&s->read_token, value, strlen(value)))
		return TOKEN_READ;
	return TOKEN_NONE;
}

static enum token_grant header_token(const struct http_server *s, struct MHD_Connection *conn)
{
	enum token_grant a = token_in(s, mhd.MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
									 MHD_HTTP_HEADER_AUTHORIZATION), "Bearer ");
	enum token_grant b = token_in(s, mhd.MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Memscope-Token"),
				      NULL);

	return a > b ? a : b;
}

static bool same_user(struct http_server *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info = mhd.MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const union MHD_ConnectionInfo *fdinfo = mhd.MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn_state *cs = info ? info->socket_context : NULL;
	uid_t uid;

	if (!cs || !fdinfo)
		return false;
	if (!cs->asked) {
		cs->asked = true;
		cs->same_user = peer_uid(fdinfo->connect_fd, &uid) && uid == s->uid;
	}
	return cs->same_user;
}

/* Is port text a port: 1-5 digits, nothing else? */
static bool port_text(const char *p)
{
	size_t n = strspn(p, "0123456789");

	return n >= 1 && n <= 5 && !p[n];
}

/* Does Host name this machine's loopback literally: "localhost", a dotted
 * 127.x.y.z or "[::1]", each with an optional ":PORT"? Parsed exactly, never
 * by prefix: "127.evil.example" and "127.0.0.1.nip.io" are names a site can
 * point at 127.0.0.1 (DNS rebinding) and are refused. */
bool http_host_is_loopback(const char *host)
{
	char name[64];
	const char *end;
	size_t len;

	if (host[0] == '[') {
		struct in6_addr a6;

		end = strchr(host, ']');
		if (!end || (size_t)(end - host - 1) >= sizeof(name))
			return false;
		len = (size_t)(end - host - 1);
		memcpy(name, host + 1, len);
		name[len] = '\0';
		if (end[1] && (end[1] != ':' || !port_text(end + 2)))
			return false;
		return inet_pton(AF_INET6, name, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	}
	end = strchr(host, ':');
	len = end ? (size_t)(end - host) : strlen(host);
	if (len >= sizeof(name) || (end && !port_text(end + 1)))
		return false;
	memcpy(name, host, len);
	name[len] = '\0';
	/* Host names are case-insensitive. */
	if (!strcasecmp(name, "localhost"))
		return true;
	struct in_addr a4;

	/* inet_pton takes exactly four decimal parts: no names, no shorthand. */
	return inet_pton(AF_INET, name, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* On loopback, Host must name loopback (or be absent: HTTP/1.0 tools). */
static bool host_ok(const struct http_server *s, struct MHD_Connection *conn)
{
	const char *host = mhd.MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

	return !s->listen.loopback || !host || http_host_is_loopback(host);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct http_server *s = cls;
	struct request_state *rs = *req_cls;
	const struct http_route *route = NULL;
	struct http_request req;
	const char *query_token;
	bool is_post = !strcmp(method, MHD_HTTP_METHOD_POST);
	enum token_grant header, cookie, query;

	if (!rs) {
		/* First call: headers only. A POST body follows in more calls. */
		rs = calloc(1, sizeof(*rs));
		if (!rs)
			return MHD_NO;
		*req_cls = rs;
		atomic_fetch_add(&s->requests, 1);
		if (is_post)
			return MHD_YES;
	}
	if (is_post && *upload_data_size) {
		if (rs->len + *upload_data_size > HTTP_MAX_BODY)
			rs->too_long = true;
		else {
			memcpy(rs->body + rs->len, upload_data, *upload_data_size);
			rs->len += *upload_data_size;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!host_ok(s, conn)) {
		atomic_fetch_add(&s->refused, 1);
		return http_respond_error(conn, MHD_HTTP_FORBIDDEN,
					  "this server listens on loopback; the Host header must name a loopback address");
	}
	header = header_token(s, conn);
	cookie = token_in(s, mhd.MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "memscope_token"), NULL);
	query_token = mhd.MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
	query = token_in(s, query_token, NULL);
	for (int i = 0; i < s->nr_routes; i++) {
		if (!strcmp(s->routes[i].path, url)) {
			route = &s->routes[i];
			if (!strcmp(route->method, method))
				break;
		}
	}
	if (route && strcmp(route->method, method))
		return http_respond_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s takes %s, not %s", url,
					  route->method, method);
	if (!route && strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return http_respond_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s: only GET", url);
	if (route && route->access == HTTP_CONTROL) {
		if (header != TOKEN_FULL) {
			atomic_fetch_add(&s->refused, 1);
			return http_respond_error(conn, MHD_HTTP_FORBIDDEN,
						  header == TOKEN_READ
						  ? "control needs the control token (--token-file, or the one memscope "
						    "live printed); the read-only token (--read-token-file) only reads"
						  : "control needs the token memscope live printed at start, in an "
						    "'Authorization: Bearer TOKEN' header (the page sends it when "
						    "opened with the URL memscope printed)");
		}
	} else if (!header && !cookie && !query && !(s->listen.loopback && same_user(s, conn))) {
		atomic_fetch_add(&s->refused, 1);
		return http_respond_error(conn, MHD_HTTP_FORBIDDEN,
					  s->listen.loopback
					  ? "only the user running memscope live, or a client with its token, may read it"
					  : "every request needs the token memscope live printed at start "
					    "('Authorization: Bearer TOKEN', or ?token=TOKEN)");
	}
	if (!route)
		return serve_static(s, conn, url, query && !cookie ? (query == TOKEN_FULL ? s->token.text
											   : s->read_token.text) : NULL);
	if (rs->too_long)
		return http_respond_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "the request body is over %d bytes",
					  HTTP_MAX_BODY);
	rs->body[rs->len] = '\0';
	req = (struct http_request){
		.conn = conn, .method = method, .path = url,
		.body = is_post ? rs->body : NULL, .body_len = rs->len,
		/* The page shows its controls to a client that may use them. */
		.token = header == TOKEN_FULL || cookie == TOKEN_FULL || query == TOKEN_FULL,
	};
	(void)version;
	return route->handle(route->ctx, &req);
}

static void completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	free(*req_cls);
	*req_cls = NULL;
}

static int client_slot(struct http_server *s, uid_t uid, bool add)
{
	for (int i = 0; i < s->nr_clients; i++)
		if (s->clients[i].uid == uid)
			return i;
	if (!add || s->nr_clients == HTTP_MAX_CLIENT_USERS)
		return -1;
	s->clients[s->nr_clients].uid = uid;
	s->clients[s->nr_clients].n = 0;
	return s->nr_clients++;
}

/* Before a loopback connection is taken: whose is it, and may that user
 * open one more? Another user gets at most per_client connections, and all
 * other users together leave HTTP_OWNER_SHARE of them to the owner: a user
 * who opens connections and sends nothing cannot lock the owner (or a
 * token holder of another user) out. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct http_server *s = cls;
	struct sockaddr_storage local = s->listen.addr, remote = { 0 };
	uid_t uid = (uid_t)-1;
	int k;

	s->pending_known = false;
	if (!s->listen.loopback)
		return MHD_YES;
	if (addrlen > sizeof(remote))
		return MHD_NO;
	memcpy(&remote, addr, addrlen);
	if (local.ss_family == AF_INET)
		((struct sockaddr_in *)&local)->sin_port = htons((uint16_t)s->listen.port);
	else
		((struct sockaddr_in6 *)&local)->sin6_port = htons((uint16_t)s->listen.port);
	/* Unknown owners share one count, as one user. */
	peer_uid_of(&local, &remote, &uid);
	if (uid != s->uid) {
		k = client_slot(s, uid, false);
		if (s->others >= s->others_max || (k >= 0 && s->clients[k].n >= s->per_client) ||
		    (k < 0 && s->nr_clients == HTTP_MAX_CLIENT_USERS)) {
			atomic_fetch_add(&s->refused, 1);
			return MHD_NO;
		}
	}
	s->pending_known = true;
	s->pending_uid = uid;
	return MHD_YES;
}

static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;
	struct conn_state *cs;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		cs = *socket_context = calloc(1, sizeof(struct conn_state));
		atomic_fetch_add(&s->connections, 1);
		if (cs && s->pending_known) {
			int k = client_slot(s, s->pending_uid, true);

			/* Known now: no second look-up when the request comes. */
			cs->asked = true;
			cs->same_user = s->pending_uid == s->uid;
			cs->uid = s->pending_uid;
			if (k >= 0) {
				cs->counted = true;
				s->clients[k].n++;
				if (!cs->same_user)
					s->others++;
			}
		}
		s->pending_known = false;
	} else {
		cs = *socket_context;
		if (cs && cs->counted) {
			int k = client_slot(s, cs->uid, false);

			if (k >= 0 && s->clients[k].n && !--s->clients[k].n) {
				/* A user with no connection left frees its entry. */
				s->clients[k] = s->clients[--s->nr_clients];
			}
			if (!cs->same_user && s->others)
				s->others--;
		}
		free(cs);
		*socket_context = NULL;
	}
}

/* Room for every connection asked for, as far as the hard limit allows. */
static void raise_fd_limit(unsigned connections)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)connections + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int http_server_start(struct http_server **out, const struct http_server_options *opt,
		      const struct http_route *routes, int nr_routes, bool *usage, struct ms_error *err)
{
	struct http_server *s = calloc(1, sizeof(*s));
	unsigned max = opt->max_connections ? opt->max_connections : HTTP_DEFAULT_CONNECTIONS;
	sigset_t all, old;
	int fd = -1;

	*usage = false;
	*out = NULL;
	if (!s) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	s->web_fd = -1;
	s->uid = geteuid();
	if (nr_routes > HTTP_MAX_ROUTES) {
		ms_error_set(err, "too many routes");
		goto fail;
	}
	if (nr_routes)
		memcpy(s->routes, routes, sizeof(*routes) * (size_t)nr_routes);
	s->nr_routes = nr_routes;
	if (http_listen_parse(opt->listen ? opt->listen : HTTP_LISTEN_DEFAULT, &s->listen, err) < 0) {
		*usage = true;
		goto fail;
	}
	if (!s->listen.loopback && !opt->allow_remote) {
		ms_error_set(err, "--listen %s is not a loopback address: the counters and the control of this "
			     "machine would be open to the network; add --remote to mean it (every request then "
			     "needs the token memscope prints, or the one in --token-file)", opt->listen);
		*usage = true;
		goto fail;
	}
	if (opt->token_file ? http_token_read(&s->token, opt->token_file, "--token-file", err) < 0
			    : http_token_generate(&s->token, err) < 0) {
		*usage = opt->token_file != NULL;
		goto fail;
	}
	if (opt->read_token_file) {
		if (http_token_read(&s->read_token, opt->read_token_file, "--read-token-file", err) < 0) {
			*usage = true;
			goto fail;
		}
		if (!strcmp(s->read_token.text, s->token.text)) {
			ms_error_set(err, "--read-token-file %s holds the same token as --token-file %s: the read-only "
				     "token must differ, or it would control the run too", opt->read_token_file,
				     opt->token_file);
			*usage = true;
			goto fail;
		}
	}
	if (opt->web_root) {
		s->web_fd = open(opt->web_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s->web_fd < 0) {
			ms_error_set(err, "the page's directory %s: %s", opt->web_root, strerror(errno));
			goto fail;
		}
	}
	if (mhd_api_load(err) < 0)
		goto fail;
	raise_fd_limit(max);
	fd = http_listen_bind(&s->listen, err);
	if (fd < 0)
		goto fail;
	/* Signals are the sampling thread's (a signalfd): the server's thread,
	 * which inherits this mask, must not take SIGINT and die of it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* One client (another user on loopback, an address elsewhere) holds at
	 * most an eighth of the connections; others together leave the owner
	 * an eighth. */
	s->per_client = max / HTTP_CLIENT_SHARE ? max / HTTP_CLIENT_SHARE : 1;
	s->others_max = max - max / HTTP_OWNER_SHARE;
	if (!s->others_max)
		s->others_max = 1;
	s->daemon = mhd.MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME,
				     0, accept_policy, s, handle, s,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, max,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				     s->listen.loopback ? 0u : s->per_client,
				     MHD_OPTION_CONNECTION_TIMEOUT, opt->idle_timeout_s ? opt->idle_timeout_s : 60u,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
				     MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				     MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
				     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->daemon) {
		ms_error_set(err, "cannot start the web server (libmicrohttpd) on %s:%d", s->listen.host,
			     s->listen.port);
		close(fd);
		goto fail;
	}
	/* A token read from a file is a secret kept elsewhere (a service's
	 * output goes to the journal): never printed. A made one is the URL's. */
	if (opt->token_file)
		snprintf(s->url, sizeof(s->url), "http://%s:%d/", s->listen.host, s->listen.port);
	else
		snprintf(s->url, sizeof(s->url), "http://%s:%d/?token=%s", s->listen.host, s->listen.port,
			 s->token.text);
	*out = s;
	return 0;
fail:
	if (s->web_fd >= 0)
		close(s->web_fd);
	free(s);
	return -1;
}

const char *http_server_url(const struct http_server *s)
{
	return s->url;
}

const struct http_listen *http_server_listen(const struct http_server *s)
{
	return &s->listen;
}

const struct http_token *http_server_token(const struct http_server *s)
{
	return &s->token;
}

void http_server_get_stats(const struct http_server *s, struct http_server_stats *out)
{
	out->requests = atomic_load(&s->requests);
	out->refused = atomic_load(&s->refused);
	out->connections = atomic_load(&s->connections);
}

void http_server_stop(struct http_server *s)
{
	int fd;

	if (!s)
		return;
	if (s->daemon) {
		/* MHD does not close a socket it was given. */
		fd = (int)mhd.MHD_quiesce_daemon(s->daemon);
		mhd.MHD_stop_daemon(s->daemon);
		if (fd >= 0)
			close(fd);
	}
	if (s->web_fd >= 0)
		close(s->web_fd);
	free(s);
}
