/* Shared by the libFuzzer harnesses: the input as a file (the loaders read
 * files), and a fixture machine's host. Each harness runs one loader on
 * bytes libFuzzer makes up; a crash, a sanitizer report, a leak or a hang
 * is a finding. See docs/fuzzing.md. */
#ifndef MEMSCOPE_FUZZ_COMMON_H
#define MEMSCOPE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "host/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A private directory for the files of one fuzzing process (in /dev/shm
 * when there is one: memory, not the disk). */
static inline const char *fuzz_dir(void)
{
	static char dir[256];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/memscope-fuzz-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	return dir;
}

/* Write data to DIR/name; returns the path (static per name slot). */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];
	FILE *f;

	snprintf(p, 512, "%s/%s", fuzz_dir(), name);
	f = fopen(p, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	return p;
}

/* The host of tests/fixtures/sysfs/<machine> (sys and, when present, proc). */
static inline void fuzz_fixture_host(struct host *host, const char *machine)
{
	char path[1024];
	struct ms_error err = { "" };

	snprintf(path, sizeof(path), "%s/tests/fixtures/sysfs/%s/sys", MEMSCOPE_SOURCE_DIR, machine);
	setenv("MEMSCOPE_SYSFS_ROOT", path, 1);
	snprintf(path, sizeof(path), "%s/tests/fixtures/sysfs/%s/proc", MEMSCOPE_SOURCE_DIR, machine);
	if (access(path, R_OK) == 0)
		setenv("MEMSCOPE_PROCFS_ROOT", path, 1);
	else
		unsetenv("MEMSCOPE_PROCFS_ROOT");
	if (host_load(host, &err) < 0) {
		fprintf(stderr, "fuzz: fixture %s: %s\n", machine, err.text);
		abort();
	}
}

#endif
