/* Helpers for tests that read sysfs trees: the committed fixtures under
 * $MEMSCOPE_TEST_FIXTURES/<machine>/sys, and small throwaway trees made in
 * a temporary directory to exercise error paths. */
#ifndef MEMSCOPE_FIXTURE_TREE_H
#define MEMSCOPE_FIXTURE_TREE_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* <fixtures>/<machine>/sys; exits when the environment is not set up. */
static inline const char *fixture_sys(const char *machine)
{
	static char path[4096];
	const char *base = getenv("MEMSCOPE_TEST_FIXTURES");

	if (!base || !*base) {
		fprintf(stderr, "MEMSCOPE_TEST_FIXTURES is not set (run through meson test)\n");
		exit(2);
	}
	snprintf(path, sizeof(path), "%s/%s/sys", base, machine);
	return path;
}

/* Write text to root/rel, creating the directories on the way. */
static inline void tree_write(const char *root, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			perror(path);
			exit(2);
		}
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static inline char *tree_new(char *buf, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(buf, size, "%s/memscope-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		exit(2);
	}
	return buf;
}

static inline int tree_remove_entry(const char *path, const struct stat *st, int flag,
				    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void tree_remove(const char *root)
{
	nftw(root, tree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
