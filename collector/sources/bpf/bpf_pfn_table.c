#include "sources/bpf/bpf_pfn_table.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/sysfs.h"

static int parse_suffix_number(const char *name, const char *prefix, long *number)
{
	size_t len = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, len) != 0 || !isdigit((unsigned char)name[len]))
		return -1;
	errno = 0;
	*number = strtol(name + len, &end, 10);
	return (errno || *end) ? -1 : 0;
}

int bpf_pfn_table_add(struct bpf_pfn_table *table, uint64_t start_pfn, uint64_t end_pfn, int node,
		      struct ms_error *err)
{
	int at = 0;

	if (end_pfn <= start_pfn) {
		ms_error_set(err, "pfn range [%" PRIu64 ", %" PRIu64 ") of node %d is empty", start_pfn,
			     end_pfn, node);
		return -1;
	}
	while (at < table->nr && table->ranges[at].start_pfn < start_pfn)
		at++;
	if ((at > 0 && table->ranges[at - 1].end_pfn > start_pfn) ||
	    (at < table->nr && table->ranges[at].start_pfn < end_pfn)) {
		ms_error_set(err, "pfn range [%" PRIu64 ", %" PRIu64 ") of node %d overlaps another node's",
			     start_pfn, end_pfn, node);
		return -1;
	}
	/* Merge with the neighbours when they continue it on the same node. */
	if (at > 0 && table->ranges[at - 1].end_pfn == start_pfn && table->ranges[at - 1].node == node) {
		table->ranges[at - 1].end_pfn = end_pfn;
		if (at < table->nr && table->ranges[at].start_pfn == end_pfn && table->ranges[at].node == node) {
			table->ranges[at - 1].end_pfn = table->ranges[at].end_pfn;
			memmove(&table->ranges[at], &table->ranges[at + 1],
				(size_t)(table->nr - at - 1) * sizeof(table->ranges[0]));
			table->nr--;
		}
		return 0;
	}
	if (at < table->nr && table->ranges[at].start_pfn == end_pfn && table->ranges[at].node == node) {
		table->ranges[at].start_pfn = start_pfn;
		return 0;
	}
	if (table->nr == table->capacity) {
		int capacity = table->capacity ? table->capacity * 2 : 16;
		struct bpf_pfn_range *grown = realloc(table->ranges, (size_t)capacity * sizeof(*grown));

		if (!grown) {
			ms_error_set(err, "pfn table: out of memory");
			return -1;
		}
		table->ranges = grown;
		table->capacity = capacity;
	}
	memmove(&table->ranges[at + 1], &table->ranges[at], (size_t)(table->nr - at) * sizeof(table->ranges[0]));
	table->ranges[at] = (struct bpf_pfn_range){ start_pfn, end_pfn, node };
	table->nr++;
	return 0;
}

static int load_node(struct bpf_pfn_table *table, const char *node_dir, int node, uint64_t pfns_per_block,
		     int *blocks, struct ms_error *err)
{
	DIR *dir = opendir(node_dir);
	struct dirent *entry;
	int rc = 0;

	if (!dir) {
		ms_error_set(err, "%s: %s", node_dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (entry = readdir(dir))) {
		long block;

		if (parse_suffix_number(entry->d_name, "memory", &block) < 0)
			continue;
		rc = bpf_pfn_table_add(table, (uint64_t)block * pfns_per_block, (uint64_t)(block + 1) * pfns_per_block,
				       node, err);
		if (rc < 0)
			ms_error_prefix(err, "%s/%s", node_dir, entry->d_name);
		(*blocks)++;
	}
	closedir(dir);
	return rc;
}

int bpf_pfn_table_load(struct bpf_pfn_table *table, const char *sys_root, struct ms_error *err)
{
	char path[4096], text[64];
	char *end;
	DIR *dir;
	struct dirent *entry;
	int nodes = 0, blocks = 0, rc = 0;
	long page = sysconf(_SC_PAGESIZE);

	memset(table, 0, sizeof(*table));
	sysfs_join(path, sizeof(path), sys_root, "devices/system/memory/block_size_bytes");
	if (sysfs_read_str(path, text, sizeof(text)) < 0) {
		ms_error_set(err, "%s: %s: the kernel shows no memory blocks (CONFIG_MEMORY_HOTPLUG off?), "
			     "so page allocations cannot be placed on nodes", path, strerror(errno));
		return -1;
	}
	errno = 0;
	uint64_t block_size = strtoull(text, &end, 16); /* hex, without 0x */
	if (errno || *end || block_size == 0 || block_size % (uint64_t)page) {
		ms_error_set(err, "%s: \"%s\" is not a memory block size in hex bytes", path, text);
		return -1;
	}
	sysfs_join(path, sizeof(path), sys_root, "devices/system/node");
	dir = opendir(path);
	if (!dir) {
		ms_error_set(err, "%s: %s: no NUMA node directory", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && (entry = readdir(dir))) {
		char node_dir[4096 + 300];
		long node;

		if (parse_suffix_number(entry->d_name, "node", &node) < 0)
			continue;
		snprintf(node_dir, sizeof(node_dir), "%s/%s", path, entry->d_name);
		rc = load_node(table, node_dir, (int)node, block_size / (uint64_t)page, &blocks, err);
		nodes++;
	}
	closedir(dir);
	if (rc == 0 && (nodes == 0 || blocks == 0)) {
		ms_error_set(err, "%s: %d node(s) and %d memory block(s): nothing tells which node owns a page", path,
			     nodes, blocks);
		rc = -1;
	}
	if (rc < 0)
		bpf_pfn_table_free(table);
	return rc;
}

int bpf_pfn_table_node(const struct bpf_pfn_table *table, uint64_t pfn)
{
	int lo = 0, hi = table->nr;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (pfn < table->ranges[mid].start_pfn)
			hi = mid;
		else if (pfn >= table->ranges[mid].end_pfn)
			lo = mid + 1;
		else
			return table->ranges[mid].node;
	}
	return -1;
}

void bpf_pfn_table_free(struct bpf_pfn_table *table)
{
	free(table->ranges);
	memset(table, 0, sizeof(*table));
}
