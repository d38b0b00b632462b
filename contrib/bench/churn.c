/* churn: processes coming and going, as a build or a shell loop makes them.
 *
 *   churn RATE SECONDS [THREADS [IDLE [EXEC]]]
 *
 * Forks RATE short-lived children a second for SECONDS; each touches PAGES
 * (16) fresh pages, starts THREADS (default 0) threads that touch one page
 * each, and exits; with EXEC 1 it then runs /bin/true instead (a fork and
 * an exec, as a shell runs commands: the process takes a new name). IDLE (default 0) more children are forked first and sleep
 * until churn ends: an idle process table as a loaded host has. Prints
 * "ready" once the idle children exist, then "forked N" at the end.
 * Transparent huge pages are disabled so each page is one fault. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES 16

static void touch(long pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, page * (size_t)pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		_exit(1);
	for (long i = 0; i < pages; i++)
		mem[(size_t)i * page] = 1;
	munmap(mem, page * (size_t)pages);
}

static void *thread_main(void *arg)
{
	touch(1);
	return arg;
}

static void child(int threads, int exec)
{
	pthread_t t[64];
	int n = threads < 64 ? threads : 64;

	touch(PAGES);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
			n = i;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (exec)
		execl("/bin/true", "true", (char *)NULL);
	_exit(exec ? 127 : 0);
}

/* SIGTERM ends the churn early; the idle children go with it. */
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = sig;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double rate, seconds, start;
	int threads = argc > 3 ? atoi(argv[3]) : 0, idle = argc > 4 ? atoi(argv[4]) : 0;
	int exec = argc > 5 ? atoi(argv[5]) : 0;
	long forked = 0;
	pid_t *sleepers;

	if (argc < 3 || (rate = atof(argv[1])) <= 0 || (seconds = atof(argv[2])) < 0 || threads < 0 || idle < 0 ||
	    (exec != 0 && exec != 1)) {
		fprintf(stderr, "usage: churn RATE SECONDS [THREADS [IDLE [EXEC (0 or 1)]]]\n");
		return 2;
	}
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	signal(SIGTERM, on_term);
	sleepers = calloc((size_t)idle + 1, sizeof(pid_t));
	for (int i = 0; i < idle; i++) {
		sleepers[i] = fork();
		if (sleepers[i] == 0) {
			signal(SIGTERM, SIG_DFL);
			/* Gone with the parent, however it ends. */
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			pause();
			_exit(0);
		}
	}
	printf("ready\n");
	fflush(stdout);
	start = now();
	while (!stop && now() - start < seconds) {
		double due = start + (double)forked / rate;
		pid_t pid;

		if (now() < due) {
			struct timespec gap = { 0, (long)((due - now()) * 1e9) };

			nanosleep(&gap, NULL);
		}
		if (stop)
			break;
		pid = fork();
		if (pid == 0)
			child(threads, exec);
		if (pid > 0)
			forked++;
		/* Reap whoever is done: at most a few children at a time. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	for (int i = 0; i < idle; i++)
		kill(sleepers[i], SIGTERM);
	while (wait(NULL) > 0)
		;
	printf("forked %ld\n", forked);
	free(sleepers);
	return 0;
}
