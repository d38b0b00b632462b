/* The top sink: memscope top's screen (or batch blocks) from the frames the
 * session hands on. Everything that draws or reads the model runs on the
 * sink's thread: keys reach it as events (the terminal is a sampler watch
 * that only reads bytes), and what top asks of the run goes back through
 * the session (stop, another interval) or the command's callbacks (the
 * running recording's status, a label for it). Replaying a recording
 * (top --input) on the full screen, it keeps each frame up for its recorded
 * interval and reads the keys itself meanwhile. */
#ifndef MEMSCOPE_TOP_SINK_H
#define MEMSCOPE_TOP_SINK_H

#include "sinks/sink.h"
#include "sinks/top/top_model.h"
#include "sinks/top/top_view.h"
#include "util/error.h"

/* The shortest refresh -I and the - key give: a screen cannot show more;
 * stat and record go down to 1 ms. */
#define TOP_MIN_INTERVAL_MS 10

struct top_sink_options {
	/* What the model reads besides the sink setup (reasons, source names,
	 * notes, Lua metrics, focus, replay, interval); the setup's table, host,
	 * topology, plan, engine and resolution fill the rest. */
	struct top_inputs inputs;
	struct top_view *view;             /* the full screen (the sink closes it), or NULL: batch to stdout */
	struct top_display display;        /* sort column, interval */
	long max_updates;                  /* -n; 0: until q or a signal */
	/* Replaying on the full screen: a signalfd of the signals that end the
	 * run (the sampler reads a file and watches none), read while a frame
	 * is up; -1: none. */
	int signal_fd;
	/* The command's, called on the sink's thread: whether a `memscope
	 * record` runs ("off" or where it records, into recording), and a
	 * label for it (what happened, into notice). */
	void (*check_recording)(void *ctx, char *recording, size_t size);
	void (*add_label)(void *ctx, const char *text, double elapsed_s, char *notice, size_t size);
	void *ctx;
};

/* Make sink a top sink (opt is copied). */
int top_sink_init(struct sink *sink, const struct top_sink_options *opt, struct ms_error *err);

#endif
