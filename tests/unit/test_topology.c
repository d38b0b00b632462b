/* Topology from sysfs: every fixture machine, this host's live /sys, and the
 * error messages for broken trees. */
#include <ctype.h>
#include <unistd.h>

#include "check.h"
#include "fixture_tree.h"
#include "host/host.h"
#include "host/topology.h"
#include "metrics/aggregate.h"

struct expected {
	const char *machine;
	int cpus, sockets, dies, cores, nodes;
	int remote_distance;  /* distance[0][nr_nodes - 1] */
};

static const struct expected machines[] = {
	{ "kunpeng920-2s", 32, 2, 2, 32, 4, 22 },
	{ "hip09-2s", 32, 2, 2, 32, 4, 22 },
	{ "thunderx2-2s", 16, 2, 2, 16, 2, 20 },
	{ "neoverse-n1-cmn", 8, 1, 1, 8, 1, 10 },
	{ "westmere-ep-2s", 16, 2, 2, 8, 2, 20 },
	{ "skylake-sp-2s", 16, 2, 2, 8, 2, 21 },
	{ "epyc-zen3-2s", 32, 2, 2, 16, 2, 32 },
	{ "epyc-zen4-2s", 32, 2, 2, 16, 2, 32 },
	{ "opteron6300-4s", 32, 4, 8, 32, 8, 22 },
};

static int dist(const struct topology *t, int from, int to)
{
	return t->distance[from * t->nr_nodes + to];
}

static void check_place(const struct topology *t, int cpu, int socket, int die, int core, int node)
{
	const struct cpu_place *p = topology_cpu(t, cpu);

	if (!p) {
		CHECK_FAIL("cpu %d is not online", cpu);
		return;
	}
	CHECK_EQ_INT(p->cpu, cpu);
	CHECK_EQ_INT(p->socket, socket);
	CHECK_EQ_INT(p->die, die);
	CHECK_EQ_INT(p->core, core);
	CHECK_EQ_INT(p->node, node);
}

static void test_fixture_counts(void)
{
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		const struct expected *e = &machines[i];
		struct topology t;
		struct ms_error err = { "" };

		if (topology_load(&t, fixture_sys(e->machine), &err) < 0) {
			CHECK_FAIL("%s: %s", e->machine, err.text);
			continue;
		}
		fprintf(stderr, "%s: %d cpus, %d sockets, %d dies, %d cores, %d nodes\n", e->machine,
			t.nr_cpus, t.nr_sockets, t.nr_dies, t.nr_cores, t.nr_nodes);
		CHECK_EQ_INT(t.nr_cpus, e->cpus);
		CHECK_EQ_INT(t.max_cpu, e->cpus);
		CHECK_EQ_INT(t.nr_sockets, e->sockets);
		CHECK_EQ_INT(t.nr_dies, e->dies);
		CHECK_EQ_INT(t.nr_cores, e->cores);
		CHECK_EQ_INT(t.nr_nodes, e->nodes);
		CHECK_EQ_INT(dist(&t, 0, t.nr_nodes - 1), e->remote_distance);
		for (int a = 0; a < t.nr_nodes; a++) {
			CHECK_EQ_INT(t.nodes[a], a);
			CHECK_EQ_INT(dist(&t, a, a), 10);
			for (int b = 0; b < t.nr_nodes; b++)
				CHECK_EQ_INT(dist(&t, a, b), dist(&t, b, a));
		}
		/* Every CPU sits in a node that exists. */
		for (int c = 0; c < t.nr_cpus; c++)
			CHECK(topology_node_index(&t, t.cpus[c].node) >= 0);
		topology_free(&t);
	}
}

