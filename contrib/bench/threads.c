/* threads: a multi-threaded workload for attach tests. Starts EARLY threads at
 * once and LATE threads after DELAY ms; from START ms on, every thread touches
 * MB megabytes (one write per page) every 100 ms until RUN ms have passed.
 *
 *   threads EARLY LATE DELAY_MS RUN_MS MB [START_MS]
 *
 * It prints "ready PID" once the early threads exist, so a test can attach
 * before START_MS (default 300), and "pages N" at the end: the pages all
 * threads touched, which is the number of page faults they caused. With MB 0
 * the threads only sleep until RUN_MS (up to 4096 threads: attach start-up).
 * Threads are named (comm) early0, early1 ... and late0, late1 ..., so a
 * test can tell them apart by name; the main thread keeps "threads". Before
 * "pages N" it prints "thread NAME TID PAGES" for each (not with MB 0): what
 * that thread touched. */
#include <pthread.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <stdatomic.h>

struct job {
	long mb;
	long run_ms;
	long start_ms;
	struct timespec start;
	atomic_long pages;
};

/* One thread: its name, its id (from inside it) and the pages it touched. */
struct worker_arg {
	struct job *job;
	char name[16];
	atomic_int tid;
	atomic_long pages;
};

static long elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

static void *worker(void *arg)
{
	struct worker_arg *self = arg;
	const struct job *job = self->job;
	size_t size = (size_t)job->mb << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	struct timespec tick = { 0, 100 * 1000000L };
	struct job *shared = self->job;

	atomic_store(&self->tid, (int)syscall(SYS_gettid));
	while (elapsed_ms(&job->start) < job->start_ms)
		nanosleep(&(struct timespec){ 0, 5 * 1000000L }, NULL);
	if (!size) {
		/* MB 0: threads that only exist (attach start-up benchmarks). */
		long left = job->run_ms - elapsed_ms(&job->start);

		if (left > 0)
			nanosleep(&(struct timespec){ left / 1000, (left % 1000) * 1000000L }, NULL);
		return NULL;
	}
	while (elapsed_ms(&job->start) < job->run_ms) {
		volatile char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return NULL;
		for (size_t off = 0; off < size; off += page)
			mem[off] = 1;
		munmap((void *)mem, size);
		atomic_fetch_add(&shared->pages, (long)(size / page));
		atomic_fetch_add(&self->pages, (long)(size / page));
		nanosleep(&tick, NULL);
	}
	return NULL;
}

/* Named before it reaches START_MS, when it begins to touch memory. */
static void start(pthread_t *tid, struct worker_arg *arg, struct job *job, const char *kind, int i)
{
	arg->job = job;
	snprintf(arg->name, sizeof(arg->name), "%s%d", kind, i);
	atomic_init(&arg->tid, 0);
	atomic_init(&arg->pages, 0);
	if (pthread_create(tid, NULL, worker, arg) != 0) {
		perror("threads: pthread_create");
		exit(1);
	}
	pthread_setname_np(*tid, arg->name);
}

int main(int argc, char **argv)
{
	pthread_t *tids;
	struct worker_arg *args;
	int early, late, n = 0;
	long delay_ms;
	struct job job;
	struct timespec delay;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: threads EARLY LATE DELAY_MS RUN_MS MB [START_MS]\n");
		return 2;
	}
	early = atoi(argv[1]);
	late = atoi(argv[2]);
	delay_ms = atol(argv[3]);
	job.run_ms = atol(argv[4]);
	job.mb = atol(argv[5]);
	job.start_ms = argc == 7 ? atol(argv[6]) : 300;
	atomic_init(&job.pages, 0);
	if (early < 0 || late < 0 || early + late > 4096 || !(tids = calloc((size_t)(early + late) + 1, sizeof(*tids))) ||
	    !(args = calloc((size_t)(early + late) + 1, sizeof(*args))))
		return 2;
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &job.start);

	for (int i = 0; i < early; i++)
		start(&tids[n], &args[n], &job, "early", i), n++;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	delay.tv_sec = delay_ms / 1000;
	delay.tv_nsec = (delay_ms % 1000) * 1000000L;
	nanosleep(&delay, NULL);
	for (int i = 0; i < late; i++)
		start(&tids[n], &args[n], &job, "late", i), n++;
	for (int i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	for (int i = 0; job.mb && i < n; i++)
		printf("thread %s %d %ld\n", args[i].name, atomic_load(&args[i].tid), atomic_load(&args[i].pages));
	printf("pages %ld\n", atomic_load(&job.pages));
	free(args);
	free(tids);
	return 0;
}
