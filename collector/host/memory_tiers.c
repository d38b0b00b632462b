#include "host/memory_tiers.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cpulist.h"

const char *memory_kind_name(enum memory_kind kind)
{
	switch (kind) {
	case MEMORY_KIND_CXL:
		return "CXL (dax/kmem)";
	case MEMORY_KIND_DAX_KMEM:
		return "dax/kmem";
	default:
		return "-";
	}
}

/* Documentation/admin-guide/sysctl/kernel.rst: bit 0 NUMA_BALANCING_NORMAL,
 * bit 1 NUMA_BALANCING_MEMORY_TIERING. */
const char *numa_balancing_mode_name(int mode)
{
	switch (mode) {
	case 0:
		return "off";
	case 1:
		return "normal: pages move towards the node of the CPUs that use them";
	case 2:
		return "memory tiering: hot pages of slower tiers are promoted";
	case 3:
		return "normal and memory tiering";
	default:
		return "unknown mode";
	}
}

const struct node_tier *memory_tiers_node(const struct memory_tiers *tiers, int node)
{
	for (int i = 0; i < tiers->nr_nodes; i++)
		if (tiers->nodes[i].node == node)
			return &tiers->nodes[i];
	return NULL;
}

static struct node_tier *node_entry(struct memory_tiers *tiers, int node)
{
	return (struct node_tier *)memory_tiers_node(tiers, node);
}

/* memory_tierN/nodelist for every N: each listed node gets tier N. */
static int load_tier_lists(struct memory_tiers *tiers, const char *sys, struct ms_error *err)
{
	char pattern[4300];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/devices/virtual/memory_tiering/memory_tier*/nodelist", sys);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		const char *dir = strstr(path, "/memory_tiering/memory_tier") + strlen("/memory_tiering");
		struct cpulist nodes = { 0 };
		char *end;
		long tier = strtol(dir + strlen("/memory_tier"), &end, 10);

		if (*end != '/' || tier < 0 || tier > INT_MAX || cpulist_read(path, &nodes) < 0) {
			ms_error_set(err, "%s: not a memory tier's node list (%s); the kernel writes a node list such as "
				     "\"0-1\" under memory_tierN", path, *end != '/' ? "no tier number" : strerror(errno));
			globfree(&g);
			return -1;
		}
		for (int k = 0; k < nodes.nr; k++) {
			struct node_tier *n = node_entry(tiers, nodes.cpus[k]);

			if (n)
				n->tier = (int)tier;
		}
		tiers->have_tiers = true;
		cpulist_free(&nodes);
	}
	globfree(&g);
	return 0;
}

/* target_node of every dax device matching pattern: those nodes get kind. */
static void mark_dax_nodes(struct memory_tiers *tiers, const char *sys, const char *rel, enum memory_kind kind)
{
	char pattern[4300];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/%s", sys, rel);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		long long node;
		struct node_tier *n;

		if (sysfs_read_int(g.gl_pathv[i], &node) == 0 && node >= 0 && node <= INT_MAX &&
		    (n = node_entry(tiers, (int)node)) && n->kind < kind)
			n->kind = kind;
	}
	globfree(&g);
}

static int read_attribute(const char *dir, const char *name, long long *value, struct ms_error *err)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*value = -1;
	if (!sysfs_exists(path))
		return 0;
	if (sysfs_read_int(path, value) < 0 || *value < 0) {
		ms_error_set(err, "%s: not a number of %s; the kernel's HMAT attributes are whole numbers "
			     "(Documentation/admin-guide/mm/numaperf.rst)", path,
			     strstr(name, "bandwidth") ? "MB/s" : "nanoseconds");
		return -1;
	}
	return 1;
}

/* nodeN/accessC/initiators/{read,write}_{bandwidth,latency}. */
static int load_access(struct node_tier *n, const char *sys, int class, struct ms_error *err)
{
	char dir[4300];
	struct hmat_access *a = &n->access[class];
	int got = 0, r;

	snprintf(dir, sizeof(dir), "%s/devices/system/node/node%d/access%d/initiators", sys, n->node, class);
	if ((r = read_attribute(dir, "read_bandwidth", &a->read_bandwidth, err)) < 0)
		return -1;
	got += r;
	if ((r = read_attribute(dir, "write_bandwidth", &a->write_bandwidth, err)) < 0)
		return -1;
	got += r;
	if ((r = read_attribute(dir, "read_latency", &a->read_latency, err)) < 0)
		return -1;
	got += r;
	if ((r = read_attribute(dir, "write_latency", &a->write_latency, err)) < 0)
		return -1;
	got += r;
	n->has_access[class] = got > 0;
	return 0;
}

