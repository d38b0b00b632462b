/* c2c: the cost of loading lines that another core left Modified, Exclusive
 * or Shared (the method of wrBench/BenchIT's x86membench): one core prepares
 * the lines (c2c_plan.c), then the reader loads them once, either as a
 * random pointer chase (latency) or as a sequential read (bandwidth). Each
 * measurement is one pass over freshly prepared lines, repeated. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_REPS 1

struct c2c_run {
	char *buf;
	size_t size;
	void **chain;
	size_t elements;
	struct c2c_step steps[8];
	int nr_steps;
	int prep_cpu, helper_cpu, reader_cpu;
	int reps;                   /* rounds: reps latency passes and reps bandwidth passes (<= MAX_REPS) */
	atomic_int turn;            /* the step to run next; nr_steps: the reader's turn */
	atomic_int round;
	double lat_ns[MAX_REPS], mb_s[MAX_REPS];
	int error;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void run_step(struct c2c_run *r, const struct c2c_step *s)
{
	switch (s->op) {
	case C2C_FLUSH:
		cache_flush(r->buf, r->size);
		break;
	case C2C_FENCE:
		mem_fence();
		break;
	case C2C_WRITE:
		/* Store the value the line holds: the chain stays intact. */
		for (size_t off = 0; off < r->size; off += BENCH_LINE) {
			void *volatile *line = (void *volatile *)(r->buf + off);

			*line = *line;
		}
		break;
	case C2C_READ: {
		uintptr_t sum = 0;

		for (size_t off = 0; off < r->size; off += BENCH_LINE)
			sum += (uintptr_t) * (void *volatile *)(r->buf + off);
		bench_sink += sum;
		break;
	}
	}
}

static void measure(struct c2c_run *r, int round)
{
	int rep = round / 2;
	uint64_t t;

	if (round % 2 == 0) {
		t = timer_ticks();
		bench_sink += (uintptr_t)chain_walk(r->chain, r->elements);
		r->lat_ns[rep] = ticks_to_ns(timer_ticks() - t) / (double)r->elements;
	} else {
		size_t bytes;

		t = timer_ticks();
		bytes = bw_pass(BW_RD, (uint64_t *)r->buf, NULL, r->size);
		r->mb_s[rep] = (double)bytes / (ticks_to_ns(timer_ticks() - t) * 1e-9) / 1e6;
	}
}

struct role {
	struct c2c_run *run;
	int cpu;
	enum c2c_who who;           /* preparer or helper; the reader: is_reader */
	bool is_reader;
	pthread_t thread;
};

static void *role_main(void *arg)
{
	struct role *me = arg;
	struct c2c_run *r = me->run;

	if (pin_to_cpu(me->cpu) < 0) {
		r->error = errno;
		atomic_store(&r->round, 2 * r->reps);
		return NULL;
	}
	for (;;) {
		int round = atomic_load(&r->round), turn;

		if (round >= 2 * r->reps)
			return NULL;
		turn = atomic_load_explicit(&r->turn, memory_order_acquire);
		if (turn < r->nr_steps && !me->is_reader && r->steps[turn].who == me->who) {
			run_step(r, &r->steps[turn]);
			atomic_store_explicit(&r->turn, turn + 1, memory_order_release);
		} else if (turn == r->nr_steps && me->is_reader) {
			measure(r, round);
			atomic_store(&r->turn, 0);
			atomic_store_explicit(&r->round, round + 1, memory_order_release);
		} else {
			cpu_relax();
		}
	}
}

/* One (preparer, reader) pair at one size: r->reps rounds, each a latency
 * pass and a bandwidth pass over freshly prepared lines. */
