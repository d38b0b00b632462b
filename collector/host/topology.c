#include "host/topology.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cpulist.h"
#include "host/sysfs.h"

#define CPU_DIR "devices/system/cpu"
#define NODE_DIR "devices/system/node"

static int read_cpu_id(const char *sys_root, int cpu, const char *name, bool optional, int *value,
		       struct ms_error *err)
{
	char rel[256], path[4096];
	long long v;

	snprintf(rel, sizeof(rel), CPU_DIR "/cpu%d/topology/%s", cpu, name);
	if (sysfs_join(path, sizeof(path), sys_root, rel) < 0) {
		ms_error_set(err, "%s/%s: path too long", sys_root, rel);
		return -1;
	}
	if (sysfs_read_int(path, &v) < 0) {
		if (optional && errno == ENOENT) {
			*value = 0;
			return 0;
		}
		ms_error_set(err, "%s: cannot read (%s); expected an integer id written by the kernel "
			     "for online CPU %d", path, strerror(errno), cpu);
		return -1;
	}
	/* Arm kernels without package information write -1: one package then. */
	*value = v < 0 ? 0 : (int)v;
	return 0;
}

/* The CPU's caches as perf's --per-cache sees them: each level's instance
 * is the first CPU of its cache/indexN/shared_cpu_list (the CPU itself where
 * the list is empty or unreadable); the last level is the default. Optional:
 * a kernel that describes no cache leaves level 0. */
static void read_caches(const char *sys_root, struct cpu_place *place)
{
	place->cache_level = place->cache_id = 0;
	for (int l = 0; l <= TOPOLOGY_MAX_CACHE_LEVEL; l++)
		place->cache_first_cpu[l] = -1;
	for (int i = 0; i < 16; i++) {
		char rel[256], path[4096];
		long long level;
		struct cpulist shared;
		int first = place->cpu;

		snprintf(rel, sizeof(rel), CPU_DIR "/cpu%d/cache/index%d/level", place->cpu, i);
		if (sysfs_join(path, sizeof(path), sys_root, rel) < 0 || sysfs_read_int(path, &level) < 0)
			break;
		if (level < 1 || level > TOPOLOGY_MAX_CACHE_LEVEL)
			continue;
		snprintf(rel, sizeof(rel), CPU_DIR "/cpu%d/cache/index%d/shared_cpu_list", place->cpu, i);
		if (sysfs_join(path, sizeof(path), sys_root, rel) == 0 && cpulist_read(path, &shared) == 0) {
			if (shared.nr > 0)
				first = shared.cpus[0];   /* sorted: the lowest */
			cpulist_free(&shared);
		}
		place->cache_first_cpu[level] = first;
		if (level >= place->cache_level) {
			place->cache_level = (int)level;
			place->cache_id = first;
		}
	}
}

int topology_select_cache_level(struct topology *topo, int level, struct ms_error *err)
{
	for (int i = 0; i < topo->nr_cpus; i++) {
		struct cpu_place *place = &topo->cpus[i];

		if (level < 1 || level > TOPOLOGY_MAX_CACHE_LEVEL || place->cache_first_cpu[level] < 0) {
			char levels[64] = "";
			size_t len = 0;

			for (int l = 1; l <= TOPOLOGY_MAX_CACHE_LEVEL && len < sizeof(levels) - 8; l++)
				if (place->cache_first_cpu[l] >= 0)
					len += (size_t)snprintf(levels + len, sizeof(levels) - len, "%sL%d", len ? ", " : "", l);
			ms_error_set(err, "cpu%d has no level-%d cache in sysfs (cpu%d/cache/index*/level); it has %s",
				     place->cpu, level, place->cpu, len ? levels : "none described");
			return -1;
		}
	}
	for (int i = 0; i < topo->nr_cpus; i++) {
		topo->cpus[i].cache_level = level;
		topo->cpus[i].cache_id = topo->cpus[i].cache_first_cpu[level];
	}
	return 0;
}

