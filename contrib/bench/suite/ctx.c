/* ctx: lmbench's lat_ctx. N processes on one CPU pass a token around a ring
 * of pipes; each touches its working set (--size) when it has the token.
 * A round trip is N context switches plus N pipe writes and reads; the
 * pipe and working-set cost is measured alone in one process and taken off. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define MAX_PROCS 64
#define MAX_REPS 1000

static void touch(volatile uint64_t *ws, size_t words)
{
	uint64_t s = 0;

	for (size_t i = 0; i < words; i += BENCH_LINE / sizeof(uint64_t))
		s += ws[i];
	bench_sink += s;
}

static int xread(int fd, long *v)
{
	ssize_t n;

	while ((n = read(fd, v, sizeof(*v))) < 0 && errno == EINTR)
		;
	return n == sizeof(*v) ? 0 : -1;
}

static int xwrite(int fd, long v)
{
	ssize_t n;

	while ((n = write(fd, &v, sizeof(v))) < 0 && errno == EINTR)
		;
	return n == sizeof(v) ? 0 : -1;
}

static void child(int in, int out, size_t size)
{
	uint64_t *ws = size ? mem_alloc(size, false) : NULL;
	long token;

	if (ws)
		memset(ws, 1, size);
	while (xread(in, &token) == 0) {
		if (ws)
			touch(ws, size / sizeof(uint64_t));
		if (xwrite(out, token) < 0 || token < 0)
			break;
	}
	_exit(0);
}

/* Seconds for `rounds` trips of the token around the ring. */
static double ring(int fds[][2], int procs, uint64_t *ws, size_t size, long rounds)
{
	long token;
	uint64_t t0 = timer_ticks();

	for (long r = 0; r < rounds; r++) {
		if (ws)
			touch(ws, size / sizeof(uint64_t));
		if (xwrite(fds[1][1], r) < 0 || xread(fds[0][0], &token) < 0)
			bench_die("ctx: the ring of processes broke (%s)", strerror(errno));
	}
	return ticks_to_ns(timer_ticks() - t0) * 1e-9;
}

/* The same pipe traffic and working-set touches in one process: no switch. */
static double overhead(int p[2], int procs, uint64_t *ws, size_t size, long rounds)
{
	long token;
	uint64_t t0 = timer_ticks();

	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < procs; i++) {
			if (ws)
				touch(ws, size / sizeof(uint64_t));
			if (xwrite(p[1], r) < 0 || xread(p[0], &token) < 0)
				bench_die("ctx: pipe: %s", strerror(errno));
		}
	return ticks_to_ns(timer_ticks() - t0) * 1e-9;
}

int bench_ctx(struct bench_opts *o)
{
	struct bench_report r = { .bench = "ctx" };
	struct bench_table *t;
	int procs = o->procs, cpu = o->cpu >= 0 ? o->cpu : o->topo.cpus[0];
	int fds[MAX_PROCS][2], self[2];
	pid_t pids[MAX_PROCS];
	size_t size = o->size;
	uint64_t *ws = NULL;
	double over[MAX_REPS], t0, spent = 0;
	struct samples trip_us = { 0 };
	long rounds = o->rounds;
	char name[64];
	int n = 0, row;

	/* Every process of the ring on one CPU: each pass of the token is a switch. */
	if (pin_to_cpu(cpu) < 0)
		bench_die("ctx: cannot run on CPU %d: %s", cpu, strerror(errno));
	if (size && !(ws = mem_alloc(size, false)))
		bench_die("ctx: cannot allocate %zu bytes", size);
	if (ws)
		memset(ws, 1, size);
	if (pipe(self) < 0)
		bench_die("ctx: pipe: %s", strerror(errno));
	for (int i = 0; i < procs; i++)
		if (pipe(fds[i]) < 0)
			bench_die("ctx: pipe: %s", strerror(errno));
	fflush(NULL);
	for (int i = 1; i < procs; i++) {
		if ((pids[i] = fork()) < 0)
			bench_die("ctx: fork: %s", strerror(errno));
		if (pids[i] == 0)
			child(fds[i][0], fds[(i + 1) % procs][1], size);
	}
	snprintf(name, sizeof(name), "ctx:%d:%zu", procs, size);
	t0 = phase_begin(o, name);
	ring(fds, procs, ws, size, 1000);                /* warm */
	if (!rounds) {
		double s;

		rounds = 1000;
		while ((s = ring(fds, procs, ws, size, rounds)) < o->min_time_s && rounds < 100000000)
			rounds = (long)((double)rounds * fmin(16, fmax(2, o->min_time_s / fmax(s, 1e-9) * 1.2)));
	}
	while ((!samples_enough(o, &trip_us, spent) || phase_wants_more(o, t0)) && n < MAX_REPS) {
		double s = ring(fds, procs, ws, size, rounds);

		spent += s;
		samples_add(&trip_us, s / (double)rounds * 1e6);
		over[n] = overhead(self, procs, ws, size, rounds) / (double)rounds;
		n++;
	}
	xwrite(fds[1][1], -1);
	for (int i = 1; i < procs; i++)
		waitpid(pids[i], NULL, 0);
	double trip_s = spread_of(trip_us.v, trip_us.n).median * 1e-6, over_s = median(over, n);

	phase_end(o, name, "roundtrip_us=%.3f switch_us=%.3f procs=%d size=%zu seconds=%.6f", trip_s * 1e6,
		  (trip_s - over_s) / procs * 1e6, procs, size, now_s() - t0);
	t = report_table(&r, "results", "Context switch (processes on one CPU, token through pipes)");
	table_col(t, "procs", NULL, COL_INT, 0);
	table_col(t, "size", "B", COL_INT, 0);
	table_col(t, "cpu", NULL, COL_INT, 0);
	table_col_spread(t, "roundtrip_us", "us", 3);
	table_col(t, "switch_us", "us", COL_NUM, 3);
	table_col(t, "overhead_us", "us", COL_NUM, 3);
	table_col(t, "switch_net_us", "us", COL_NUM, 3);
	table_col(t, "rounds", NULL, COL_INT, 0);
	row = table_row(t);
	table_set(t, row, "procs", procs);
	table_set(t, row, "size", (double)size);
	table_set(t, row, "cpu", cpu);
	table_set_spread(t, row, "roundtrip_us", &trip_us);
	samples_free(&trip_us);
	table_set(t, row, "switch_us", trip_s / procs * 1e6);
	table_set(t, row, "overhead_us", over_s / procs * 1e6);
	table_set(t, row, "switch_net_us", (trip_s - over_s) / procs * 1e6);
	table_set(t, row, "rounds", (double)rounds);
	report_param(&r, "procs", "%d", procs);
	report_param(&r, "size", "%zu", size);
	report_param(&r, "reps", "%d", o->reps);
	report_note(&r, "switch_us: round trip / procs; switch_net_us also takes off the pipe and "
		    "working-set cost measured in one process (overhead_us per hop)");
	mem_free(ws, size);
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}
