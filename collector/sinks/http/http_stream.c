#include "sinks/http/http_stream.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/http/mhd_api.h"

struct batch {
	uint64_t id;
	char *text;                   /* "id: N\ndata: JSON\n\n" */
	size_t len;
};

struct stream_client {
	struct http_stream *st;
	struct MHD_Connection *conn;
	uint64_t next;                /* id of the batch to send next */
	size_t offset;                /* bytes of it already sent */
	bool hello_sent;
	bool waiting;                 /* suspended until the next batch */
	struct stream_client *prev, *next_client;
};

struct http_stream {
	pthread_mutex_t lock;
	struct batch *ring;
	size_t cap, head, count;      /* ring of batches; head: oldest */
	size_t bytes, limit;
	uint64_t next_id;             /* 1, 2, ... */
	uint64_t evicted, sent_bytes, gaps;
	struct stream_client *clients;
	unsigned nr_clients;
	bool closed;
};

int http_stream_new(struct http_stream **out, size_t limit, struct ms_error *err)
{
	struct http_stream *st = calloc(1, sizeof(*st));

	if (!st) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	pthread_mutex_init(&st->lock, NULL);
	st->limit = limit ? limit : HTTP_STREAM_DEFAULT_BYTES;
	st->next_id = 1;
	*out = st;
	return 0;
}

static struct batch *at(struct http_stream *st, size_t i)
{
	return &st->ring[(st->head + i) % st->cap];
}

static void evict_oldest(struct http_stream *st)
{
	struct batch *b = at(st, 0);

	st->bytes -= b->len;
	free(b->text);
	b->text = NULL;
	st->head = (st->head + 1) % st->cap;
	st->count--;
	st->evicted++;
}

static bool grow(struct http_stream *st)
{
	size_t cap = st->cap ? st->cap * 2 : 256;
	struct batch *ring = calloc(cap, sizeof(*ring));

	if (!ring)
		return false;
	for (size_t i = 0; i < st->count; i++)
		ring[i] = *at(st, i);
	free(st->ring);
	st->ring = ring;
	st->cap = cap;
	st->head = 0;
	return true;
}

bool http_stream_put(struct http_stream *st, const char *json, size_t len)
{
	char head[40];
	int hlen;
	struct batch b;
	struct stream_client *wake = NULL, *c;
	bool ok = false;

	pthread_mutex_lock(&st->lock);
	b.id = st->next_id++;
	hlen = snprintf(head, sizeof(head), "id: %" PRIu64 "\ndata: ", b.id);
	b.len = (size_t)hlen + len + 2;
	b.text = malloc(b.len + 1);
	if (!b.text)
		goto wake;
	memcpy(b.text, head, (size_t)hlen);
	memcpy(b.text + hlen, json, len);
	memcpy(b.text + hlen + len, "\n\n", 3);
	/* Bounded by bytes; the newest batch always stays. */
	while (st->count && st->bytes + b.len > st->limit)
		evict_oldest(st);
	if (st->count == st->cap && !grow(st)) {
		free(b.text);
		goto wake;
	}
	*at(st, st->count++) = b;
	st->bytes += b.len;
	ok = true;
wake:
	/* Take the waiting clients; resume them outside the lock (libmicrohttpd
	 * takes its own locks there). A suspended client cannot go away before
	 * it is resumed, so the list stays valid. */
	for (c = st->clients; c; c = c->next_client) {
		if (c->waiting) {
			c->waiting = false;
			c->prev = wake;   /* reuse as the wake list's link */
			wake = c;
		}
	}
	pthread_mutex_unlock(&st->lock);
	while (wake) {
		struct MHD_Connection *conn = wake->conn;

		wake = wake->prev;
		mhd.MHD_resume_connection(conn);
	}
	return ok;
}

/* prev is reused while waking: keep the list singly linked for removal. */
static void unlink_client(struct http_stream *st, struct stream_client *c)
{
	struct stream_client **p = &st->clients;

	while (*p && *p != c)
		p = &(*p)->next_client;
	if (*p)
		*p = c->next_client;
	st->nr_clients--;
}

