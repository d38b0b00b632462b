/* Topology from sysfs: online CPUs, their nodes, and the caches of the first
 * CPU. Nothing about the machine is assumed; MEMSCOPE_SYSFS_ROOT points at
 * another machine's tree (as it does for memscope). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char *topo_sysfs_root(void)
{
	const char *root = getenv("MEMSCOPE_SYSFS_ROOT");

	return root && root[0] ? root : "/sys";
}

int topo_read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* "0-3,8,10-11" -> list; returns the count or -1. */
static int parse_cpulist(const char *text, int *out, int max)
{
	int n = 0;
	const char *p = text;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		for (long i = a; i <= b; i++) {
			if (n >= max)
				return -1;
			out[n++] = (int)i;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return n;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int topo_load(struct bench_topo *t, char *err, size_t errsize)
{
	char path[512], text[4096];
	const char *root = topo_sysfs_root();
	DIR *d;
	struct dirent *e;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < BENCH_MAX_CPUS; i++)
		t->cpu_node[i] = -1;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", root);
	if (topo_read_text(path, text, sizeof(text)) < 0 ||
	    (t->nr_cpus = parse_cpulist(text, t->cpus, BENCH_MAX_CPUS)) <= 0) {
		snprintf(err, errsize, "%s: cannot read the online CPUs (%s)", path,
			 errno ? strerror(errno) : "bad list");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/devices/system/node", root);
	if ((d = opendir(path))) {
		while ((e = readdir(d))) {
			int cpus[BENCH_MAX_CPUS], n, node;
			char cpath[600];

			if (strncmp(e->d_name, "node", 4) || !isdigit((unsigned char)e->d_name[4]))
				continue;
			node = atoi(e->d_name + 4);
			if (t->nr_nodes >= BENCH_MAX_NODES)
				break;
			t->nodes[t->nr_nodes++] = node;
			snprintf(cpath, sizeof(cpath), "%s/%s/cpulist", path, e->d_name);
			if (topo_read_text(cpath, text, sizeof(text)) == 0 && (n = parse_cpulist(text, cpus, BENCH_MAX_CPUS)) > 0)
				for (int i = 0; i < n; i++)
					if (cpus[i] < BENCH_MAX_CPUS)
						t->cpu_node[cpus[i]] = node;
		}
		closedir(d);
		qsort(t->nodes, (size_t)t->nr_nodes, sizeof(int), cmp_int);
	}
	if (!t->nr_nodes) {
		/* A kernel without NUMA: one node holding every CPU. */
		t->nodes[t->nr_nodes++] = 0;
		for (int i = 0; i < t->nr_cpus; i++)
			t->cpu_node[t->cpus[i]] = 0;
	}
	for (int idx = 0; t->nr_caches < BENCH_MAX_CACHES; idx++) {
		struct bench_cache *c = &t->caches[t->nr_caches];
		char base[600], f[700];

		snprintf(base, sizeof(base), "%s/devices/system/cpu/cpu%d/cache/index%d", root, t->cpus[0], idx);
		snprintf(f, sizeof(f), "%s/level", base);
		if (topo_read_text(f, text, sizeof(text)) < 0)
			break;
		c->level = atoi(text);
		snprintf(f, sizeof(f), "%s/type", base);
		if (topo_read_text(f, c->type, sizeof(c->type)) < 0 || !strcmp(c->type, "Instruction"))
			continue;
		snprintf(f, sizeof(f), "%s/size", base);
		if (topo_read_text(f, text, sizeof(text)) < 0 || parse_size(text, &c->size) < 0 || !c->size)
			continue;
		snprintf(f, sizeof(f), "%s/coherency_line_size", base);
		c->line = topo_read_text(f, text, sizeof(text)) == 0 ? (size_t)atol(text) : BENCH_LINE;
		snprintf(f, sizeof(f), "%s/shared_cpu_list", base);
		if (topo_read_text(f, c->shared_cpus, sizeof(c->shared_cpus)) < 0)
			c->shared_cpus[0] = '\0';
		t->nr_caches++;
	}
	return 0;
}

size_t topo_cache_size(const struct bench_topo *t, int level)
{
	for (int i = 0; i < t->nr_caches; i++)
		if (t->caches[i].level == level)
			return t->caches[i].size;
	return 0;
}

size_t topo_last_level_size(const struct bench_topo *t)
{
	size_t size = 0;
	int level = 0;

	for (int i = 0; i < t->nr_caches; i++)
		if (t->caches[i].level > level) {
			level = t->caches[i].level;
			size = t->caches[i].size;
		}
	return size;
}

int topo_node_cpus(const struct bench_topo *t, int node, int *cpus, int max)
{
	int n = 0;

	for (int i = 0; i < t->nr_cpus && n < max; i++)
		if (t->cpu_node[t->cpus[i]] == node)
			cpus[n++] = t->cpus[i];
	return n;
}

bool topo_has_cpu(const struct bench_topo *t, int cpu)
{
	for (int i = 0; i < t->nr_cpus; i++)
		if (t->cpus[i] == cpu)
			return true;
	return false;
}

bool topo_has_node(const struct bench_topo *t, int node)
{
	for (int i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i] == node)
			return true;
	return false;
}