/* As mm/memory-tiers.c establish_demotion_targets() picks a node's preferred
 * targets: the nodes of the next slower tier at the smallest distance. */
static void find_demotion_targets(struct memory_tiers *tiers, const struct topology *topo)
{
	for (int i = 0; i < tiers->nr_nodes; i++) {
		struct node_tier *n = &tiers->nodes[i];
		int next = INT_MAX, best = INT_MAX;

		if (n->tier < 0)
			continue;
		for (int k = 0; k < tiers->nr_nodes; k++)
			if (tiers->nodes[k].tier > n->tier && tiers->nodes[k].tier < next)
				next = tiers->nodes[k].tier;
		if (next == INT_MAX)
			continue;
		for (int k = 0; k < tiers->nr_nodes; k++) {
			int d = topo->distance[i * topo->nr_nodes + k];

			if (tiers->nodes[k].tier != next || d > best)
				continue;
			if (d < best) {
				best = d;
				n->nr_demotion_targets = 0;
			}
			if (n->nr_demotion_targets < (int)(sizeof(n->demotion_targets) / sizeof(int)))
				n->demotion_targets[n->nr_demotion_targets++] = tiers->nodes[k].node;
		}
	}
}

static int read_flag(const char *path, int *value, struct ms_error *err)
{
	char text[32];
	char *end;
	long v;

	*value = -1;
	if (sysfs_read_str(path, text, sizeof(text)) < 0)
		return 0;
	if (!strcmp(text, "true") || !strcmp(text, "false")) {
		*value = text[0] == 't';
		return 0;
	}
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0 || v > INT_MAX) {
		ms_error_set(err, "%s: '%s' is neither a number nor true/false, which is what the kernel writes here", path,
			     text);
		return -1;
	}
	*value = (int)v;
	return 0;
}

int memory_tiers_load(struct memory_tiers *tiers, const struct sysfs_roots *roots, const struct topology *topo,
		      struct ms_error *err)
{
	char path[4300];
	struct cpulist has_cpu = { 0 };
	bool know_cpus;

	memset(tiers, 0, sizeof(*tiers));
	tiers->nodes = calloc((size_t)topo->nr_nodes + 1, sizeof(*tiers->nodes));
	if (!tiers->nodes) {
		ms_error_set(err, "memory tiers: out of memory");
		return -1;
	}
	tiers->nr_nodes = topo->nr_nodes;
	sysfs_join(path, sizeof(path), roots->sys, "devices/system/node/has_cpu");
	know_cpus = cpulist_read(path, &has_cpu) == 0;
	for (int i = 0; i < topo->nr_nodes; i++) {
		struct node_tier *n = &tiers->nodes[i];

		n->node = topo->nodes[i];
		n->tier = -1;
		if (know_cpus) {
			for (int k = 0; k < has_cpu.nr; k++)
				n->has_cpu |= has_cpu.cpus[k] == n->node;
		} else {
			for (int c = 0; c < topo->nr_cpus; c++)
				n->has_cpu |= topo->cpus[c].node == n->node;
		}
	}
	cpulist_free(&has_cpu);
	if (load_tier_lists(tiers, roots->sys, err) < 0)
		goto fail;
	mark_dax_nodes(tiers, roots->sys, "bus/dax/drivers/kmem/dax*/target_node", MEMORY_KIND_DAX_KMEM);
	/* A CXL region's dax devices are children of its dax_regionN on the cxl bus
	 * (drivers/cxl/core/region.c, drivers/dax/cxl.c). */
	mark_dax_nodes(tiers, roots->sys, "bus/cxl/devices/dax_region*/dax*/target_node", MEMORY_KIND_CXL);
	for (int i = 0; i < tiers->nr_nodes; i++)
		for (int class = 0; class < 2; class++)
			if (load_access(&tiers->nodes[i], roots->sys, class, err) < 0)
				goto fail;
	find_demotion_targets(tiers, topo);
	sysfs_join(path, sizeof(path), roots->proc, "sys/kernel/numa_balancing");
	if (read_flag(path, &tiers->numa_balancing, err) < 0)
		goto fail;
	sysfs_join(path, sizeof(path), roots->sys, "kernel/mm/numa/demotion_enabled");
	if (read_flag(path, &tiers->demotion_enabled, err) < 0)
		goto fail;
	return 0;
fail:
	memory_tiers_free(tiers);
	return -1;
}

void memory_tiers_free(struct memory_tiers *tiers)
{
	free(tiers->nodes);
	tiers->nodes = NULL;
	tiers->nr_nodes = 0;
}
