/* DAMON: memory-block trees into node ranges, regions into bytes per node
 * (values computed by hand), tracepoint records into whole aggregations, and
 * what the sysfs interface says about the kdamonds. */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture_tree.h"
#include "host/page_node.h"
#include "metrics/aggregate.h"
#include "sampler/frame.h"
#include "host/damon_admin.h"
#include "host/damon_monitor.h"
#include "metrics/damon_hot_share.h"
#include "sources/damon/damon_follow.h"
#include "sources/damon/damon_pages.h"
#include "sources/damon/damon_regions.h"

#define MiB (1024ull * 1024ull)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct damon_classes classes = {
	.sample_us = 500000, .aggr_us = 5000000, .addr_unit = 1,
	.hot_pct = DAMON_DEFAULT_HOT_PCT, .cold_age_us = DAMON_DEFAULT_COLD_AGE_US,
};

/* 128 MiB blocks: node0 blocks 0-1, a hole at block 2, node1 blocks 3-4 (no
 * CPUs of its own), node2 a range hot-plugged far above (block 8). */
static void make_blocks(char *root, size_t size)
{
	tree_new(root, size);
	tree_write(root, "sys/devices/system/memory/block_size_bytes", "8000000\n");
	tree_write(root, "sys/devices/system/node/node0/memory0/online", "1\n");
	tree_write(root, "sys/devices/system/node/node0/memory1/online", "1\n");
	tree_write(root, "sys/devices/system/node/node0/cpulist", "0-1\n");
	tree_write(root, "sys/devices/system/node/node1/memory3/online", "1\n");
	tree_write(root, "sys/devices/system/node/node1/memory4/online", "1\n");
	tree_write(root, "sys/devices/system/node/node1/cpulist", "\n");
	tree_write(root, "sys/devices/system/node/node2/memory8/online", "1\n");
	tree_write(root, "sys/devices/system/node/node2/cpulist", "\n");
	/* node3: CPUs and no memory of its own (no blocks, no range) */
	tree_write(root, "sys/devices/system/node/node3/cpulist", "2-3\n");
}

static struct damon_region region(uint64_t start, uint64_t end, uint32_t nr_accesses, uint32_t age, uint32_t nr)
{
	return (struct damon_region){ .target_id = 0, .nr_regions = nr, .start = start, .end = end,
				      .nr_accesses = nr_accesses, .age = age };
}

static void test_node_map(struct phys_node_map *map, struct sysfs_roots *roots)
{
	struct ms_error err = { { 0 } };

	CHECK_EQ_INT(phys_node_map_load(map, roots, &err), 0);
	CHECK_EQ_INT(map->nr, 3);
	CHECK_EQ_U64(map->ranges[0].start, 0);
	CHECK_EQ_U64(map->ranges[0].end, 256 * MiB);
	CHECK_EQ_U64(map->ranges[1].start, 384 * MiB);
	CHECK_EQ_U64(map->ranges[1].end, 640 * MiB);
	CHECK_EQ_INT(map->ranges[2].node, 2);
	CHECK_EQ_U64(map->ranges[2].start, 1024 * MiB);
	CHECK_EQ_INT(phys_node_map_node(map, 300 * MiB), -1);   /* the hole */
	for (int i = 0; i < map->nr; i++)
		CHECK(map->ranges[i].node != 3);                 /* CPUs only: no range */
}

static void test_split(const struct phys_node_map *map)
{
	int nodes[] = { 0, 1, 2, 3 };
	struct damon_tally t;
	struct damon_region r;

	CHECK_EQ_INT(damon_tally_init(&t, 4, nodes), 0);
	/* 100 MiB .. 1100 MiB, accessed in 5 of 10 samples (50%: hot, bucket
	 * 50-74%): node0 156 MiB, hole 128, node1 256, gap 384, node2 76. */
	r = region(100 * MiB, 1100 * MiB, 5, 3, 3);
	damon_tally_add(&t, map, &classes, &r);
	CHECK_EQ_U64(t.accessed[0], 156 * MiB);
	CHECK_EQ_U64(t.accessed[1], 256 * MiB);
	CHECK_EQ_U64(t.accessed[2], 76 * MiB);
	CHECK_EQ_U64(t.hot[0], 156 * MiB);
	CHECK_EQ_U64(t.hot[2], 76 * MiB);
	CHECK_EQ_U64(t.unplaced, 512 * MiB);
	CHECK_EQ_U64(t.rate[1 * DAMON_RATE_BUCKETS + 3], 256 * MiB);
	CHECK_EQ_U64(t.cold[0] + t.cold[1] + t.cold[2], 0);
	/* Idle for 12 aggregations of 5 s = 60 s: cold; for 11: neither. */
	r = region(0, 10 * MiB, 0, 12, 3);
	damon_tally_add(&t, map, &classes, &r);
	r = region(10 * MiB, 30 * MiB, 0, 11, 3);
	damon_tally_add(&t, map, &classes, &r);
	CHECK_EQ_U64(t.cold[0], 10 * MiB);
	CHECK_EQ_U64(t.accessed[0], 156 * MiB);
	CHECK_EQ_U64(t.rate[0 * DAMON_RATE_BUCKETS + 0], 30 * MiB);
	/* 4 of 10 samples: accessed, not hot (40% < 50%), bucket 25-49%. */
	r = region(400 * MiB, 401 * MiB, 4, 0, 3);
	damon_tally_add(&t, map, &classes, &r);
	CHECK_EQ_U64(t.accessed[1], 257 * MiB);
	CHECK_EQ_U64(t.hot[1], 256 * MiB);
	CHECK_EQ_U64(t.rate[1 * DAMON_RATE_BUCKETS + 2], 1 * MiB);
	/* Beyond the last block. */
	r = region(2000 * MiB, 2001 * MiB, 10, 0, 3);
	damon_tally_add(&t, map, &classes, &r);
	CHECK_EQ_U64(t.unplaced, 513 * MiB);
	CHECK_EQ_U64(t.regions, 5);
	CHECK_EQ_U64(t.accessed[3] + t.cold[3] + t.rate[3 * DAMON_RATE_BUCKETS], 0);   /* the CPU-only node */
	damon_tally_free(&t);
}

