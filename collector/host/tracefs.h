/* Tracepoint ids from tracefs (events/<subsys>/<name>/id), mounting tracefs
 * at <sysfs>/kernel/tracing when the live system has it unmounted. */
#ifndef MEMSCOPE_TRACEFS_H
#define MEMSCOPE_TRACEFS_H

#include <stddef.h>

#include "util/error.h"
#include "util/suggest.h"

/* The tracefs directory for this sysfs root, mounting it if needed (live /sys only). */
int tracefs_dir(const char *sys_root, char *buf, size_t size, struct ms_error *err);

/* Id of subsys:name; -1 with an error (and suggestions) when it does not exist. */
long long tracepoint_id(const char *sys_root, const char *subsys, const char *name, struct ms_error *err);

#endif
