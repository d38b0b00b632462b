/* The NUMA node whose memory a CXL memory device backs.
 *
 * A CXL memory device's PMU (drivers/perf/cxl_pmu.c) is named
 * cxl_pmu_mem<X>.<Y> after the memdev's id X (drivers/cxl/pci.c passes
 * cxlmd->id; the memdev is mem<X>, drivers/cxl/core/memdev.c). The device's
 * memory becomes a node through a region: regionZ/targetN names the
 * endpoint decoder decoderP.D (drivers/cxl/core/region.c), whose port
 * endpointP has a uport link to mem<X> (drivers/cxl/core/port.c); the
 * region's dax_regionZ holds the dax device daxZ.K that kmem onlined, and
 * its target_node is the node (drivers/dax/bus.c, Documentation/ABI/testing/
 * sysfs-bus-cxl, sysfs-bus-dax). */
#ifndef MEMSCOPE_CXL_NODE_H
#define MEMSCOPE_CXL_NODE_H

#include <stddef.h>

/* The node of the memory the PMU pmu_name's device backs, under the sysfs
 * root sys. 0 with *node; -1 with why (one sentence: which link is missing,
 * or the two nodes when the device backs regions on different nodes). */
int cxl_pmu_memory_node(const char *sys, const char *pmu_name, int *node, char *why, size_t size);

#endif
