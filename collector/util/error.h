/* A human-readable error: what failed, why, and how to fix it.
 * Functions that can fail take a `struct ms_error *` and return -1 (or NULL)
 * after filling it; callers add context with ms_error_prefix(). */
#ifndef MEMSCOPE_ERROR_H
#define MEMSCOPE_ERROR_H

#include <stddef.h>

/* Exit codes of every command: 0 ok, 1 runtime failure, 2 usage error. */
#define EXIT_USAGE 2

struct ms_error {
	char text[1024];
};

__attribute__((format(printf, 2, 3)))
void ms_error_set(struct ms_error *err, const char *fmt, ...);

/* Prepend "CONTEXT: " to the message already in err. */
__attribute__((format(printf, 2, 3)))
void ms_error_prefix(struct ms_error *err, const char *fmt, ...);

/* Append text (for example a hint) to the message already in err. */
__attribute__((format(printf, 2, 3)))
void ms_error_append(struct ms_error *err, const char *fmt, ...);

#endif
