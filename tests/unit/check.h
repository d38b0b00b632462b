/* Minimal assertions for memscope's C unit tests: each failure prints
 * file:line and both values, and the test program's exit code is the number
 * of failures (meson test reads it). */
#ifndef MEMSCOPE_CHECK_H
#define MEMSCOPE_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK_FAIL(...) do { \
	fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	check_failures++; \
} while (0)

#define CHECK(cond) do { check_count++; \
	if (!(cond)) CHECK_FAIL("CHECK(%s) failed", #cond); } while (0)

#define CHECK_EQ_INT(a, b) do { long long a_ = (a), b_ = (b); check_count++; \
	if (a_ != b_) CHECK_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_); } while (0)

#define CHECK_EQ_U64(a, b) do { uint64_t a_ = (a), b_ = (b); check_count++; \
	if (a_ != b_) CHECK_FAIL("%s == %s: 0x%" PRIx64 " != 0x%" PRIx64, #a, #b, a_, b_); } while (0)

#define CHECK_EQ_STR(a, b) do { const char *a_ = (a), *b_ = (b); check_count++; \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) \
		CHECK_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
} while (0)

#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); check_count++; \
	if (!(fabs(a_ - b_) <= (tol))) CHECK_FAIL("%s ~ %s: %.9g vs %.9g (tol %g)", #a, #b, a_, b_, (double)(tol)); \
} while (0)

/* Message contains a substring. */
#define CHECK_CONTAINS(hay, needle) do { const char *h_ = (hay), *n_ = (needle); check_count++; \
	if (!h_ || !strstr(h_, n_)) CHECK_FAIL("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); \
} while (0)

static inline int check_summary(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
