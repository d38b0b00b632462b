/* rusage: run a command and print what it cost, measured by the kernel for
 * that process (wait4: it and the children it waited for), as the last line
 * on stderr:
 *
 *   rusage [--signal SIG --after MS] [--stdout FILE] -- CMD [ARGS...]
 *   rusage: {"user_s":0.012,"sys_s":0.034,"maxrss_kib":5720,"wall_s":1.002,"status":0,"signal":0}
 *
 * Benchmarks run the tools through it rather than measuring them from Python:
 * a child forked by Python starts with Python's resident set, and the peak
 * the kernel reports (ru_maxrss) would then be the harness's. This program is
 * small, so the peak of a tool it starts is the tool's own.
 * --signal SIG --after MS sends SIG (a number) to the command MS ms after it
 * started (attach benchmarks stop the tool the way a user does, with SIGINT). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: rusage [--signal SIG --after MS] [--stdout FILE] -- CMD [ARGS...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int sig = 0, i = 1, status = 0;
	long after_ms = -1;
	const char *out = NULL;
	struct rusage ru;
	double start;
	pid_t pid;

	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--signal") && i + 1 < argc)
			sig = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--after") && i + 1 < argc)
			after_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--stdout") && i + 1 < argc)
			out = argv[++i];
		else
			usage();
	}
	if (i + 1 >= argc || (sig && after_ms < 0))
		usage();
	start = now_s();
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 2;
	}
	if (pid == 0) {
		if (out) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

			if (fd < 0 || dup2(fd, 1) < 0) {
				perror(out);
				_exit(127);
			}
		}
		execvp(argv[i + 1], &argv[i + 1]);
		fprintf(stderr, "rusage: %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	if (sig) {
		struct timespec ts = { after_ms / 1000, (after_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		kill(pid, sig);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 2;
		}
	}
	fprintf(stderr, "rusage: {\"user_s\":%.6f,\"sys_s\":%.6f,\"maxrss_kib\":%ld,\"wall_s\":%.6f,\"status\":%d,\"signal\":%d}\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, now_s() - start,
		WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}
