/* The recording source: the frames of a recording fed back through the
 * pipeline (memscope stat --input, reports). It registers the recorded
 * series table - the same names and labels the live sources registered - and
 * each sample() delivers the next recorded frame with its recorded time and
 * interval (relative to the start of the recording).
 *
 * The file is read once, as the frames are replayed, and never held in
 * memory: the header is checked when the source is created, a damaged record
 * ends the replay at that record (recording_source_error names FILE:LINE),
 * and whether the file was cut is known at its end (recording_source_cut).
 * Reading it twice - once to check, once to replay - doubled the cost of
 * every report, which is mostly JSON parsing. */
#ifndef MEMSCOPE_RECORDING_SOURCE_H
#define MEMSCOPE_RECORDING_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "recording/recording.h"
#include "sampler/source.h"

/* Labels and control events met between frames while replaying. */
typedef void (*recording_record_fn)(const struct recording_record *rec, void *ctx);

/* Opens the file and checks its header. */
int recording_source_init(struct source *src, const char *path, struct ms_error *err);
const struct recording_header *recording_source_header(const struct source *src);
/* The recording's file descriptor, as the reader opened it. */
int recording_source_fd(const struct source *src);
void recording_source_on_record(struct source *src, recording_record_fn fn, void *ctx);
/* After the replay: the file ends without its end record (message: where, how many frames). */
bool recording_source_cut(const struct source *src, char *message, size_t size);
/* The broken record that ended the replay (FILE:LINE: what is wrong), or NULL. */
const char *recording_source_error(const struct source *src);

#endif
