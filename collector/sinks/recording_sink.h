/* The recording sink: memscope record's writer. Frames, labels, phases,
 * pause/resume and interval changes go into the file in the order they
 * happened; it answers the control requests about the recording (status,
 * record FILE: go on in a new file) once it has done what they ask. */
#ifndef MEMSCOPE_RECORDING_SINK_H
#define MEMSCOPE_RECORDING_SINK_H

#include <stdbool.h>

#include "recording/recording.h"
#include "sinks/sink.h"
#include "util/error.h"

/* Frames the writer may fall behind (a slow disk, zstd) before it gets
 * merged ones: deep, a recording should keep every interval. */
#define RECORDING_SINK_QUEUE 64

/* Make sink write the recording opt describes (opt->path; the file is
 * created by open). opt is copied; what it points to must outlive the sink. */
int recording_sink_init(struct sink *sink, const struct recording_writer_options *opt, struct ms_error *err);
/* As recording_sink_init, and `record stop` ends the file while the run goes
 * on (memscope live); opt->path NULL: no file until `record FILE`, which then
 * takes a plain name created beneath the current directory (opened now). */
int recording_sink_init_stoppable(struct sink *sink, const struct recording_writer_options *opt,
				  struct ms_error *err);
/* After the run: why the recording failed (a write error, or it could not be
 * finished), or NULL when it was written whole. */
const char *recording_sink_error(const struct sink *sink);

#endif
