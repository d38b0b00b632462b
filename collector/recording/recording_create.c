/* Safe creation of a recording file (see recording_create.h for why). */
#include "recording/recording_create.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Tries at a fresh temporary name, and at the whole sequence when the name
 * keeps changing under us. */
#define TEMP_TRIES 64
#define CREATE_TRIES 8

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFLNK: return "a symbolic link";
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	default: return "not a regular file";
	}
}

/* "dir/name" -> an open directory and the last component. */
static int open_dir(const char *path, const char **base, struct ms_error *err)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	*base = slash ? slash + 1 : path;
	if (!(*base)[0] || !strcmp(*base, ".") || !strcmp(*base, "..")) {
		ms_error_set(err, "%s names a directory, not a file: give a file name (-o DIR/memscope.rec)", path);
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else {
		ms_error_set(err, "%s: the name is too long", path);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		ms_error_set(err, "cannot create %s: directory %s: %s", path, dir, strerror(errno));
	return fd;
}

/* ".NAME.XXXXXXXXXXXXXXXX" in the directory: a fresh file, never an existing
 * one or a link (O_EXCL). */
static int create_temporary(int dirfd, const char *base, char *name, size_t size, const char *path,
			    struct ms_error *err)
{
	for (int i = 0; i < TEMP_TRIES; i++) {
		unsigned long long r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (unsigned long long)getpid() * 2654435761u ^ (unsigned long long)time(NULL) ^ (unsigned)i;
		if ((size_t)snprintf(name, size, ".%.200s.%016llx", base, r) >= size) {
			ms_error_set(err, "%s: the name is too long", path);
			return -1;
		}
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			/* Locked before anyone can see it under its name. */
			if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno != ENOLCK && errno != EINVAL) {
				ms_error_set(err, "cannot lock %s: %s", path, strerror(errno));
				close(fd);
				unlinkat(dirfd, name, 0);
				return -1;
			}
			return fd;
		}
		if (errno != EEXIST) {
			ms_error_set(err, "cannot create %s: %s%s", path, strerror(errno),
				     errno == EACCES ? " (no write permission in that directory; choose another with -o)"
						     : "");
			return -1;
		}
	}
	ms_error_set(err, "cannot create %s: %d temporary names in its directory were taken", path, TEMP_TRIES);
	return -1;
}

/* Is the regular file `name` being written by a memscope (its lock held)?
 * -1 with err when it is, or when it is not a regular file after all. */
static int check_not_busy(int dirfd, const char *name, const char *shown, const char *path, struct ms_error *err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	int busy;

	/* Gone, or replaced by a link meanwhile: nobody is writing it. */
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		ms_error_set(err, "%s is %s, not a recording: memscope never writes through it; remove it or "
			     "choose another file with -o", shown, file_kind(st.st_mode));
		return -1;
	}
	busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	if (busy) {
		ms_error_set(err, "%s is being written by another memscope record (it holds the file's lock): "
			     "it is not moved away; choose another file with -o%s", shown,
			     strcmp(shown, path) ? "" : " or wait for that recording to end");
		return -1;
	}
	return 0;
}

/* Something at the name: refuse it unless it is a regular file nobody is
 * writing; keep that as NAME.old. The file itself is locked while it is
 * moved (never the directory, which any user who can read it could lock
 * and so stop root's record): two memscopes moving the same file meet on
 * its lock, and one writing it holds it. The locked descriptor goes into
 * *held, to be closed once the new file has its name. 1: the name changed
 * meanwhile (try again). */
static int keep_existing(int dirfd, const char *base, const char *path, int *held, struct ms_error *err)
{
	char old[NAME_MAX + 8], old_path[PATH_MAX + 8];
	struct stat st, now;
	int fd;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		ms_error_set(err, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		ms_error_set(err, "%s is %s, not a recording: memscope never writes through it; remove it or "
			     "choose another file with -o", path, file_kind(st.st_mode));
		return -1;
	}
	fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno != EACCES)
		return 1;
	/* A file we cannot read is another user's: no memscope of ours writes it. */
	if (fd >= 0) {
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return 1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
			close(fd);
			ms_error_set(err, "%s is being written by another memscope record (it holds the file's lock): "
				     "it is not moved away; choose another file with -o or wait for that recording to end",
				     path);
			return -1;
		}
		/* Still the file at the name: with its lock held, no memscope moves it. */
		if (fstatat(dirfd, base, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_dev != st.st_dev ||
		    now.st_ino != st.st_ino) {
			close(fd);
			return 1;
		}
	}
	*held = fd;
	if ((size_t)snprintf(old, sizeof(old), "%s.old", base) >= sizeof(old)) {
		ms_error_set(err, "%s: the name is too long to keep the existing file as .old", path);
		return -1;
	}
	snprintf(old_path, sizeof(old_path), "%s.old", path);
	if (fstatat(dirfd, old, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    check_not_busy(dirfd, old, old_path, path, err) < 0)
		return -1;
	/* rename() replaces the entry .old, whatever it is; it never writes
	 * into the file behind it. */
	if (renameat(dirfd, base, dirfd, old) < 0 && errno != ENOENT) {
		ms_error_set(err, "%s exists and cannot be kept as %s: %s; remove it or choose another file with -o",
			     path, old_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Move the temporary file to its name unless something is there: 1 when
 * the name was taken meanwhile (try again), 0 done, -1 error. */
static int publish(int dirfd, const char *temp, const char *base, const char *path, struct ms_error *err)
{
	if (renameat2(dirfd, temp, dirfd, base, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		return 1;
	if (errno != EINVAL && errno != ENOSYS) {
		ms_error_set(err, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	/* No RENAME_NOREPLACE on this file system: link() never replaces either. */
	if (linkat(dirfd, temp, dirfd, base, 0) == 0) {
		unlinkat(dirfd, temp, 0);
		return 0;
	}
	if (errno == EEXIST)
		return 1;
	ms_error_set(err, "cannot create %s: this file system can neither rename without replacing nor link "
		     "(%s); record to another file system (-o)", path, strerror(errno));
	return -1;
}

int recording_file_open(const char *path, struct ms_error *err)
{
	const char *base;
	int dirfd = open_dir(path, &base, err);
	int fd;

	if (dirfd < 0)
		return -1;
	fd = recording_file_open_at(dirfd, base, path, err);
	close(dirfd);
	return fd;
}

int recording_file_open_at(int dirfd, const char *base, const char *path, struct ms_error *err)
{
	char temp[NAME_MAX + 1];
	int fd = -1, ret = 1;

	if (strlen(base) > NAME_MAX - 24) {
		ms_error_set(err, "%s: the file name is too long", path);
		return -1;
	}
	for (int i = 0; i < CREATE_TRIES; i++) {
		int held = -1;

		if ((fd = create_temporary(dirfd, base, temp, sizeof(temp), path, err)) < 0) {
			ret = -1;
			break;
		}
		ret = keep_existing(dirfd, base, path, &held, err);
		if (ret == 0)
			ret = publish(dirfd, temp, base, path, err);
		if (held >= 0)
			close(held);   /* the file kept as .old: its lock is no longer needed */
		if (ret == 0)
			break;
		unlinkat(dirfd, temp, 0);
		close(fd);
		fd = -1;
		if (ret < 0)
			break;
	}
	if (fd < 0 && ret > 0)
		ms_error_set(err, "cannot create %s: something else keeps appearing under that name; choose a "
			     "directory only you can write (-o)", path);
	return fd;
}