static ssize_t copy_out(struct stream_client *c, char *buf, size_t max)
{
	struct http_stream *st = c->st;
	size_t n = 0;

	if (!c->hello_sent) {
		/* How soon EventSource reconnects after a drop. */
		static const char hello[] = "retry: 1000\n\n";

		if (max < sizeof(hello))
			return 0;
		memcpy(buf, hello, sizeof(hello) - 1);
		n = sizeof(hello) - 1;
		c->hello_sent = true;
	}
	if (st->count && c->next < at(st, 0)->id) {
		/* The ring moved past this client: say what it missed. */
		char gap[128];
		int glen = snprintf(gap, sizeof(gap), "event: gap\ndata: {\"missed\":[%" PRIu64 ",%" PRIu64 "]}\n\n",
				    c->next, at(st, 0)->id - 1);

		if (n + (size_t)glen > max)
			return (ssize_t)n;
		memcpy(buf + n, gap, (size_t)glen);
		n += (size_t)glen;
		c->next = at(st, 0)->id;
		c->offset = 0;
		st->gaps++;
	}
	while (st->count && n < max && c->next <= at(st, st->count - 1)->id) {
		struct batch *b = at(st, (size_t)(c->next - at(st, 0)->id));
		size_t take = b->len - c->offset;

		if (take > max - n)
			take = max - n;
		memcpy(buf + n, b->text + c->offset, take);
		n += take;
		c->offset += take;
		if (c->offset == b->len) {
			c->next++;
			c->offset = 0;
		}
	}
	st->sent_bytes += n;
	return (ssize_t)n;
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream_client *c = cls;
	struct http_stream *st = c->st;
	ssize_t n;

	(void)pos;
	pthread_mutex_lock(&st->lock);
	if (st->closed) {
		pthread_mutex_unlock(&st->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = copy_out(c, buf, max);
	if (n == 0) {
		/* Nothing new: sleep until http_stream_put wakes this client. */
		c->waiting = true;
		mhd.MHD_suspend_connection(c->conn);
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

static void free_client(void *cls)
{
	struct stream_client *c = cls;
	struct http_stream *st = c->st;

	pthread_mutex_lock(&st->lock);
	unlink_client(st, c);
	pthread_mutex_unlock(&st->lock);
	free(c);
}

enum MHD_Result http_stream_respond(struct http_stream *st, struct MHD_Connection *conn)
{
	const char *last = mhd.MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
	const char *after = mhd.MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "after");
	struct stream_client *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint64_t from = 0;

	if (!c)
		return MHD_NO;
	if (!last || !*last)
		last = after;
	if (last && *last)
		from = strtoull(last, NULL, 10) + 1;
	c->st = st;
	c->conn = conn;
	pthread_mutex_lock(&st->lock);
	if (st->closed) {
		pthread_mutex_unlock(&st->lock);
		free(c);
		return MHD_NO;
	}
	/* A fresh client starts with the oldest batch held; a returning one
	 * after the last it had (or with a gap event if that is gone). */
	c->next = from ? from : (st->count ? at(st, 0)->id : st->next_id);
	if (c->next > st->next_id)
		c->next = st->next_id;
	c->next_client = st->clients;
	st->clients = c;
	st->nr_clients++;
	pthread_mutex_unlock(&st->lock);
	r = mhd.MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, read_stream, c, free_client);
	if (!r) {
		free_client(c);
		return MHD_NO;
	}
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	mhd.MHD_add_response_header(r, "X-Accel-Buffering", "no");
	ret = mhd.MHD_queue_response(conn, MHD_HTTP_OK, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

void http_stream_get_stats(struct http_stream *st, struct http_stream_stats *out)
{
	pthread_mutex_lock(&st->lock);
	out->bytes = st->bytes;
	out->limit = st->limit;
	out->batches = st->count;
	out->oldest = st->count ? at(st, 0)->id : 0;
	out->newest = st->count ? at(st, st->count - 1)->id : 0;
	out->evicted = st->evicted;
	out->sent_bytes = st->sent_bytes;
	out->clients = st->nr_clients;
	out->gaps = st->gaps;
	pthread_mutex_unlock(&st->lock);
}

void http_stream_close(struct http_stream *st)
{
	struct stream_client *wake = NULL, *c;

	pthread_mutex_lock(&st->lock);
	st->closed = true;
	for (c = st->clients; c; c = c->next_client) {
		if (c->waiting) {
			c->waiting = false;
			c->prev = wake;
			wake = c;
		}
	}
	pthread_mutex_unlock(&st->lock);
	while (wake) {
		struct MHD_Connection *conn = wake->conn;

		wake = wake->prev;
		mhd.MHD_resume_connection(conn);
	}
}

void http_stream_free(struct http_stream *st)
{
	if (!st)
		return;
	while (st->count)
		evict_oldest(st);
	free(st->ring);
	pthread_mutex_destroy(&st->lock);
	free(st);
}
