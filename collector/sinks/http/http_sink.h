/* The HTTP sink of memscope live: the web page's data and Prometheus'.
 *
 * On its own thread (the pipeline's sink runner) it turns each frame into
 * a row of the page's charts - one column per catalog metric and scope
 * (system, node, socket, channel) and per event summed by node - and
 * gathers rows into a batch about every 400 ms, which goes into the stream's
 * history ring (http_stream.h); it keeps every series' running total for
 * /metrics (prom_text.h). The server (http_server.h) answers from what the
 * sink has made, under a lock held only to copy: no client ever makes the
 * sink, let alone the sampler, wait. Control from the page (label, pause,
 * resume, interval, record FILE, status) goes to the command, which sends
 * it through the run's control socket, as `memscope ctl` does.
 *
 * A replayed recording (live --input) is read by the page itself, with the
 * reader it uses for a dropped file (contrib/web/recording.js): the sink
 * serves the file as written and streams only the catalog metrics. */
#ifndef MEMSCOPE_HTTP_SINK_H
#define MEMSCOPE_HTTP_SINK_H

#include <stdbool.h>
#include <stdio.h>

#include "sinks/http/http_server.h"
#include "sinks/sink.h"
#include "util/error.h"

/* How much frame time one batch covers (NUMAscope sends every 400 ms). */
#define HTTP_BATCH_NS 400000000ull
/* Frames read from a file come all at once: batches are cut by size. */
#define HTTP_BATCH_BYTES (32u * 1024)
/* The process table goes out once a second, its busiest rows. */
#define HTTP_PROC_PERIOD_NS 1000000000ull
#define HTTP_PROC_ROWS 30
/* Series of exited processes kept one by one for /api/totals; past this (a
 * long-running exporter), the oldest are added up into "others". */
#define HTTP_ENDED_MAX 65536

struct http_sink_options {
	struct http_server_options server;
	size_t history_bytes;         /* 0: HTTP_STREAM_DEFAULT_BYTES */
	int ended_max;                /* 0: HTTP_ENDED_MAX */
	/* Carry out one control line ("label TEXT", "pause", ...) and write
	 * the answer ("ok: ..." or "error: ..."); -1 when it could not be
	 * asked (reply says why). NULL: the run takes no control. Called on
	 * the server's thread: it may wait for the answer, the sampler never does. */
	int (*control)(const char *line, char *reply, size_t size, void *ctx);
	void *control_ctx;
};

#define HTTP_CONTROL_MAX 1024

/* Make sink an HTTP sink and start its server (the page answers "starting"
 * until the run opens the sink). -1 with err; *usage when the options are
 * at fault (exit code 2). */
int http_sink_init(struct sink *sink, const struct http_sink_options *opt, bool *usage, struct ms_error *err);
/* Metrics asked for (or shown by default) that this host cannot count,
 * each name with why: the page lists them. Copied; before the run. */
int http_sink_set_na(struct sink *sink, const char *const *names, const char *const *whys, int nr);
/* live --input: serve the recording the session reads (fd: the reader's,
 * reopened here) at /api/recording; the page parses it as a dropped file,
 * and the stream carries the catalog metrics alone. Before the run. */
int http_sink_serve_recording(struct sink *sink, int fd, struct ms_error *err);
/* The URL to print (with the token). */
const char *http_sink_url(const struct sink *sink);
const struct http_server *http_sink_server(const struct sink *sink);

#endif
