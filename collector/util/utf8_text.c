#include "util/utf8_text.h"

/* Bytes of the sequence starting at s (at most left), or 0 when it is not
 * a valid one. */
static size_t sequence_length(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;           /* a continuation byte, 0xc0/0xc1 (overlong) or past 0xf4 */
	}
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t utf8_invalid_at(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t at = 0;

	while (at < len) {
		size_t n = sequence_length(s + at, len - at);

		if (!n)
			return at;
		at += n;
	}
	return len;
}

size_t utf8_cut(const char *text, size_t len, size_t max)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t at;

	if (len <= max)
		return len;
	/* Back from max over continuation bytes to where a character starts. */
	for (at = max; at > 0 && (s[at] & 0xc0) == 0x80; at--)
		;
	return at;
}
