/* The stream of batches to the page: Server-Sent Events from a bounded
 * history ring.
 *
 * The HTTP sink puts one batch (frames and events, as JSON) about every
 * 400 ms; the ring keeps them, each an SSE message with its id, until its
 * bytes pass the limit, and the oldest go first. A client reads from where
 * it is in the ring at its own pace: a slow or stalled one only falls
 * behind (and is told, with a "gap" event, if the ring moved past it) and
 * never makes the sink wait. A client that reconnects sends the last id it
 * had (EventSource does, as Last-Event-ID) and goes on from the next one,
 * so its charts have no gap. A client with nothing to read is suspended
 * (libmicrohttpd suspend/resume) until the next batch: no polling, no
 * thread per client. */
#ifndef MEMSCOPE_HTTP_STREAM_H
#define MEMSCOPE_HTTP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "util/error.h"

#define HTTP_STREAM_DEFAULT_BYTES (64u << 20)

struct http_stream;

struct http_stream_stats {
	size_t bytes, limit;          /* held in the ring, and its limit */
	uint64_t batches;             /* held */
	uint64_t oldest, newest;      /* ids held (newest 0: none yet) */
	uint64_t evicted;             /* batches that left the ring */
	uint64_t sent_bytes;          /* to every client, since the start */
	unsigned clients;             /* streaming now */
	uint64_t gaps;                /* times a client fell behind the ring */
};

int http_stream_new(struct http_stream **out, size_t limit, struct ms_error *err);
/* Add a batch (JSON text, one line); it gets the next id. Wakes every
 * waiting client. false when memory runs out (the batch is lost: said in
 * the stats' gaps of the clients). */
bool http_stream_put(struct http_stream *st, const char *json, size_t len);
/* Answer a GET of the stream: from the batch after `after` (a client's
 * Last-Event-ID, or ?after=), else from the oldest held. */
enum MHD_Result http_stream_respond(struct http_stream *st, struct MHD_Connection *conn);
void http_stream_get_stats(struct http_stream *st, struct http_stream_stats *out);
/* End every client's stream (before the server stops). */
void http_stream_close(struct http_stream *st);
void http_stream_free(struct http_stream *st);

#endif
