/* Repeated measurements: a point is measured until the 95% interval of its
 * median is narrow enough (or a repetition or time limit is reached), and
 * reported as median, low, high and n. The interval is distribution-free:
 * order statistics x(k) and x(n+1-k) of the sorted samples, with k the
 * largest rank for which P(x(k) <= median <= x(n+1-k)) = 1 - 2 P(Bin(n, 1/2)
 * <= k-1) is at least 95% (it needs n >= 6; below that the whole range is
 * given and `level` says its lower coverage). Timings on a shared machine
 * are skewed and have outliers, so no normal-distribution interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void samples_add(struct samples *s, double v)
{
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 16;
		double *nv = realloc(s->v, (size_t)cap * sizeof(*nv));

		if (!nv)
			bench_die("out of memory");
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

void samples_free(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* P(Bin(n, 1/2) <= j) */
static double binomial_half_cdf(int n, int j)
{
	double p = 0;

	for (int i = 0; i <= j; i++)
		p += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct spread spread_of(const double *v, int n)
{
	return spread_at(v, n, 0.95);
}

struct spread spread_at(const double *v, int n, double want)
{
	struct spread sp = { .n = n, .median = NAN, .low = NAN, .high = NAN, .level = 0 };
	double *x;
	int k = 1;

	if (n <= 0)
		return sp;
	if (!(x = malloc((size_t)n * sizeof(*x))))
		bench_die("out of memory");
	memcpy(x, v, (size_t)n * sizeof(*x));
	qsort(x, (size_t)n, sizeof(*x), cmp_double);
	sp.median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	for (int r = 1; r <= (n + 1) / 2; r++)
		if (1 - 2 * binomial_half_cdf(n, r - 1) >= want)
			k = r;
	sp.low = x[k - 1];
	sp.high = x[n - k];
	sp.level = n == 1 ? 0 : 1 - 2 * binomial_half_cdf(n, k - 1);
	free(x);
	return sp;
}

bool samples_enough(const struct bench_opts *o, const struct samples *s, double spent_s)
{
	struct spread sp;

	if (s->n < o->reps)
		return false;
	if (s->n >= o->max_reps || spent_s >= o->max_time_s)
		return true;
	if (s->n < 6)
		return false;       /* no 95% interval yet */
	sp = spread_of(s->v, s->n);
	return (sp.high - sp.low) / 2 <= o->precision * fabs(sp.median);
}
