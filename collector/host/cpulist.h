/* Kernel CPU lists ("0-3,8,10-11") as sorted arrays of CPU numbers. */
#ifndef MEMSCOPE_CPULIST_H
#define MEMSCOPE_CPULIST_H

#include <stddef.h>

struct cpulist {
	int *cpus;
	int nr;
};

/* Parse text; an empty string gives an empty list. -1 on malformed text. */
int cpulist_parse(const char *text, struct cpulist *list);
/* Read and parse a sysfs file such as .../cpumask or .../cpulist. */
int cpulist_read(const char *path, struct cpulist *list);
/* Format back to the kernel's compact form. */
void cpulist_format(const struct cpulist *list, char *buf, size_t size);
void cpulist_free(struct cpulist *list);

#endif
