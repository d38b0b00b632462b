#include "util/csv.h"

#include <string.h>

bool csv_needs_quotes(const char *field, const char *sep)
{
	return strpbrk(field, "\"\r\n") || (sep[0] && strstr(field, sep));
}

size_t csv_format_field(char *buf, size_t size, const char *field, const char *sep)
{
	size_t n = 0;

#define PUT(ch) do { if (n + 1 < size) buf[n] = (ch); n++; } while (0)
	if (!csv_needs_quotes(field, sep)) {
		for (const char *p = field; *p; p++)
			PUT(*p);
	} else {
		PUT('"');
		for (const char *p = field; *p; p++) {
			if (*p == '"')
				PUT('"');
			PUT(*p);
		}
		PUT('"');
	}
#undef PUT
	if (size)
		buf[n < size ? n : size - 1] = '\0';
	return n;
}

void csv_write_field(FILE *out, const char *field, const char *sep)
{
	if (!csv_needs_quotes(field, sep)) {
		fputs(field, out);
		return;
	}
	fputc('"', out);
	for (const char *p = field; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

void csv_write_row(FILE *out, const char *sep, const char *const *fields, int nr)
{
	for (int i = 0; i < nr; i++) {
		if (i)
			fputs(sep, out);
		csv_write_field(out, fields[i] ? fields[i] : "", sep);
	}
	fputc('\n', out);
}
