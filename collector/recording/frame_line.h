/* The fast path of the recording reader: a frame line exactly as the writer
 * puts it (docs/recording-format.md, "Frames"),
 *
 *   {"t":T,"d":D,"v":[V,null,...]}   or   ...,"v":[...],"m":[[I,E,R],...]}
 *
 * no spaces, members in this order, integers without sign, fraction or
 * exponent, read with a direct scan instead of building a JSON tree. Anything
 * else - another order, spaces, a wrong type, a value out of range, a value
 * for a retired series, a count that does not match the table - is left to
 * the JSON library, which reads any valid JSON and names what is wrong, so
 * both paths accept and refuse exactly the same lines. */
#ifndef MEMSCOPE_FRAME_LINE_H
#define MEMSCOPE_FRAME_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/frame.h"

/* Parse line[0..length) into frame (already fitted to table->nr series):
 * true with the first nr samples (the values a frame line of the file holds:
 * the table may have more, for brief series; with shorter, the line may end
 * early and the rest are null) set, *t and *d set; false when
 * the line is not in the writer's form or is not valid (the frame may then be
 * partly written). */
bool frame_line_parse(const char *line, size_t length, const struct series_table *table, int nr,
		      bool shorter, struct frame *frame, uint64_t *t, uint64_t *d);

#endif
