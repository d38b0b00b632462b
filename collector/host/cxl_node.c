#include "host/cxl_node.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/sysfs.h"

/* Whether endpoint decoder name (decoderP.D) belongs to memdev mem<id>:
 * the endpoint port endpointP's uport link ends in mem<id>. */
static int decoder_of_memdev(const char *sys, const char *decoder, const char *memdev)
{
	char rel[128], path[4300], target[4096];
	const char *base;
	int port, dec;
	ssize_t n;

	if (sscanf(decoder, "decoder%d.%d", &port, &dec) != 2 || port < 0)
		return 0;
	snprintf(rel, sizeof(rel), "bus/cxl/devices/endpoint%d/uport", port);
	if (sysfs_join(path, sizeof(path), sys, rel) < 0)
		return 0;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	return strcmp(base, memdev) == 0;
}

/* target_node of the dax devices of dax_region<region>; -1 when none is
 * readable or they disagree. */
static int region_node(const char *sys, int region, int *node)
{
	char pattern[4300];
	glob_t g;
	int found = -1;

	snprintf(pattern, sizeof(pattern), "%s/bus/cxl/devices/dax_region%d/dax%d.*/target_node", sys, region, region);
	if (glob(pattern, 0, NULL, &g) != 0)
		return -1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		long long v;

		if (sysfs_read_int(g.gl_pathv[i], &v) < 0 || v < 0 || v > INT_MAX)
			continue;
		if (found >= 0 && found != (int)v) {
			found = -2;
			break;
		}
		found = (int)v;
	}
	globfree(&g);
	if (found < 0)
		return -1;
	*node = found;
	return 0;
}

int cxl_pmu_memory_node(const char *sys, const char *pmu_name, int *node, char *why, size_t size)
{
	char pattern[4300], memdev[32];
	int id, index, found = -1, found_region = -1;
	glob_t g;

	if (sscanf(pmu_name, "cxl_pmu_mem%d.%d", &id, &index) != 2 || id < 0) {
		snprintf(why, size, "%s is not named cxl_pmu_mem<X>.<Y> (drivers/perf/cxl_pmu.c)", pmu_name);
		return -1;
	}
	snprintf(memdev, sizeof(memdev), "mem%d", id);
	snprintf(pattern, sizeof(pattern), "%s/bus/cxl/devices/region*/target*", sys);
	if (glob(pattern, 0, NULL, &g) != 0) {
		snprintf(why, size, "no CXL region lists a target (%s/bus/cxl/devices/region*/target*): "
			 "%s's memory is not a NUMA node", sys, memdev);
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char decoder[64];
		const char *r = strstr(g.gl_pathv[i], "/bus/cxl/devices/region");
		int region, n = -1;

		if (!r || sscanf(r, "/bus/cxl/devices/region%d/target%*d%n", &region, &n) != 1 || n < 0 ||
		    r[n] != '\0' || sysfs_read_str(g.gl_pathv[i], decoder, sizeof(decoder)) < 0 ||
		    !decoder_of_memdev(sys, decoder, memdev) || region_node(sys, region, &n) < 0)
			continue;
		if (found >= 0 && found != n) {
			snprintf(why, size, "%s backs region%d on node %d and region%d on node %d: its counts "
				 "belong to neither alone", memdev, found_region, found, region, n);
			globfree(&g);
			return -1;
		}
		found = n;
		found_region = region;
	}
	globfree(&g);
	if (found < 0) {
		snprintf(why, size, "%s is the target of no CXL region with a dax device onlined as memory "
			 "(regionZ/targetN -> endpointP/uport -> %s; dax_regionZ/daxZ.K/target_node)", memdev, memdev);
		return -1;
	}
	*node = found;
	return 0;
}