static void test_fixture_places(void)
{
	struct topology t;
	struct ms_error err = { "" };

	/* Kunpeng 920: no die_id on arm64 (die 0); a node per SCCL of 8 CPUs. */
	if (topology_load(&t, fixture_sys("kunpeng920-2s"), &err) == 0) {
		check_place(&t, 9, 0, 0, 9, 1);
		check_place(&t, 31, 1, 0, 15, 3);
		CHECK_EQ_INT(dist(&t, 0, 1), 12);
		CHECK_EQ_INT(dist(&t, 1, 3), 24);
		CHECK(topology_cpu(&t, 32) == NULL);
		CHECK(topology_cpu(&t, -1) == NULL);
		CHECK_EQ_INT(topology_node_index(&t, 3), 3);
		CHECK_EQ_INT(topology_node_index(&t, 4), -1);
		topology_free(&t);
	} else {
		CHECK_FAIL("%s", err.text);
	}

	/* Westmere-EP: even CPUs on socket 0, odd on socket 1, SMT siblings +8. */
	if (topology_load(&t, fixture_sys("westmere-ep-2s"), &err) == 0) {
		check_place(&t, 3, 1, 0, 1, 1);
		check_place(&t, 11, 1, 0, 1, 1);
		check_place(&t, 14, 0, 0, 3, 0);
		topology_free(&t);
	} else {
		CHECK_FAIL("%s", err.text);
	}

	/* EPYC: node0 = "0-7,16-23"; CPU 20 is the sibling of CPU 4. */
	if (topology_load(&t, fixture_sys("epyc-zen3-2s"), &err) == 0) {
		check_place(&t, 4, 0, 0, 4, 0);
		check_place(&t, 20, 0, 0, 4, 0);
		check_place(&t, 24, 1, 0, 0, 1);
		topology_free(&t);
	} else {
		CHECK_FAIL("%s", err.text);
	}

	/* Opteron 6300: two dies per package, each its own node. */
	if (topology_load(&t, fixture_sys("opteron6300-4s"), &err) == 0) {
		check_place(&t, 13, 1, 1, 5, 3);
		CHECK_EQ_INT(dist(&t, 0, 1), 16);
		CHECK_EQ_INT(dist(&t, 0, 2), 16);
		CHECK_EQ_INT(dist(&t, 0, 3), 22);
		topology_free(&t);
	} else {
		CHECK_FAIL("%s", err.text);
	}
}

/* perf's --per-cache rows on Skylake-SP (sockets 0-3,8-11 and 4-7,12-15, an
 * L2 per core shared by the SMT pair N, N+8): a cache instance is named by
 * the first CPU of its shared_cpu_list, as perf's (socket 1's L3 has id 1
 * in sysfs and is ID4 in perf's S1-D0-L3-ID4). */
static const char *cache_row(const struct topology *t, int cpu)
{
	static char label[64];
	const struct cpu_place *p = topology_cpu(t, cpu);

	label[0] = '\0';
	if (p)
		aggr_key_label(AGGR_CACHE, aggr_place_key(AGGR_CACHE, p), label, sizeof(label));
	return label;
}

static int distinct_cache_rows(const struct topology *t)
{
	int keys[64], n = 0;

	for (int i = 0; i < t->nr_cpus && n < 64; i++) {
		int key = aggr_place_key(AGGR_CACHE, &t->cpus[i]), seen = 0;

		for (int k = 0; k < n; k++)
			seen |= keys[k] == key;
		if (!seen)
			keys[n++] = key;
	}
	return n;
}

