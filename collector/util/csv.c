#include "util/csv.h"

#include <string.h>

bool csv_needs_quotes(const char *field, const char *sep)
{
	/* One pass for a one-character separator (perf's fields are short:
	 * strpbrk's and strstr's set-up cost more than the scan). */
	if (sep[0] && !sep[1]) {
		for (const char *p = field; *p; p++)
			if (*p == '"' || *p == '\r' || *p == '\n' || *p == sep[0])
				return true;
		return false;
	}
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
	char line[1024];
	size_t len = 0, sep_len = strlen(sep);
	bool fits = true;

	/* The line into one buffer and one fwrite: a FILE's lock taken once,
	 * not per field. */
	for (int i = 0; i < nr && fits; i++) {
		size_t n;

		if (i) {
			fits = sep_len < sizeof(line) - len;
			if (!fits)
				break;
			memcpy(line + len, sep, sep_len);
			len += sep_len;
		}
		n = csv_format_field(line + len, sizeof(line) - len, fields[i] ? fields[i] : "", sep);
		fits = n < sizeof(line) - len;
		if (fits)
			len += n;
	}
	if (fits && len + 1 < sizeof(line)) {
		line[len++] = '\n';
		fwrite(line, 1, len, out);
		return;
	}
	/* Longer than the buffer: field by field. */
	for (int i = 0; i < nr; i++) {
		if (i)
			fputs(sep, out);
		csv_write_field(out, fields[i] ? fields[i] : "", sep);
	}
	fputc('\n', out);
}
