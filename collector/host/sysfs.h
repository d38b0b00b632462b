/* Reading the kernel's sysfs (and procfs) files, under a root that tests can move.
 *
 * MEMSCOPE_SYSFS_ROOT replaces /sys, so a fixture tree holds
 * `bus/event_source/devices/...` and `devices/system/...` at its top.
 * MEMSCOPE_PROCFS_ROOT replaces /proc for the few files read from there
 * (cpuinfo, vmstat); with only MEMSCOPE_SYSFS_ROOT set it is the tree's
 * sibling `proc/` (<tree>/sys and <tree>/proc), so the live host's files are
 * never mixed with another machine's. Both are read once, by
 * sysfs_roots_from_env(). */
#ifndef MEMSCOPE_SYSFS_H
#define MEMSCOPE_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sysfs_roots {
	char sys[4096];   /* "/sys" or the fixture root */
	char proc[4096];  /* "/proc" or the fixture root */
	bool is_fixture;  /* sys is not the live /sys: never open real counters for it */
	bool is_recorded; /* a recording's snapshot: what ran there is in the recording's series */
};

void sysfs_roots_from_env(struct sysfs_roots *roots);

/* Join root and a relative path ("bus/event_source/devices") into buf. */
int sysfs_join(char *buf, size_t size, const char *root, const char *rel);

/* Whole file into buf, trailing whitespace removed. -1 and errno on failure. */
int sysfs_read_str(const char *path, char *buf, size_t size);
int sysfs_read_int(const char *path, long long *value);
/* The same from a descriptor the caller opened (a name resolved once, with
 * O_NOFOLLOW, from a directory's descriptor); reads only a regular file
 * (EINVAL otherwise) and closes fd. */
int sysfs_read_fd_str(int fd, char *buf, size_t size);
/* The whole text written to an opened descriptor, then closed (every
 * case): 0, or -1 with errno (EINVAL when it is not a regular file, EIO
 * for a short write). For files opened component by component. */
int sysfs_write_fd_str(int fd, const char *text);
bool sysfs_exists(const char *path);

#endif
