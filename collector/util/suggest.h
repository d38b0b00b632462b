/* "Did you mean ...?": the known names closest to what the user typed. */
#ifndef MEMSCOPE_SUGGEST_H
#define MEMSCOPE_SUGGEST_H

#include <stddef.h>

#define SUGGEST_MAX 3

struct suggestions {
	const char *typed;
	char names[SUGGEST_MAX][160];
	int distance[SUGGEST_MAX];
	int nr;
};

void suggestions_init(struct suggestions *s, const char *typed);
/* Offer a candidate; kept when it is among the closest few and close enough. */
void suggestions_offer(struct suggestions *s, const char *candidate);
/* ", did you mean 'a', 'b'?" or "" when nothing is close. */
void suggestions_format(const struct suggestions *s, char *buf, size_t size);

/* Damerau-free Levenshtein distance, case-insensitive. */
int edit_distance(const char *a, const char *b);

#endif
