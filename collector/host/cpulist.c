#include "host/cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/sysfs.h"

/* Far above any real machine; stops "0-4000000000" from allocating gigabytes. */
#define CPULIST_MAX_CPU (1 << 20)

static int parse_number(const char **p, long *value)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*value = strtol(*p, &end, 10);
	if (errno || *value >= CPULIST_MAX_CPU)
		return -1;
	*p = end;
	return 0;
}

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int append_range(struct cpulist *list, int *capacity, long first, long last)
{
	for (long cpu = first; cpu <= last; cpu++) {
		if (list->nr == *capacity) {
			int grown = *capacity ? *capacity * 2 : 16;
			int *cpus = realloc(list->cpus, (size_t)grown * sizeof(*cpus));

			if (!cpus)
				return -1;
			list->cpus = cpus;
			*capacity = grown;
		}
		list->cpus[list->nr++] = (int)cpu;
	}
	return 0;
}

int cpulist_parse(const char *text, struct cpulist *list)
{
	const char *p = text;
	int capacity = 0, kept = 0;

	list->cpus = NULL;
	list->nr = 0;
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		long first, last;

		if (parse_number(&p, &first) < 0)
			goto malformed;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_number(&p, &last) < 0 || last < first)
				goto malformed;
		}
		if (append_range(list, &capacity, first, last) < 0)
			goto fail;
		if (*p == ',') {
			p++;
			/* "1," and "1,,2" are not lists the kernel writes. */
			if (!isdigit((unsigned char)*p))
				goto malformed;
		} else if (*p && !isspace((unsigned char)*p)) {
			goto malformed;
		}
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		goto malformed;

	/* Callers rely on ascending, unique CPU numbers. */
	if (list->nr > 1) {
		qsort(list->cpus, (size_t)list->nr, sizeof(*list->cpus), compare_int);
		for (int i = 0; i < list->nr; i++)
			if (kept == 0 || list->cpus[kept - 1] != list->cpus[i])
				list->cpus[kept++] = list->cpus[i];
		list->nr = kept;
	}
	return 0;

malformed:
	errno = EINVAL;
fail:
	cpulist_free(list);
	return -1;
}

int cpulist_read(const char *path, struct cpulist *list)
{
	/* A 4096-CPU list of single CPUs is ~20 KiB of text. */
	size_t size = 64 * 1024;
	char *text = malloc(size);
	int ret;

	list->cpus = NULL;
	list->nr = 0;
	if (!text)
		return -1;
	ret = sysfs_read_str(path, text, size);
	if (ret == 0)
		ret = cpulist_parse(text, list);
	free(text);
	return ret;
}

void cpulist_format(const struct cpulist *list, char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (int i = 0; i < list->nr;) {
		int first = list->cpus[i], j = i;
		int n;

		while (j + 1 < list->nr && list->cpus[j + 1] == list->cpus[j] + 1)
			j++;
		if (j == i)
			n = snprintf(buf + used, size - used, "%s%d", i ? "," : "", first);
		else
			n = snprintf(buf + used, size - used, "%s%d-%d", i ? "," : "", first,
				     list->cpus[j]);
		if (n < 0 || (size_t)n >= size - used) {
			/* Truncated: never leave half a number behind. */
			buf[used] = '\0';
			return;
		}
		used += (size_t)n;
		i = j + 1;
	}
}

void cpulist_free(struct cpulist *list)
{
	free(list->cpus);
	list->cpus = NULL;
	list->nr = 0;
}
