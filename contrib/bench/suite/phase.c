/* Phases: each measurement marks itself in a memscope recording (the marker
 * API, contrib/marker), and puts its results next to it as a label
 *     bench-result NAME key=value key=value ...
 * that lua/bench.lua reads. Without memscope every call does nothing. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "memscope_marker.h"

bool phase_under_memscope(void)
{
	const char *s = getenv("MEMSCOPE_CTL_SOCKET");

	return s && s[0];
}

static void marker_failed(const char *what, const char *name)
{
	static bool said;

	if (!said) {
		fprintf(stderr, "memscope-bench: memscope did not take the %s of phase '%s' (%s); "
			"the benchmark goes on without markers\n", what, name, strerror(errno));
		said = true;
	}
}

double phase_begin(const struct bench_opts *o, const char *name)
{
	(void)o;
	if (memscope_phase_begin(name) < 0)
		marker_failed("begin", name);
	return now_s();
}

bool phase_wants_more(const struct bench_opts *o, double t0)
{
	return o->phase_min_s > 0 && now_s() - t0 < o->phase_min_s;
}

void phase_end(const struct bench_opts *o, const char *name, const char *results_fmt, ...)
{
	char results[700], label[MEMSCOPE_MARKER_MAX - 16];
	va_list ap;

	(void)o;
	if (memscope_phase_end(name) < 0)
		marker_failed("end", name);
	if (!phase_under_memscope())
		return;
	va_start(ap, results_fmt);
	vsnprintf(results, sizeof(results), results_fmt, ap);
	va_end(ap);
	snprintf(label, sizeof(label), "bench-result %s %s", name, results);
	if (memscope_label(label) < 0)
		marker_failed("results", name);
}
