/* bw, lat, par: lmbench's bw_mem, lat_mem_rd and par_mem methods over sizes
 * from the L1 cache to DRAM, one measurement per size, each a phase. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"


/* Default sizes: 1 KiB (bw: 4 KiB) to four times the last-level cache (at
 * least 64 MiB), in half-octave steps. */
static int default_sizes(const struct bench_opts *o, size_t lo, size_t *out, int max)
{
	size_t hi = 4 * topo_last_level_size(&o->topo);
	int n = 0;

	if (hi < (64u << 20))
		hi = 64u << 20;
	for (size_t p = 1; p <= hi && n < max; p <<= 1) {
		if (p >= lo)
			out[n++] = p;
		if (p >= 2 && p + p / 2 >= lo && p + p / 2 <= hi && n < max)
			out[n++] = p + p / 2;
	}
	return n;
}

static void sizes_or_default(struct bench_opts *o, size_t lo)
{
	if (!o->nr_sizes)
		o->nr_sizes = default_sizes(o, lo, o->sizes, BENCH_MAX_LIST);
}

static void cache_params(struct bench_report *r, const struct bench_opts *o)
{
	char sizes[512] = "";

	for (int i = 0; i < o->nr_sizes; i++)
		snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%zu", i ? "," : "", o->sizes[i]);
	report_param(r, "sizes", "[%s]", sizes);
	report_param(r, "reps", "%d", o->reps);
	report_param(r, "max_reps", "%d", o->max_reps);
	report_param(r, "precision", "%g", o->precision);
	report_param(r, "max_time_s", "%g", o->max_time_s);
	report_param(r, "min_time_s", "%g", o->min_time_s);
	report_param(r, "huge_pages", "%s", o->huge ? "true" : "false");
	report_param(r, "cpu", "%d", o->cpu >= 0 ? o->cpu : current_cpu());
}

/* ---- bw ---- */

struct bw_ctx {
	enum bw_op op;
	uint64_t *buf, *dst;
	size_t size;
	double bytes;               /* everything moved during the phase */
};

static double bw_time(struct bw_ctx *c, long passes)
{
	uint64_t t0 = timer_ticks();

	for (long p = 0; p < passes; p++)
		c->bytes += (double)bw_pass(c->op, c->buf, c->dst, c->size);
	return ticks_to_ns(timer_ticks() - t0) * 1e-9;
}

/* Passes that take at least min_time. */
static long calibrate_passes(struct bw_ctx *c, double min_time)
{
	long passes = 1;
	double t;

	while ((t = bw_time(c, passes)) < min_time && passes < (1L << 30)) {
		double f = t > 0 ? min_time / t * 1.2 : 16;

		passes = (long)ceil((double)passes * (f > 16 ? 16 : f < 2 ? 2 : f));
	}
	return passes;
}

static void bw_one(struct bench_opts *o, struct bench_table *t, enum bw_op op, size_t size)
{
	struct bw_ctx c = { op, NULL, NULL, size, 0 };
	struct samples mbs = { 0 };
	char name[96];
	long passes;
	double t0, spent = 0;

	c.buf = mem_alloc(size, o->huge);
	c.dst = op == BW_CP ? mem_alloc(size, o->huge) : NULL;
	if (!c.buf || (op == BW_CP && !c.dst))
		bench_die("cannot allocate %zu bytes", size);
	/* Fault the pages in before anything is timed. */
	memset(c.buf, 1, size);
	if (c.dst)
		memset(c.dst, 1, size);
	snprintf(name, sizeof(name), "bw:%s:%zu", bw_op_name(op), size);
	t0 = phase_begin(o, name);
	passes = calibrate_passes(&c, o->min_time_s);
	while (!samples_enough(o, &mbs, spent) || phase_wants_more(o, t0)) {
		double before = c.bytes, sec = bw_time(&c, passes);

		spent += sec;
		samples_add(&mbs, (c.bytes - before) / sec / 1e6);
	}
	int row = table_row(t);

	table_set_text(t, row, "op", bw_op_name(op));
	table_set(t, row, "size", (double)size);
	table_set_spread(t, row, "mb_s", &mbs);
	phase_end(o, name, "bytes=%.0f seconds=%.6f mb_s=%.1f op=%s size=%zu", c.bytes, now_s() - t0,
		  table_get(t, row, "mb_s"), bw_op_name(op), size);
	samples_free(&mbs);
	mem_free(c.buf, size);
	mem_free(c.dst, size);
}

