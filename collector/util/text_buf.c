#include "util/text_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool text_buf_reserve(struct text_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1, cap;
	char *text;

	if (b->failed)
		return false;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	text = realloc(b->text, cap);
	if (!text) {
		b->failed = true;
		return false;
	}
	b->text = text;
	b->cap = cap;
	return true;
}

void text_buf_add(struct text_buf *b, const char *text, size_t len)
{
	if (!text_buf_reserve(b, len))
		return;
	memcpy(b->text + b->len, text, len);
	b->len += len;
	b->text[b->len] = '\0';
}

void text_buf_addc(struct text_buf *b, char c)
{
	text_buf_add(b, &c, 1);
}

void text_buf_printf(struct text_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!text_buf_reserve(b, 64))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (!text_buf_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void text_buf_clear(struct text_buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->text)
		b->text[0] = '\0';
}

void text_buf_free(struct text_buf *b)
{
	free(b->text);
	memset(b, 0, sizeof(*b));
}

char *text_buf_take(struct text_buf *b, size_t *len)
{
	char *text;

	if (!b->text)
		text_buf_reserve(b, 0);
	text = b->failed ? NULL : b->text;

	if (!text)
		free(b->text);
	if (len)
		*len = text ? b->len : 0;
	memset(b, 0, sizeof(*b));
	return text;
}
