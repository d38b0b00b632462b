/* The bandwidth and STREAM loops in SVE (aarch64): the same work as
 * simd.c's widths, at the vector length the CPU has (128 to 2048 bits,
 * known only at run time, so no GCC vector type can hold it: ACLE
 * intrinsics instead). Compiled for SVE by a target pragma, so the binary
 * runs on every aarch64 and simd.c offers these loops only where the
 * kernel reports SVE (HWCAP_SVE). Like the other widths: four vectors per
 * step, whole steps only (the bytes returned say how many), no
 * predication in the loop. Built for aarch64 only (meson.build). */
#if defined(__aarch64__)
#include <string.h>

#include "bench.h"

#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+sve")
#include <arm_sve.h>

int sve_vector_bytes(void)
{
	return (int)svcntb();
}

size_t sve_bw(enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size)
{
	const size_t per = svcntd(), words = size / 8 / (4 * per) * (4 * per);
	const svbool_t all = svptrue_b64();
	const svuint64_t one = svdup_u64(1);
	svuint64_t s0 = svdup_u64(0), s1 = s0, s2 = s0, s3 = s0;

	switch (op) {
	case BW_RD:
		/* Four sums: the adds are not one dependent chain. */
		for (size_t i = 0; i < words; i += 4 * per) {
			s0 = svadd_u64_x(all, s0, svld1_u64(all, buf + i));
			s1 = svadd_u64_x(all, s1, svld1_u64(all, buf + i + per));
			s2 = svadd_u64_x(all, s2, svld1_u64(all, buf + i + 2 * per));
			s3 = svadd_u64_x(all, s3, svld1_u64(all, buf + i + 3 * per));
		}
		s0 = svadd_u64_x(all, svadd_u64_x(all, s0, s1), svadd_u64_x(all, s2, s3));
		bench_sink += svaddv_u64(all, s0);
		break;
	case BW_WR:
		for (size_t i = 0; i < words; i += 4 * per) {
			svst1_u64(all, buf + i, one);
			svst1_u64(all, buf + i + per, one);
			svst1_u64(all, buf + i + 2 * per, one);
			svst1_u64(all, buf + i + 3 * per, one);
		}
		break;
	case BW_RDWR:
		for (size_t i = 0; i < words; i += 4 * per)
			for (size_t j = i; j < i + 4 * per; j += per)
				svst1_u64(all, buf + j, svadd_u64_x(all, svld1_u64(all, buf + j), one));
		break;
	case BW_CP:
		for (size_t i = 0; i < words; i += 4 * per) {
			svst1_u64(all, dst + i, svld1_u64(all, buf + i));
			svst1_u64(all, dst + i + per, svld1_u64(all, buf + i + per));
			svst1_u64(all, dst + i + 2 * per, svld1_u64(all, buf + i + 2 * per));
			svst1_u64(all, dst + i + 3 * per, svld1_u64(all, buf + i + 3 * per));
		}
		break;
	case BW_BZERO:
		memset(buf, 0, words * 8);
		break;
	}
	return words * 8;
}

size_t sve_stream(enum stream_kernel k, double *a, double *b, double *c, size_t n)
{
	const size_t per = svcntd(), m = n / per * per;
	const svbool_t all = svptrue_b64();
	const svfloat64_t s = svdup_f64(3.0);

	switch (k) {
	case ST_COPY:
		_Pragma("GCC unroll 4")
		for (size_t i = 0; i < m; i += per)
			svst1_f64(all, c + i, svld1_f64(all, a + i));
		return 2 * m * 8;
	case ST_SCALE:
		_Pragma("GCC unroll 4")
		for (size_t i = 0; i < m; i += per)
			svst1_f64(all, b + i, svmul_f64_x(all, s, svld1_f64(all, c + i)));
		return 2 * m * 8;
	case ST_ADD:
		_Pragma("GCC unroll 4")
		for (size_t i = 0; i < m; i += per)
			svst1_f64(all, c + i, svadd_f64_x(all, svld1_f64(all, a + i), svld1_f64(all, b + i)));
		return 3 * m * 8;
	case ST_TRIAD:
		/* A multiply and an add, as the other widths' loops are compiled
		 * in ISO C (no contraction into one fused instruction). */
		_Pragma("GCC unroll 4")
		for (size_t i = 0; i < m; i += per)
			svst1_f64(all, a + i, svadd_f64_x(all, svld1_f64(all, b + i),
							  svmul_f64_x(all, s, svld1_f64(all, c + i))));
		return 3 * m * 8;
	}
	return 0;
}

#pragma GCC pop_options
#endif
