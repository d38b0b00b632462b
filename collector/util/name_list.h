/* A list of names given as comma lists on the command line (-e, -m, a
 * recording's metrics): split once, where they are given, and passed on as
 * an array. Commas inside pmu/.../ separate an event's terms, not names
 * (cpu/event=0x3c,umask=0x00/ is one name). */
#ifndef MEMSCOPE_NAME_LIST_H
#define MEMSCOPE_NAME_LIST_H

#include <stdbool.h>

#include "util/error.h"

struct name_list {
	char **names;
	int nr;
};

/* Append the names of a comma list, each once (a name given twice is one).
 * An empty list or an empty name in it ("a,,b") is an error that says so;
 * -1 with err then, the list unchanged. */
int name_list_add_text(struct name_list *l, const char *text, struct ms_error *err);
/* Append one name unless it is there; -1 when out of memory. */
int name_list_add(struct name_list *l, const char *name);
bool name_list_contains(const struct name_list *l, const char *name);
/* Take name out; true when it was there. */
bool name_list_remove(struct name_list *l, const char *name);
/* "a,b,c" (caller frees), or NULL when out of memory; "" for an empty list. */
char *name_list_join(const struct name_list *l);
void name_list_free(struct name_list *l);

#endif
