#include "util/report.h"

#include <stdarg.h>
#include <stdio.h>

static const char *command_name;

void ms_report_command(const char *name)
{
	command_name = name;
}

const char *ms_report_command_name(void)
{
	return command_name;
}

static void say(const char *text)
{
	if (command_name)
		fprintf(stderr, "memscope %s: %s\n", command_name, text);
	else
		fprintf(stderr, "memscope: %s\n", text);
}

void ms_report(const struct ms_error *err)
{
	say(err->text);
}

void ms_warn(const char *fmt, ...)
{
	char text[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	say(text);
}