static void test_cache_instances(void)
{
	struct topology t;
	struct ms_error err = { "" };

	if (topology_load(&t, fixture_sys("skylake-sp-2s"), &err) < 0) {
		CHECK_FAIL("%s", err.text);
		return;
	}
	/* The last level by default: one L3 per socket. */
	CHECK_EQ_STR(cache_row(&t, 0), "S0-D0-L3-ID0");
	CHECK_EQ_STR(cache_row(&t, 11), "S0-D0-L3-ID0");
	CHECK_EQ_STR(cache_row(&t, 12), "S1-D0-L3-ID4");
	CHECK_EQ_INT(distinct_cache_rows(&t), 2);
	/* --per-cache=L2: a row per core, the SMT sibling with it. */
	CHECK_EQ_INT(topology_select_cache_level(&t, 2, &err), 0);
	CHECK_EQ_STR(cache_row(&t, 1), "S0-D0-L2-ID1");
	CHECK_EQ_STR(cache_row(&t, 9), "S0-D0-L2-ID1");
	CHECK_EQ_STR(cache_row(&t, 12), "S1-D0-L2-ID4");
	CHECK_EQ_INT(distinct_cache_rows(&t), 8);
	/* L1 (data and instruction, the same CPUs): as L2 here. */
	CHECK_EQ_INT(topology_select_cache_level(&t, 1, &err), 0);
	CHECK_EQ_STR(cache_row(&t, 13), "S1-D0-L1-ID5");
	/* A level the machine does not have is named with the ones it has. */
	CHECK_EQ_INT(topology_select_cache_level(&t, 4, &err), -1);
	CHECK_EQ_STR(err.text, "cpu0 has no level-4 cache in sysfs (cpu0/cache/index*/level); it has L1, L2, L3");
	topology_free(&t);
}

/* This host, read through the same code: cross-checked against sysconf and
 * the processor lines of /proc/cpuinfo. */
static void test_live(void)
{
	struct topology t;
	struct ms_error err = { "" };
	FILE *f;
	char line[512];
	int processors = 0;

	if (topology_load(&t, "/sys", &err) < 0) {
		CHECK_FAIL("live /sys: %s", err.text);
		return;
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "processor", 9) == 0 && isspace((unsigned char)line[9]))
			processors++;
	if (f)
		fclose(f);
	fprintf(stderr, "live: %d cpus, %d sockets, %d cores, %d nodes (first node %d), "
		"distance[0][0] %d\n", t.nr_cpus, t.nr_sockets, t.nr_cores, t.nr_nodes, t.nodes[0],
		t.distance[0]);
	CHECK_EQ_INT(t.nr_cpus, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK_EQ_INT(t.nr_cpus, processors);
	CHECK(t.nr_sockets >= 1 && t.nr_sockets <= t.nr_cpus);
	CHECK(t.nr_cores >= t.nr_sockets && t.nr_cores <= t.nr_cpus);
	CHECK(t.nr_nodes >= 1);
	CHECK_EQ_INT(t.distance[0], 10);
	CHECK(topology_cpu(&t, 0) != NULL);
	for (int c = 0; c < t.nr_cpus; c++)
		CHECK(topology_node_index(&t, t.cpus[c].node) >= 0);
	topology_free(&t);
}

