/* The bandwidth and STREAM loops at each vector width the machine has:
 * scalar, SSE2, AVX2 and AVX-512 on x86-64 (each compiled for its own
 * instruction set with a target attribute and chosen at run time by CPUID,
 * so no build flag is needed), NEON on aarch64 and SVE where the CPU has
 * it (simd_sve.c: its length is known only at run time). One macro writes each
 * width's loops with GCC's vector types, so every width does the same work
 * with its own registers: the scalar loops are kept scalar (no
 * vectorizer), the others are vectors of 16, 32 or 64 bytes; all unrolled
 * four times, as likwid-bench's kernels are. */
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "bench.h"

#ifdef __clang__
/* clang has no optimize attribute: there the scalar loops are left to its
 * vectorizer (memscope-bench is built by GCC; clang builds it only for the
 * sanitizer tests, which check results, not widths). */
#define SCALAR_ATTR
#else
#define SCALAR_ATTR __attribute__((optimize("no-tree-vectorize", "no-tree-slp-vectorize")))
#endif

/* NAME: the width's prefix; BYTES: vector size; ATTR: how it is compiled;
 * DVEC: the attribute that makes the words and doubles vectors (none for
 * scalar: a one-element vector lives on the stack or is copied between
 * registers every pass, which made the scalar L1 read rate depend on where
 * the loop fell in the instruction cache: 43 or 66 GB/s on one host). */
