#include "host/kernel_stats.h"
#include "util/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct kernel_stat_file files[] = {
	{ "vmstat/", "vmstat", false, false, false },
	{ "numastat/", "numastat", true, false, false },
	{ "node_vmstat/", "vmstat", true, false, false },
	{ "node_meminfo/", "meminfo", true, true, true },
};

const struct kernel_stat_file *kernel_stat_file_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (!strncmp(name, files[i].prefix, strlen(files[i].prefix)))
			return &files[i];
	return NULL;
}

const char *kernel_stat_forms(void)
{
	return "vmstat/KEY, numastat/KEY, node_vmstat/KEY or node_meminfo/KEY";
}

void kernel_stat_path(const struct kernel_stat_file *f, const struct sysfs_roots *roots, int node, char *buf,
		      size_t size)
{
	char rel[128];

	if (!f->per_node) {
		sysfs_join(buf, size, roots->proc, f->file);
		return;
	}
	snprintf(rel, sizeof(rel), "devices/system/node/node%d/%s", node, f->file);
	sysfs_join(buf, size, roots->sys, rel);
}

/* "Node 0 MemFree:         9873604 kB": the key after "Node N ", then ':'. */
static bool meminfo_value(const char *line, const char *key, size_t len, uint64_t *value)
{
	const char *p = line;

	if (strncmp(p, "Node ", 5) != 0)
		return false;
	p += 5;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p++ != ' ' || strncmp(p, key, len) != 0 || p[len] != ':')
		return false;
	*value = strtoull(p + len + 1, NULL, 10);
	return true;
}

bool kernel_stat_find(const struct kernel_stat_file *f, const char *text, const char *key, uint64_t *value)
{
	size_t len = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (f->meminfo_lines ? meminfo_value(p, key, len, value)
				     : strncmp(p, key, len) == 0 && p[len] == ' ') {
			if (!f->meminfo_lines)
				*value = strtoull(p + len + 1, NULL, 10);
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}
