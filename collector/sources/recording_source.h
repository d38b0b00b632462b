/* The recording source: the frames of a recording fed back through the
 * pipeline (memscope stat --input, reports). It registers the recorded
 * series table - the same names and labels the live sources registered - and
 * each sample() delivers the next recorded frame with its recorded time and
 * interval (relative to the start of the recording).
 *
 * open() reads the whole file once to check it, so a damaged recording is an
 * error before the first frame, and a cut one is known (see
 * recording_source_cut); the frames are then streamed, never all in memory. */
#ifndef MEMSCOPE_RECORDING_SOURCE_H
#define MEMSCOPE_RECORDING_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "recording.h"
#include "source.h"

/* Labels and control events met between frames while replaying. */
typedef void (*recording_record_fn)(const struct recording_record *rec, void *ctx);

/* Opens the file and checks its header. */
int recording_source_create(struct source *src, const char *path, struct ms_error *err);
const struct recording_header *recording_source_header(const struct source *src);
void recording_source_on_record(struct source *src, recording_record_fn fn, void *ctx);
/* After open: the file ends without its end record (message: where, how many frames). */
bool recording_source_cut(const struct source *src, char *message, size_t size);
/* After open: frames the replay will deliver. */
unsigned long long recording_source_nr_frames(const struct source *src);
/* A read error met while replaying (the file changed after it was checked), or NULL. */
const char *recording_source_error(const struct source *src);

#endif