int bench_bw(struct bench_opts *o)
{
	struct bench_report r = { .bench = "bw" };
	struct bench_table *t;
	enum bw_op ops[5];
	int nr_ops = 0;

	sizes_or_default(o, 4096);
	for (int op = BW_RD; op <= BW_BZERO; op++)
		if (!strcmp(o->op, "all") || !strcmp(o->op, bw_op_name(op)))
			ops[nr_ops++] = op;
	t = report_table(&r, "results", "Bandwidth in MB/s (1 MB = 10^6 bytes; cp counts the bytes copied)");
	table_col(t, "op", NULL, COL_TEXT, 0);
	table_col(t, "size", "B", COL_INT, 0);
	table_col_spread(t, "mb_s", "MB/s", 1);
	cache_params(&r, o);
	report_param(&r, "op", "\"%s\"", o->op);
	report_param(&r, "kernel", "\"%s\"", kernel_name(kernel_selected()));
	report_param(&r, "vector_bytes", "%d", kernel_bytes(kernel_selected()));
	for (int i = 0; i < nr_ops; i++)
		for (int s = 0; s < o->nr_sizes; s++) {
			log_progress(o, "\rbw %s %zu bytes   ", bw_op_name(ops[i]), o->sizes[s]);
			bw_one(o, t, ops[i], o->sizes[s]);
		}
	log_progress(o, "\r%40s\r", "");
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}

/* ---- lat ---- */

/* One point of the latency curve: its chain, and the samples taken so far. */
struct lat_point {
	size_t stride, size, elements;
	void *buf, *p;
	uint64_t steps;             /* loads per repetition, calibrated to --min-time */
	struct samples ns;
	double spent, loads, t0;
	bool done;
};

/* Interleaved points share the memory they hold at once; beyond this, the
 * points are taken in groups (1 GiB: the default curve, to 4x a 32 MiB L3,
 * fits in one). */
#define LAT_GROUP_BYTES (1ull << 30)

static void lat_prepare(const struct bench_opts *o, struct lat_point *pt, enum chain_order how)
{
	if (!(pt->buf = mem_alloc(pt->size, o->huge)))
		bench_die("cannot allocate %zu bytes", pt->size);
	pt->elements = pt->size / pt->stride;
	pt->p = chain_build(pt->buf, pt->size, pt->stride, how, (unsigned)pt->size);
	pt->p = chain_walk(pt->p, pt->elements);        /* warm: one full lap */
	pt->loads += (double)pt->elements;
	pt->steps = pt->elements < 1024 ? 1024 : pt->elements;
	for (;;) {
		uint64_t t = timer_ticks();

		pt->p = chain_walk(pt->p, pt->steps);
		t = timer_ticks() - t;
		pt->loads += (double)pt->steps;
		if (ticks_to_ns(t) * 1e-9 >= o->min_time_s || pt->steps > (1ull << 36))
			break;
		pt->steps *= 2;
	}
}

/* One timed repetition. A chain that fits in a lap shorter than the walk
 * is warmed first: the point before it (interleaved) evicted it. */
static void lat_rep(struct lat_point *pt)
{
	uint64_t t;

	if (pt->elements < pt->steps) {
		pt->p = chain_walk(pt->p, pt->elements);
		pt->loads += (double)pt->elements;
	}
	t = timer_ticks();
	pt->p = chain_walk(pt->p, pt->steps);
	t = timer_ticks() - t;
	pt->loads += (double)pt->steps;
	pt->spent += ticks_to_ns(t) * 1e-9;
	samples_add(&pt->ns, ticks_to_ns(t) / (double)pt->steps);
}

