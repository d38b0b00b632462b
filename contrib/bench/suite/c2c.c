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

#define MAX_REPS 200

struct c2c_run {
	char *buf;
	size_t size;
	void **chain;
	size_t elements;
	struct c2c_step steps[8];
	int nr_steps;
	int prep_cpu, helper_cpu, reader_cpu;
	int reps;                   /* rounds: reps latency passes and reps bandwidth passes */
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

/* One (preparer, reader) pair at one size: medians of latency and bandwidth. */
static int c2c_pair(struct c2c_run *r, double *lat, double *bw)
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
	*lat = median(r->lat_ns, r->reps);
	*bw = median(r->mb_s, r->reps);
	return 0;
}

static int pick_helper(const struct bench_opts *o, const int *cpus, int nr, int a, int b)
{
	for (int i = 0; i < nr; i++)
		if (cpus[i] != a && cpus[i] != b)
			return cpus[i];
	(void)o;
	return -1;
}

static void prepare_buffer(struct c2c_run *r, size_t size, bool huge)
{
	r->size = size;
	r->elements = size / BENCH_LINE;
	if (!(r->buf = mem_alloc(size, huge)))
		bench_die("c2c: cannot allocate %zu bytes", size);
	r->chain = chain_build(r->buf, size, BENCH_LINE, CHAIN_WINDOW, (unsigned)size);
}

int bench_c2c(struct bench_opts *o)
{
	struct bench_report r = { .bench = "c2c" };
	struct bench_table *curves, *heat;
	enum c2c_state state;
	int *cpus = o->nr_cpus ? o->cpus : o->topo.cpus, nr_cpus = o->nr_cpus ? o->nr_cpus : o->topo.nr_cpus;
	int ref = o->ref_cpu >= 0 ? o->ref_cpu : cpus[0];
	size_t l1 = topo_cache_size(&o->topo, 1), heat_size = o->heat_size;
	struct c2c_run *run = calloc(1, sizeof(*run));
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
	run->reps = o->reps > MAX_REPS ? MAX_REPS : o->reps;
	run->nr_steps = c2c_plan(state, arch_this(), arch_has_clflushopt(), run->steps, 8);
	curves = report_table(&r, "results", "Lines left by the reference core, loaded by another: latency and read bandwidth");
	table_col(curves, "owner", NULL, COL_INT, 0);
	table_col(curves, "reader", NULL, COL_INT, 0);
	table_col(curves, "size", "B", COL_INT, 0);
	table_col(curves, "lat_ns", "ns", COL_NUM, 2);
	table_col(curves, "bw_mb_s", "MB/s", COL_NUM, 1);
	heat = report_table(&r, "heatmap", "Every pair at one size: latency of loading the owner's lines");
	table_col(heat, "owner", NULL, COL_INT, 0);
	table_col(heat, "reader", NULL, COL_INT, 0);
	table_col(heat, "lat_ns", "ns", COL_NUM, 2);
	table_col(heat, "bw_mb_s", "MB/s", COL_NUM, 1);
	report_param(&r, "state", "\"%s\"", c2c_state_name(state));
	report_param(&r, "ref", "%d", ref);
	report_param(&r, "heat_size", "%zu", heat_size);
	report_param(&r, "reps", "%d", run->reps);
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
	/* The reference core against every core, over the sizes. */
	for (int s = 0; s < o->nr_sizes; s++) {
		prepare_buffer(run, o->sizes[s], o->huge);
		for (int c = 0; c < nr_cpus; c++) {
			double lat = NAN, bw = NAN, t0;
			char name[64];
			int row;

			run->prep_cpu = ref;
			run->reader_cpu = cpus[c];
			run->helper_cpu = state == C2C_S ? pick_helper(o, cpus, nr_cpus, ref, cpus[c]) : -1;
			row = table_row(curves);
			table_set(curves, row, "owner", ref);
			table_set(curves, row, "reader", cpus[c]);
			table_set(curves, row, "size", (double)o->sizes[s]);
			if (state == C2C_S && run->helper_cpu < 0 && cpus[c] != ref) {
				helper_missing = true;
				continue;
			}
			log_progress(o, "\rc2c %s: %d -> %d, %zu bytes   ", c2c_state_name(state), ref, cpus[c], o->sizes[s]);
			snprintf(name, sizeof(name), "c2c:%s:%d:%d:%zu", c2c_state_name(state), ref, cpus[c], o->sizes[s]);
			t0 = phase_begin(o, name);
			do {
				if (c2c_pair(run, &lat, &bw) < 0)
					bench_die("c2c: cannot run on CPU %d or %d: %s", ref, cpus[c], strerror(errno));
			} while (phase_wants_more(o, t0));
			phase_end(o, name, "ns=%.3f mb_s=%.1f loads=%zu seconds=%.6f owner=%d reader=%d size=%zu", lat, bw,
				  run->elements * (size_t)run->reps, now_s() - t0, ref, cpus[c], o->sizes[s]);
			table_set(curves, row, "lat_ns", lat);
			table_set(curves, row, "bw_mb_s", bw);
		}
		mem_free(run->buf, run->size);
	}
	/* Every pair, at the heat map's size. */
	prepare_buffer(run, heat_size, o->huge);
	for (int a = 0; a < nr_cpus; a++)
		for (int b = 0; b < nr_cpus; b++) {
			double lat = NAN, bw = NAN;
			int row = table_row(heat);

			table_set(heat, row, "owner", cpus[a]);
			table_set(heat, row, "reader", cpus[b]);
			run->prep_cpu = cpus[a];
			run->reader_cpu = cpus[b];
			run->helper_cpu = state == C2C_S ? pick_helper(o, cpus, nr_cpus, cpus[a], cpus[b]) : -1;
			if (state == C2C_S && run->helper_cpu < 0 && a != b) {
				helper_missing = true;
				continue;
			}
			log_progress(o, "\rc2c heat map: %d -> %d   ", cpus[a], cpus[b]);
			if (c2c_pair(run, &lat, &bw) < 0)
				bench_die("c2c: cannot run on CPU %d or %d: %s", cpus[a], cpus[b], strerror(errno));
			table_set(heat, row, "lat_ns", lat);
			table_set(heat, row, "bw_mb_s", bw);
		}
	mem_free(run->buf, run->size);
	log_progress(o, "\r%50s\r", "");
	if (helper_missing)
		report_note(&r, "state S needs a third CPU that shares the lines with the owner; %d CPUs were "
			    "given, so pairs without one are left empty", nr_cpus);
	report_note(&r, "the owner == reader cells are the core's own caches: the baseline of each row");
	free(run);
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}
