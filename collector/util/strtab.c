#include "util/strtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void strtab_init(struct strtab *t)
{
	t->slots = NULL;
	t->cap = 0;
	t->nr = 0;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int grow(struct strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = hash(t->slots[i]) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *strtab_intern(struct strtab *t, const char *s)
{
	size_t i;

	if ((t->nr + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	for (i = hash(s) & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->slots[i], s))
			return t->slots[i];
	if (!(t->slots[i] = strdup(s)))
		return NULL;
	t->nr++;
	return t->slots[i];
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	strtab_init(t);
}
