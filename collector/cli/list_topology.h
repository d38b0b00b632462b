/* memscope list --topology: the machine as memscope sees it (nodes, CPUs,
 * distances, sockets, caches, the PMUs of each node), like numactl -H and
 * likwid-topology together. */
#ifndef MEMSCOPE_LIST_TOPOLOGY_H
#define MEMSCOPE_LIST_TOPOLOGY_H

#include <stdio.h>

#include "host/host.h"

/* 0, or 1 after a message on stderr (a sysfs file that cannot be read). */
int list_topology(const struct host *host, FILE *out);

#endif