/* Points [first, last) at once: one repetition of each in turn, round after
 * round, so that a burst of other load hits every size alike. Under memscope
 * each point is a phase of its own and groups hold one point. */
static void lat_group(struct bench_opts *o, struct lat_point *pts, int first, int last, enum chain_order how)
{
	bool more = true;

	for (int i = first; i < last; i++) {
		char name[96];

		snprintf(name, sizeof(name), "lat:%zu:%s:%zu", pts[i].stride, o->pattern, pts[i].size);
		pts[i].t0 = phase_begin(o, name);
		lat_prepare(o, &pts[i], how);
	}
	for (int round = 0; more; round++) {
		more = false;
		log_progress(o, "\rlat: round %d of sizes %zu..%zu   ", round + 1, pts[first].size, pts[last - 1].size);
		for (int i = first; i < last; i++) {
			struct lat_point *pt = &pts[i];

			if (pt->done)
				continue;
			lat_rep(pt);
			pt->done = samples_enough(o, &pt->ns, pt->spent) && !phase_wants_more(o, pt->t0);
			more |= !pt->done;
		}
	}
	for (int i = first; i < last; i++) {
		struct lat_point *pt = &pts[i];
		char name[96];

		snprintf(name, sizeof(name), "lat:%zu:%s:%zu", pt->stride, o->pattern, pt->size);
		phase_end(o, name, "loads=%.0f seconds=%.6f ns=%.3f stride=%zu size=%zu", pt->loads, now_s() - pt->t0,
			  spread_of(pt->ns.v, pt->ns.n).median, pt->stride, pt->size);
		bench_sink += (uintptr_t)pt->p;
		mem_free(pt->buf, pt->size);
		pt->buf = NULL;
	}
}

int bench_lat(struct bench_opts *o)
{
	struct bench_report r = { .bench = "lat" };
	struct bench_table *t;
	enum chain_order how;
	char strides[256] = "";

	sizes_or_default(o, 1024);
	chain_order_parse(o->pattern, &how);
	if (!o->nr_strides && how == CHAIN_SEQ) {
		/* lmbench's strides: how far apart the loads are decides what the prefetchers can do. */
		static const size_t def[] = { 16, 32, 64, 128, 256, 512 };

		for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
			o->strides[o->nr_strides++] = def[i];
	} else if (!o->nr_strides) {
		o->strides[o->nr_strides++] = BENCH_LINE;       /* one load per line */
	}
	t = report_table(&r, "results", how == CHAIN_RANDOM ? "Load latency in ns, one random chain over the buffer" :
			 how == CHAIN_WINDOW ? "Load latency in ns, random within 64 KiB windows taken in order" :
			 "Load latency in ns, chain in address order (lmbench lat_mem_rd)");
	table_col(t, "stride", "B", COL_INT, 0);
	table_col(t, "size", "B", COL_INT, 0);
	table_col_spread(t, "ns", "ns", 2);
	cache_params(&r, o);
	for (int i = 0; i < o->nr_strides; i++)
		snprintf(strides + strlen(strides), sizeof(strides) - strlen(strides), "%s%zu", i ? "," : "",
			 o->strides[i]);
	report_param(&r, "strides", "[%s]", strides);
	report_param(&r, "pattern", "\"%s\"", o->pattern);
	{
		struct lat_point *pts = calloc((size_t)(o->nr_strides * o->nr_sizes), sizeof(*pts));
		int nr = 0;

		if (!pts)
			bench_die("out of memory");
		for (int si = 0; si < o->nr_strides; si++)
			for (int s = 0; s < o->nr_sizes; s++)
				if (o->sizes[s] >= 2 * o->strides[si])
					pts[nr++] = (struct lat_point){ .stride = o->strides[si], .size = o->sizes[s] };
		for (int first = 0; first < nr;) {
			unsigned long long bytes = 0;
			int last = first;

			while (last < nr && (last == first || (bytes + pts[last].size <= LAT_GROUP_BYTES &&
							       !phase_under_memscope())))
				bytes += pts[last++].size;
			lat_group(o, pts, first, last, how);
			first = last;
		}
		for (int i = 0; i < nr; i++) {
			int row = table_row(t);

			table_set(t, row, "stride", (double)pts[i].stride);
			table_set(t, row, "size", (double)pts[i].size);
			table_set_spread(t, row, "ns", &pts[i].ns);
			samples_free(&pts[i].ns);
		}
		free(pts);
	}
	log_progress(o, "\r%40s\r", "");
	if (how == CHAIN_SEQ)
		report_note(&r, "chains in address order let the prefetchers hide latency at small strides; "
			    "--pattern window shows the caches' own latencies");
	if (how == CHAIN_RANDOM)
		report_note(&r, "a random chain over the whole buffer adds TLB misses once the pages in use "
			    "outgrow the TLB; --pattern window keeps them out");
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}

