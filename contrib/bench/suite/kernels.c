/* The inner loops: bandwidth passes, pointer chains, STREAM kernels. Built
 * with -O3 and without loop-to-library-call rewriting (meson.build), so rd,
 * wr, rdwr and cp are the loops written here and only bzero calls memset. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char *bw_op_name(enum bw_op op)
{
	static const char *names[] = { "rd", "wr", "rdwr", "cp", "bzero" };

	return names[op];
}

/* The loops themselves are in simd.c, one set per vector width. */
size_t bw_pass(enum bw_op op, uint64_t *buf, uint64_t *dst, size_t size)
{
	return kernel_bw_pass(kernel_selected(), op, buf, dst, size);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int chain_order_parse(const char *text, enum chain_order *out)
{
	if (!strcmp(text, "seq"))
		*out = CHAIN_SEQ;
	else if (!strcmp(text, "random"))
		*out = CHAIN_RANDOM;
	else if (!strcmp(text, "window"))
		*out = CHAIN_WINDOW;
	else
		return -1;
	return 0;
}

/* Sattolo's shuffle of order[0..n): a random permutation that is one single
 * cycle, so a walk visits every element before it repeats. */
static void sattolo(uint32_t *order, size_t n, uint64_t *s)
{
	for (size_t k = 0; k < n; k++)
		order[k] = (uint32_t)k;
	for (size_t k = n - 1; k > 0; k--) {
		size_t j = (size_t)(xorshift(s) % k);
		uint32_t t = order[k];

		order[k] = order[j];
		order[j] = t;
	}
}

void **chain_build(void *buf, size_t size, size_t stride, enum chain_order how, unsigned seed)
{
	size_t n = size / stride;
	char *base = buf;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
	uint32_t *order;

	if (n < 2)
		n = 1;
	if (how == CHAIN_SEQ || n < 2) {
		for (size_t k = 0; k < n; k++)
			*(void **)(base + k * stride) = base + ((k + 1) % n) * stride;
		return (void **)base;
	}
	if (!(order = malloc(n * sizeof(*order))))
		bench_die("out of memory for a chain of %zu elements", n);
	if (how == CHAIN_RANDOM) {
		/* Element k points to order[k]: one random cycle over the buffer. */
		sattolo(order, n, &s);
		for (size_t k = 0; k < n; k++)
			*(void **)(base + k * stride) = base + (size_t)order[k] * stride;
	} else {
		/* CHAIN_WINDOW: a random cycle within each window of CHAIN_WINDOW_BYTES,
		 * the windows one after the other: the prefetchers cannot guess the next
		 * line, and the few pages in use at a time stay in the TLB. */
		size_t per = CHAIN_WINDOW_BYTES / stride, prev = 0;
		bool first = true;

		if (per < 2)
			per = 2;
		for (size_t w0 = 0; w0 < n; w0 += per) {
			size_t m = n - w0 < per ? n - w0 : per;

			sattolo(order, m, &s);
			/* Visit the window as the cycle 0 -> order[0] -> ... and leave it from
			 * the element that points back to 0. */
			size_t cur = 0;

			for (size_t i = 0; i < m; i++) {
				size_t next = order[cur];

				if (first) {
					first = false;
				} else {
					*(void **)(base + prev * stride) = base + (w0 + cur) * stride;
				}
				prev = w0 + cur;
				cur = next;
			}
		}
		*(void **)(base + prev * stride) = base;
	}
	free(order);
	return (void **)base;
}

void *chain_walk(void *p, uint64_t steps)
{
	void **q = p;

	while (steps >= 8) {
		q = *q; q = *q; q = *q; q = *q;
		q = *q; q = *q; q = *q; q = *q;
		steps -= 8;
	}
	while (steps--)
		q = *q;
	return q;
}

uint64_t chain_length(void *start)
{
	uint64_t n = 0;
	void **q = start;

	do {
		q = *q;
		n++;
	} while ((void *)q != start && n < (1ull << 40));
	return n;
}

const char *stream_kernel_name(enum stream_kernel k)
{
	static const char *names[] = { "copy", "scale", "add", "triad" };

	return names[k];
}

size_t stream_run(enum stream_kernel k, double *a, double *b, double *c, size_t n)
{
	return kernel_stream_run(kernel_selected(), k, a, b, c, n);
}
