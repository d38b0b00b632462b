#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_text(struct ms_error *err, enum ms_error_kind kind, const char *fmt, va_list ap)
{
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	err->kind = kind;
	err->reason = MS_REASON_NONE;
}

void ms_error_set(struct ms_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	set_text(err, MS_ERR_RUNTIME, fmt, ap);
	va_end(ap);
}

void ms_error_set_kind(struct ms_error *err, enum ms_error_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	set_text(err, kind, fmt, ap);
	va_end(ap);
}

void ms_error_usage(struct ms_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	set_text(err, MS_ERR_USAGE, fmt, ap);
	va_end(ap);
}

void ms_error_mark(struct ms_error *err, enum ms_error_kind kind)
{
	if (err)
		err->kind = kind;
}

void ms_error_prefix(struct ms_error *err, const char *fmt, ...)
{
	char prefix[512], old[sizeof(err->text)];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->text, sizeof(old));
	/* Truncating an over-long message is fine; its start says the most. */
	size_t len = strlen(prefix);
	if (len > sizeof(err->text) - 3)
		len = sizeof(err->text) - 3;
	memcpy(err->text, prefix, len);
	memcpy(err->text + len, ": ", 2);
	size_t room = sizeof(err->text) - len - 3;
	size_t old_len = strnlen(old, room);
	memcpy(err->text + len + 2, old, old_len);
	err->text[len + 2 + old_len] = '\0';
}

void ms_error_append(struct ms_error *err, const char *fmt, ...)
{
	size_t len;
	va_list ap;

	if (!err)
		return;
	len = strlen(err->text);
	if (len + 1 >= sizeof(err->text))
		return;
	va_start(ap, fmt);
	vsnprintf(err->text + len, sizeof(err->text) - len, fmt, ap);
	va_end(ap);
}
