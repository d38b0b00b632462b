/* stream: STREAM's copy/scale/add/triad with 1..N concurrent instances (one
 * pinned thread each, arrays of its own). numa-triad: the triad with threads
 * and data placed in (xL, yR) combinations over two nodes. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_THREADS 512
#define MAX_REPS 1000

struct worker {
	int cpu;                    /* pinned here */
	int node;                   /* data bound here; -1: first touch where the thread runs */
	char group;                 /* numa-triad: 'L' or 'R' (the x or the y threads) */
	size_t n;                   /* doubles per array */
	double *a, *b, *c;
	double share;               /* pages of its arrays on node (move_pages) */
	int ran_on;                 /* sched_getcpu after pinning */
	double start[4][MAX_REPS], end[4][MAX_REPS];
	pthread_t thread;
	struct team *team;
	int error;
};

/* The main thread steers: it sets kernel and rep (or quit), then the
 * workers run one repetition between two barriers. */
struct team {
	struct worker *w;
	int nr;
	bool huge;
	enum stream_kernel kernel;
	int rep;
	bool quit;
	pthread_barrier_t barrier;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct team *t = w->team;
	size_t bytes = w->n * sizeof(double);

	if (pin_to_cpu(w->cpu) < 0)
		w->error = errno;
	w->ran_on = current_cpu();
	w->a = mem_alloc(bytes, t->huge);
	w->b = mem_alloc(bytes, t->huge);
	w->c = mem_alloc(bytes, t->huge);
	if (!w->a || !w->b || !w->c)
		w->error = ENOMEM;
	if (!w->error && w->node >= 0 &&
	    (mem_bind(w->a, bytes, w->node) < 0 || mem_bind(w->b, bytes, w->node) < 0 ||
	     mem_bind(w->c, bytes, w->node) < 0))
		w->error = errno;
	if (!w->error) {
		/* First touch by the thread that will use the data. */
		for (size_t i = 0; i < w->n; i++) {
			w->a[i] = 1.0;
			w->b[i] = 2.0;
			w->c[i] = 0.0;
		}
		if (w->node >= 0)
			w->share = (mem_share_on_node(w->a, bytes, w->node) + mem_share_on_node(w->b, bytes, w->node) +
				    mem_share_on_node(w->c, bytes, w->node)) / 3;
	}
	pthread_barrier_wait(&t->barrier);                  /* arrays ready */
	for (;;) {
		pthread_barrier_wait(&t->barrier);          /* go */
		if (t->quit)
			break;
		if (!w->error && t->rep < MAX_REPS) {
			w->start[t->kernel][t->rep] = now_s();
			stream_run(t->kernel, w->a, w->b, w->c, w->n);
			w->end[t->kernel][t->rep] = now_s();
		}
		pthread_barrier_wait(&t->barrier);          /* done */
	}
	mem_free(w->a, bytes);
	mem_free(w->b, bytes);
	mem_free(w->c, bytes);
	return NULL;
}

static int team_start(struct team *t)
{
	pthread_barrier_init(&t->barrier, NULL, (unsigned)t->nr + 1);
	for (int i = 0; i < t->nr; i++) {
		t->w[i].team = t;
		if (pthread_create(&t->w[i].thread, NULL, worker_main, &t->w[i]) != 0)
			bench_die("cannot start a thread: %s", strerror(errno));
	}
	pthread_barrier_wait(&t->barrier);
	for (int i = 0; i < t->nr; i++)
		if (t->w[i].error) {
			errno = t->w[i].error;
			return -1;
		}
	return 0;
}

/* Repetitions of one kernel on every worker at once (at least reps; under
 * memscope until the phase that began at t0 is long enough). Returns the
 * number of repetitions. */
static double team_mb_s(const struct team *t, enum stream_kernel k, int rep, double bytes_each);

/* Repetitions until the totals' interval is narrow enough (samples_enough)
 * and, under memscope, the phase long enough; totals: the team's MB/s of
 * each repetition. */
static int team_kernel(struct team *t, const struct bench_opts *o, enum stream_kernel k, double t0, double bytes_each,
		       struct samples *totals)
{
	int rep = 0;
	double spent = 0;

	t->kernel = k;
	do {
		double start = now_s();

		t->rep = rep;
		pthread_barrier_wait(&t->barrier);
		pthread_barrier_wait(&t->barrier);
		spent += now_s() - start;
		samples_add(totals, team_mb_s(t, k, rep, bytes_each));
		rep++;
	} while ((!samples_enough(o, totals, spent) || phase_wants_more(o, t0)) && rep < MAX_REPS);
	return rep;
}

