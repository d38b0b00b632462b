/* The error contract of every module: a function that can fail returns -1
 * (or NULL) after filling a `struct ms_error`: the text for people (what
 * failed, why, how to fix it), the kind of failure, and a reason code for
 * code that decides on it (never the text: rewording a message must not
 * change what the program does). Callers add context with ms_error_prefix(),
 * which keeps the kind and reason. Exit codes are made from the kind once,
 * in cli/ (cli/exit_status.h); messages are said by util/report.h. */
#ifndef MEMSCOPE_ERROR_H
#define MEMSCOPE_ERROR_H

#include <stddef.h>

/* Exit codes of every command: 0 ok, 1 runtime failure, 2 usage error. */
#define EXIT_USAGE 2

enum ms_error_kind {
	MS_ERR_RUNTIME = 0,      /* what was asked failed while it was done (a file, memory, the kernel) */
	MS_ERR_USAGE,            /* what was asked means nothing or contradicts itself: the user's to fix */
	MS_ERR_NOT_SUPPORTED,    /* this host (kernel, hardware, build) cannot do what was asked */
	MS_ERR_PERMISSION,       /* this user may not do it (privileges, perf_event_paranoid) */
};

/* Reasons code decides on; MS_REASON_NONE for most errors, which only say. */
enum ms_error_reason {
	MS_REASON_NONE = 0,
	MS_REASON_NO_MEMORY,
};

struct ms_error {
	char text[1024];         /* first: `struct ms_error err = { "" }` */
	enum ms_error_kind kind;
	enum ms_error_reason reason;
};

/* A new error: the text, of kind MS_ERR_RUNTIME with no reason. */
__attribute__((format(printf, 2, 3)))
void ms_error_set(struct ms_error *err, const char *fmt, ...);

/* A new error of this kind. */
__attribute__((format(printf, 3, 4)))
void ms_error_set_kind(struct ms_error *err, enum ms_error_kind kind, const char *fmt, ...);

/* A usage error: ms_error_set_kind(err, MS_ERR_USAGE, ...). */
__attribute__((format(printf, 2, 3)))
void ms_error_usage(struct ms_error *err, const char *fmt, ...);

/* The error already in err (a callee's) is of this kind: a name the user
 * wrote that a parser refused is a usage error. */
void ms_error_mark(struct ms_error *err, enum ms_error_kind kind);

/* Prepend "CONTEXT: " to the message already in err. */
__attribute__((format(printf, 2, 3)))
void ms_error_prefix(struct ms_error *err, const char *fmt, ...);

/* Append text (for example a hint) to the message already in err. */
__attribute__((format(printf, 2, 3)))
void ms_error_append(struct ms_error *err, const char *fmt, ...);

#endif
