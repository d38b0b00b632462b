#include "util/trusted_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Who besides root may change memscope's own files: its program's owner. */
static uid_t program_owner(void)
{
	struct stat st;

	return stat("/proc/self/exe", &st) == 0 ? st.st_uid : 0;
}

/* Which others can change this file or directory; "" when none. A sticky
 * directory owned by a trusted user (like /tmp) lets others add entries but
 * not rename or remove the (trusted) one below it. */
static const char *others_can_write(const struct stat *st, uid_t owner_ok)
{
	if (st->st_uid != 0 && st->st_uid != owner_ok)
		return "its owner";
	if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
		return "";
	if (st->st_mode & S_IWOTH)
		return "every user";
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
		return "its group";
	return "";
}

int trusted_path_check(const char *path, const char *what, struct ms_error *err)
{
	char real[PATH_MAX];
	uid_t owner_ok;
	struct stat st;
	const char *who;

	if (geteuid() != 0)
		return 0;
	if (!realpath(path, real)) {
		ms_error_set(err, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	owner_ok = program_owner();
	/* From the file up to /: each must be safe from other users, and each
	 * directory must not let them replace the entry below it. */
	for (char *end = real + strlen(real);;) {
		if (lstat(real[0] ? real : "/", &st) < 0) {
			ms_error_set(err, "%s %s: %s: %s", what, path, real[0] ? real : "/", strerror(errno));
			return -1;
		}
		who = others_can_write(&st, owner_ok);
		if (who[0]) {
			ms_error_set(err, "%s %s is not run as root: %s %s can be changed by %s (uid %u, mode %04o), who "
				     "could make root run their code; make it root's and writable only by root, or run "
				     "memscope as the user who owns it", what, path,
				     S_ISDIR(st.st_mode) ? "the directory" : "the file", real[0] ? real : "/", who,
				     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			return -1;
		}
		if (!real[0] || end == real)
			break;
		/* Up one directory. */
		while (end > real && *end != '/')
			end--;
		*end = '\0';
	}
	return 0;
}
