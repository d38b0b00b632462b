#include "util/trusted_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Links followed in one path before giving up, as the kernel's limit. */
#define MAX_LINKS 40

struct walk {
	const char *what, *given;
	const char *verb;        /* "run": "plugin X is not run as root" */
	const char *harm;        /* what another user could do through it */
	bool judge;              /* as root: owners and modes matter */
	bool create;             /* make missing directories (0700) */
	uid_t owner_ok;
	char real[PATH_MAX];     /* where the walk is, links resolved ("" is /) */
	struct ms_error *err;
};

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

static const char *shown(const struct walk *w)
{
	return w->real[0] ? w->real : "/";
}

/* The object open as fd (at w->real) against who may change it. */
static int judge(struct walk *w, int fd)
{
	struct stat st;
	const char *who;

	if (fstat(fd, &st) < 0) {
		ms_error_set(w->err, "%s %s: %s: %s", w->what, w->given, shown(w), strerror(errno));
		return TRUSTED_CANNOT_OPEN;
	}
	if (!w->judge || !(who = others_can_write(&st, w->owner_ok))[0])
		return 0;
	ms_error_set(w->err, "%s %s is not %s as root: %s %s can be changed by %s (uid %u, mode %04o), who %s; "
		     "make it root's and writable only by root, or run memscope as the user who owns it", w->what,
		     w->given, w->verb, S_ISDIR(st.st_mode) ? "the directory" : "the file",
		     shown(w), who, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), w->harm);
	return TRUSTED_REFUSED;
}

static int cannot_open(struct walk *w, const char *name)
{
	int saved = errno;

	if (name)
		ms_error_set(w->err, "%s %s: %s/%s: %s", w->what, w->given, w->real, name, strerror(saved));
	else
		ms_error_set(w->err, "%s %s: %s: %s", w->what, w->given, shown(w), strerror(saved));
	errno = saved;
	return TRUSTED_CANNOT_OPEN;
}

static int open_root(struct walk *w, int *dirfd)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int ret;

	w->real[0] = '\0';
	if (fd < 0)
		return cannot_open(w, NULL);
	if ((ret = judge(w, fd)) < 0) {
		close(fd);
		return ret;
	}
	if (*dirfd >= 0)
		close(*dirfd);
	*dirfd = fd;
	return 0;
}

/* Walk path from / to its last component. A link's text replaces it in
 * what is left to walk; it is read from the link itself, in a directory
 * already judged, so nothing resolves a name twice. On success *parent is
 * the last directory (O_PATH), *leaf the last component (O_PATH, never a
 * link) and name its name; for a directory path (want_dir) *parent may be
 * -1 when the path is /. */
static int walk(struct walk *w, const char *path, bool want_dir, int *parent, int *leaf, char *name)
{
	char pending[2 * PATH_MAX + 2], next[2 * PATH_MAX + 2], target[PATH_MAX];
	char *p = pending;
	int dirfd = -1, links = 0, ret;

	*parent = *leaf = -1;
	if (path[0] == '/') {
		snprintf(pending, sizeof(pending), "%s", path);
	} else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return cannot_open(w, NULL);
		snprintf(pending, sizeof(pending), "%s/%s", cwd, path);
	}
	if ((ret = open_root(w, &dirfd)) < 0)
		return ret;
	for (;;) {
		struct stat st;
		size_t n, len = strlen(w->real);
		bool last;
		int fd;

		while (*p == '/')
			p++;
		if (!*p) {
			/* The path ends on the directory we are in: / or "dir/". */
			if (!want_dir) {
				close(dirfd);
				ms_error_set(w->err, "%s %s: %s is a directory", w->what, w->given, shown(w));
				return TRUSTED_NOT_REGULAR;
			}
			*leaf = dirfd;
			return 0;
		}
		n = strcspn(p, "/");
		if (n > NAME_MAX || len + 1 + n >= sizeof(w->real)) {
			close(dirfd);
			errno = ENAMETOOLONG;
			return cannot_open(w, NULL);
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		last = !p[strspn(p, "/")];
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			fd = openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0) {
				close(dirfd);
				return cannot_open(w, NULL);
			}
			close(dirfd);
			dirfd = fd;
			*(strrchr(w->real, '/') ? strrchr(w->real, '/') : w->real) = '\0';
			if ((ret = judge(w, dirfd)) < 0) {
				close(dirfd);
				return ret;
			}
			continue;
		}
		fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && w->create && (!last || want_dir)) {
			if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
				ret = cannot_open(w, name);
				close(dirfd);
				return ret;
			}
			fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0 || fstat(fd, &st) < 0) {
			ret = cannot_open(w, name);
			if (fd >= 0)
				close(fd);
			close(dirfd);
			return ret;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t got = readlinkat(fd, "", target, sizeof(target) - 1);

			close(fd);
			if (got <= 0 || ++links > MAX_LINKS) {
				if (got >= 0)
					errno = got ? ELOOP : ENOENT;
				ret = cannot_open(w, name);
				close(dirfd);
				return ret;
			}
			target[got] = '\0';
			if ((size_t)snprintf(next, sizeof(next), "%s%s", target, p) >= sizeof(next)) {
				close(dirfd);
				errno = ENAMETOOLONG;
				return cannot_open(w, name);
			}
			memcpy(pending, next, strlen(next) + 1);
			p = pending;
			if (target[0] == '/' && (ret = open_root(w, &dirfd)) < 0) {
				close(dirfd);
				return ret;
			}
			continue;
		}
		snprintf(w->real + len, sizeof(w->real) - len, "/%s", name);
		if (last && !want_dir) {
			*parent = dirfd;
			*leaf = fd;
			return 0;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			close(dirfd);
			errno = ENOTDIR;
			return cannot_open(w, NULL);
		}
		if ((ret = judge(w, fd)) < 0) {
			close(fd);
			close(dirfd);
			return ret;
		}
		close(dirfd);
		dirfd = fd;
	}
}

