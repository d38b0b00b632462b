/* A growable text buffer: /metrics pages and stream batches are built in
 * one, and their size is not known beforehand. Out of memory leaves it
 * marked failed (and its text cut), never a crash. */
#ifndef MEMSCOPE_TEXT_BUF_H
#define MEMSCOPE_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct text_buf {
	char *text;            /* NUL-terminated once anything was added */
	size_t len, cap;
	bool failed;           /* memory ran out: text is incomplete */
};

__attribute__((format(printf, 2, 3)))
void text_buf_printf(struct text_buf *b, const char *fmt, ...);
void text_buf_add(struct text_buf *b, const char *text, size_t len);
void text_buf_addc(struct text_buf *b, char c);
/* Room for extra more bytes; false when memory runs out. */
bool text_buf_reserve(struct text_buf *b, size_t extra);
void text_buf_clear(struct text_buf *b);
void text_buf_free(struct text_buf *b);
/* Take the text (the caller frees it; NULL when failed); b is empty after. */
char *text_buf_take(struct text_buf *b, size_t *len);

#endif
