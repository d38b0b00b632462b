#include "util/suggest.h"
#include "util/array.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[256];

	/* Names longer than this are never close to anything typed by hand. */
	if (lb >= ARRAY_SIZE(row) || la >= 256)
		return 1 << 20;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int best = diag + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

void suggestions_init(struct suggestions *s, const char *typed)
{
	memset(s, 0, sizeof(*s));
	s->typed = typed;
}

void suggestions_offer(struct suggestions *s, const char *candidate)
{
	int d = edit_distance(s->typed, candidate);
	int limit = (int)strlen(s->typed) / 3 + 2;
	int pos;

	/* A candidate that contains what was typed is a good hint too. */
	if (strlen(s->typed) >= 3 && strstr(candidate, s->typed) && d > 1)
		d = limit;
	if (d > limit)
		return;
	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->names[i], candidate))
			return;
	pos = s->nr < SUGGEST_MAX ? s->nr : SUGGEST_MAX;
	while (pos > 0 && s->distance[pos - 1] > d)
		pos--;
	if (pos >= SUGGEST_MAX)
		return;
	for (int i = (s->nr < SUGGEST_MAX ? s->nr : SUGGEST_MAX - 1); i > pos; i--) {
		memcpy(s->names[i], s->names[i - 1], sizeof(s->names[i]));
		s->distance[i] = s->distance[i - 1];
	}
	snprintf(s->names[pos], sizeof(s->names[pos]), "%s", candidate);
	s->distance[pos] = d;
	if (s->nr < SUGGEST_MAX)
		s->nr++;
}

void suggestions_format(const struct suggestions *s, char *buf, size_t size)
{
	size_t len;

	buf[0] = '\0';
	if (s->nr == 0)
		return;
	snprintf(buf, size, "; did you mean ");
	/* Names much farther than the closest are no help next to it
	 * (proc.falts: proc.faults, not page-faults). */
	for (int i = 0; i < s->nr; i++) {
		bool last = i == s->nr - 1 || s->distance[i + 1] > s->distance[0] + 1;

		len = strlen(buf);
		snprintf(buf + len, size - len, "%s'%s'", i ? (last ? " or " : ", ") : "", s->names[i]);
		if (last)
			break;
	}
	len = strlen(buf);
	snprintf(buf + len, size - len, "?");
}