static void team_stop(struct team *t)
{
	t->quit = true;
	pthread_barrier_wait(&t->barrier);
	for (int i = 0; i < t->nr; i++)
		pthread_join(t->w[i].thread, NULL);
	pthread_barrier_destroy(&t->barrier);
}

/* Bandwidth of the whole team in a repetition: all bytes over the span from
 * the first start to the last end. */
static double team_mb_s(const struct team *t, enum stream_kernel k, int rep, double bytes_each)
{
	double first = INFINITY, last = 0;

	for (int i = 0; i < t->nr; i++) {
		first = fmin(first, t->w[i].start[k][rep]);
		last = fmax(last, t->w[i].end[k][rep]);
	}
	return bytes_each * t->nr / (last - first) / 1e6;
}

static double worker_mb_s(const struct worker *w, enum stream_kernel k, int reps, double bytes)
{
	double v[MAX_REPS];

	for (int rep = 0; rep < reps; rep++)
		v[rep] = bytes / (w->end[k][rep] - w->start[k][rep]) / 1e6;
	return median(v, reps);
}

static size_t stream_bytes(enum stream_kernel k, size_t n)
{
	return (k == ST_ADD || k == ST_TRIAD ? 3 : 2) * n * sizeof(double);
}

int bench_stream(struct bench_opts *o)
{
	struct bench_report r = { .bench = "stream" };
	struct bench_table *t;
	size_t size = o->size ? o->size : 4 * topo_last_level_size(&o->topo);
	int *cpus = o->nr_cpus ? o->cpus : o->topo.cpus, nr_cpus = o->nr_cpus ? o->nr_cpus : o->topo.nr_cpus;

	if (size < (16u << 20) && !o->size)
		size = 16u << 20;
	if (!o->nr_threads)
		for (int i = 1; i <= nr_cpus && o->nr_threads < BENCH_MAX_LIST; i++)
			o->threads[o->nr_threads++] = i;
	if (o->reps > MAX_REPS)
		o->reps = MAX_REPS;
	t = report_table(&r, "results", "STREAM in MB/s (STREAM's byte counts: copy/scale 16, add/triad 24 per element)");
	table_col(t, "instances", NULL, COL_INT, 0);
	table_col(t, "kernel", NULL, COL_TEXT, 0);
	table_col_spread(t, "total_mb_s", "MB/s", 1);
	table_col(t, "per_instance_mb_s", "MB/s", COL_NUM, 1);
	report_param(&r, "array_bytes", "%zu", size);
	report_param(&r, "reps", "%d", o->reps);
	report_param(&r, "huge_pages", "%s", o->huge ? "true" : "false");
	report_param(&r, "kernel", "\"%s\"", kernel_name(kernel_selected()));
	report_param(&r, "vector_bytes", "%d", kernel_bytes(kernel_selected()));
	for (int ti = 0; ti < o->nr_threads; ti++) {
		int nr = o->threads[ti];
		struct worker *w = calloc((size_t)nr, sizeof(*w));
		struct team team = { .w = w, .nr = nr, .huge = o->huge };

		if (!w || nr > MAX_THREADS)
			bench_die("stream: %d instances are too many", nr);
		if (nr > nr_cpus)
			report_note(&r, "%d instances share %d CPUs", nr, nr_cpus);
		for (int i = 0; i < nr; i++) {
			w[i].cpu = cpus[i % nr_cpus];
			w[i].node = -1;
			w[i].n = size / sizeof(double);
		}
		log_progress(o, "\rstream %d instances   ", nr);
		if (team_start(&team) < 0)
			bench_die("stream: %s", strerror(errno));
		for (enum stream_kernel k = ST_COPY; k <= ST_TRIAD; k++) {
			double per = 0, bytes = (double)stream_bytes(k, size / sizeof(double)), t0;
			struct samples totals = { 0 };
			char name[64];
			int row, reps;

			if (!(o->kernels & (1u << k)))
				continue;
			snprintf(name, sizeof(name), "stream:%s:%d", stream_kernel_name(k), nr);
			t0 = phase_begin(o, name);
			reps = team_kernel(&team, o, k, t0, bytes, &totals);
			for (int i = 0; i < nr; i++)
				per += worker_mb_s(&w[i], k, reps, bytes) / nr;
			row = table_row(t);
			table_set(t, row, "instances", nr);
			table_set_text(t, row, "kernel", stream_kernel_name(k));
			table_set_spread(t, row, "total_mb_s", &totals);
			table_set(t, row, "per_instance_mb_s", per);
			phase_end(o, name, "bytes=%.0f seconds=%.6f mb_s=%.1f kernel=%s instances=%d", bytes * nr * reps,
				  now_s() - t0, table_get(t, row, "total_mb_s"), stream_kernel_name(k), nr);
			samples_free(&totals);
		}
		team_stop(&team);
		free(w);
	}
	log_progress(o, "\r%40s\r", "");
	report_note(&r, "per_instance_mb_s: each instance's rate from its own start to its own end; total_mb_s: "
		    "all bytes from the first start to the last end, so instances that do not run exactly "
		    "together make per instance more than total / instances");
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}

