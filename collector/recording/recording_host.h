/* The recording machine, carried in the recording so its metrics can be
 * recomputed anywhere: a snapshot of the few sysfs and procfs files the
 * topology, PMU and catalog resolver code read (CPU and node topology, each
 * PMU's type, cpumask, format and event files, the CPU identity, the names
 * of the kernel statistics). Put back into a private temporary tree, those
 * files load a `struct host` exactly as on the recording machine, through the
 * same code (as the sysfs fixtures of the tests do). */
#ifndef MEMSCOPE_RECORDING_HOST_H
#define MEMSCOPE_RECORDING_HOST_H

#include <jansson.h>

#include "util/error.h"
#include "host/host.h"
#include "host/sysfs.h"

/* {"sys/devices/system/cpu/online": "0-1\n", ...}; NULL on allocation failure. */
json_t *recording_host_snapshot(const struct sysfs_roots *roots);

/* Write a snapshot under a new private directory (its name into dir, at
 * least 64 bytes) and load the host from it. The catalog resolver reads a few
 * files too, so the directory stays until recording_host_remove(). */
int recording_host_load(const json_t *snapshot, struct host *host, char *dir, size_t size, struct ms_error *err);
void recording_host_remove(const char *dir);

#endif
