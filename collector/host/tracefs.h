/* Tracepoint ids from tracefs (events/<subsys>/<name>/id), mounting tracefs
 * at <sysfs>/kernel/tracing when the live system has it unmounted. */
#ifndef MEMSCOPE_TRACEFS_H
#define MEMSCOPE_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/suggest.h"

/* The tracefs directory for this sysfs root, mounting it if needed (live /sys only). */
int tracefs_dir(const char *sys_root, char *buf, size_t size, struct ms_error *err);

/* tracefs is mounted but this user cannot enter it (0700 unless mounted with
 * mode= or gid=): where, its mode and owner. Nothing is mounted. */
bool tracefs_closed(const char *sys_root, char *dir, size_t size, unsigned *mode, unsigned *uid);

/* Id of subsys:name; -1 with an error (and suggestions) when it does not exist. */
long long tracepoint_id(const char *sys_root, const char *subsys, const char *name, struct ms_error *err);

#endif
