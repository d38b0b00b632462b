/* /proc/PID/maps: the mappings a process already had when sampling started
 * (later ones come from the kernel as PERF_RECORD_MMAP2). */
#ifndef MEMSCOPE_PROC_MAPS_H
#define MEMSCOPE_PROC_MAPS_H

#include <sys/types.h>

#include "events/sample_record.h"

/* Call fn for each mapping of pid (time_ns is set to 0: before the start).
 * Returns 0, or a negative errno when the file cannot be read (-EACCES: the
 * process belongs to another user or is not dumpable; -ENOENT: it exited). */
int proc_maps_read(const char *proc_root, pid_t pid, void (*fn)(const struct map_event *m, void *ctx), void *ctx);

#endif