/* ---- par ---- */

/* K independent walks, each a load-to-load dependency of its own: the core
 * can have K misses in flight at once. */
#define DEF_WALK(K) \
	static void walk_##K(void **p, uint64_t steps) \
	{ \
		void **q[K]; \
		for (int i = 0; i < K; i++) \
			q[i] = p[i]; \
		while (steps--) \
			for (int i = 0; i < K; i++) \
				q[i] = *q[i]; \
		for (int i = 0; i < K; i++) \
			p[i] = q[i]; \
	}
DEF_WALK(1) DEF_WALK(2) DEF_WALK(3) DEF_WALK(4) DEF_WALK(5) DEF_WALK(6) DEF_WALK(7) DEF_WALK(8)
DEF_WALK(9) DEF_WALK(10) DEF_WALK(11) DEF_WALK(12) DEF_WALK(13) DEF_WALK(14) DEF_WALK(15) DEF_WALK(16)

static void (*const walks[17])(void **, uint64_t) = {
	NULL, walk_1, walk_2, walk_3, walk_4, walk_5, walk_6, walk_7, walk_8,
	walk_9, walk_10, walk_11, walk_12, walk_13, walk_14, walk_15, walk_16,
};

/* ns per load with k chains: each starts at an equal distance along one
 * random cycle, so they never meet. */
static double par_ns(const struct bench_opts *o, void **start, size_t elements, int k, double *loads,
		     struct samples *ns)
{
	void *p[16];
	uint64_t steps = 256;
	double spent = 0;

	p[0] = start;
	for (int i = 1; i < k; i++)
		p[i] = chain_walk(p[i - 1], elements / (size_t)k);
	walks[k](p, elements / (size_t)k);                 /* warm */
	for (;;) {
		uint64_t t = timer_ticks();

		walks[k](p, steps);
		t = timer_ticks() - t;
		*loads += (double)steps * k;
		if (ticks_to_ns(t) * 1e-9 >= o->min_time_s || steps > (1ull << 34))
			break;
		steps *= 2;
	}
	while (!samples_enough(o, ns, spent)) {
		uint64_t t = timer_ticks();

		walks[k](p, steps);
		t = timer_ticks() - t;
		*loads += (double)steps * k;
		spent += ticks_to_ns(t) * 1e-9;
		samples_add(ns, ticks_to_ns(t) / ((double)steps * k));
	}
	for (int i = 0; i < k; i++)
		bench_sink += (uintptr_t)p[i];
	return spread_of(ns->v, ns->n).median;
}

/* parallelism = median(one chain) / median(best k), so its interval comes
 * from the two medians' intervals: each taken at 97.5%, the ratio of their
 * opposite ends holds the ratio of the true medians with at least 95%
 * (Bonferroni: no assumption that the two sets are independent). With one
 * chain best, the ratio is 1 exactly. */
