/* triad: a STREAM-triad workload that times itself, so that a tool's start-up
 * and teardown are not part of the number.
 *
 *   triad MB SECONDS [THREADS]
 *
 * Each of THREADS threads (default: one per online CPU) owns three arrays of
 * MB megabytes of doubles, touches them once (untimed), then repeats
 * a[i] = b[i] + 3 * c[i] until SECONDS have passed. Prints on stdout:
 *   threads=N passes=P seconds=S mb_per_s=B ns_per_pass=X cpu_ns_per_pass=C
 * where a pass is one triad over one thread's arrays, ns_per_pass the mean
 * over all threads of the wall time per pass, and cpu_ns_per_pass the same
 * in the threads' own CPU time (CLOCK_THREAD_CPUTIME_ID: time the thread
 * waited for a CPU is not in it; interrupts it took are). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct worker {
	pthread_t thread;
	size_t n;
	double seconds;
	double *a, *b, *c;
	long passes;
	double elapsed;
	double cpu;
	pthread_barrier_t *start;
};

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	double t0, t, c0;

	for (size_t i = 0; i < w->n; i++) {
		w->a[i] = 0;
		w->b[i] = (double)i;
		w->c[i] = 1.0 / (double)(i + 1);
	}
	pthread_barrier_wait(w->start);
	t0 = now_s();
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	do {
		double *restrict a = w->a;
		const double *restrict b = w->b, *restrict c = w->c;

		for (size_t i = 0; i < w->n; i++)
			a[i] = b[i] + 3.0 * c[i];
		w->passes++;
		t = now_s();
	} while (t - t0 < w->seconds);
	w->elapsed = t - t0;
	w->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

int main(int argc, char **argv)
{
	long mb, threads = sysconf(_SC_NPROCESSORS_ONLN);
	double seconds, ns = 0, cpu_ns = 0, bytes = 0, longest = 0;
	long passes = 0;
	struct worker *w;
	pthread_barrier_t start;

	if (argc < 3 || argc > 4 || (mb = atol(argv[1])) < 1 || (seconds = atof(argv[2])) <= 0 ||
	    (argc == 4 && (threads = atol(argv[3])) < 1)) {
		fprintf(stderr, "usage: triad MB SECONDS [THREADS]\n");
		return 2;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w || pthread_barrier_init(&start, NULL, (unsigned)threads))
		return 1;
	for (long k = 0; k < threads; k++) {
		w[k].n = (size_t)mb * 1024 * 1024 / sizeof(double);
		w[k].seconds = seconds;
		w[k].start = &start;
		w[k].a = malloc(w[k].n * sizeof(double));
		w[k].b = malloc(w[k].n * sizeof(double));
		w[k].c = malloc(w[k].n * sizeof(double));
		if (!w[k].a || !w[k].b || !w[k].c) {
			fprintf(stderr, "triad: out of memory\n");
			return 1;
		}
	}
	for (long k = 0; k < threads; k++)
		if (pthread_create(&w[k].thread, NULL, run, &w[k]))
			return 1;
	for (long k = 0; k < threads; k++) {
		pthread_join(w[k].thread, NULL);
		passes += w[k].passes;
		ns += w[k].elapsed * 1e9 / (double)w[k].passes / (double)threads;
		cpu_ns += w[k].cpu * 1e9 / (double)w[k].passes / (double)threads;
		bytes += 3.0 * (double)w[k].n * sizeof(double) * (double)w[k].passes;
		if (w[k].elapsed > longest)
			longest = w[k].elapsed;
	}
	printf("threads=%ld passes=%ld seconds=%.3f mb_per_s=%.1f ns_per_pass=%.1f cpu_ns_per_pass=%.1f\n", threads,
	       passes, longest, bytes / longest / 1e6, ns, cpu_ns);
	for (long k = 0; k < threads; k++) {
		free(w[k].a);
		free(w[k].b);
		free(w[k].c);
	}
	free(w);
	pthread_barrier_destroy(&start);
	return 0;
}
