/* Metric groups (metrics.yaml `groups:`): a group is every metric that lists
 * it. -m and -M take group names beside metric names (perf's -M TopdownL1). */
#ifndef MEMSCOPE_CATALOG_GROUPS_H
#define MEMSCOPE_CATALOG_GROUPS_H

#include <stdbool.h>

#include "catalog/catalog.h"
#include "util/error.h"
#include "util/name_list.h"

/* True when some metric lists group (exact case, as perf's names). */
bool catalog_is_group(const struct catalog *cat, const char *group);
/* The groups in the order the catalog first names them, each once (caller
 * frees the list, not its names: they are the catalog's). */
int catalog_group_names(const struct catalog *cat, const char ***names, int *nr);
/* Each name of in as out names it: a metric stays itself, a group becomes its
 * metrics in catalog order; a name in out once. A name that is neither is an
 * error naming the close metrics and every group (unknown_ok: kept as it is,
 * for the caller to report). -1 with err for an unknown name, -2 out of memory. */
int catalog_expand_groups(const struct catalog *cat, const struct name_list *in, bool unknown_ok,
			  struct name_list *out, struct ms_error *err);

#endif