/* The nodes a recorded region names: those whose blocks it overlaps. */
static void test_region_nodes(const struct phys_node_map *map)
{
	int nodes[] = { 0, 1, 2, 3 };
	struct phys_node_map empty = { 0 };

	CHECK_EQ_U64(damon_region_nodes(map, 4, nodes, 100 * MiB, 1100 * MiB), 0x7);   /* 0, 1 and 2 */
	CHECK_EQ_U64(damon_region_nodes(map, 4, nodes, 0, 256 * MiB), 0x1);            /* end is exclusive */
	CHECK_EQ_U64(damon_region_nodes(map, 4, nodes, 255 * MiB, 385 * MiB), 0x3);    /* across the hole */
	CHECK_EQ_U64(damon_region_nodes(map, 4, nodes, 300 * MiB, 384 * MiB), 0);      /* in the hole only */
	CHECK_EQ_U64(damon_region_nodes(map, 4, nodes, 2000 * MiB, 2001 * MiB), 0);    /* above the last block */
	/* No blocks: one node holds everything, several cannot be told apart. */
	CHECK_EQ_U64(damon_region_nodes(&empty, 1, nodes + 2, 0, 1), 0x4);
	CHECK_EQ_U64(damon_region_nodes(&empty, 2, nodes, 0, 1), 0);
}

static void test_addr_unit_and_no_blocks(void)
{
	struct phys_node_map empty = { 0 };
	struct damon_classes c = classes;
	int one[] = { 0 }, two[] = { 0, 1 };
	struct damon_tally t;
	struct damon_region r = region(1 * MiB, 2 * MiB, 10, 0, 1);

	/* addr_unit 4: addresses are in 4-byte units. */
	c.addr_unit = 4;
	CHECK_EQ_INT(damon_tally_init(&t, 1, one), 0);
	damon_tally_add(&t, &empty, &c, &r);
	CHECK_EQ_U64(t.accessed[0], 4 * MiB);   /* no blocks, one node: all of it is node 0's */
	CHECK_EQ_U64(t.rate[4], 4 * MiB);
	damon_tally_free(&t);
	CHECK_EQ_INT(damon_tally_init(&t, 2, two), 0);
	damon_tally_add(&t, &empty, &c, &r);
	CHECK_EQ_U64(t.accessed[0] + t.accessed[1], 0);   /* two nodes, no blocks: not placed */
	CHECK_EQ_U64(t.unplaced, 4 * MiB);
	damon_tally_free(&t);
}

static void test_stream(const struct phys_node_map *map)
{
	int nodes[] = { 0, 1, 2 };
	struct damon_stream s;
	struct damon_region r;

	CHECK_EQ_INT(damon_stream_init(&s, 3, nodes), 0);
	r = region(0, 64 * MiB, 10, 1, 2);
	CHECK(!damon_stream_add(&s, map, &classes, &r));
	CHECK(!s.have_latest);
	CHECK(!damon_stream_fresh(&s, 1, 5000000));   /* nothing complete yet */
	r = region(384 * MiB, 400 * MiB, 0, 20, 2);
	CHECK(damon_stream_add(&s, map, &classes, &r));
	CHECK_EQ_U64(s.latest.accessed[0], 64 * MiB);
	CHECK_EQ_U64(s.latest.cold[1], 16 * MiB);
	CHECK_EQ_U64(s.aggregations, 1);
	/* The next aggregation loses records half way: the last complete one stays. */
	r = region(0, 8 * MiB, 10, 2, 2);
	CHECK(!damon_stream_add(&s, map, &classes, &r));
	damon_stream_lost(&s);
	CHECK_EQ_U64(s.dropped, 1);
	r = region(0, 32 * MiB, 10, 2, 1);   /* a new aggregation with one region */
	CHECK(damon_stream_add(&s, map, &classes, &r));
	CHECK_EQ_U64(s.latest.accessed[0], 32 * MiB);
	CHECK_EQ_U64(s.latest.cold[1], 0);
	CHECK_EQ_U64(s.aggregations, 2);
	/* A record of another region count cuts the one being built. */
	r = region(0, 8 * MiB, 10, 2, 3);
	CHECK(!damon_stream_add(&s, map, &classes, &r));
	r = region(0, 16 * MiB, 10, 2, 1);
	CHECK(damon_stream_add(&s, map, &classes, &r));
	CHECK_EQ_U64(s.dropped, 2);
	CHECK_EQ_U64(s.latest.accessed[0], 16 * MiB);
	/* Aggregations every 5 s: fresh while they come, stale 15 s after the last. */
	CHECK(damon_stream_fresh(&s, 100 * 1000000000ull, 5000000));
	CHECK(damon_stream_fresh(&s, 115 * 1000000000ull, 5000000));
	CHECK(!damon_stream_fresh(&s, 116 * 1000000000ull, 5000000));
	r = region(0, 4 * MiB, 10, 2, 1);
	CHECK(damon_stream_add(&s, map, &classes, &r));
	CHECK(damon_stream_fresh(&s, 120 * 1000000000ull, 5000000));
	damon_stream_free(&s);
}