static int read_cpus(struct topology *topo, const char *sys_root, struct ms_error *err)
{
	char path[4096];
	struct cpulist online;

	if (sysfs_join(path, sizeof(path), sys_root, CPU_DIR "/online") < 0 ||
	    cpulist_read(path, &online) < 0) {
		ms_error_set(err, "%s: cannot read (%s); expected a CPU list such as \"0-3,8\"", path,
			     strerror(errno));
		return -1;
	}
	if (online.nr == 0) {
		ms_error_set(err, "%s: no CPU is online; expected a CPU list such as \"0-3\"", path);
		cpulist_free(&online);
		return -1;
	}
	topo->cpus = calloc((size_t)online.nr, sizeof(*topo->cpus));
	if (!topo->cpus) {
		ms_error_set(err, "out of memory for %d CPUs", online.nr);
		cpulist_free(&online);
		return -1;
	}
	topo->nr_cpus = online.nr;
	topo->max_cpu = online.cpus[online.nr - 1] + 1;
	for (int i = 0; i < online.nr; i++) {
		struct cpu_place *place = &topo->cpus[i];

		place->cpu = online.cpus[i];
		if (read_cpu_id(sys_root, place->cpu, "core_id", false, &place->core, err) < 0 ||
		    read_cpu_id(sys_root, place->cpu, "die_id", true, &place->die, err) < 0 ||
		    read_cpu_id(sys_root, place->cpu, "cluster_id", true, &place->cluster, err) < 0 ||
		    read_cpu_id(sys_root, place->cpu, "physical_package_id", false, &place->socket,
				err) < 0) {
			cpulist_free(&online);
			return -1;
		}
		read_caches(sys_root, place);
	}
	cpulist_free(&online);
	return 0;
}

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Node ids from node/online, or from the nodeN directories when that file is
 * missing. No node directory at all means a kernel without NUMA: node 0. */
static int read_node_ids(struct topology *topo, const char *sys_root, bool *numa,
			 struct ms_error *err)
{
	char dir_path[4096], path[4096];
	struct cpulist ids;
	DIR *dir;
	struct dirent *entry;
	int capacity = 0;

	*numa = false;
	if (sysfs_join(dir_path, sizeof(dir_path), sys_root, NODE_DIR) < 0 ||
	    sysfs_join(path, sizeof(path), sys_root, NODE_DIR "/online") < 0) {
		ms_error_set(err, "%s: path too long", sys_root);
		return -1;
	}
	if (sysfs_exists(path)) {
		if (cpulist_read(path, &ids) < 0) {
			ms_error_set(err, "%s: cannot read (%s); expected a node list such as \"0-1\"",
				     path, strerror(errno));
			return -1;
		}
		if (ids.nr == 0) {
			ms_error_set(err, "%s: empty; expected at least one online node", path);
			cpulist_free(&ids);
			return -1;
		}
		topo->nodes = ids.cpus;
		topo->nr_nodes = ids.nr;
		*numa = true;
		return 0;
	}

	dir = opendir(dir_path);
	if (dir) {
		while ((entry = readdir(dir))) {
			char *end;
			long id;

			if (strncmp(entry->d_name, "node", 4) != 0)
				continue;
			id = strtol(entry->d_name + 4, &end, 10);
			if (end == entry->d_name + 4 || *end || id < 0)
				continue;
			if (topo->nr_nodes == capacity) {
				int grown = capacity ? capacity * 2 : 8;
				int *nodes = realloc(topo->nodes, (size_t)grown * sizeof(*nodes));

				if (!nodes) {
					closedir(dir);
					ms_error_set(err, "out of memory reading %s", dir_path);
					return -1;
				}
				topo->nodes = nodes;
				capacity = grown;
			}
			topo->nodes[topo->nr_nodes++] = (int)id;
		}
		closedir(dir);
	}
	if (topo->nr_nodes > 0) {
		qsort(topo->nodes, (size_t)topo->nr_nodes, sizeof(int), compare_int);
		*numa = true;
		return 0;
	}
	topo->nodes = malloc(sizeof(int));
	if (!topo->nodes) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	topo->nodes[0] = 0;
	topo->nr_nodes = 1;
	return 0;
}

static int read_node_cpus(struct topology *topo, const char *sys_root, struct ms_error *err)
{
	for (int n = 0; n < topo->nr_nodes; n++) {
		char rel[256], path[4096];
		struct cpulist cpus;

		snprintf(rel, sizeof(rel), NODE_DIR "/node%d/cpulist", topo->nodes[n]);
		if (sysfs_join(path, sizeof(path), sys_root, rel) < 0 || cpulist_read(path, &cpus) < 0) {
			ms_error_set(err, "%s: cannot read (%s); expected the CPU list of node %d "
				     "(may be empty for a memory-only node)", path, strerror(errno),
				     topo->nodes[n]);
			return -1;
		}
		for (int i = 0; i < cpus.nr; i++) {
			struct cpu_place *place = (struct cpu_place *)topology_cpu(topo, cpus.cpus[i]);

			/* Offline CPUs are listed too; they have no place. */
			if (place)
				place->node = topo->nodes[n];
		}
		cpulist_free(&cpus);
	}
	return 0;
}