/* ---- numa-triad ---- */

/* Where the x (group L) and y (group R) threads run and where their data is:
 *   conf 1: x threads on L, y threads on R, all data on L
 *   conf 2: cross: x threads on L with data on R, y threads on R with data on L
 *   conf 3: split: all threads on L, x with data on L, y with data on R */
static void conf_place(int conf, char group, int L, int R, int *run_node, int *data_node)
{
	bool x = group == 'L';

	switch (conf) {
	case 1: *run_node = x ? L : R; *data_node = L; break;
	case 2: *run_node = x ? L : R; *data_node = x ? R : L; break;
	default: *run_node = L; *data_node = x ? L : R; break;
	}
}

int bench_numa_triad(struct bench_opts *o)
{
	struct bench_report r = { .bench = "numa-triad" };
	struct bench_table *pts, *per;
	int L = o->local_node, R = o->remote_node, conf = o->conf ? o->conf : 1;
	int cpus_l[BENCH_MAX_CPUS], cpus_r[BENCH_MAX_CPUS], nl, nr_, maxn;
	size_t size = o->size ? o->size : 2 * topo_last_level_size(&o->topo);
	double base = NAN, pages_node[2] = { 0, 0 };

	if (L < 0)
		L = o->topo.nodes[0];
	if (R < 0) {
		for (int i = 0; i < o->topo.nr_nodes && R < 0; i++)
			if (o->topo.nodes[i] != L)
				R = o->topo.nodes[i];
	}
	if (R < 0 || R == L)
		return fprintf(stderr, "memscope-bench: numa-triad needs two NUMA nodes; this machine has %d "
			       "(the 2-node guest of tests/vm runs it)\n", o->topo.nr_nodes), 1;
	if (!size)
		size = 16u << 20;
	nl = topo_node_cpus(&o->topo, L, cpus_l, BENCH_MAX_CPUS);
	nr_ = topo_node_cpus(&o->topo, R, cpus_r, BENCH_MAX_CPUS);
	if (!nl || (!nr_ && conf != 3))
		return fprintf(stderr, "memscope-bench: numa-triad: node %d has no CPUs\n", !nl ? L : R), 1;
	maxn = o->max_threads ? o->max_threads : (conf == 3 ? nl : (nl < nr_ ? nl : nr_));
	if (o->reps > MAX_REPS)
		o->reps = MAX_REPS;
	pts = report_table(&r, "results", "Triad with x threads in group L and y in group R: total MB/s, normalized to (1,0)");
	table_col(pts, "x", NULL, COL_INT, 0);
	table_col(pts, "y", NULL, COL_INT, 0);
	table_col_spread(pts, "total_mb_s", "MB/s", 1);
	table_col(pts, "normalized", NULL, COL_NUM, 3);
	table_col(pts, "l_thread_mb_s", "MB/s", COL_NUM, 1);
	table_col(pts, "r_thread_mb_s", "MB/s", COL_NUM, 1);
	table_col(pts, "min_share", NULL, COL_NUM, 3);
	per = report_table(&r, "threads", "Each thread: where it ran, where its data was, its bandwidth");
	table_col(per, "x", NULL, COL_INT, 0);
	table_col(per, "y", NULL, COL_INT, 0);
	table_col(per, "group", NULL, COL_TEXT, 0);
	table_col(per, "cpu", NULL, COL_INT, 0);
	table_col(per, "ran_on", NULL, COL_INT, 0);
	table_col(per, "run_node", NULL, COL_INT, 0);
	table_col(per, "data_node", NULL, COL_INT, 0);
	table_col(per, "share_on_data_node", NULL, COL_NUM, 3);
	table_col(per, "mb_s", "MB/s", COL_NUM, 1);
	report_param(&r, "conf", "%d", conf);
	report_param(&r, "local_node", "%d", L);
	report_param(&r, "remote_node", "%d", R);
	report_param(&r, "max_threads", "%d", maxn);
	report_param(&r, "array_bytes", "%zu", size);
	report_param(&r, "reps", "%d", o->reps);
	for (int x = 0; x <= maxn; x++)
		for (int y = 0; y <= maxn; y++) {
			int nr = x + y, ix_l = 0, ix_r = 0, row;
			struct worker *w;
			struct team team;
			double bytes = (double)stream_bytes(ST_TRIAD, size / sizeof(double)), l = 0, rr = 0;
			struct samples totals = { 0 };
			double min_share = 1, t0;
			char name[64];
			int reps;

			row = table_row(pts);
			table_set(pts, row, "x", x);
			table_set(pts, row, "y", y);
			if (!nr)
				continue;
			if (!(w = calloc((size_t)nr, sizeof(*w))))
				bench_die("out of memory");
			for (int i = 0; i < nr; i++) {
				int run_node, data_node;

				w[i].group = i < x ? 'L' : 'R';
				conf_place(conf, w[i].group, L, R, &run_node, &data_node);
				/* Round robin over the node's CPUs, each node counted on its own. */
				w[i].cpu = run_node == L ? cpus_l[ix_l++ % nl] : cpus_r[ix_r++ % nr_];
				w[i].node = data_node;
				w[i].n = size / sizeof(double);
			}
			team = (struct team){ .w = w, .nr = nr, .huge = o->huge };
			log_progress(o, "\rnuma-triad conf %d: %d L + %d R threads   ", conf, x, y);
			snprintf(name, sizeof(name), "numa-triad:%d:%d:%d", conf, x, y);
			t0 = phase_begin(o, name);
			if (team_start(&team) < 0)
				bench_die("numa-triad: %s (binding memory to node %d or %d)", strerror(errno), L, R);
			reps = team_kernel(&team, o, ST_TRIAD, t0, bytes, &totals);
			team_stop(&team);
			for (int i = 0; i < nr; i++) {
				double mbs = worker_mb_s(&w[i], ST_TRIAD, reps, bytes);
				int d = table_row(per), run_node, data_node;

				conf_place(conf, w[i].group, L, R, &run_node, &data_node);
				table_set(per, d, "x", x);
				table_set(per, d, "y", y);
				table_set_text(per, d, "group", w[i].group == 'L' ? "L" : "R");
				table_set(per, d, "cpu", w[i].cpu);
				table_set(per, d, "ran_on", w[i].ran_on);
				table_set(per, d, "run_node", run_node);
				table_set(per, d, "data_node", data_node);
				table_set(per, d, "share_on_data_node", w[i].share);
				table_set(per, d, "mb_s", mbs);
				if (w[i].group == 'L')
					l += mbs / x;
				else
					rr += mbs / y;
				min_share = fmin(min_share, w[i].share);
				pages_node[data_node == L ? 0 : 1] += 3.0 * (double)((size + 4095) / 4096);
			}
			table_set_spread(pts, row, "total_mb_s", &totals);
			double med = table_get(pts, row, "total_mb_s");

			samples_free(&totals);
			if (x == 1 && y == 0)
				base = med;
			phase_end(o, name, "bytes=%.0f seconds=%.6f mb_s=%.1f conf=%d x=%d y=%d", bytes * nr * reps,
				  now_s() - t0, med, conf, x, y);
			table_set(pts, row, "l_thread_mb_s", x ? l : NAN);
			table_set(pts, row, "r_thread_mb_s", y ? rr : NAN);
			table_set(pts, row, "min_share", min_share);
			if (min_share < 0.95)
				report_note(&r, "(%d,%d): only %.0f%% of a thread's pages are on the node asked for", x, y,
					    min_share * 100);
			free(w);
		}
	for (int i = 0; i < pts->nr_rows; i++)
		table_set(pts, i, "normalized", table_get(pts, i, "total_mb_s") / base);
	report_param(&r, "data_pages", "{\"%d\":%.0f,\"%d\":%.0f}", L, pages_node[0], R, pages_node[1]);
	log_progress(o, "\r%50s\r", "");
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}
