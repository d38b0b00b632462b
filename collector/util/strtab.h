/* A string table: each distinct string stored once, so that strings can be
 * compared by pointer and live as long as the table (symbol names, source
 * lines and data object names of many samples). */
#ifndef MEMSCOPE_STRTAB_H
#define MEMSCOPE_STRTAB_H

#include <stddef.h>

struct strtab {
	char **slots;       /* open addressing; NULL: free */
	size_t cap;         /* a power of two */
	size_t nr;
};

void strtab_init(struct strtab *t);
/* The table's copy of s (added when new), or NULL when out of memory. */
const char *strtab_intern(struct strtab *t, const char *s);
void strtab_free(struct strtab *t);

#endif