static void set_parallelism_interval(struct bench_table *t, int row, const struct samples *one,
				     const struct samples *best)
{
	struct spread a = spread_at(one->v, one->n, 0.975), b = spread_at(best->v, best->n, 0.975);

	if (one == best) {
		table_set(t, row, "parallelism_low", 1);
		table_set(t, row, "parallelism_high", 1);
		return;
	}
	table_set(t, row, "parallelism_low", a.low / b.high);
	table_set(t, row, "parallelism_high", a.high / b.low);
}

int bench_par(struct bench_opts *o)
{
	struct bench_report r = { .bench = "par" };
	struct bench_table *t, *detail;

	sizes_or_default(o, 4096);
	t = report_table(&r, "results", "Memory-level parallelism: how many loads a core keeps in flight");
	table_col(t, "size", "B", COL_INT, 0);
	table_col_spread(t, "lat_ns", "ns", 2);
	table_col_spread(t, "best_ns", "ns", 2);
	table_col(t, "chains", NULL, COL_INT, 0);
	table_col(t, "parallelism", NULL, COL_NUM, 2);
	table_col(t, "parallelism_low", NULL, COL_NUM, 2);
	table_col(t, "parallelism_high", NULL, COL_NUM, 2);
	detail = report_table(&r, "chains", "ns per load with k independent chains");
	table_col(detail, "size", "B", COL_INT, 0);
	table_col(detail, "chains", NULL, COL_INT, 0);
	table_col_spread(detail, "ns", "ns", 3);
	cache_params(&r, o);
	report_param(&r, "max_par", "%d", o->max_par);
	for (int s = 0; s < o->nr_sizes; s++) {
		size_t size = o->sizes[s], elements = size / BENCH_LINE;
		double lat1 = NAN, best = INFINITY, loads = 0, t0;
		struct samples one = { 0 }, best_s = { 0 };
		int best_k = 1, row;
		char name[64];
		void *buf;
		void **start;

		if (elements < 32)
			continue;
		log_progress(o, "\rpar %zu bytes   ", size);
		if (!(buf = mem_alloc(size, o->huge)))
			bench_die("cannot allocate %zu bytes", size);
		start = chain_build(buf, size, BENCH_LINE, CHAIN_WINDOW, (unsigned)size);
		snprintf(name, sizeof(name), "par:%zu", size);
		t0 = phase_begin(o, name);
		for (int k = 1; k <= o->max_par && (size_t)k * 4 <= elements; k++) {
			struct samples ks = { 0 };
			double ns = par_ns(o, start, elements, k, &loads, &ks);
			int d = table_row(detail);

			table_set(detail, d, "size", (double)size);
			table_set(detail, d, "chains", k);
			table_set_spread(detail, d, "ns", &ks);
			if (k == 1) {
				lat1 = ns;
				samples_free(&one);
				one = ks;
				ks = (struct samples){ 0 };
			} else if (ns < best) {
				samples_free(&best_s);
				best_s = ks;
				ks = (struct samples){ 0 };
			}
			if (ns < best) {
				best = ns;
				best_k = k;
			}
			samples_free(&ks);
		}
		/* Under memscope: the phase lasts long enough for frames to see it. */
		while (phase_wants_more(o, t0)) {
			struct samples more = { 0 };

			par_ns(o, start, elements, best_k, &loads, &more);
			samples_free(&more);
		}
		phase_end(o, name, "loads=%.0f seconds=%.6f ns=%.3f parallelism=%.2f size=%zu", loads, now_s() - t0,
			  lat1, lat1 / best, size);
		row = table_row(t);
		table_set(t, row, "size", (double)size);
		table_set_spread(t, row, "lat_ns", &one);
		table_set_spread(t, row, "best_ns", best_k == 1 ? &one : &best_s);
		table_set(t, row, "chains", best_k);
		table_set(t, row, "parallelism", lat1 / best);
		set_parallelism_interval(t, row, &one, best_k == 1 ? &one : &best_s);
		samples_free(&one);
		samples_free(&best_s);
		mem_free(buf, size);
	}
	log_progress(o, "\r%40s\r", "");
	int status = report_finish(&r, o);

	report_free(&r);
	return status;
}
