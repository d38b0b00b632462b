#include "host/page_node.h"
#include "util/array.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int page_nodes_of_process(pid_t pid, unsigned long n, const uint64_t *addrs, int *nodes)
{
	void **pages = malloc(sizeof(*pages) * (n ? n : 1));
	long ret;

	if (!pages)
		return -ENOMEM;
	for (unsigned long i = 0; i < n; i++)
		pages[i] = (void *)(uintptr_t)(addrs[i] & ~(uint64_t)4095);
	/* nodes == NULL: query mode, nothing moves; status gets each page's node. */
	ret = syscall(SYS_move_pages, pid, n, pages, NULL, nodes, 0);
	free(pages);
	return ret < 0 ? -errno : 0;
}

struct vma_node {
	uint64_t start, end;
	int node;                  /* the one node holding all its pages, or -1 */
};

/* "7f12...000 bind:1 anon=1024 dirty=1024 N1=1024 kernelpagesize_kB=4" */
static int single_node(const char *line)
{
	int node = -1;

	for (const char *p = strstr(line, " N"); p; p = strstr(p + 1, " N")) {
		int n;
		long count;

		if (sscanf(p, " N%d=%ld", &n, &count) != 2)
			continue;
		if (node >= 0 && node != n)
			return -1;
		node = n;
	}
	return node;
}

int page_nodes_from_numa_maps(const char *proc_root, pid_t pid, unsigned long n, const uint64_t *addrs, int *nodes)
{
	char path[4200], line[4400], nline[4400];
	struct vma_node *vmas = NULL;
	int nr = 0, cap = 0, ret = 0;
	FILE *maps, *numa;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "%s/%d/numa_maps", proc_root, (int)pid);
	numa = fopen(path, "re");
	if (!maps || !numa) {
		ret = -errno;
		goto out;
	}
	/* One numa_maps line per maps line, both in address order. */
	while (fgets(line, sizeof(line), maps) && fgets(nline, sizeof(nline), numa)) {
		unsigned long long start, end, nstart;

		if (sscanf(line, "%llx-%llx", &start, &end) != 2 || sscanf(nline, "%llx", &nstart) != 1 ||
		    nstart != start)
			continue;
		if (nr == cap) {
			struct vma_node *grown;

			cap = cap ? cap * 2 : 64;
			if (!(grown = realloc(vmas, sizeof(*vmas) * (size_t)cap))) {
				ret = -ENOMEM;
				goto out;
			}
			vmas = grown;
		}
		vmas[nr++] = (struct vma_node){ start, end, single_node(nline) };
	}
	for (unsigned long i = 0; i < n; i++) {
		nodes[i] = -1;
		for (int v = 0; v < nr; v++)
			if (addrs[i] >= vmas[v].start && addrs[i] < vmas[v].end) {
				nodes[i] = vmas[v].node;
				break;
			}
	}
out:
	free(vmas);
	if (maps)
		fclose(maps);
	if (numa)
		fclose(numa);
	return ret;
}

static int range_order(const void *a, const void *b)
{
	const struct phys_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_range(struct phys_node_map *map, int *cap, uint64_t start, uint64_t end, int node)
{
	if (array_grow_int(&map->ranges, cap, map->nr + 1, sizeof(*map->ranges)) < 0)
		return -1;
	map->ranges[map->nr++] = (struct phys_range){ start, end, node };
	return 0;
}

int phys_node_map_load(struct phys_node_map *map, const struct sysfs_roots *roots, struct ms_error *err)
{
	char path[4200], text[64];
	long long block_size = 0;
	DIR *nodes;
	struct dirent *nd;
	int cap = 0;

	memset(map, 0, sizeof(*map));
	sysfs_join(path, sizeof(path), roots->sys, "devices/system/memory/block_size_bytes");
	/* The file is hexadecimal without a 0x. */
	if (sysfs_read_str(path, text, sizeof(text)) < 0)
		return 0;
	block_size = strtoll(text, NULL, 16);
	if (block_size <= 0)
		return 0;
	sysfs_join(path, sizeof(path), roots->sys, "devices/system/node");
	if (!(nodes = opendir(path)))
		return 0;
	while ((nd = readdir(nodes))) {
		char node_path[4300];
		DIR *blocks;
		struct dirent *bd;
		int node;

		if (sscanf(nd->d_name, "node%d", &node) != 1)
			continue;
		snprintf(node_path, sizeof(node_path), "%s/%s", path, nd->d_name);
		if (!(blocks = opendir(node_path)))
			continue;
		while ((bd = readdir(blocks))) {
			unsigned long long block;
			char *end;

			if (strncmp(bd->d_name, "memory", 6) != 0)
				continue;
			block = strtoull(bd->d_name + 6, &end, 10);
			if (end == bd->d_name + 6 || *end)
				continue;
			if (add_range(map, &cap, block * (uint64_t)block_size, (block + 1) * (uint64_t)block_size,
				      node) < 0) {
				closedir(blocks);
				closedir(nodes);
				phys_node_map_free(map);
				ms_error_set(err, "out of memory");
				return -1;
			}
		}
		closedir(blocks);
	}
	closedir(nodes);
	qsort(map->ranges, (size_t)map->nr, sizeof(*map->ranges), range_order);
	/* Adjacent blocks of one node become one range. */
	{
		int out = 0;

		for (int i = 0; i < map->nr; i++) {
			if (out && map->ranges[out - 1].end == map->ranges[i].start &&
			    map->ranges[out - 1].node == map->ranges[i].node)
				map->ranges[out - 1].end = map->ranges[i].end;
			else
				map->ranges[out++] = map->ranges[i];
		}
		map->nr = out;
	}
	return 0;
}

int phys_node_map_node(const struct phys_node_map *map, uint64_t phys)
{
	int lo = 0, hi = map->nr - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (phys < map->ranges[mid].start)
			hi = mid - 1;
		else if (phys >= map->ranges[mid].end)
			lo = mid + 1;
		else
			return map->ranges[mid].node;
	}
	return -1;
}

void phys_node_map_free(struct phys_node_map *map)
{
	free(map->ranges);
	map->ranges = NULL;
	map->nr = 0;
}