/* The format of kernel 6.18's damon:damon_aggregated, and one record. */
static const char format_618[] =
	"name: damon_aggregated\nID: 767\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned long target_id;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_regions;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long start;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long end;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_accesses;\toffset:40;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int age;\toffset:44;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"target_id=%lu nr_regions=%u %lu-%lu: %u %u\", REC->target_id\n";

static void test_record(void)
{
	struct damon_record_layout l;
	unsigned char raw[52] = { 0 };
	uint64_t target = 0, start = 0x100000000ull, end = 0x140000000ull;
	uint32_t nr = 17, acc = 7, age = 3;
	struct damon_region r;

	CHECK_EQ_INT(damon_record_layout_parse(&l, format_618), 0);
	CHECK_EQ_INT(l.start, 24);
	CHECK_EQ_INT(l.age, 44);
	memcpy(raw + 8, &target, 8);
	memcpy(raw + 16, &nr, 4);
	memcpy(raw + 24, &start, 8);
	memcpy(raw + 32, &end, 8);
	memcpy(raw + 40, &acc, 4);
	memcpy(raw + 44, &age, 4);
	CHECK(damon_record_decode(&l, raw, sizeof(raw), &r));
	CHECK_EQ_U64(r.start, start);
	CHECK_EQ_U64(r.end, end);
	CHECK_EQ_INT(r.nr_regions, 17);
	CHECK_EQ_INT(r.nr_accesses, 7);
	CHECK_EQ_INT(r.age, 3);
	CHECK(!damon_record_decode(&l, raw, 40, &r));   /* cut short */
	CHECK_EQ_INT(damon_record_layout_parse(&l, "format:\n\tfield:unsigned long start;\toffset:24;\tsize:8;\n"), -1);
}

static void test_monitor(void)
{
	char root[4096];
	struct sysfs_roots roots = { 0 };
	struct damon_monitor mon;
	struct ms_error err = { { 0 } };
	enum damon_absent reason = 0;
	const char *kd = "sys/kernel/mm/damon/admin/kdamonds";
	char path[512];

	tree_new(root, sizeof(root));
	snprintf(roots.sys, sizeof(roots.sys), "%s/sys", root);
	tree_write(root, "sys/kernel/mm/transparent_hugepage/enabled", "always\n");
	CHECK_EQ_INT(damon_monitor_find(&roots, &mon, &reason, &err), -1);
	CHECK_EQ_INT(reason, DAMON_NO_KERNEL_SUPPORT);
	CHECK_CONTAINS(err.text, "CONFIG_DAMON_SYSFS");
	CHECK_CONTAINS(err.text, "linux-image-6.12");
	/* Two kdamonds, the second on. */
	snprintf(path, sizeof(path), "%s/nr_kdamonds", kd);
	tree_write(root, path, "2\n");
	snprintf(path, sizeof(path), "%s/0/state", kd);
	tree_write(root, path, "off\n");
	snprintf(path, sizeof(path), "%s/1/state", kd);
	tree_write(root, path, "off\n");
	CHECK_EQ_INT(damon_monitor_find(&roots, &mon, &reason, &err), -1);
	CHECK_EQ_INT(reason, DAMON_NONE_RUNNING);
	CHECK_CONTAINS(err.text, "no kdamond runs (2 configured");
	tree_write(root, path, "on\n");
	snprintf(path, sizeof(path), "%s/1/pid", kd);
	tree_write(root, path, "4242\n");
	snprintf(path, sizeof(path), "%s/1/contexts/0/operations", kd);
	tree_write(root, path, "paddr\n");
	snprintf(path, sizeof(path), "%s/1/contexts/0/monitoring_attrs/intervals/sample_us", kd);
	tree_write(root, path, "500000\n");
	snprintf(path, sizeof(path), "%s/1/contexts/0/monitoring_attrs/intervals/aggr_us", kd);
	tree_write(root, path, "5000000\n");
	snprintf(path, sizeof(path), "%s/1/contexts/0/monitoring_attrs/intervals/update_us", kd);
	tree_write(root, path, "60000000\n");
	CHECK_EQ_INT(damon_monitor_find(&roots, &mon, &reason, &err), 0);
	CHECK_EQ_INT(mon.index, 1);
	CHECK_EQ_INT(mon.pid, 4242);
	CHECK_EQ_STR(mon.ops, "paddr");
	CHECK_EQ_U64(mon.aggr_us, 5000000);
	CHECK_EQ_U64(mon.addr_unit, 1);
	{
		char text[256];

		damon_monitor_describe(&mon, text, sizeof(text));
		CHECK_EQ_STR(text, "kdamond 1 (pid 4242, paddr, sample 500 ms, aggregation 5 s, update 60 s)");
	}
	/* An aggregation shorter than a sample makes no rate. */
	snprintf(path, sizeof(path), "%s/1/contexts/0/monitoring_attrs/intervals/aggr_us", kd);
	tree_write(root, path, "1000\n");
	CHECK_EQ_INT(damon_monitor_find(&roots, &mon, &reason, &err), -1);
	CHECK_EQ_INT(reason, DAMON_BAD_STATE);
	CHECK_CONTAINS(err.text, "make no access rate");
	tree_remove(root);
}


#define KD "sys/kernel/mm/damon/admin/kdamonds"

/* The files of kdamond 0 as the kernel makes them once nr_kdamonds is 1
 * (regular files here: the writes land in them). */