static void walk_init(struct walk *w, const char *path, const char *what, struct ms_error *err)
{
	memset(w, 0, sizeof(*w));
	w->given = path;
	w->what = what;
	w->err = err;
	w->judge = geteuid() == 0;
	w->owner_ok = w->judge ? program_owner() : 0;
}

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	default: return "not a regular file";
	}
}

int trusted_open(const char *path, const char *what, bool code, char *real, size_t size, struct ms_error *err)
{
	char name[NAME_MAX + 1];
	struct walk w;
	struct stat looked, opened;
	int parent, leaf, fd, ret;

	walk_init(&w, path, what, err);
	w.verb = code ? "run" : "used";
	w.harm = code ? "could make root run their code" : "could make root believe what they put there";
	if ((ret = walk(&w, path, false, &parent, &leaf, name)) < 0)
		return ret;
	if (fstat(leaf, &looked) < 0 || !S_ISREG(looked.st_mode)) {
		ms_error_set(err, "%s %s: %s is %s", what, path, w.real, file_kind(looked.st_mode));
		close(leaf);
		close(parent);
		return TRUSTED_NOT_REGULAR;
	}
	/* Opened for reading only now that it is known to be a regular file,
	 * and judged on that descriptor. */
	fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(leaf);
	close(parent);
	if (fd < 0)
		return cannot_open(&w, NULL);
	if (fstat(fd, &opened) < 0 || opened.st_dev != looked.st_dev || opened.st_ino != looked.st_ino) {
		close(fd);
		ms_error_set(err, "%s %s: %s was replaced while it was being opened; try again", what, path, w.real);
		return TRUSTED_REFUSED;
	}
	if ((ret = judge(&w, fd)) < 0) {
		close(fd);
		return ret;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (real)
		snprintf(real, size, "%s", w.real);
	return fd;
}

int trusted_dir_open(const char *path, bool create, const char *what, struct ms_error *err)
{
	char name[NAME_MAX + 1];
	struct walk w;
	int parent, leaf, fd, ret;

	walk_init(&w, path, what, err);
	w.create = create;
	w.verb = "written";
	w.harm = "could choose what root writes there and read it back as root's";
	if ((ret = walk(&w, path, true, &parent, &leaf, name)) < 0)
		return ret;
	/* The walk judged it; this descriptor can list and create in it. */
	fd = openat(leaf, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		ret = cannot_open(&w, NULL);
	close(leaf);
	if (parent >= 0)
		close(parent);
	return fd < 0 ? ret : fd;
}

int regular_file_open(const char *path, struct stat *st, struct ms_error *err)
{
	char via[64];
	int looked = open(path, O_PATH | O_CLOEXEC), fd;

	if (looked < 0 || fstat(looked, st) < 0) {
		ms_error_set(err, "%s: %s", path, strerror(errno));
		if (looked >= 0)
			close(looked);
		return TRUSTED_CANNOT_OPEN;
	}
	if (!S_ISREG(st->st_mode)) {
		ms_error_set(err, "%s is %s", path, file_kind(st->st_mode));
		close(looked);
		return TRUSTED_NOT_REGULAR;
	}
	/* The very file looked at, opened for reading through its descriptor. */
	snprintf(via, sizeof(via), "/proc/self/fd/%d", looked);
	fd = open(via, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(looked);
	if (fd < 0) {
		ms_error_set(err, "%s: %s", path, strerror(errno));
		return TRUSTED_CANNOT_OPEN;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
