/* A session whose frames come from a recording instead of the kernel:
 * `memscope stat --input FILE` and reports. The session then holds one
 * recording source and no target; session_run() replays the frames as fast
 * as they are read, with their recorded times, and session_close() ends it
 * as any other session.
 *
 * Metrics (-m, or those the recording was made for) are recomputed from the
 * raw counts: the recording machine's host is loaded from the files the
 * recording carries, the catalog of this build is resolved on it, and the
 * plan's series are found in the recorded series table by name. */
#ifndef MEMSCOPE_SESSION_RECORDING_H
#define MEMSCOPE_SESSION_RECORDING_H

#include "util/error.h"
#include "recording/recording.h"
#include "pipeline/session.h"

/* Usage check for --input: no target, no -e, no --replay. -1 (message
 * printed) on a usage error. */
int session_input_check(const struct session_options *opt);
/* Open the recording at path and check its header; metrics: -m's list, or NULL for those the
 * recording was made for. 0, or -1 with err (its kind: usage for a metric name that means nothing). */
int session_open_recording(struct session *s, const struct session_options *opt, const char *path,
			   struct ms_error *err);
/* After session_run() over a recording: -1 with err (FILE:LINE: what is
 * wrong) when a broken record ended the replay early; a warning on stderr
 * when the file was cut (read up to its last complete frame). 0 otherwise,
 * and for sessions that do not replay a recording. */
int session_recording_end(const struct session *s, const char *command_name, struct ms_error *err);
/* The recording's header (valid while the session is open). */
const struct recording_header *session_recording_header(const struct session *s);
/* The replayed recording's descriptor, or -1 when the session does not read one. */
int session_recording_fd(const struct session *s);
/* What was measured, as the recording says ("'touchmem 50' (recorded on vm at ...)"). */
void session_recording_describe(const struct session *s, char *buf, size_t size);

#endif