#define VECTOR(BYTES) __attribute__((vector_size(BYTES), may_alias))
#define DEFINE_KERNELS(NAME, BYTES, ATTR, DVEC)                                                             \
	typedef uint64_t NAME##_u DVEC __attribute__((may_alias));                                         \
	typedef double NAME##_d DVEC;                                                                       \
	enum { NAME##_per = (BYTES) / 8 };                                                                  \
	ATTR static size_t NAME##_bw(enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size)             \
	{                                                                                                   \
		NAME##_u *v = (NAME##_u *)buf, *d = (NAME##_u *)dst;                                        \
		size_t m = size / (BYTES) / 4 * 4;                                                          \
		NAME##_u s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, one = { 0 };                       \
		uint64_t t = 0;                                                                             \
                                                                                                            \
		one += 1;                                                                                   \
		switch (op) {                                                                               \
		case BW_RD:                                                                                 \
			/* Four sums: the adds are not one dependent chain. */                              \
			for (size_t i = 0; i < m; i += 4) {                                                 \
				s0 += v[i];                                                                 \
				s1 += v[i + 1];                                                             \
				s2 += v[i + 2];                                                             \
				s3 += v[i + 3];                                                             \
			}                                                                                   \
			s0 += s1 + s2 + s3;                                                                 \
			for (int j = 0; j < NAME##_per; j++) {                                              \
				uint64_t lane;                                                              \
                                                                                                            \
				memcpy(&lane, (char *)&s0 + 8 * j, 8);                                      \
				t += lane;                                                                  \
			}                                                                                   \
			bench_sink += t;                                                                    \
			break;                                                                              \
		case BW_WR:                                                                                 \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				v[i] = one;                                                                 \
			break;                                                                              \
		case BW_RDWR:                                                                               \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				v[i] += one;                                                                \
			break;                                                                              \
		case BW_CP:                                                                                 \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				d[i] = v[i];                                                                \
			break;                                                                              \
		case BW_BZERO:                                                                              \
			memset(buf, 0, m * (BYTES));                                                        \
			break;                                                                              \
		}                                                                                           \
		return m * (BYTES);                                                                         \
	}                                                                                                   \
	ATTR static size_t NAME##_stream(enum stream_kernel k, double *a, double *b, double *c, size_t n)  \
	{                                                                                                   \
		NAME##_d *A = (NAME##_d *)a, *B = (NAME##_d *)b, *C = (NAME##_d *)c, s = { 0 };             \
		size_t m = n / NAME##_per;                                                                  \
                                                                                                            \
		s += 3.0;                                                                                   \
		switch (k) {                                                                                \
		case ST_COPY:                                                                               \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				C[i] = A[i];                                                                \
			return 2 * m * (BYTES);                                                             \
		case ST_SCALE:                                                                              \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				B[i] = s * C[i];                                                            \
			return 2 * m * (BYTES);                                                             \
		case ST_ADD:                                                                                \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				C[i] = A[i] + B[i];                                                         \
			return 3 * m * (BYTES);                                                             \
		case ST_TRIAD:                                                                              \
			_Pragma("GCC unroll 4")                                                             \
			for (size_t i = 0; i < m; i++)                                                      \
				A[i] = B[i] + s * C[i];                                                     \
			return 3 * m * (BYTES);                                                             \
		}                                                                                           \
		return 0;                                                                                   \
	}

DEFINE_KERNELS(scalar, 8, SCALAR_ATTR, )
#if defined(__x86_64__)
DEFINE_KERNELS(sse2, 16, , VECTOR(16))
DEFINE_KERNELS(avx2, 32, __attribute__((target("avx2"))), VECTOR(32))
DEFINE_KERNELS(avx512, 64, __attribute__((target("avx512f"))), VECTOR(64))
#elif defined(__aarch64__)
DEFINE_KERNELS(neon, 16, , VECTOR(16))
#endif

struct kernel {
	const char *name;
	int bytes;                    /* 0: the CPU's (SVE) */
	size_t (*bw)(enum bw_op, uint64_t *, uint64_t *, size_t);
	size_t (*stream)(enum stream_kernel, double *, double *, double *, size_t);
};

static const struct kernel kernels[] = {
	{ "scalar", 8, scalar_bw, scalar_stream },
#if defined(__x86_64__)
	{ "sse2", 16, sse2_bw, sse2_stream },
	{ "avx2", 32, avx2_bw, avx2_stream },
	{ "avx512", 64, avx512_bw, avx512_stream },
#elif defined(__aarch64__)
	{ "neon", 16, neon_bw, neon_stream },
	{ "sve", 0, sve_bw, sve_stream },
#endif
};

#define NR_KERNELS ((int)(sizeof(kernels) / sizeof(kernels[0])))

static int selected = -1;

int kernel_count(void)
{
	return NR_KERNELS;
}

const char *kernel_name(int k)
{
	return kernels[k].name;
}

int kernel_bytes(int k)
{
#if defined(__aarch64__)
	if (!kernels[k].bytes)
		return kernel_available(k) ? sve_vector_bytes() : 0;
#endif
	return kernels[k].bytes;
}

bool kernel_available(int k)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!strcmp(kernels[k].name, "avx2"))
		return __builtin_cpu_supports("avx2");
	if (!strcmp(kernels[k].name, "avx512"))
		return __builtin_cpu_supports("avx512f");
#elif defined(__aarch64__)
	if (!strcmp(kernels[k].name, "sve"))
		return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
#endif
	return true;
}

int kernel_find(const char *name)
{
	for (int k = 0; k < NR_KERNELS; k++)
		if (!strcmp(kernels[k].name, name))
			return k;
	return -1;
}

int kernel_widest(void)
{
	int best = 0;

	/* SVE of 128 bits ties NEON: the later (SVE) is taken. */
	for (int k = 0; k < NR_KERNELS; k++)
		if (kernel_available(k) && kernel_bytes(k) >= kernel_bytes(best))
			best = k;
	return best;
}

void kernel_select(int k)
{
	selected = k;
}

int kernel_selected(void)
{
	if (selected < 0)
		selected = kernel_widest();
	return selected;
}

size_t kernel_bw_pass(int k, enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size)
{
	return kernels[k].bw(op, buf, dst, size);
}

size_t kernel_stream_run(int k, enum stream_kernel sk, double *a, double *b, double *c, size_t n)
{
	return kernels[k].stream(sk, a, b, c, n);
}
