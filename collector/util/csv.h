/* CSV fields as RFC 4180 writes them: a field holding the separator, a
 * double quote or a line break is quoted, its quotes doubled. Event names
 * hold commas (cpu/event=0x3c,umask=0x00/), so every CSV printer writes its
 * fields through here. */
#ifndef MEMSCOPE_CSV_H
#define MEMSCOPE_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

bool csv_needs_quotes(const char *field, const char *sep);
/* The field as it goes into a CSV line. */
void csv_write_field(FILE *out, const char *field, const char *sep);
/* The same into buf; the length it needs (as snprintf). */
size_t csv_format_field(char *buf, size_t size, const char *field, const char *sep);
/* One line: the fields separated by sep, then a newline. */
void csv_write_row(FILE *out, const char *sep, const char *const *fields, int nr);

#endif
