/* Small helpers: sizes with suffixes, medians, messages. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

volatile uint64_t bench_sink;

int parse_size(const char *text, size_t *out)
{
	char *end;
	double v;
	double mult = 1;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1024.0; end++; break;
	case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i')      /* KiB, MiB */
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	v *= mult;
	if (v > 1e15)
		return -1;
	*out = (size_t)llround(v);
	return 0;
}

void format_size(size_t size, char *buf, size_t n)
{
	static const char *units[] = { "", "K", "M", "G", "T" };
	double v = (double)size;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v == floor(v))
		snprintf(buf, n, "%.0f%s", v, units[u]);
	else
		snprintf(buf, n, "%.1f%s", v, units[u]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "memscope-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

int bench_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "memscope-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (memscope-bench --help)\n");
	return 2;
}

void log_progress(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	/* Progress overwrites one line: only where a person watches it. */
	if (o->quiet || !isatty(STDERR_FILENO))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
