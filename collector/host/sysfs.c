#include "host/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void root_from_env(char *dst, size_t size, const char *var, const char *fallback)
{
	const char *value = getenv(var);

	snprintf(dst, size, "%s", value && *value ? value : fallback);
	/* A trailing slash would give "root//bus/..." in messages. */
	for (size_t len = strlen(dst); len > 1 && dst[len - 1] == '/'; len--)
		dst[len - 1] = '\0';
}

void sysfs_roots_from_env(struct sysfs_roots *roots)
{
	const char *proc = getenv("MEMSCOPE_PROCFS_ROOT");

	root_from_env(roots->sys, sizeof(roots->sys), "MEMSCOPE_SYSFS_ROOT", "/sys");
	roots->is_fixture = strcmp(roots->sys, "/sys") != 0;
	if ((proc && *proc) || !roots->is_fixture) {
		root_from_env(roots->proc, sizeof(roots->proc), "MEMSCOPE_PROCFS_ROOT", "/proc");
		return;
	}
	/* A tree of another machine keeps its procfs beside its sysfs (<tree>/sys,
	 * <tree>/proc): never combine the live host's cpuinfo with its PMUs. */
	{
		const char *slash = strrchr(roots->sys, '/');
		size_t dir = slash ? (size_t)(slash - roots->sys) : 0;

		snprintf(roots->proc, sizeof(roots->proc), "%.*s%sproc", (int)dir, roots->sys, slash ? "/" : "");
	}
}

int sysfs_join(char *buf, size_t size, const char *root, const char *rel)
{
	int n = snprintf(buf, size, "%s/%s", root, rel);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Read what fits of an opened file, close it, drop trailing whitespace. */
static int read_and_close(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	return 0;
}

int sysfs_read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -1 : read_and_close(fd, buf, size);
}

/* fd, when it is open on a regular file; else closed, and -1 (EINVAL). */
static int regular_or_close(int fd)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int sysfs_read_fd_str(int fd, char *buf, size_t size)
{
	fd = regular_or_close(fd);
	return fd < 0 ? -1 : read_and_close(fd, buf, size);
}

int sysfs_write_fd_str(int fd, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int saved;

	if ((fd = regular_or_close(fd)) < 0)
		return -1;
	n = write(fd, text, len);
	saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	return (size_t)n == len ? 0 : (errno = EIO, -1);
}

int sysfs_read_int(const char *path, long long *value)
{
	char buf[64], *end;

	if (sysfs_read_str(path, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	*value = strtoll(buf, &end, 0);
	if (errno || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

bool sysfs_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}
