/* selftest: the kernels, chains, timer, cache maintenance and c2c plans of
 * this build, checked on small data. It is what the aarch64 cross build runs
 * under qemu-user; it ends with "N passed, N failed". */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static int passed, failed;

static void check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (ok)
		passed++;
	else
		failed++;
}

static void checkf(bool ok, const char *fmt, const char *kernel)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, kernel);
	check(ok, what);
}

/* Every kernel width this CPU has does the same work: each word read,
 * written or copied once, STREAM's values and byte counts. */
static void check_kernels(void)
{
	size_t n = 4096, size = n * sizeof(uint64_t);
	uint64_t *a = mem_alloc(size, false), *b = mem_alloc(size, false), expect = 0;
	double *x = mem_alloc(n * sizeof(double), false), *y = mem_alloc(n * sizeof(double), false),
	       *z = mem_alloc(n * sizeof(double), false);
	int chosen = kernel_selected();

	for (int k = 0; k < kernel_count(); k++) {
		const char *name = kernel_name(k);
		bool ok = true;

		if (!kernel_available(k)) {
			printf("skip: %s kernels (this CPU does not have them)\n", name);
			continue;
		}
		kernel_select(k);
		expect = 0;
		for (size_t i = 0; i < n; i++) {
			a[i] = i * 3;
			expect += i * 3;
		}
		bench_sink = 0;
		checkf(bw_pass(BW_RD, a, NULL, size) == size && bench_sink == expect, "%s: bw rd reads every word once", name);
		bw_pass(BW_WR, a, NULL, size);
		for (size_t i = 0; i < n; i++)
			ok &= a[i] == 1;
		checkf(ok, "%s: bw wr writes every word", name);
		bw_pass(BW_RDWR, a, NULL, size);
		ok = true;
		for (size_t i = 0; i < n; i++)
			ok &= a[i] == 2;
		checkf(ok, "%s: bw rdwr reads and writes every word", name);
		for (size_t i = 0; i < n; i++)
			a[i] = i * 7;
		bw_pass(BW_CP, a, b, size);
		checkf(!memcmp(a, b, size), "%s: bw cp copies every word", name);
		checkf(bw_pass(BW_BZERO, b, NULL, size) == size && b[0] == 0 && b[n - 1] == 0, "%s: bw bzero clears", name);
		for (size_t i = 0; i < n; i++) {
			x[i] = 1;
			y[i] = 2;
			z[i] = 0;
		}
		checkf(stream_run(ST_COPY, x, y, z, n) == 16 * n && z[7] == 1 && z[n - 1] == 1, "%s: stream copy c = a, 16 B/element", name);
		checkf(stream_run(ST_SCALE, x, y, z, n) == 16 * n && y[7] == 3 && y[n - 1] == 3, "%s: stream scale b = 3c", name);
		checkf(stream_run(ST_ADD, x, y, z, n) == 24 * n && z[7] == 4 && z[n - 1] == 4, "%s: stream add c = a + b", name);
		checkf(stream_run(ST_TRIAD, x, y, z, n) == 24 * n && x[7] == 15 && x[n - 1] == 15,
		       "%s: stream triad a = b + 3c, 24 B/element", name);
	}
	kernel_select(chosen);
	mem_free(a, size);
	mem_free(b, size);
	mem_free(x, n * sizeof(double));
	mem_free(y, n * sizeof(double));
	mem_free(z, n * sizeof(double));
}

static void check_chains(void)
{
	size_t size = 1 << 20;
	char *buf = mem_alloc(size, false);
	size_t strides[] = { 16, 64, 512 };

	for (size_t i = 0; i < 3; i++) {
		char what[128];
		void **seq = chain_build(buf, size, strides[i], CHAIN_SEQ, 1);
		bool ordered = *seq == (char *)buf + strides[i];

		snprintf(what, sizeof(what), "seq chain, stride %zu: one cycle over all %zu elements, in address order",
			 strides[i], size / strides[i]);
		check(ordered && chain_length(seq) == size / strides[i], what);
		for (enum chain_order how = CHAIN_RANDOM; how <= CHAIN_WINDOW; how++) {
			void **rnd = chain_build(buf, size, strides[i], how, 7);

			snprintf(what, sizeof(what), "%s chain, stride %zu: one cycle over all %zu elements",
				 how == CHAIN_RANDOM ? "random" : "window", strides[i], size / strides[i]);
			check(chain_length(rnd) == size / strides[i], what);
			check(chain_walk(rnd, size / strides[i]) == (void *)rnd, "a walk of the chain's length comes back");
		}
	}
	mem_free(buf, size);
}

static void check_timer(void)
{
	struct timespec req = { 0, 50 * 1000 * 1000 };
	bool ok = false;

	/* A thread preempted between reading the two clocks sees them apart: the
	 * best of three tries is the timer's own error. */
	for (int i = 0; i < 3 && !ok; i++) {
		double t0 = now_s();
		uint64_t c0 = timer_ticks();
		double ns, s;

		nanosleep(&req, NULL);
		ns = ticks_to_ns(timer_ticks() - c0);
		s = now_s() - t0;
		printf("   timer %s: %.3f ms against clock_gettime's %.3f ms\n", timer_name(), ns / 1e6, s * 1e3);
		ok = fabs(ns * 1e-9 - s) < 0.05 * s;
	}
	check(ok, "the timer agrees with clock_gettime within 5% over 50 ms");
}

static void check_flush(void)
{
	size_t size = 1 << 16;
	uint64_t *buf = mem_alloc(size, false), sum = 0;

	for (size_t i = 0; i < size / 8; i++)
		buf[i] = i;
	cache_flush(buf, size);
	for (size_t i = 0; i < size / 8; i++)
		sum += buf[i];
	printf("   flush with %s, fence %s\n", cache_flush_insn(), mem_fence_insn());
	check(sum == (size / 8) * (size / 8 - 1) / 2, "data survives a flush of its lines (written back, not lost)");
	mem_free(buf, size);
}

static void check_plans(void)
{
	struct c2c_step s[8];
	int n = c2c_plan(C2C_M, arch_this(), arch_has_clflushopt(), s, 8);

	check(n > 2 && s[0].op == C2C_FLUSH && !strcmp(s[0].insn, cache_flush_insn()),
	      "c2c plans start with this machine's flush instruction");
	check(c2c_plan(C2C_S, arch_this(), false, s, 8) == 6 && s[4].who == C2C_HELPER,
	      "c2c S has a helper read");
}

static void check_pinning(const struct bench_opts *o)
{
	int cpu = o->cpu >= 0 ? o->cpu : o->topo.cpus[o->topo.nr_cpus - 1];

	check(pin_to_cpu(cpu) == 0 && current_cpu() == cpu, "a thread pinned to a CPU runs there");
}

int bench_selftest(struct bench_opts *o)
{
	printf("memscope-bench selftest on %s, %d CPUs, %d nodes, %d caches\n", arch_name(arch_this()), o->topo.nr_cpus,
	       o->topo.nr_nodes, o->topo.nr_caches);
	check_kernels();
	check_chains();
	check_timer();
	check_flush();
	check_plans();
	check_pinning(o);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