static void make_kdamond_tree(const char *root, const char *nr)
{
	static const char *const files[] = {
		"0/state", "0/contexts/nr_contexts", "0/contexts/0/operations",
		"0/contexts/0/monitoring_attrs/intervals/sample_us", "0/contexts/0/monitoring_attrs/intervals/aggr_us",
		"0/contexts/0/monitoring_attrs/intervals/update_us", "0/contexts/0/monitoring_attrs/nr_regions/min",
		"0/contexts/0/monitoring_attrs/nr_regions/max", "0/contexts/0/targets/nr_targets",
		"0/contexts/0/targets/0/pid_target", "0/contexts/0/targets/1/pid_target",
		"0/contexts/0/targets/2/pid_target",
	};
	char path[512];

	snprintf(path, sizeof(path), "%s/nr_kdamonds", KD);
	tree_write(root, path, nr);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", KD, files[i]);
		tree_write(root, path, "");
	}
	snprintf(path, sizeof(path), "%s/0/pid", KD);
	tree_write(root, path, "4242\n");
}

static const char *kd_file(const char *root, const char *rel)
{
	static char text[256];
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", root, KD, rel);
	text[0] = '\0';
	if (!(f = fopen(path, "r")))
		return "(missing)";
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	return text;
}

static bool exists_at(const char *dir, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A pid no process has now: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static bool wait_until_off(const char *root, const char *run_dir)
{
	for (int i = 0; i < 100; i++) {
		if (!strcmp(kd_file(root, "0/state"), "off") && !strcmp(kd_file(root, "nr_kdamonds"), "0") &&
		    !exists_at(run_dir, DAMON_ADMIN_MARKER))
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
	}
	return false;
}

/* Active mode's writes, in a tree of regular files: what memscope writes to
 * start its kdamond, what it restores, the marker, the watchdog after
 * memscope's death, the next start's clean-up, and what it refuses. */
static void test_admin(void)
{
	char root[4096], run_dir[4200], path[4200], said[512];
	struct sysfs_roots roots = { 0 };
	struct damon_admin a;
	struct ms_error err = { { 0 } };
	pid_t pids[] = { 1234, 5678 };
	struct damon_admin_setup setup = {
		.ops = "vaddr", .pids = pids, .nr_pids = 2, .sample_us = 50000, .aggr_us = 1000000,
		.update_us = 1000000, .min_regions = 10, .max_regions = 1000,
	};
	FILE *f;

	if (geteuid() != 0) {
		printf("test_admin: skipped: starting a kdamond is root's\n");
		return;
	}
	tree_new(root, sizeof(root));
	snprintf(roots.sys, sizeof(roots.sys), "%s/sys", root);
	snprintf(run_dir, sizeof(run_dir), "%s/run", root);
	setup.run_dir = run_dir;
	make_kdamond_tree(root, "0\n");

	/* Start: every setting, then state on; the marker names memscope,
	 * the watchdog and the kdamond's thread. */
	CHECK_EQ_INT(damon_admin_start(&roots, &setup, &a, &err), 0);
	CHECK_EQ_STR(kd_file(root, "nr_kdamonds"), "1");
	CHECK_EQ_STR(kd_file(root, "0/contexts/nr_contexts"), "1");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/operations"), "vaddr");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/monitoring_attrs/intervals/sample_us"), "50000");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/monitoring_attrs/intervals/aggr_us"), "1000000");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/monitoring_attrs/nr_regions/min"), "10");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/monitoring_attrs/nr_regions/max"), "1000");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/nr_targets"), "2");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/0/pid_target"), "1234");
	CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/1/pid_target"), "5678");
	CHECK_EQ_STR(kd_file(root, "0/state"), "on");
	CHECK_EQ_INT(a.kdamond_pid, 4242);
	CHECK(a.watchdog > 0);
	snprintf(path, sizeof(path), "%s/%s", run_dir, DAMON_ADMIN_MARKER);
	if ((f = fopen(path, "r"))) {
		char text[128] = "", want[128];
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		text[n] = '\0';
		fclose(f);
		snprintf(want, sizeof(want), "memscope %d watchdog %d kdamond 0 pid 4242\n", (int)getpid(),
			 (int)a.watchdog);
		CHECK_EQ_STR(text, want);
	} else {
		CHECK_FAIL("no marker %s", path);
	}
	/* A command's children as targets: nr_targets, every pid_target (the
	 * kernel rebuilds the target directories), then commit to the running
	 * kdamond's state file. */
	{
		pid_t three[] = { 1234, 7001, 7002 }, two[] = { 7001, 7002 };

		CHECK_EQ_INT(damon_admin_set_targets(&a, three, 3, &err), 0);
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/nr_targets"), "3");
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/0/pid_target"), "1234");
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/1/pid_target"), "7001");
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/2/pid_target"), "7002");
		CHECK_EQ_STR(kd_file(root, "0/state"), "commit");
		/* The command exited: its children move down, written again. */
		tree_write(root, KD "/0/state", "on\n");
		CHECK_EQ_INT(damon_admin_set_targets(&a, two, 2, &err), 0);
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/nr_targets"), "2");
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/0/pid_target"), "7001");
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/1/pid_target"), "7002");
		CHECK_EQ_STR(kd_file(root, "0/state"), "commit");
		/* A target directory the kernel did not make (here: missing):
		 * refused, naming the file, and no commit. */
		tree_write(root, KD "/0/state", "on\n");
		{
			pid_t four[] = { 1, 2, 3, 4 };

			CHECK_EQ_INT(damon_admin_set_targets(&a, four, 4, &err), -1);
			CHECK_CONTAINS(err.text, "kdamonds/0/contexts/0/targets/3/pid_target");
			CHECK_EQ_STR(kd_file(root, "0/state"), "on\n");
		}
		CHECK_EQ_INT(damon_admin_set_targets(&a, two, 0, &err), -1);
		CHECK_CONTAINS(err.text, "no running kdamond");
	}
	/* The same writes from the follower's thread: one list at a time, its
	 * answer the list the kernel took. */
	{
		struct damon_follow follower;
		pid_t three[] = { 1234, 7001, 7002 }, got[DAMON_FOLLOW_MAX_TARGETS];
		int nr = 0, rc = 0;

		tree_write(root, KD "/0/state", "on\n");
		CHECK_EQ_INT(damon_follow_start(&follower, &a, &err), 0);
		CHECK(damon_follow_ask(&follower, three, 3));
		for (int i = 0; i < 200 && (rc = damon_follow_answer(&follower, got, &nr, &err)) == 0; i++)
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		CHECK_EQ_INT(rc, 1);
		CHECK_EQ_INT(nr, 3);
		CHECK_EQ_INT(got[2], 7002);
		CHECK_EQ_STR(kd_file(root, "0/contexts/0/targets/2/pid_target"), "7002");
		CHECK_EQ_STR(kd_file(root, "0/state"), "commit");
		CHECK_EQ_INT(damon_follow_answer(&follower, got, &nr, &err), 0);   /* told once */
		damon_follow_stop(&follower);
		damon_follow_stop(&follower);   /* twice: nothing */
	}

	/* Stop: state off, nr_kdamonds 0, the marker gone, the watchdog ended
	 * (reaped: waitpid finds no child left). */
	damon_admin_stop(&a);
	CHECK_EQ_STR(kd_file(root, "0/state"), "off");
	CHECK_EQ_STR(kd_file(root, "nr_kdamonds"), "0");
	CHECK(!exists_at(run_dir, DAMON_ADMIN_MARKER));
	CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), -1);

	/* memscope dies without its end: its watchdog turns the kdamond off. */
	make_kdamond_tree(root, "0\n");
	{
		pid_t child = fork();

		if (child == 0) {
			struct damon_admin b;

			_exit(damon_admin_start(&roots, &setup, &b, &err) == 0 ? 0 : 1);
		}
		waitpid(child, NULL, 0);
	}
	CHECK(wait_until_off(root, run_dir));

	/* Killed together with its watchdog: the next start finds the marker,
	 * checks the kdamond's thread and removes it. */
	make_kdamond_tree(root, "1\n");
	tree_write(root, KD "/0/state", "on\n");
	snprintf(path, sizeof(path), "memscope %d watchdog %d kdamond 0 pid 4242\n", (int)dead_pid(), (int)dead_pid());
	tree_write(root, "run/" DAMON_ADMIN_MARKER, path);
	chmod(run_dir, 0700);
	snprintf(path, sizeof(path), "%s/%s", run_dir, DAMON_ADMIN_MARKER);
	chmod(path, 0600);
	/* ... not while the memscope it names runs */
	{
		char live[128];

		snprintf(live, sizeof(live), "memscope %d watchdog 0 kdamond 0 pid 4242\n", (int)getppid());
		tree_write(root, "run/" DAMON_ADMIN_MARKER ".live", live);
	}
	CHECK_EQ_INT(damon_admin_stale(run_dir, said, sizeof(said)), 1);
	CHECK_CONTAINS(said, "kdamond 0 (pid 4242) was started by memscope pid ");
	CHECK_EQ_STR(kd_file(root, "0/state"), "on\n");   /* doctor's question changes nothing */
	CHECK_EQ_INT(damon_admin_reap(&roots, run_dir, said, sizeof(said)), 1);
	CHECK_CONTAINS(said, "removed kdamond 0 (pid 4242) that memscope pid ");
	CHECK_EQ_STR(kd_file(root, "0/state"), "off");
	CHECK_EQ_STR(kd_file(root, "nr_kdamonds"), "0");
	CHECK(!exists_at(run_dir, DAMON_ADMIN_MARKER));
	snprintf(path, sizeof(path), "%s/%s.live", run_dir, DAMON_ADMIN_MARKER);
	snprintf(said, sizeof(said), "%s/%s", run_dir, DAMON_ADMIN_MARKER);
	CHECK_EQ_INT(rename(path, said), 0);
	make_kdamond_tree(root, "1\n");
	tree_write(root, KD "/0/state", "on\n");
	CHECK_EQ_INT(damon_admin_stale(run_dir, said, sizeof(said)), 0);
	CHECK_EQ_INT(damon_admin_reap(&roots, run_dir, said, sizeof(said)), 0);
	CHECK_EQ_STR(kd_file(root, "0/state"), "on\n");
	CHECK_EQ_STR(kd_file(root, "nr_kdamonds"), "1\n");
	CHECK(exists_at(run_dir, DAMON_ADMIN_MARKER));

	/* Configured kdamonds (nr_kdamonds 1): adding one would lose their
	 * settings, so nothing is written. */
	CHECK_EQ_INT(damon_admin_start(&roots, &setup, &a, &err), -1);
	CHECK_CONTAINS(err.text, "rebuilds every kdamond directory");
	CHECK_EQ_STR(kd_file(root, "nr_kdamonds"), "1\n");
	CHECK_EQ_STR(kd_file(root, "0/state"), "on\n");

	/* A link where a setting's file should be: refused, and nr_kdamonds
	 * back to 0. */
	make_kdamond_tree(root, "0\n");
	tree_write(root, "elsewhere", "untouched\n");
	snprintf(path, sizeof(path), "%s/%s/0/contexts/0/operations", root, KD);
	unlink(path);
	snprintf(said, sizeof(said), "%s/elsewhere", root);
	CHECK_EQ_INT(symlink(said, path), 0);
	CHECK_EQ_INT(damon_admin_start(&roots, &setup, &a, &err), -1);
	CHECK_CONTAINS(err.text, "contexts/0/operations");
	CHECK_EQ_STR(kd_file(root, "nr_kdamonds"), "0");
	{
		FILE *e = fopen(said, "r");
		char text[32] = "";

		if (e) {
			text[fread(text, 1, sizeof(text) - 1, e)] = '\0';
			fclose(e);
		}
		CHECK_EQ_STR(text, "untouched\n");
	}
	tree_remove(root);
}

