/* The sampler: the hot path. A timerfd drives it; at each tick every source
 * fills its slice of one preallocated frame, and the frame goes to the
 * caller's callback. It also ends the run: when the command exits, when every
 * attached process has exited, or on SIGINT/SIGTERM/SIGHUP, it takes a last
 * frame (so no count is lost) and returns. */
#ifndef MEMSCOPE_SAMPLER_H
#define MEMSCOPE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "sampler/frame.h"
#include "sampler/source.h"

struct target;

struct sampler;

enum sampler_end { SAMPLER_END_TARGET, SAMPLER_END_SIGNAL, SAMPLER_END_SOURCE };

/* Called with each frame; `last` is true for the final one. Return non-zero to
 * stop. frame->changes lists the series that start or end with it (the table
 * grows in place; see frame.h). */
typedef int (*sampler_frame_fn)(const struct frame *frame, bool last, void *ctx);

/* A descriptor the run also waits on (the control socket, a FIFO, top's
 * terminal, a plugin's fd, sample ring buffers): when it is readable,
 * on_ready runs between two frames; a non-zero return ends the run (with its
 * final frame). Any number may be added before or during sampler_run(). */
typedef int (*sampler_ready_fn)(struct sampler *s, int fd, void *ctx);

struct sampler_watch {
	int fd;
	sampler_ready_fn on_ready;
	void *ctx;
};

struct sampler {
	struct source *sources;
	int nr_sources;
	struct series_table table;
	struct frame frame;
	uint64_t start_ns;       /* when counting started */
	enum sampler_end end;
	int end_signal;          /* the signal that ended the run, if any */
	struct sampler_watch *watches;
	int nr_watches;
	struct series_changes changes; /* of the frame being delivered */
	/* The oldest frame a reader (a sink thread) may still be reading; NULL:
	 * frames are read before on_frame returns. */
	uint64_t (*readers_done)(void *ctx);
	void *readers_ctx;
	int epoll_fd;            /* during sampler_run(), else -1 */
	int timer_fd;            /* during sampler_run() with an interval, else -1 */
	/* During a live sampler_run(): where frames go and when the last was
	 * taken (sampler_cut takes one between two ticks). */
	sampler_frame_fn on_frame;
	void *frame_ctx;
	uint64_t last_ns;
	bool cut_stop;           /* a frame sampler_cut delivered asked to stop */
};

/* Open every source (each registers its series) and allocate the frame. */
int sampler_open(struct sampler *s, struct source *sources, int nr_sources, struct ms_error *err);
/* Enable, start a prepared command, sample every interval_ns (0: only at the
 * end), and stop as described above. */
int sampler_run(struct sampler *s, struct target *target, uint64_t interval_ns,
		sampler_frame_fn on_frame, void *ctx, struct ms_error *err);
void sampler_close(struct sampler *s);
/* Wait on fd too (before or during the run); the sampler does not own it.
 * Removing it (before closing it) is the caller's job. */
int sampler_watch_add(struct sampler *s, int fd, sampler_ready_fn on_ready, void *ctx, struct ms_error *err);
void sampler_watch_remove(struct sampler *s, int fd);
/* From a watch callback of a live run: take a frame now and deliver it, so
 * what was counted up to this moment is on one side of a change (counting
 * stopped or started) and nothing after it. -1 outside a live run. */
int sampler_cut(struct sampler *s);
/* Stop (false) or restart (true) counting in the sources that can (perf
 * counters are disabled in the kernel; source_ops.pause/resume). */
void sampler_set_counting(struct sampler *s, bool counting);
/* Change the interval of a running sampler (from a watch callback). */
int sampler_set_interval(struct sampler *s, uint64_t interval_ns, struct ms_error *err);

/* Readers that keep frames after on_frame returns (sinks on their own
 * threads) say which frame the slowest has finished: every frame before the
 * returned sequence number. Series retired in those frames give their
 * indices to new series; the others wait. */
void sampler_set_readers_done(struct sampler *s, uint64_t (*readers_done)(void *ctx), void *ctx);

uint64_t monotonic_ns(void);

#endif
