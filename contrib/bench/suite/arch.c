/* What differs between x86-64 and aarch64: the cycle counter, cache
 * maintenance and fences. Everything else in memscope-bench is plain C. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static enum bench_timer timer_used = TIMER_CLOCK;
static double ns_per_tick = 1.0;

enum bench_arch arch_this(void)
{
#if defined(__x86_64__)
	return ARCH_X86_64;
#elif defined(__aarch64__)
	return ARCH_AARCH64;
#else
	return ARCH_OTHER;
#endif
}

const char *arch_name(enum bench_arch a)
{
	return a == ARCH_X86_64 ? "x86_64" : a == ARCH_AARCH64 ? "aarch64" : "other";
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cycles(void)
{
#if defined(__x86_64__)
	unsigned int lo, hi;

	/* lfence: rdtsc does not wait for earlier loads otherwise. */
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#else
	return clock_ns();
#endif
}

#if defined(__x86_64__)
/* The cycle counter and the clock read as nearly at once as possible: the
 * tightest of a few tries of clock, counter, clock. */
static void clock_pair(uint64_t *c, uint64_t *t)
{
	uint64_t best = UINT64_MAX;

	*c = cycles();
	*t = clock_ns();
	for (int i = 0; i < 50; i++) {
		uint64_t a = clock_ns(), cc = cycles(), b = clock_ns();

		if (b - a < best) {
			best = b - a;
			*c = cc;
			*t = a + (b - a) / 2;
		}
		if (best < 200)
			break;
	}
}
#endif

/* The TSC counts at a constant rate only where the CPU says so
 * (constant_tsc and nonstop_tsc in /proc/cpuinfo); cntvct_el0 always does. */
static bool cycles_constant(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool constant = false, nonstop = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	fclose(f);
	return constant && nonstop;
#elif defined(__aarch64__)
	return true;
#else
	return false;
#endif
}

void timer_init(enum bench_timer want)
{
	timer_used = TIMER_CLOCK;
	ns_per_tick = 1.0;
	if (want == TIMER_CLOCK || (want == TIMER_AUTO && !cycles_constant()))
		return;
#if defined(__aarch64__)
	uint64_t freq;

	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(freq));
	if (freq) {
		ns_per_tick = 1e9 / (double)freq;
		timer_used = TIMER_CYCLES;
	}
#elif defined(__x86_64__)
	/* Calibrate against CLOCK_MONOTONIC_RAW over 20 ms, from readings taken
	 * close together: a thread preempted between the two clocks would skew it. */
	uint64_t c0 = 0, t0 = 0, c1 = 0, t1 = 0;

	clock_pair(&c0, &t0);
	do
		clock_pair(&c1, &t1);
	while (t1 - t0 < 20000000ull);
	if (c1 > c0) {
		ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
		timer_used = TIMER_CYCLES;
	}
#endif
}

const char *timer_name(void)
{
	if (timer_used == TIMER_CLOCK)
		return "clock_gettime";
	return arch_this() == ARCH_X86_64 ? "tsc" : "cntvct_el0";
}

double timer_resolution_ns(void)
{
	if (timer_used == TIMER_CLOCK) {
		struct timespec ts;

		clock_getres(CLOCK_MONOTONIC_RAW, &ts);
		return (double)ts.tv_nsec;
	}
	return ns_per_tick;
}

uint64_t timer_ticks(void)
{
	return timer_used == TIMER_CYCLES ? cycles() : clock_ns();
}

double ticks_to_ns(uint64_t ticks)
{
	return (double)ticks * ns_per_tick;
}

bool arch_has_clflushopt(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return (b >> 23) & 1;
#else
	return false;
#endif
}

const char *cache_flush_insn(void)
{
	switch (arch_this()) {
	case ARCH_X86_64: return arch_has_clflushopt() ? "clflushopt" : "clflush";
	case ARCH_AARCH64: return "dc civac";
	default: return "none";
	}
}

const char *mem_fence_insn(void)
{
	switch (arch_this()) {
	case ARCH_X86_64: return "mfence";
	case ARCH_AARCH64: return "dsb ish";
	default: return "atomic_thread_fence";
	}
}

void mem_fence(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("mfence" : : : "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb ish" : : : "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

void cache_flush(const void *p, size_t size)
{
	const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)(BENCH_LINE - 1));
	const char *end = (const char *)p + size;

#if defined(__x86_64__)
	static int opt = -1;

	if (opt < 0)
		opt = arch_has_clflushopt();
	if (opt) {
		for (; c < end; c += BENCH_LINE)
			__asm__ __volatile__("clflushopt %0" : "+m"(*(volatile char *)c));
	} else {
		for (; c < end; c += BENCH_LINE)
			__asm__ __volatile__("clflush %0" : "+m"(*(volatile char *)c));
	}
#elif defined(__aarch64__)
	/* The line size for dc is in CTR_EL0 (DminLine, log2 of words); never assume 64. */
	uint64_t ctr;
	size_t line;

	__asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
	line = (size_t)4 << ((ctr >> 16) & 0xf);
	c = (const char *)((uintptr_t)p & ~(uintptr_t)(line - 1));
	for (; c < end; c += line)
		__asm__ __volatile__("dc civac, %0" : : "r"(c) : "memory");
#else
	(void)c;
	(void)end;
#endif
	mem_fence();
}
