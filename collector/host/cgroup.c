#include "host/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

/* mountinfo fields: id parent major:minor root mount-point options [optional...] - fstype source super-options. */
int cgroup2_mount(char *buf, size_t size, struct ms_error *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = -1;

	if (!f) {
		ms_error_set(err, "cannot read /proc/self/mountinfo: %s", strerror(errno));
		return -1;
	}
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char mount_point[2048], fstype[64];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %*s %2047s", mount_point) != 1)
			continue;
		if (strlen(mount_point) < size) {
			snprintf(buf, size, "%s", mount_point);
			found = 0;
		}
	}
	fclose(f);
	if (found < 0)
		ms_error_set(err, "no cgroup v2 hierarchy is mounted (/proc/self/mountinfo has no cgroup2 "
			     "file system): -G counts in cgroup v2 groups only; mount one with "
			     "mount -t cgroup2 none /sys/fs/cgroup/unified");
	return found;
}

static bool is_cgroup2(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

int cgroup_open(const char *name, struct ms_error *err)
{
	char mount[2048], path[4096];
	int fd;

	if (name[0] == '/' && strcmp(name, "/")) {
		/* An absolute path of a cgroup v2 directory is taken as it is. */
		fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && is_cgroup2(fd))
			return fd;
		if (fd >= 0) {
			close(fd);
			ms_error_set(err, "cgroup '%s' is not in a cgroup v2 hierarchy (a cgroup v1 controller's "
				     "directory?): -G needs cgroup v2", name);
			return -1;
		}
	}
	if (cgroup2_mount(mount, sizeof(mount), err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s%s%s", mount, name[0] == '/' ? "" : "/", name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ms_error_set(err, "cgroup '%s': cannot open %s: %s (-G names a cgroup v2 group, relative to "
			     "the cgroup2 mount %s, or its absolute path)", name, path, strerror(errno), mount);
		return -1;
	}
	if (!is_cgroup2(fd)) {
		close(fd);
		ms_error_set(err, "cgroup '%s': %s is not in a cgroup v2 hierarchy: -G needs cgroup v2", name, path);
		return -1;
	}
	return fd;
}
