/* Why perf_event_open refused an event, and what fixes it. */
#ifndef MEMSCOPE_PERF_ERRORS_H
#define MEMSCOPE_PERF_ERRORS_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

struct event;
struct host;

enum open_scope { OPEN_TASK, OPEN_SYSTEM_WIDE };

/* Fill err for a failed open of ev (errnum is a positive errno); pids are
 * the processes counted (OPEN_TASK), so a refusal to count another user's
 * process is told apart from perf_event_paranoid. Returns true
 * when the failure means "this machine cannot count this event" (no PMU, not
 * supported) so the other events can go on; false when it is fatal for the
 * whole run (permissions, file limit). */
bool perf_open_error(const struct host *host, const struct event *ev, int errnum,
		     enum open_scope scope, const pid_t *pids, int nr_pids, long needed_fds, struct ms_error *err);

/* The CPU's own PMU (cpu, cpu_core, armv8_pmuv3_N...), or NULL: in a virtual
 * machine without PMU passthrough there is none. */
const struct pmu *host_core_pmu(const struct host *host);

/* /proc/sys/kernel/perf_event_paranoid, or 2 (the kernel's default) if unreadable. */
int perf_event_paranoid(void);

struct perf_event_attr;

/* Whether this process may open attr on itself (a source's presence check):
 * false with the reason in why, for a fixture tree (another machine), a kernel
 * without perf events, or a refusal; `what` says what was refused ("count even
 * this process's own task clock"). */
bool perf_event_try_own(const struct host *host, struct perf_event_attr *attr, const char *what,
			struct ms_error *why);

#endif