/* Trees the kernel writes on smaller machines, and broken ones. */
static void test_synthetic(void)
{
	char root[256];
	struct topology t;
	struct ms_error err = { "" };

	/* No node directory (CONFIG_NUMA off) and no die_id: all in node 0. */
	tree_new(root, sizeof(root));
	tree_write(root, "devices/system/cpu/online", "0-1\n");
	for (int c = 0; c < 2; c++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/core_id", c);
		tree_write(root, rel, c ? "1\n" : "0\n");
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id", c);
		tree_write(root, rel, "-1\n");
	}
	if (topology_load(&t, root, &err) == 0) {
		CHECK_EQ_INT(t.nr_nodes, 1);
		CHECK_EQ_INT(t.nodes[0], 0);
		CHECK_EQ_INT(t.distance[0], 10);
		CHECK_EQ_INT(t.nr_sockets, 1);
		CHECK_EQ_INT(t.nr_dies, 1);
		CHECK_EQ_INT(t.nr_cores, 2);
		check_place(&t, 1, 0, 0, 1, 0);
		topology_free(&t);
	} else {
		CHECK_FAIL("no node dir: %s", err.text);
	}

	/* Node directories but no node/online: ids come from the directory names. */
	tree_write(root, "devices/system/node/node1/cpulist", "1\n");
	tree_write(root, "devices/system/node/node1/distance", "20 10\n");
	tree_write(root, "devices/system/node/node0/cpulist", "0\n");
	tree_write(root, "devices/system/node/node0/distance", "10 20\n");
	if (topology_load(&t, root, &err) == 0) {
		CHECK_EQ_INT(t.nr_nodes, 2);
		CHECK_EQ_INT(t.nodes[1], 1);
		check_place(&t, 1, 0, 0, 1, 1);
		CHECK_EQ_INT(dist(&t, 1, 0), 20);
		topology_free(&t);
	} else {
		CHECK_FAIL("node dirs: %s", err.text);
	}

	/* A distance row with too few entries names the file and the count. */
	tree_write(root, "devices/system/node/node1/distance", "10\n");
	CHECK_EQ_INT(topology_load(&t, root, &err), -1);
	CHECK_CONTAINS(err.text, "node1/distance: \"10\": expected 2 positive distances");
	tree_write(root, "devices/system/node/node1/distance", "20 10 30\n");
	CHECK_EQ_INT(topology_load(&t, root, &err), -1);
	CHECK_CONTAINS(err.text, "more than the 2 distances expected");
	tree_write(root, "devices/system/node/node1/distance", "20 10\n");

	/* A missing core_id names the file and what was expected. */
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu1/topology/core_id", root);
		remove(path);
		CHECK_EQ_INT(topology_load(&t, root, &err), -1);
		CHECK_CONTAINS(err.text, "cpu1/topology/core_id: cannot read (No such file or "
			       "directory); expected an integer id");
		tree_write(root, "devices/system/cpu/cpu1/topology/core_id", "one\n");
		CHECK_EQ_INT(topology_load(&t, root, &err), -1);
		CHECK_CONTAINS(err.text, "cpu1/topology/core_id: cannot read");
	}

	/* A malformed online list. */
	tree_write(root, "devices/system/cpu/online", "0-\n");
	CHECK_EQ_INT(topology_load(&t, root, &err), -1);
	CHECK_CONTAINS(err.text, "devices/system/cpu/online");
	CHECK_CONTAINS(err.text, "expected a CPU list");
	tree_remove(root);

	/* No sysfs at all. */
	CHECK_EQ_INT(topology_load(&t, "/nonexistent-sysfs-root", &err), -1);
	CHECK_CONTAINS(err.text, "/nonexistent-sysfs-root/devices/system/cpu/online: cannot read");
}

static void test_host_load(void)
{
	struct host host;
	struct ms_error err = { "" };

	setenv("MEMSCOPE_SYSFS_ROOT", fixture_sys("skylake-sp-2s"), 1);
	if (host_load(&host, &err) == 0) {
		CHECK(host.roots.is_fixture);
		CHECK_EQ_INT(host.topo.nr_sockets, 2);
		CHECK(pmu_find(&host.pmus, "uncore_imc_5") != NULL);
		host_free(&host);
	} else {
		CHECK_FAIL("host_load: %s", err.text);
	}
	setenv("MEMSCOPE_SYSFS_ROOT", "/nonexistent-sysfs-root", 1);
	CHECK_EQ_INT(host_load(&host, &err), -1);
	CHECK_CONTAINS(err.text, "/nonexistent-sysfs-root/devices/system/cpu/online");
	unsetenv("MEMSCOPE_SYSFS_ROOT");
	if (host_load(&host, &err) == 0) {
		CHECK(!host.roots.is_fixture);
		CHECK_EQ_STR(host.roots.sys, "/sys");
		CHECK(pmu_find(&host.pmus, "software") != NULL);
		host_free(&host);
	} else {
		CHECK_FAIL("live host_load: %s", err.text);
	}
}

int main(void)
{
	test_fixture_counts();
	test_fixture_places();
	test_cache_instances();
	test_live();
	test_synthetic();
	test_host_load();
	return check_summary("test_topology");
}
