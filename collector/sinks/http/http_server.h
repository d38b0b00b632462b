/* memscope live's web server (libmicrohttpd): who may ask what, the page's
 * files, and the routes the HTTP sink answers.
 *
 * Access: every request needs the token, except that on a loopback address
 * the user running memscope may read (the page, the stream, /metrics)
 * without it - the kernel says which user owns the client's socket
 * (peer_uid.h), so other users of the machine are refused. Control requests
 * always need the token, in a header (a page of another site cannot send
 * one, so it cannot make the user's browser pause or label the run). On
 * loopback the Host header must name a loopback address too (a site that
 * rebinds its name to 127.0.0.1 reads nothing). Static files come from one
 * directory and nothing beneath it escapes it. */
#ifndef MEMSCOPE_HTTP_SERVER_H
#define MEMSCOPE_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "sinks/http/http_listen.h"
#include "sinks/http/http_token.h"
#include "util/error.h"

enum http_access {
	HTTP_READ,               /* either token, or the same user on loopback */
	HTTP_CONTROL,            /* the token in Authorization or X-Memscope-Token */
};

struct http_request {
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const char *body;        /* POST: the whole body (NUL-terminated), else NULL */
	size_t body_len;
	bool token;              /* the request carried the token */
};

/* Answer req (queue a response); MHD_NO drops the connection. */
typedef enum MHD_Result (*http_handler)(void *ctx, const struct http_request *req);

struct http_route {
	const char *method;      /* "GET", "POST" */
	const char *path;        /* exact path */
	enum http_access access;
	http_handler handle;
	void *ctx;
};

#define HTTP_MAX_ROUTES 16
#define HTTP_MAX_BODY 4096
#define HTTP_DEFAULT_CONNECTIONS 2000
/* One client - another local user on loopback, one address elsewhere - may
 * hold 1/HTTP_CLIENT_SHARE of the connections; on loopback the users other
 * than the owner together leave the owner 1/HTTP_OWNER_SHARE of them. */
#define HTTP_CLIENT_SHARE 8
#define HTTP_OWNER_SHARE 8
#define HTTP_MAX_CLIENT_USERS 64

struct http_server_options {
	const char *listen;      /* ADDR:PORT; NULL: HTTP_LISTEN_DEFAULT */
	bool allow_remote;       /* a non-loopback address was asked for explicitly */
	const char *token_file;  /* NULL: a token is made */
	const char *read_token_file; /* a second token that reads but never controls, or NULL */
	const char *web_root;    /* the page's directory, or NULL: no page */
	unsigned max_connections;/* 0: HTTP_DEFAULT_CONNECTIONS */
	unsigned idle_timeout_s; /* 0: 60 */
};

struct http_server_stats {
	unsigned long long requests, refused, connections;
};

struct http_server;

/* Check the options, bind, start the server thread. -1 with err (exit code
 * 2 in *usage when the options are at fault). */
int http_server_start(struct http_server **out, const struct http_server_options *opt,
		      const struct http_route *routes, int nr_routes, bool *usage, struct ms_error *err);
/* The address to give people: "http://127.0.0.1:8720/?token=..." with a
 * token made at start, "http://127.0.0.1:8720/" with one from a file (a
 * secret from a file is never printed). */
const char *http_server_url(const struct http_server *s);
const struct http_listen *http_server_listen(const struct http_server *s);
const struct http_token *http_server_token(const struct http_server *s);
void http_server_get_stats(const struct http_server *s, struct http_server_stats *out);
void http_server_stop(struct http_server *s);

/* Responses. text is copied. */
enum MHD_Result http_respond(struct MHD_Connection *conn, unsigned status, const char *content_type,
			     const char *text, size_t len);
/* "error: why" as text/plain with status. */
enum MHD_Result http_respond_error(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Is path (as the client sent it, decoded) safe to look up beneath the web
 * root? Refuses empty and dot segments, backslashes and control bytes. */
bool http_static_path_ok(const char *path);

/* Does a Host header name loopback literally ("localhost", 127.x.y.z,
 * "[::1]", each with an optional ":PORT")? */
bool http_host_is_loopback(const char *host);

#endif
