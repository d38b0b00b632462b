#include "host/tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "host/sysfs.h"

static int events_dir_exists(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/events", dir);
	return sysfs_exists(path);
}

#define TRACEFS_MAGIC_NUMBER 0x74726163

/* A tracefs mount at dir that this user may not enter; st: the mount's root. */
static bool closed_at(const char *dir, struct stat *st)
{
	char events[4200];
	struct statfs fs;

	snprintf(events, sizeof(events), "%s/events", dir);
	if (stat(dir, st) < 0 || statfs(dir, &fs) < 0 || (unsigned long)fs.f_type != TRACEFS_MAGIC_NUMBER)
		return false;
	return access(events, X_OK) < 0 && (errno == EACCES || errno == EPERM);
}

bool tracefs_closed(const char *sys_root, char *dir, size_t size, unsigned *mode, unsigned *uid)
{
	const char *const where[] = { "kernel/tracing", "kernel/debug/tracing" };
	struct stat st;

	for (int i = 0; i < 2; i++) {
		sysfs_join(dir, size, sys_root, where[i]);
		if (closed_at(dir, &st)) {
			*mode = (unsigned)(st.st_mode & 07777);
			*uid = (unsigned)st.st_uid;
			return true;
		}
	}
	return false;
}

static bool mounted_but_closed(const char *dir, struct ms_error *err)
{
	struct stat st;

	if (!closed_at(dir, &st))
		return false;
	ms_error_set(err, "tracefs is mounted at %s, but this user (uid %u) cannot read it: it is mode %04o, "
		     "owned by uid %u, and tracepoint ids are in it; run as root, or open it to others: sudo mount "
		     "-o remount,mode=755 %s (or gid=GROUP for one group)", dir, (unsigned)geteuid(),
		     (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, dir);
	return true;
}

int tracefs_dir(const char *sys_root, char *buf, size_t size, struct ms_error *err)
{
	char debug[4200];

	sysfs_join(buf, size, sys_root, "kernel/tracing");
	if (events_dir_exists(buf))
		return 0;
	sysfs_join(debug, sizeof(debug), sys_root, "kernel/debug/tracing");
	if (events_dir_exists(debug)) {
		snprintf(buf, size, "%s", debug);
		return 0;
	}
	/* Mounted, but closed to this user (tracefs is 0700 unless mounted with
	 * mode= or gid=): saying "not mounted" would send them the wrong way. */
	if (mounted_but_closed(buf, err))
		return -1;
	/* Only the live kernel can be mounted; a fixture tree has what it has. */
	if (strcmp(sys_root, "/sys") == 0 && mount("nodev", buf, "tracefs", 0, NULL) == 0 &&
	    events_dir_exists(buf))
		return 0;
	ms_error_set(err, "tracefs is not mounted at %s and mounting it failed (%s); "
		     "fix: mount -t tracefs nodev /sys/kernel/tracing (as root)",
		     buf, strerror(errno ? errno : ENOENT));
	return -1;
}

static void suggest_from_dir(struct suggestions *s, const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char candidate[300];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(candidate, sizeof(candidate), "%s%s", prefix, de->d_name);
		suggestions_offer(s, candidate);
	}
	closedir(d);
}

long long tracepoint_id(const char *sys_root, const char *subsys, const char *name, struct ms_error *err)
{
	char dir[4096], path[4400], typed[300], hint[600];
	long long id;
	struct suggestions s;

	if (tracefs_dir(sys_root, dir, sizeof(dir), err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, subsys, name);
	if (sysfs_read_int(path, &id) == 0)
		return id;
	if (errno == EACCES) {
		ms_error_set(err, "cannot read %s: permission denied; fix: run as root, or "
			     "chmod -R o+r %s/events (tracefs ids are root-only by default)", path, dir);
		return -1;
	}
	snprintf(typed, sizeof(typed), "%s:%s", subsys, name);
	suggestions_init(&s, typed);
	snprintf(path, sizeof(path), "%s/events/%s", dir, subsys);
	if (sysfs_exists(path)) {
		char prefix[200];

		snprintf(prefix, sizeof(prefix), "%s:", subsys);
		suggest_from_dir(&s, path, prefix);
	} else {
		/* Wrong subsystem: suggest subsystems. */
		suggestions_init(&s, subsys);
		snprintf(path, sizeof(path), "%s/events", dir);
		suggest_from_dir(&s, path, "");
	}
	suggestions_format(&s, hint, sizeof(hint));
	ms_error_set(err, "unknown tracepoint '%s:%s' (no %s/events/%s/%s)%s; "
		     "list them with: ls %s/events/%s", subsys, name, dir, subsys, name, hint, dir, subsys);
	return -1;
}
