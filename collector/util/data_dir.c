#include "util/data_dir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* The directory of the running program, resolved. */
static bool program_dir(char *dir, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return false;
	self[n] = '\0';
	if (!(slash = strrchr(self, '/')))
		return false;
	*slash = '\0';
	return (size_t)snprintf(dir, size, "%s", self[0] ? self : "/") < size;
}

static bool under(const char *path, const char *dir)
{
	char real[PATH_MAX];
	size_t len;

	if (!realpath(dir, real))
		return false;
	len = strlen(real);
	return !strncmp(path, real, len) && (path[len] == '/' || path[len] == '\0');
}

bool data_dir_in_build_tree(void)
{
	char dir[PATH_MAX];

	return program_dir(dir, sizeof(dir)) && under(dir, MEMSCOPE_BUILD_DIR);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int data_dir(const char *sub, char *buf, size_t size)
{
	char dir[PATH_MAX];

	if (program_dir(dir, sizeof(dir))) {
		if (under(dir, MEMSCOPE_BUILD_DIR))
			return (size_t)snprintf(buf, size, "%s/%s", MEMSCOPE_SOURCE_DIR, sub) < size ? 0 : -1;
		/* PREFIX/bin/memscope reads PREFIX/share/memscope, wherever PREFIX now is. */
		if (!under(dir, MEMSCOPE_BINDIR) && (size_t)snprintf(buf, size, "%s/../share/memscope/%s", dir, sub) < size &&
		    is_dir(buf))
			return 0;
	}
	return (size_t)snprintf(buf, size, "%s/%s", MEMSCOPE_DATADIR, sub) < size ? 0 : -1;
}
