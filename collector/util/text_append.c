#include "util/text_append.h"

#include <stdarg.h>
#include <stdio.h>

void text_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (size == 0 || *len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n < 0)
		buf[*len] = '\0';
	else if ((size_t)n >= size - *len)
		*len = size - 1;
	else
		*len += (size_t)n;
}
