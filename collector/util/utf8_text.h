/* UTF-8 checks for text that ends up in JSON (labels, phase names): JSON
 * holds only UTF-8, so bad bytes are refused where the text comes in, one
 * line at a time, never when it is written. */
#ifndef MEMSCOPE_UTF8_TEXT_H
#define MEMSCOPE_UTF8_TEXT_H

#include <stddef.h>

/* The offset of the first byte of text[0..len) that does not start a valid
 * UTF-8 sequence (overlong forms, surrogates and code points past U+10FFFF
 * are invalid, as JSON parsers have them), or len when all of it is UTF-8. */
size_t utf8_invalid_at(const char *text, size_t len);

/* The longest prefix of valid UTF-8 text[0..len) of at most max bytes that
 * does not cut a character in two. */
size_t utf8_cut(const char *text, size_t len, size_t max);

#endif
