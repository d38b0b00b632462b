/* Control of a running session through the pipeline: the control socket
 * (memscope ctl, the marker API) and the FIFO. Labels and phases become sink
 * events that reach every sink in order with the frames (the recording and a
 * script's on_label alike); pause and resume stop and restart handing frames
 * on; an interval change goes to the sampler and, as an event, to every sink;
 * `status` and `record FILE` are requests for the sink that answers them
 * (the recording), which replies once it has done what was asked - the
 * client waits for that, never the sampler.
 *
 * Input never waits and is bounded (ctl.h, ctl_limit.h: a budget per
 * wake-up, a rate, idle connections let go); a request that finds a sink's
 * queue without room for one more event is answered "error: busy" (the FIFO
 * says so on stderr), never queued without bound nor dropped silently. */
#ifndef MEMSCOPE_SESSION_CONTROL_H
#define MEMSCOPE_SESSION_CONTROL_H

#include "ctl/ctl.h"
#include "ctl/ctl_fifo.h"
#include "pipeline/session.h"
#include "sinks/sink.h"
#include "util/error.h"

struct session_pipeline;

/* Serve srv and fifo (either may be closed: fd -1) during session_run(). The
 * session does not own them. */
int session_control_attach(struct session *s, struct ctl_server *srv, struct ctl_fifo *fifo, struct ms_error *err);

/* Stop (false) or start (true) counting during the run, from the sampling
 * thread (a watch callback): the control's disable and enable, stat -D. What
 * was counted up to now is handed on in a frame taken now (disable), or is
 * left out with it (enable); the perf counters are stopped in the kernel in
 * between, the other sources' counts of that span are not handed on. The
 * sinks see a pause and a resume event. 0, or -1 with reply set ("error:
 * ...") when a sink's queue has no room for the event now. */
int session_set_counting(struct session *s, bool counting, char *reply, size_t size);

/* Take a frame at each phase marker (sampler_cut), before the marker
 * goes to the sinks: memscope record, so that a report's regions hold
 * exactly what their phases counted. */
void session_control_read_at_phases(struct session *s);

/* For session_run.c. */
int session_control_start(struct session_control *c, struct session_pipeline *p, struct ms_error *err);
/* A sink answered (on its thread): the reply goes to its client. */
void session_control_replied(struct session_control *c, struct sink_reply *reply);
/* After the run (every sink has answered what it was given): stop watching. */
void session_control_stop(struct session_control *c);
void session_control_free(struct session_control *c);

#endif
