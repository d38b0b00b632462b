#include "util/plot_launch.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *plot_script_path(const char *source_dir, const char *data_dir, char *buf, size_t size)
{
	const char *env = getenv("MEMSCOPE_BENCH_PLOT");

	if (env && env[0])
		return env;
	snprintf(buf, size, "%s/contrib/bench/suite/plot.py", source_dir);
	if (is_file(buf))
		return buf;
	snprintf(buf, size, "%s/bench/plot.py", data_dir);
	return is_file(buf) ? buf : NULL;
}

int plot_draw(const char *source_dir, const char *data_dir, const char *json_path, const char *prefix,
	      const char *formats, char *why, size_t whysize)
{
	char script_buf[4200];
	const char *script = plot_script_path(source_dir, data_dir, script_buf, sizeof(script_buf));
	const char *env = getenv("MEMSCOPE_PYTHON");
	const char *pythons[] = { env && env[0] ? env : "python3", "/usr/bin/python3" };

	if (!script) {
		snprintf(why, whysize, "plot.py was not found (set MEMSCOPE_BENCH_PLOT to its path)");
		return -1;
	}
	snprintf(why, whysize, "no python3 with matplotlib was found (Debian: apt-get install python3-matplotlib; "
		 "or set MEMSCOPE_PYTHON to a python that has it)");
	for (size_t i = 0; i < sizeof(pythons) / sizeof(pythons[0]); i++) {
		char *argv[] = { (char *)pythons[i], (char *)script, (char *)json_path, (char *)prefix,
				 (char *)formats, NULL };
		pid_t pid;
		int status;

		if (i && !strcmp(pythons[i], pythons[0]))
			continue;
		if (posix_spawnp(&pid, pythons[i], NULL, NULL, argv, environ) != 0)
			continue;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
			continue;
		if (WEXITSTATUS(status) == 0)
			return 0;
		/* Exit 3: no matplotlib with this Python; the next one is tried. */
		if (WEXITSTATUS(status) != 3) {
			snprintf(why, whysize, "%s %s failed (exit %d; its message is above)", pythons[i], script,
				 WEXITSTATUS(status));
			return -1;
		}
	}
	return -1;
}
