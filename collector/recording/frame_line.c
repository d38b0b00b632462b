#include "recording/frame_line.h"

#include <string.h>

/* A JSON integer as jansson takes it (json_int_t is int64_t): digits, no
 * leading zero, at most INT64_MAX, followed by something that ends a number
 * here (',' or ']'; a '.', 'e' or 'E' makes it a fraction: not ours). Up to
 * 18 digits cannot overflow; a 19th is checked. */
static inline bool scan_u64(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp, *start = p, *fast_end = end - p > 18 ? p + 18 : end;
	uint64_t v = 0;

	while (p < fast_end && (unsigned)(*p - '0') < 10)
		v = v * 10 + (unsigned)(*p++ - '0');
	if (p == start || (*start == '0' && p - start > 1))
		return false;
	if (p < end && (unsigned)(*p - '0') < 10) {
		unsigned digit = (unsigned)(*p++ - '0');

		if (v > ((uint64_t)INT64_MAX - digit) / 10 || (p < end && (unsigned)(*p - '0') < 10))
			return false;
		v = v * 10 + digit;
	}
	if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
		return false;
	*out = v;
	*pp = p;
	return true;
}

static bool expect(const char **pp, const char *end, const char *text, size_t n)
{
	if ((size_t)(end - *pp) < n || memcmp(*pp, text, n))
		return false;
	*pp += n;
	return true;
}

#define EXPECT(p, end, lit) expect(&(p), (end), (lit), sizeof(lit) - 1)

bool frame_line_parse(const char *line, size_t length, const struct series_table *table, int nr,
		      bool shorter, struct frame *frame, uint64_t *t, uint64_t *d)
{
	const char *p = line, *end = line + length;
	int i = 0;
	/* The table's entries are large: look at their state only when a series
	 * has ended (reading it for every value was a fifth of the scan). */
	bool any_retired = table->nr_retired > 0;

	if (!EXPECT(p, end, "{\"t\":") || !scan_u64(&p, end, t) || !EXPECT(p, end, ",\"d\":") ||
	    !scan_u64(&p, end, d) || !EXPECT(p, end, ",\"v\":["))
		return false;
	if (p < end && *p == ']') {
		p++;
	} else {
		for (;;) {
			struct sample *s;

			if (i >= nr)
				return false;
			s = &frame->samples[i];
			if (p < end && *p == 'n' && EXPECT(p, end, "null")) {
				memset(s, 0, sizeof(*s));
			} else {
				if ((any_retired && table->series[i].state == SERIES_RETIRED) || !scan_u64(&p, end, &s->value))
					return false;
				s->enabled_ns = s->running_ns = *d;
				s->valid = true;
			}
			i++;
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == ']') {
				p++;
				break;
			}
			return false;
		}
	}
	/* Version 5 leaves trailing nulls out: the places after the last value hold none. */
	if (i != nr && !shorter)
		return false;
	for (; i < nr; i++)
		memset(&frame->samples[i], 0, sizeof(frame->samples[i]));
	if (EXPECT(p, end, ",\"m\":[")) {
		for (;;) {
			uint64_t index, enabled, running;

			if (!EXPECT(p, end, "[") || !scan_u64(&p, end, &index) || !EXPECT(p, end, ",") ||
			    !scan_u64(&p, end, &enabled) || !EXPECT(p, end, ",") || !scan_u64(&p, end, &running) ||
			    !EXPECT(p, end, "]"))
				return false;
			if (index >= (uint64_t)nr || running > enabled || !frame->samples[index].valid)
				return false;
			frame->samples[index].enabled_ns = enabled;
			frame->samples[index].running_ns = running;
			if (EXPECT(p, end, ","))
				continue;
			if (EXPECT(p, end, "]"))
				break;
			return false;
		}
	}
	return EXPECT(p, end, "}") && p == end;
}