/* A command's children from /proc/PID/task/TID/children (of every thread,
 * each once, up to the cap) and which of them still have an address space. */
static void test_children(void)
{
	char root[4096], proc[4200];
	pid_t out[4] = { 200 };
	int nr = 1;

	tree_new(root, sizeof(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	tree_write(root, "proc/100/task/100/children", "200 201 ");
	tree_write(root, "proc/100/task/101/children", "202 201 ");
	tree_write(root, "proc/100/task/102/children", "");
	tree_write(root, "proc/200/stat", "200 (python3) S 100 200 ...\n");
	tree_write(root, "proc/201/stat", "201 (a) Z b) S 100 ...\n");   /* a name with ") Z": still running */
	tree_write(root, "proc/202/stat", "202 (sh) Z 100 202 ...\n");
	/* 200 is listed already: 201 and 202 are added, 201 once. */
	CHECK_EQ_INT(damon_children(proc, 100, out, &nr, 4), 2);
	CHECK_EQ_INT(nr, 3);
	CHECK_EQ_INT(out[0], 200);
	CHECK((out[1] == 201 && out[2] == 202) || (out[1] == 202 && out[2] == 201));
	/* The cap holds. */
	nr = 3;
	out[0] = 1, out[1] = 2, out[2] = 3;
	CHECK_EQ_INT(damon_children(proc, 100, out, &nr, 4), 1);
	CHECK_EQ_INT(nr, 4);
	CHECK_EQ_INT(damon_children(proc, 999, out, &nr, 4), 0);   /* gone */
	CHECK(damon_process_alive(proc, 200));
	CHECK(damon_process_alive(proc, 201));
	CHECK(!damon_process_alive(proc, 202));   /* a zombie has no memory to monitor */
	CHECK(!damon_process_alive(proc, 203));
	tree_remove(root);
}

/* DAMON's gauges have no value until the first aggregation ends: the run's
 * total is the last interval's value, not "not counted" for the first one.
 * A counter invalid in one interval stays invalid in the total. */
static void test_gauge_total(void)
{
	struct series_table t = { 0 };
	struct frame total, f;

	CHECK_EQ_INT(series_table_add(&t, "damon.accessed_bytes", "B", 1.0, SERIES_GAUGE, NULL), 0);
	CHECK_EQ_INT(series_table_add(&t, "damon.aggregations", "", 1.0, SERIES_COUNTER, NULL), 1);
	CHECK_EQ_INT(frame_init(&total, t.nr), 0);
	CHECK_EQ_INT(frame_init(&f, t.nr), 0);
	f.samples[0] = (struct sample){ .valid = false };
	f.samples[1] = (struct sample){ .value = 0, .valid = false };
	f.interval_ns = 1;
	frame_accumulate(&total, &f, &t);
	f.samples[0] = (struct sample){ .value = 256 * MiB, .valid = true };
	f.samples[1] = (struct sample){ .value = 1, .valid = true };
	frame_accumulate(&total, &f, &t);
	CHECK(total.samples[0].valid);
	CHECK_EQ_U64(total.samples[0].value, 256 * MiB);
	CHECK(!total.samples[1].valid);
	frame_free(&f);
	frame_free(&total);
	series_table_free(&t);
}

/* stat's run totals of events (aggregation cells): a gauge's is its last
 * frame's value (the nodes' series added up), a counter's the sum of every
 * frame. */
static void test_gauge_cells(void)
{
	struct series_table t = { 0 };
	struct series_labels n0, n1;
	struct aggregation a;
	struct aggr_cell *cells;
	struct frame f;

	series_labels_init(&n0);
	series_labels_init(&n1);
	n0.node = 0;
	n1.node = 1;
	CHECK_EQ_INT(series_table_add(&t, "damon.hot_bytes", "B", 1.0, SERIES_GAUGE, &n0), 0);
	CHECK_EQ_INT(series_table_add(&t, "damon.hot_bytes", "B", 1.0, SERIES_GAUGE, &n1), 1);
	CHECK_EQ_INT(series_table_add(&t, "damon.aggregations", "", 1.0, SERIES_COUNTER, NULL), 2);
	CHECK_EQ_INT(aggregation_init(&a, &t, AGGR_TOTAL, NULL), 0);
	CHECK_EQ_INT(frame_init(&f, t.nr), 0);
	cells = calloc((size_t)(a.nr_rows * a.nr_columns), sizeof(*cells));
	aggregation_clear(&a, cells);
	for (int seq = 0; seq < 3; seq++) {
		f.seq = (uint64_t)seq;
		/* No aggregation read yet in the first frame. */
		f.samples[0] = (struct sample){ .value = 100u * (unsigned)seq, .valid = seq > 0 };
		f.samples[1] = (struct sample){ .value = 10u * (unsigned)seq, .valid = seq > 0 };
		f.samples[2] = (struct sample){ .value = seq > 0, .valid = true };
		aggregation_add(&a, &f, cells);
	}
	CHECK_EQ_INT(a.nr_columns, 2);
	CHECK(cells[0].valid);
	CHECK_EQ_U64(cells[0].raw, 220);   /* node 0's 200 and node 1's 20, of the last frame */
	CHECK(cells[1].valid);
	CHECK_EQ_U64(cells[1].raw, 2);     /* 0 + 1 + 1 */
	free(cells);
	frame_free(&f);
	aggregation_free(&a);
	series_table_free(&t);
}

static struct damon_region_event vregion(uint32_t pid, uint64_t start, uint64_t end, uint32_t nr_accesses)
{
	return (struct damon_region_event){ .start = start, .end = end, .nr_accesses = nr_accesses, .samples = 20,
					    .nr_regions = 2, .pid = pid };
}

static int add_vregion(struct damon_hot_share *h, uint32_t pid, uint64_t start, uint64_t end, uint32_t nr_accesses)
{
	struct damon_region_event e = vregion(pid, start, end, nr_accesses);

	return damon_hot_share_add(h, &e);
}

/* A data object's hot share from virtual regions written by hand: the bytes
 * of its range in regions at >= 50% of 20 samples, over the bytes of it the
 * regions covered, over the aggregations. */
static void test_hot_share(void)
{
	struct damon_hot_share h;
	struct damon_region_event phys = vregion(0, 0, 256 * MiB, 20), none = { 0 };
	uint64_t covered = 99;
	const uint64_t obj = 0x10000000;   /* a 16 MiB object at 256 MiB */

	damon_hot_share_init(&h, 50);
	CHECK(!damon_hot_share_any(&h));
	CHECK_EQ_INT(damon_hot_share_add(&h, &none), 0);
	CHECK_EQ_INT(damon_hot_share_add(&h, &phys), 0);   /* physical: ignored */
	CHECK(!damon_hot_share_any(&h));
	/* Aggregation 1: the object's first 4 MiB at 10 of 20 (hot, the boundary), the rest at 9 (45%: not). */
	CHECK_EQ_INT(add_vregion(&h, 7, obj - MiB, obj + 4 * MiB, 10), 0);
	CHECK_EQ_INT(add_vregion(&h, 7, obj + 4 * MiB, obj + 32 * MiB, 9), 0);
	/* Another process, hot over the same addresses: not pid 7's memory. */
	CHECK_EQ_INT(add_vregion(&h, 8, 0, obj + 32 * MiB, 20), 0);
	/* Aggregation 2: 8 MiB in the middle of the object at 20 of 20, a region past it hot too. */
	CHECK_EQ_INT(add_vregion(&h, 7, obj + 2 * MiB, obj + 10 * MiB, 20), 0);
	CHECK_EQ_INT(add_vregion(&h, 7, obj + 10 * MiB, obj + 16 * MiB, 0), 0);
	CHECK_EQ_INT(add_vregion(&h, 7, obj + 16 * MiB, obj + 32 * MiB, 20), 0);
	CHECK(damon_hot_share_any(&h));
	/* (4 + 8) MiB hot of 16 MiB covered in aggregation 1 and 14 MiB in 2: 12 / 30 = 40%. */
	CHECK_EQ_U64(damon_hot_share_bytes(&h, 7, obj, obj + 16 * MiB, &covered), 12 * MiB);
	CHECK_EQ_U64(covered, 30 * MiB);
	CHECK_EQ_U64(damon_hot_share_bytes(&h, 8, obj, obj + 16 * MiB, &covered), 16 * MiB);
	CHECK_EQ_U64(covered, 16 * MiB);
	/* A process DAMON never saw, and addresses no region covered: no share. */
	CHECK_EQ_U64(damon_hot_share_bytes(&h, 9, obj, obj + 16 * MiB, &covered), 0);
	CHECK_EQ_U64(covered, 0);
	CHECK_EQ_U64(damon_hot_share_bytes(&h, 7, 0, MiB, &covered), 0);
	CHECK_EQ_U64(covered, 0);
	damon_hot_share_free(&h);
}

/* A process's pagemap entries joined with one aggregation's physical
 * regions (4 KiB pages, 10 samples an aggregation, hot >= 50%, cold: idle
 * for 60 s), bytes counted by hand. */
static void test_page_join(void)
{
	struct phys_range ranges[] = { { 0, 256 * MiB, 0 }, { 384 * MiB, 640 * MiB, 1 } };
	struct phys_node_map map = { ranges, 2 };
	const struct damon_phys_region regions[] = {
		{ 0, 64 * MiB, 8, 1 },             /* 80%: hot */
		{ 64 * MiB, 128 * MiB, 0, 20 },    /* idle 20 x 5 s = 100 s: cold */
		{ 128 * MiB, 192 * MiB, 2, 3 },    /* 20%: accessed, neither */
		{ 400 * MiB, 464 * MiB, 10, 1 },   /* 100% on node 1: hot */
	};
	const uint64_t P = DAMON_PAGEMAP_PRESENT, page = 4096, r1 = 64 * MiB / page, r2 = 128 * MiB / page;
	const uint64_t entries[] = {
		P | 1, P | 2, P | 3,               /* three frames in a row in region 0 */
		1ull << 62,                        /* swapped out: not present */
		P | r1,                            /* region 1 */
		P | (r2 - 1), P | r2,              /* consecutive frames across the boundary of regions 1 and 2 */
		P | (300 * MiB / page),            /* in no region (node 0's gap above 192 MiB) */
		P | (400 * MiB / page), P | (400 * MiB / page + 1),   /* region 3, node 1 */
	};
	const uint64_t hidden[] = { P, P, 0 };
	int nodes[] = { 0, 1 };
	struct damon_tally t;
	struct damon_page_join j;

	CHECK_EQ_INT(damon_phys_region_find(regions, 4, 0), 0);
	CHECK_EQ_INT(damon_phys_region_find(regions, 4, 64 * MiB - 1), 0);
	CHECK_EQ_INT(damon_phys_region_find(regions, 4, 64 * MiB), 1);
	CHECK_EQ_INT(damon_phys_region_find(regions, 4, 192 * MiB), -1);
	CHECK_EQ_INT(damon_phys_region_find(regions, 4, 464 * MiB - 1), 3);
	CHECK_EQ_INT(damon_phys_region_find(regions, 4, 464 * MiB), -1);
	CHECK_EQ_INT(damon_tally_init(&t, 2, nodes), 0);
	damon_page_join_begin(&j);
	/* In two calls, cut inside the run of region 0. */
	damon_page_join_add(&j, &t, &map, &classes, regions, 4, entries, 2, page, 0);
	damon_page_join_add(&j, &t, &map, &classes, regions, 4, entries + 2, ARRAY_LEN(entries) - 2, page,
			    2 * page);
	damon_page_join_end(&j, &t, &map, &classes, regions);
	CHECK_EQ_U64(j.present, 9);
	CHECK_EQ_U64(j.placed, 8);
	CHECK_EQ_U64(j.zero_pfn, 0);
	CHECK(!damon_page_join_hidden(&j));
	/* Node 0: 3 pages hot (region 0) + 1 accessed (region 2); 2 cold (region 1). */
	CHECK_EQ_U64(t.accessed[0], 4 * page);
	CHECK_EQ_U64(t.hot[0], 3 * page);
	CHECK_EQ_U64(t.cold[0], 2 * page);
	CHECK_EQ_U64(t.accessed[1], 2 * page);
	CHECK_EQ_U64(t.hot[1], 2 * page);
	CHECK_EQ_U64(t.cold[1], 0);
	CHECK_EQ_U64(t.unplaced, 0);
	/* The virtual runs (the pages at 1 GiB on): a run breaks where pages are
	 * missing, not in a region, or in a region of another count or age. */
	{
		struct damon_vrun runs[8];
		const uint64_t va = 1ull << 30;

		damon_tally_clear(&t);
		damon_page_join_begin(&j);
		j.vruns = runs;
		j.cap_vruns = 8;
		damon_page_join_add(&j, &t, &map, &classes, regions, 4, entries, ARRAY_LEN(entries), page, va);
		damon_page_join_end(&j, &t, &map, &classes, regions);
		CHECK_EQ_INT(j.nr_vruns, 4);
		CHECK(!j.overflow);
		CHECK_EQ_U64(runs[0].start, va);
		CHECK_EQ_U64(runs[0].end, va + 3 * page);
		CHECK_EQ_INT(runs[0].nr_accesses, 8);
		CHECK_EQ_U64(runs[0].nodes, 1);
		CHECK_EQ_U64(runs[1].start, va + 4 * page);   /* page 3 swapped out */
		CHECK_EQ_U64(runs[1].end, va + 6 * page);     /* two frames far apart, one region */
		CHECK_EQ_INT(runs[1].age, 20);
		CHECK_EQ_U64(runs[2].start, va + 6 * page);
		CHECK_EQ_U64(runs[2].end, va + 7 * page);
		CHECK_EQ_INT(runs[2].nr_accesses, 2);
		CHECK_EQ_U64(runs[3].start, va + 8 * page);   /* page 7 in no region */
		CHECK_EQ_U64(runs[3].end, va + 10 * page);
		CHECK_EQ_U64(runs[3].nodes, 2);
		/* No room: said, never a part handed over as the whole. */
		damon_page_join_begin(&j);
		j.vruns = runs;
		j.cap_vruns = 2;
		damon_page_join_add(&j, &t, &map, &classes, regions, 4, entries, ARRAY_LEN(entries), page, va);
		CHECK(j.overflow);
	}
	/* Frames hidden (no CAP_SYS_ADMIN): present, all 0: nothing counted, and said. */
	damon_tally_clear(&t);
	damon_page_join_begin(&j);
	damon_page_join_add(&j, &t, &map, &classes, regions, 4, hidden, ARRAY_LEN(hidden), page, 0);
	damon_page_join_end(&j, &t, &map, &classes, regions);
	CHECK(damon_page_join_hidden(&j));
	CHECK_EQ_U64(t.accessed[0] + t.hot[0] + t.cold[0], 0);
	damon_tally_free(&t);
}

int main(void)
{
	char root[4096];
	struct sysfs_roots roots = { 0 };
	struct phys_node_map map;

	make_blocks(root, sizeof(root));
	snprintf(roots.sys, sizeof(roots.sys), "%s/sys", root);
	test_node_map(&map, &roots);
	test_split(&map);
	test_stream(&map);
	test_region_nodes(&map);
	phys_node_map_free(&map);
	tree_remove(root);
	test_addr_unit_and_no_blocks();
	test_record();
	test_monitor();
	test_admin();
	test_children();
	test_gauge_total();
	test_gauge_cells();
	test_hot_share();
	test_page_join();
	return check_summary("damon");
}
