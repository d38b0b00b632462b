/* cgroup v2 directories for perf's per-cgroup counting (stat -G): the
 * kernel takes an open descriptor of the cgroup's directory in place of a pid
 * (PERF_FLAG_PID_CGROUP). */
#ifndef MEMSCOPE_CGROUP_H
#define MEMSCOPE_CGROUP_H

#include <stddef.h>

#include "util/error.h"

/* Where the cgroup v2 hierarchy is mounted, from /proc/self/mountinfo
 * (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts). -1 with err
 * when no cgroup2 file system is mounted. */
int cgroup2_mount(char *buf, size_t size, struct ms_error *err);

/* An O_RDONLY|O_DIRECTORY descriptor of the cgroup called name: a path
 * relative to the cgroup v2 mount (perf's -G names; "/" is the root), or an
 * absolute path of a directory in the cgroup v2 hierarchy. -1 with err naming
 * the path looked up. */
int cgroup_open(const char *name, struct ms_error *err);

#endif
