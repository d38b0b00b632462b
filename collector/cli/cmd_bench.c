/* memscope bench: runs memscope-bench, the benchmark suite (contrib/bench/suite).
 * The suite is a program of its own: never built with the sanitizers (their
 * shadow memory would be part of every bandwidth and page count), linked
 * with libc only (so it cross-builds for aarch64), and exec'd in place, so
 * `memscope record -- memscope bench ...` measures the benchmark itself
 * under the same process id, with the control socket it inherits. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "util/report.h"

/* $MEMSCOPE_BENCH, else next to this program: in a build tree
 * (contrib/bench/suite/) or installed beside it. */
int bench_program_find(char *path, size_t size)
{
	const char *env = getenv("MEMSCOPE_BENCH");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0]) {
		snprintf(path, size, "%s", env);
		return access(path, X_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	if (!(slash = strrchr(self, '/')))
		return -1;
	*slash = '\0';
	snprintf(path, size, "%s/contrib/bench/suite/memscope-bench", self);
	if (access(path, X_OK) == 0)
		return 0;
	snprintf(path, size, "%s/memscope-bench", self);
	return access(path, X_OK);
}

/* memscope-bench parses its own options (memscope-bench(1)): the table
 * names only its benchmarks, for the completions. */
const struct cli_command bench_command = {
	.name = "bench",
	.summary = "memory benchmarks: bw, lat, par, ctx, stream, numa-triad, c2c (with plots)",
	.operands = CLI_COMPLETE_WORDS,
	.operand_words = "bw lat par ctx stream numa-triad c2c touch selftest",
};

int cmd_bench(int argc, char **argv)
{
	char path[PATH_MAX + 64];

	if (bench_program_find(path, sizeof(path)) < 0) {
		ms_warn("memscope-bench was not found (looked for %s): it is built and "
			"installed with memscope; set MEMSCOPE_BENCH to its path if it lives elsewhere", path);
		return 1;
	}
	argv[0] = "memscope-bench";
	execv(path, argv);
	ms_warn("cannot run %s: %s", path, strerror(errno));
	return 1;
}