static int c2c_pair(struct c2c_run *r)
{
	struct role roles[3];
	int nr = 0;

	atomic_store(&r->turn, 0);
	atomic_store(&r->round, 0);
	r->error = 0;
	if (r->prep_cpu == r->reader_cpu) {
		/* The same core: its own cache, the baseline of the row. */
		if (pin_to_cpu(r->prep_cpu) < 0)
			return -1;
		for (int round = 0; round < 2 * r->reps; round++) {
			for (int i = 0; i < r->nr_steps; i++)
				run_step(r, &r->steps[i]);
			measure(r, round);
		}
	} else {
		roles[nr++] = (struct role){ r, r->prep_cpu, C2C_PREPARER, false, 0 };
		if (r->helper_cpu >= 0)
			roles[nr++] = (struct role){ r, r->helper_cpu, C2C_HELPER, false, 0 };
		roles[nr++] = (struct role){ r, r->reader_cpu, C2C_PREPARER, true, 0 };
		for (int i = 0; i < nr; i++)
			if (pthread_create(&roles[i].thread, NULL, role_main, &roles[i]) != 0)
				bench_die("c2c: cannot start a thread");
		for (int i = 0; i < nr; i++)
			pthread_join(roles[i].thread, NULL);
		if (r->error) {
			errno = r->error;
			return -1;
		}
	}
	return 0;
}

static int pick_helper(const int *cpus, int nr, int a, int b)
{
	for (int i = 0; i < nr; i++)
		if (cpus[i] != a && cpus[i] != b)
			return cpus[i];
	return -1;
}

/* One buffer per size, shared by the pairs measured at that size (each
 * repetition prepares its lines afresh). */
struct c2c_buffer {
	size_t size;
	char *buf;
	void **chain;
};

/* A (owner, reader, size) point and its samples. The results table (the
 * reference core against every reader, every size) and the heat map (every
 * pair at the heat map's size) are both read from these points, so where
 * they meet they show the same measurement. */
struct c2c_point {
	int owner, reader, helper;
	int buffer;
	bool skip;                  /* S without a third CPU */
	bool done;
	double spent, t0;
	struct samples lat, bw;
};

#define C2C_GROUP_BYTES (1ull << 30)

static void c2c_point_name(const struct c2c_point *pt, enum c2c_state state, size_t size, char *name, size_t n)
{
	snprintf(name, n, "c2c:%s:%d:%d:%zu", c2c_state_name(state), pt->owner, pt->reader, size);
}

/* Points [first, last): one repetition of each in turn, round after round. */
static void c2c_group(struct bench_opts *o, struct c2c_run *run, struct c2c_point *pts, int first, int last,
		      struct c2c_buffer *bufs, enum c2c_state state)
{
	bool more = true;
	char name[96];

	for (int i = first; i < last; i++) {
		struct c2c_buffer *b = &bufs[pts[i].buffer];

		if (!b->buf) {
			if (!(b->buf = mem_alloc(b->size, o->huge)))
				bench_die("c2c: cannot allocate %zu bytes", b->size);
			b->chain = chain_build(b->buf, b->size, BENCH_LINE, CHAIN_WINDOW, (unsigned)b->size);
		}
		c2c_point_name(&pts[i], state, b->size, name, sizeof(name));
		pts[i].t0 = phase_begin(o, name);
	}
	run->reps = 1;
	for (int round = 0; more; round++) {
		more = false;
		log_progress(o, "\rc2c %s: round %d   ", c2c_state_name(state), round + 1);
		for (int i = first; i < last; i++) {
			struct c2c_point *pt = &pts[i];
			struct c2c_buffer *b = &bufs[pt->buffer];
			double t = now_s();

			if (pt->done || pt->skip)
				continue;
			run->buf = b->buf;
			run->size = b->size;
			run->chain = b->chain;
			run->elements = b->size / BENCH_LINE;
			run->prep_cpu = pt->owner;
			run->reader_cpu = pt->reader;
			run->helper_cpu = pt->helper;
			if (c2c_pair(run) < 0)
				bench_die("c2c: cannot run on CPU %d or %d: %s", pt->owner, pt->reader, strerror(errno));
			samples_add(&pt->lat, run->lat_ns[0]);
			samples_add(&pt->bw, run->mb_s[0]);
			pt->spent += now_s() - t;
			pt->done = samples_enough(o, &pt->lat, pt->spent) && samples_enough(o, &pt->bw, pt->spent) &&
				   !phase_wants_more(o, pt->t0);
			more |= !pt->done;
		}
	}
	for (int i = first; i < last; i++) {
		struct c2c_point *pt = &pts[i];
		size_t size = bufs[pt->buffer].size;

		c2c_point_name(pt, state, size, name, sizeof(name));
		phase_end(o, name, "ns=%.3f mb_s=%.1f loads=%zu seconds=%.6f owner=%d reader=%d size=%zu",
			  spread_of(pt->lat.v, pt->lat.n).median, spread_of(pt->bw.v, pt->bw.n).median,
			  size / BENCH_LINE * (size_t)pt->lat.n, now_s() - pt->t0, pt->owner, pt->reader, size);
	}
}

