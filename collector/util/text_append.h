/* Building a message piece by piece into a fixed buffer. The usual
 * `len += snprintf(buf + len, size - len, ...)` goes wrong once the text no
 * longer fits: snprintf returns what it would have written, len passes the
 * end, and the next call forms a pointer past the buffer (undefined, and
 * `size - len` wraps around to a huge size). This keeps len inside. */
#ifndef MEMSCOPE_TEXT_APPEND_H
#define MEMSCOPE_TEXT_APPEND_H

#include <stddef.h>

/* Append to buf (size bytes, NUL-terminated, holding *len characters);
 * text that does not fit is cut, *len never exceeds size - 1. */
__attribute__((format(printf, 4, 5)))
void text_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...);

#endif
