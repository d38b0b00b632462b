/* Sample records of a recording (docs/recording-format.md, "Samples"): how
 * the writer spells a sample item as one line, and how the reader turns the
 * line back into the item. Internal to recording/. */
#ifndef MEMSCOPE_RECORDING_SAMPLES_H
#define MEMSCOPE_RECORDING_SAMPLES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/sample_item.h"
#include "util/error.h"

struct recording_writer;

/* Append one line of text (without its newline) to the writer's next batch;
 * sample: it is a sample record (counted). */
int recording_writer_append(struct recording_writer *w, const char *line, size_t len, bool sample,
			    struct ms_error *err);
uint64_t recording_writer_origin(const struct recording_writer *w);

/* Is rec a sample record? 1 and item filled (pointing into st), 0 when rec
 * is another kind, -1 with err ("FILE:LINE: ...") when it is a broken one. */
int recording_sample_item_read(const char *path, int line, const json_t *rec, struct sample_item_storage *st,
			       struct sample_item *item, struct ms_error *err);

#endif