int bench_c2c(struct bench_opts *o)
{
	struct bench_report r = { .bench = "c2c" };
	struct bench_table *curves, *heat;
	enum c2c_state state;
	int *cpus = o->nr_cpus ? o->cpus : o->topo.cpus, nr_cpus = o->nr_cpus ? o->nr_cpus : o->topo.nr_cpus;
	int ref = o->ref_cpu >= 0 ? o->ref_cpu : cpus[0], heat_buffer = -1, nr = 0;
	size_t l1 = topo_cache_size(&o->topo, 1), heat_size = o->heat_size;
	struct c2c_run *run = calloc(1, sizeof(*run));
	struct c2c_buffer bufs[BENCH_MAX_LIST];
	struct c2c_point *pts;
	bool helper_missing = false;

	if (!run)
		bench_die("out of memory");
	c2c_state_parse(o->state, &state);
	if (!l1)
		l1 = 32768;
	if (!heat_size)
		heat_size = l1 / 2;
	if (!o->nr_sizes) {
		/* Half of L1 to 200 MB, in octaves. */
		for (size_t s = l1 / 2; s < (200u << 20) && o->nr_sizes < BENCH_MAX_LIST - 1; s *= 2)
			o->sizes[o->nr_sizes++] = s;
		o->sizes[o->nr_sizes++] = 200u << 20;
	}
	/* The heat map's size is one of the curve's sizes: its row of the
	 * reference core is the same measurement in both. */
	for (int s = 0; s < o->nr_sizes; s++)
		if (o->sizes[s] == heat_size)
			heat_buffer = s;
	if (heat_buffer < 0) {
		int at = 0;

		if (o->nr_sizes >= BENCH_MAX_LIST)
			bench_die("c2c: too many sizes");
		while (at < o->nr_sizes && o->sizes[at] < heat_size)
			at++;
		memmove(&o->sizes[at + 1], &o->sizes[at], (size_t)(o->nr_sizes - at) * sizeof(o->sizes[0]));
		o->sizes[at] = heat_size;
		o->nr_sizes++;
		heat_buffer = at;
	}
	for (int s = 0; s < o->nr_sizes; s++)
		bufs[s] = (struct c2c_buffer){ o->sizes[s], NULL, NULL };
	run->nr_steps = c2c_plan(state, arch_this(), arch_has_clflushopt(), run->steps, 8);
	curves = report_table(&r, "results", "Lines left by the reference core, loaded by another: latency and read bandwidth");
	table_col(curves, "owner", NULL, COL_INT, 0);
	table_col(curves, "reader", NULL, COL_INT, 0);
	table_col(curves, "size", "B", COL_INT, 0);
	table_col_spread(curves, "lat_ns", "ns", 2);
	table_col_spread(curves, "bw_mb_s", "MB/s", 1);
	heat = report_table(&r, "heatmap", "Every pair at one size: latency of loading the owner's lines");
	table_col(heat, "owner", NULL, COL_INT, 0);
	table_col(heat, "reader", NULL, COL_INT, 0);
	table_col_spread(heat, "lat_ns", "ns", 2);
	table_col_spread(heat, "bw_mb_s", "MB/s", 1);
	report_param(&r, "state", "\"%s\"", c2c_state_name(state));
	report_param(&r, "ref", "%d", ref);
	report_param(&r, "heat_size", "%zu", heat_size);
	report_param(&r, "reps", "%d", o->reps);
	report_param(&r, "max_reps", "%d", o->max_reps);
	report_param(&r, "precision", "%g", o->precision);
	report_param(&r, "max_time_s", "%g", o->max_time_s);
	report_param(&r, "flush", "\"%s\"", cache_flush_insn());
	report_param(&r, "fence", "\"%s\"", mem_fence_insn());
	{
		char plan[512] = "";

		for (int i = 0; i < run->nr_steps; i++)
			snprintf(plan + strlen(plan), sizeof(plan) - strlen(plan), "%s\"%s %s (%s)\"", i ? "," : "",
				 run->steps[i].who == C2C_PREPARER ? "owner" : "helper", c2c_op_name(run->steps[i].op),
				 run->steps[i].insn);
		report_param(&r, "preparation", "[%s]", plan);
	}
	/* The points: the reference core against every CPU at every size, then
	 * the other owners at the heat map's size; sizes in order, so that a
	 * group holds the buffers of neighbouring sizes. */
	if (!(pts = calloc((size_t)(o->nr_sizes * nr_cpus + nr_cpus * nr_cpus), sizeof(*pts))))
		bench_die("out of memory");
	for (int s = 0; s < o->nr_sizes; s++)
		for (int a = 0; a < nr_cpus; a++) {
			int owner = s == heat_buffer ? cpus[a] : ref;

			if (s != heat_buffer && a > 0)
				break;
			for (int c = 0; c < nr_cpus; c++) {
				struct c2c_point *pt = &pts[nr++];

				*pt = (struct c2c_point){ .owner = owner, .reader = cpus[c], .buffer = s };
				pt->helper = state == C2C_S ? pick_helper(cpus, nr_cpus, owner, cpus[c]) : -1;
				pt->skip = state == C2C_S && pt->helper < 0 && owner != cpus[c];
				helper_missing |= pt->skip;
			}
		}
	for (int first = 0; first < nr;) {
		unsigned long long bytes = 0;
		int last = first;

		/* Whole sizes per group, up to the memory budget. */
		while (last < nr) {
			int b = pts[last].buffer, end = last;

			while (end < nr && pts[end].buffer == b)
				end++;
			if (last > first && (bytes + bufs[b].size > C2C_GROUP_BYTES || phase_under_memscope()))
				break;
			bytes += bufs[b].size;
			last = end;
		}
		c2c_group(o, run, pts, first, last, bufs, state);
		for (int i = first; i < last; i++) {
			struct c2c_buffer *b = &bufs[pts[i].buffer];

			if (b->buf) {
				mem_free(b->buf, b->size);
				b->buf = NULL;
			}
		}
		first = last;
	}
	for (int i = 0; i < nr; i++) {
		struct c2c_point *pt = &pts[i];
		int row;

		if (pt->owner == ref) {
			row = table_row(curves);
			table_set(curves, row, "owner", pt->owner);
			table_set(curves, row, "reader", pt->reader);
			table_set(curves, row, "size", (double)bufs[pt->buffer].size);
			if (!pt->skip) {
				table_set_spread(curves, row, "lat_ns", &pt->lat);
				table_set_spread(curves, row, "bw_mb_s", &pt->bw);
			}
		}
		if (pt->buffer == heat_buffer) {
			row = table_row(heat);
			table_set(heat, row, "owner", pt->owner);
			table_set(heat, row, "reader", pt->reader);
			if (!pt->skip) {
				table_set_spread(heat, row, "lat_ns", &pt->lat);
				table_set_spread(heat, row, "bw_mb_s", &pt->bw);
			}
		}
		samples_free(&pt->lat);
		samples_free(&pt->bw);
	}
	free(pts);
	log_progress(o, "\r%50s\r", "");
	if (helper_missing)
		report_note(&r, "state S needs a third CPU that shares the lines with the owner; %d CPUs were "
			    "given, so pairs without one are left empty", nr_cpus);
	report_note(&r, "the owner == reader cells are the core's own caches: the baseline of each row");
	report_note(&r, "the heat map's row of CPU %d is the results table's rows at %zu bytes: the same measurements",
		    ref, heat_size);
	free(run);
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}
