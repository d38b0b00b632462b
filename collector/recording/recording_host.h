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

/* The private directory a snapshot is put back into, in $TMPDIR. Everything
 * in it is written and read through its descriptor (each directory opened
 * from the one above, never through a link), so another user who can write
 * $TMPDIR and renames it or puts a link at its name never makes memscope
 * write or read anywhere else. */
struct recorded_host_tree {
	char path[4096];        /* as made, for messages */
	char name[64];          /* its name in the temporary directory */
	int parent_fd, fd;      /* the temporary directory; the tree */
};

/* Write a snapshot under a new private directory and load the host from
 * it (its roots are /proc/self/fd/N/sys and .../proc). The catalog resolver
 * reads a few files too, so the directory stays until
 * recording_host_remove(), which is called also after a failure. */
int recording_host_load(const json_t *snapshot, struct host *host, struct recorded_host_tree *tree,
			struct ms_error *err);
void recording_host_remove(struct recorded_host_tree *tree);

#endif
