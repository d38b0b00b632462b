/* What every measuring command (stat, record, top, live) does between its
 * options and its exit code, written once: open the session, let the command
 * check what it opened and add its own sinks, add the sinks of the registry
 * its options chose (sinks/sink_registry.h: --influx FILE), run, and make
 * the exit code. The session owns every sink handed to it, whether the
 * handing succeeded or not; a sink made before the session opens (live's
 * server: its address is checked before a command starts) is handed to the
 * run with measure_run_hand(), which owns it until the session does. So a
 * command never closes a sink itself. */
#ifndef MEMSCOPE_MEASURE_RUN_H
#define MEMSCOPE_MEASURE_RUN_H

#include <stdbool.h>

#include "pipeline/session.h"
#include "sinks/sink_registry.h"

/* The registry's sinks asked for on the command line: each kind's option
 * argument (by the kind's place in sink_registry), NULL when not given. */
struct measure_sinks {
	const char *arg[SINK_REGISTRY_MAX];
};

struct measure_run;

/* A step of the command: 0 to go on; -1 with err set (said by ms_report,
 * the exit code made from its kind: cli/exit_status.h); or an exit code,
 * the message said already. */
typedef int (*measure_step_fn)(struct measure_run *m, struct ms_error *err);

struct measure_run {
	struct session *session;           /* opened and closed by measure_run */
	const struct session_options *opt;
	const struct measure_sinks *chosen; /* the registry's sinks to add, or NULL */
	void *ctx;                         /* the command's own */
	/* Optional: opens the session instead of session_open (report: a
	 * recording or a replay). -1 with err. */
	measure_step_fn open;
	/* After the session opened: the command's checks and its own sinks
	 * (measure_run_add), timers, the control. NULL: none. */
	measure_step_fn opened;
	/* After a run that ended well: the exit code. NULL: the command's
	 * status (session_exit_code). */
	int (*ended)(struct measure_run *m);
	/* A command that could not start (exec failed) ends with its shell's
	 * status (127, 126), not 1. */
	bool exec_status;
	/* The session closes before a failed run's message is said (top: the
	 * full screen goes first). */
	bool close_before_error;
	/* Not 0: the exit code when the session does not open (top: 1 for
	 * any reason); 0: session_open's (1 runtime, 2 usage). */
	int open_failure_status;
	bool ran;                          /* out: the run ended well (its exit code is the ended step's) */
	/* Private: sinks handed before the session opened, and the registry's. */
	struct sink *handed[SESSION_MAX_SINKS];
	int nr_handed;
	struct sink registry_sinks[SINK_REGISTRY_MAX];
	const struct sink_kind *registry_kinds[SINK_REGISTRY_MAX];
	int nr_registry;
};

/* A sink made before the session opens; the run owns it from here (closes
 * it when the session does not open) and adds it after the command's own. */
void measure_run_hand(struct measure_run *m, struct sink *sink);
/* From the opened step: hand a sink to the session (it owns it from here,
 * whatever the result). -1 with err. */
int measure_run_add(struct measure_run *m, struct sink *sink, const struct sink *follows, struct ms_error *err);
/* Open, add the sinks, run, close; the exit code. Messages go through
 * util/report.h ("memscope NAME: ..."). */
int measure_run(struct measure_run *m);

#endif