static int read_distances(struct topology *topo, const char *sys_root, struct ms_error *err)
{
	int nr = topo->nr_nodes;

	for (int from = 0; from < nr; from++) {
		char rel[256], path[4096], text[4096], *p = text;

		snprintf(rel, sizeof(rel), NODE_DIR "/node%d/distance", topo->nodes[from]);
		if (sysfs_join(path, sizeof(path), sys_root, rel) < 0 ||
		    sysfs_read_str(path, text, sizeof(text)) < 0) {
			ms_error_set(err, "%s: cannot read (%s); expected %d distances, one per "
				     "online node", path, strerror(errno), nr);
			return -1;
		}
		/* The kernel writes one distance per online node, in node order. */
		for (int to = 0; to < nr; to++) {
			char *end;
			long d = strtol(p, &end, 10);

			if (end == p || d <= 0) {
				ms_error_set(err, "%s: \"%s\": expected %d positive distances separated "
					     "by spaces, one per online node", path, text, nr);
				return -1;
			}
			topo->distance[from * nr + to] = (int)d;
			p = end;
		}
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p) {
			ms_error_set(err, "%s: \"%s\": more than the %d distances expected (one per "
				     "online node)", path, text, nr);
			return -1;
		}
	}
	return 0;
}

static void count_units(struct topology *topo)
{
	int n = topo->nr_cpus;

	topo->nr_sockets = topo->nr_dies = topo->nr_cores = 0;
	for (int i = 0; i < n; i++) {
		const struct cpu_place *c = &topo->cpus[i];
		bool new_socket = true, new_die = true, new_core = true;

		for (int j = 0; j < i; j++) {
			const struct cpu_place *o = &topo->cpus[j];

			if (o->socket != c->socket)
				continue;
			new_socket = false;
			if (o->die != c->die)
				continue;
			new_die = false;
			if (o->core == c->core)
				new_core = false;
		}
		topo->nr_sockets += new_socket;
		topo->nr_dies += new_die;
		topo->nr_cores += new_core;
	}
	topo->smt = topo->nr_cores < n;
}

int topology_load(struct topology *topo, const char *sys_root, struct ms_error *err)
{
	bool numa;

	memset(topo, 0, sizeof(*topo));
	if (read_cpus(topo, sys_root, err) < 0 || read_node_ids(topo, sys_root, &numa, err) < 0)
		goto fail;
	topo->distance = calloc((size_t)topo->nr_nodes * (size_t)topo->nr_nodes, sizeof(int));
	if (!topo->distance) {
		ms_error_set(err, "out of memory for %d nodes", topo->nr_nodes);
		goto fail;
	}
	if (numa) {
		/* Every CPU starts in the first node; node cpulists then place them. */
		for (int i = 0; i < topo->nr_cpus; i++)
			topo->cpus[i].node = topo->nodes[0];
		if (read_node_cpus(topo, sys_root, err) < 0 || read_distances(topo, sys_root, err) < 0)
			goto fail;
	} else {
		topo->distance[0] = 10;  /* the kernel's LOCAL_DISTANCE */
	}
	count_units(topo);
	return 0;

fail:
	topology_free(topo);
	return -1;
}

void topology_free(struct topology *topo)
{
	free(topo->cpus);
	free(topo->nodes);
	free(topo->distance);
	memset(topo, 0, sizeof(*topo));
}

const struct cpu_place *topology_cpu(const struct topology *topo, int cpu)
{
	int lo = 0, hi = topo->nr_cpus - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (topo->cpus[mid].cpu == cpu)
			return &topo->cpus[mid];
		if (topo->cpus[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

int topology_node_index(const struct topology *topo, int node)
{
	for (int i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i] == node)
			return i;
	return -1;
}

int topology_node_memory(const char *sys_root, int node, unsigned long long *bytes, struct ms_error *err)
{
	char rel[128], path[4096], line[256];
	FILE *f;
	int found = -1;

	snprintf(rel, sizeof(rel), NODE_DIR "/node%d/meminfo", node);
	if (sysfs_join(path, sizeof(path), sys_root, rel) < 0 || !(f = fopen(path, "r")))
		return 0;
	/* "Node 0 MemTotal:       98304000 kB" */
	while (found < 0 && fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		int n;

		if (!strstr(line, " MemTotal:"))
			continue;
		if (sscanf(line, "Node %d MemTotal: %llu kB", &n, &kb) == 2 && n == node) {
			*bytes = kb * 1024;
			found = 1;
		} else {
			ms_error_set(err, "%s: '%.*s' is not 'Node %d MemTotal: N kB'", path,
				     (int)strcspn(line, "\n"), line, node);
			found = -2;
		}
	}
	fclose(f);
	if (found == -2)
		return -1;
	return found < 0 ? 0 : 1;
}
