#include "util/number_format.h"

#include <math.h>
#include <stdio.h>

void number_plain(char *buf, size_t size, double value)
{
	if (isnan(value)) {
		snprintf(buf, size, "nan");
		return;
	}
	if (isinf(value)) {
		snprintf(buf, size, value < 0 ? "-inf" : "inf");
		return;
	}
	/* -0 from rounding a tiny negative difference reads as 0. */
	if (value == 0)
		value = 0;
	/* %g drops trailing zeros, so a value with fewer digits prints as
	 * short as it is. */
	snprintf(buf, size, "%.*g", NUMBER_DIGITS, value);
}

size_t number_u64(char *buf, size_t size, uint64_t value)
{
	char digits[20];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	if (size < n + 1) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		buf[i] = digits[n - 1 - i];
	buf[n] = '\0';
	return n;
}

static void group_thousands(char *buf, size_t size, double value)
{
	char digits[400];
	double whole = floor(fabs(value) + 0.5);
	int len = snprintf(digits, sizeof(digits), "%.0f", whole);
	size_t out = 0;

	if (value < 0 && whole > 0 && out + 1 < size)
		buf[out++] = '-';
	for (int i = 0; i < len && out + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	if (size)
		buf[out < size ? out : size - 1] = '\0';
}

void number_human(char *buf, size_t size, double value, int is_integer)
{
	if (!isfinite(value)) {
		number_plain(buf, size, value);
		return;
	}
	if (!is_integer && fabs(value - round(value)) > 1e-9) {
		if (fabs(value) >= 1e6)
			snprintf(buf, size, "%.4g", value);
		else if (fabs(value) >= 1)
			snprintf(buf, size, "%.2f", value);
		else
			snprintf(buf, size, "%.4f", value);
		return;
	}
	group_thousands(buf, size, value);
}

void number_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v == floor(v))
		snprintf(buf, size, "%.0f %s", v, units[u]);
	else
		snprintf(buf, size, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}
