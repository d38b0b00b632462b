/* The secret that lets a client in: made at start (printed in the URL) or
 * read from a file the user keeps (for a fleet's Prometheus). Requests carry
 * it as "Authorization: Bearer TOKEN", a "memscope_token" cookie (set when
 * the page is opened with ?token=), or "?token=" itself. */
#ifndef MEMSCOPE_HTTP_TOKEN_H
#define MEMSCOPE_HTTP_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define HTTP_TOKEN_MAX 128
#define HTTP_TOKEN_MIN 16

struct http_token {
	char text[HTTP_TOKEN_MAX + 1];
};

/* 32 random hex digits from the kernel's generator. */
int http_token_generate(struct http_token *t, struct ms_error *err);
/* The first line of path: at least HTTP_TOKEN_MIN characters from
 * [A-Za-z0-9._~+/=-], in a regular file owned by this user or root that
 * other users can neither read nor change (option names it in errors). */
int http_token_read(struct http_token *t, const char *path, const char *option, struct ms_error *err);
/* Does text (length len) equal the token? In constant time. */
bool http_token_equal(const struct http_token *t, const char *text, size_t len);

#endif
