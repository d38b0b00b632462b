/* The sink registry: the sinks a measuring command adds because an option of
 * theirs was given (--influx FILE), beside the command's own sinks (stat's
 * printer, the recording, top's screen). As the source registry
 * (sources/registry.h): each kind is defined beside its sink and listed once
 * in sink_registry.c; the commands that take the registry's options (stat,
 * record, live) show them in --help, take them and hand the sink to the
 * session (cli/measure_run.h) without knowing it. A new sink is its file and
 * a row in that list. */
#ifndef MEMSCOPE_SINK_REGISTRY_H
#define MEMSCOPE_SINK_REGISTRY_H

#include <stdbool.h>

#include "sinks/sink.h"
#include "util/error.h"

/* The one option that adds a sink of the kind: --NAME ARG. */
struct sink_kind_option {
	const char *name;                  /* the long option, "influx" */
	const char *arg;                   /* its argument in help, "FILE" */
	const char *help;                  /* what it does; '\n' continues on the next line */
	bool file;                         /* the argument names a file (completion) */
};

struct sink_kind {
	const char *name;                  /* "influx", for messages */
	struct sink_kind_option option;
	/* Make sink for the option's argument (a file opened now: a path that
	 * cannot be written fails before anything runs). -1 with err, leaving
	 * nothing to close; on success the sink goes to a session, which
	 * closes it. */
	int (*create)(struct sink *sink, const char *arg, struct ms_error *err);
	/* Optional: after the run, did the sink fail to deliver all it was
	 * given (a write error, said on stderr)? The command then ends with 1. */
	bool (*failed)(const struct sink *sink);
};

#define SINK_REGISTRY_MAX 8

/* The registry's kinds, in the order their sinks are added, NULL-terminated. */
extern const struct sink_kind *const sink_registry[];

/* The kinds (each defined beside its sink). */
extern const struct sink_kind influx_sink_kind;

#endif
