/* What `memscope list --metrics` and `memscope list --explain METRIC` print:
 * the catalog resolved against this host. */
#ifndef MEMSCOPE_CATALOG_LIST_H
#define MEMSCOPE_CATALOG_LIST_H

#include <stdio.h>

#include "catalog/catalog.h"
#include "util/error.h"
#include "host/host.h"

/* Every metric: available or not, through which family and formula, or why not. */
int cmd_list_metrics(const struct host *host, const struct catalog *cat, FILE *out);
/* Each metric group (-M GROUP): how many of its metrics this host has, and which. */
int cmd_list_groups(const struct host *host, const struct catalog *cat, FILE *out);
/* One metric in full: formula, raw events per instance with their encodings
 * and scopes, scale, fidelity, caveats, sources, and unused fallbacks. */
int cmd_list_explain(const struct host *host, const struct catalog *cat, const char *metric, FILE *out,
		     struct ms_error *err);

#endif
