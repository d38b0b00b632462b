/* The plugin loader and a loaded plugin as a source, through the real
 * resctrl plugin (contrib/plugins/resctrl.so) reading a resctrl tree this
 * test writes under MEMSCOPE_SYSFS_ROOT: a 2-socket, 2-node machine of 8 CPUs
 * with one L3 per socket. The files change between frames as the kernel's
 * would; every value is computed by hand. */
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/resolver.h"
#include "check.h"
#include "events/plugin_series.h"
#include "fixture_tree.h"
#include "host/host.h"
#include "metrics/metrics.h"
#include "sources/plugin_loader.h"

/* metric_plan_build with the names as -m gives them. */
static int plan_names(const struct resolution *res, const char *names, struct metric_plan **plan, struct ms_error *err)
{
	struct name_list list = { NULL, 0 };
	int ret = name_list_add_text(&list, names, err) < 0 ? -1 : metric_plan_build(res, &list, plan, err);

	name_list_free(&list);
	return ret;
}

static char root[4096];

static void write_at(const char *rel, const char *fmt, unsigned long long v)
{
	char text[64];

	snprintf(text, sizeof(text), fmt, v);
	tree_write(root, rel, text);
}

/* Group g ("" root, "p1/", "p1/mon_groups/m1/") in domain d: three files. */
static void mon(const char *group, int domain, unsigned long long total, unsigned long long local,
		unsigned long long occupancy)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "fs/resctrl/%smon_data/mon_L3_%02d/mbm_total_bytes", group, domain);
	write_at(rel, "%llu\n", total);
	snprintf(rel, sizeof(rel), "fs/resctrl/%smon_data/mon_L3_%02d/mbm_local_bytes", group, domain);
	write_at(rel, "%llu\n", local);
	snprintf(rel, sizeof(rel), "fs/resctrl/%smon_data/mon_L3_%02d/llc_occupancy", group, domain);
	write_at(rel, "%llu\n", occupancy);
}

static void make_machine(void)
{
	tree_new(root, sizeof(root));
	tree_write(root, "devices/system/cpu/online", "0-7\n");
	tree_write(root, "devices/system/node/online", "0-1\n");
	tree_write(root, "devices/system/node/node0/cpulist", "0-3\n");
	tree_write(root, "devices/system/node/node1/cpulist", "4-7\n");
	tree_write(root, "devices/system/node/node0/distance", "10 21\n");
	tree_write(root, "devices/system/node/node1/distance", "21 10\n");
	tree_write(root, "bus/event_source/devices/.keep", "");
	for (int cpu = 0; cpu < 8; cpu++) {
		char rel[256];

		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
		write_at(rel, "%llu\n", (unsigned long long)(cpu / 4));
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/core_id", cpu);
		write_at(rel, "%llu\n", (unsigned long long)(cpu % 4));
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/die_id", cpu);
		write_at(rel, "%llu\n", 0);
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index3/level", cpu);
		write_at(rel, "%llu\n", 3);
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index3/id", cpu);
		write_at(rel, "%llu\n", (unsigned long long)(cpu / 4));
	}
	tree_write(root, "fs/resctrl/info/L3_MON/mon_features", "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n");
	tree_write(root, "fs/resctrl/info/last_cmd_status", "ok\n");
	for (int d = 0; d < 2; d++) {
		mon("", d, 1000 + d, 100 + d, 4096);
		mon("p1/", d, 50000 + d, 5000 + d, 8192);
		mon("p1/mon_groups/m1/", d, 700 + d, 70 + d, 2048);
		mon("mon_groups/m0/", d, 300 + d, 30 + d, 1024);
	}
	tree_write(root, "fs/resctrl/p1/cpus_list", "\n");
}

static int series_index(const struct series_table *t, const char *name, const char *instance)
{
	for (int i = 0; i < t->nr; i++)
		if (!strcmp(t->series[i].name, name) && !strcmp(t->series[i].labels.instance, instance))
			return i;
	return -1;
}

static const struct sample *sample_of(const struct frame *f, const struct series_table *t, const char *name,
				      const char *instance)
{
	int i = series_index(t, name, instance);

	return i < 0 ? NULL : &f->samples[i];
}

/* The values the last compute() wrote. */
static struct metric_values *values;

static void compute(const struct metric_engine *e, const struct frame *frame)
{
	if (!values)
		values = metric_values_new(e);
	metric_engine_compute(e, frame, values);
}

static double metric(const struct metric_engine *e, const struct metric_plan *plan, const char *name,
		     enum metric_scope scope, int index)
{
	const struct metric_value *v = metric_engine_value(e, values, metric_plan_find(plan, name), scope, index);

	return v->valid ? v->value : -1;
}

static int channel_of(const struct metric_engine *e, const char *instance)
{
	for (int i = 0; i < metric_engine_nr_scopes(e, SCOPE_CHANNEL); i++)
		if (!strcmp(metric_engine_channel(e, i)->instance, instance))
			return i;
	return -1;
}

static void test_resctrl_frames(const char *plugin_dir)
{
	char spec[4200];
	char *specs[] = { spec };
	struct plugin_set set = { 0 };
	struct source_registry registry;
	const struct source_kind *kind;
	static const char *const names[] = { "resctrl.mbm_total_bytes", "resctrl.mbm_local_bytes",
					     "resctrl.llc_occupancy" };
	struct source_request req = { 0 };
	struct series_table table = { 0 };
	struct source src;
	struct frame frame;
	struct host host;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct metric_plan *plan = NULL;
	struct metric_engine *engine = NULL;
	struct ms_error err = { "" };
	const struct sample *s;

	make_machine();
	setenv("MEMSCOPE_SYSFS_ROOT", root, 1);
	setenv("MEMSCOPE_PROCFS_ROOT", root, 1);
	snprintf(spec, sizeof(spec), "%s/resctrl.so", plugin_dir);
	source_registry_init(&registry);
	CHECK_EQ_INT(plugins_load(&set, specs, 1, &registry), 0);
	CHECK_EQ_INT(set.nr >= 1, 1);
	CHECK(set.plugins[0]->loaded);
	CHECK_EQ_STR(set.plugins[0]->why, "");
	CHECK_EQ_STR(set.plugins[0]->catalog_why, "");
	kind = source_registry_claim(&registry, SOURCE_LIVE, "resctrl.mbm_total_bytes");
	CHECK(kind && !strcmp(kind->name, "resctrl"));
	CHECK(source_registry_claim(&registry, SOURCE_LIVE, "resctrl.nothing") == &perf_source_kind);
	CHECK(plugin_series_owner("resctrl.llc_occupancy") != NULL);
	if (!kind || host_load(&host, &err) < 0) {
		CHECK_FAIL("setup: %s", err.text);
		return;
	}
	CHECK(kind->present(kind, &host, &err));

	/* The source: the default groups (root and p1, not p1's MON group m1). */
	req.host = &host;
	req.names = names;
	req.nr_names = 3;
	req.notes = stderr;
	req.command_name = "test";
	CHECK_EQ_INT(kind->create(kind, &src, &req, &err), 0);
	CHECK_EQ_INT(src.ops->open(&src, &table, &err), 0);
	CHECK_EQ_INT(table.nr, 2 * 2 * 3);
	CHECK(series_index(&table, "resctrl.mbm_total_bytes", "/@L3_00") >= 0);
	CHECK(series_index(&table, "resctrl.mbm_total_bytes", "p1@L3_01") >= 0);
	CHECK_EQ_INT(series_index(&table, "resctrl.mbm_total_bytes", "p1/m1@L3_00"), -1);
	{
		const struct series *l3_1 = &table.series[series_index(&table, "resctrl.mbm_local_bytes", "p1@L3_01")];

		/* The L3 of cache id 1 is CPUs 4-7: node 1, socket 1. */
		CHECK_EQ_INT(l3_1->labels.node, 1);
		CHECK_EQ_INT(l3_1->labels.socket, 1);
		CHECK_EQ_INT(l3_1->kind, SERIES_COUNTER);
		CHECK_EQ_STR(l3_1->unit, "B");
		CHECK_EQ_INT(table.series[series_index(&table, "resctrl.llc_occupancy", "/@L3_00")].kind, SERIES_GAUGE);
	}
	CHECK_EQ_INT(frame_init(&frame, table.nr), 0);
	CHECK_EQ_INT(src.ops->enable(&src, &err), 0);

	/* Frame 1: root moved 3 MB on L3 0 (1 MB to local memory), p1 64 KiB on L3 1. */
	mon("", 0, 1000 + 3000000, 100 + 1000000, 12288);
	mon("p1/", 1, 50001 + 65536, 5001 + 65536, 16384);
	mon("p1/mon_groups/m1/", 1, 701 + 65536, 71 + 65536, 16384);
	CHECK_EQ_INT(src.ops->sample(&src, &frame), 0);
	s = sample_of(&frame, &table, "resctrl.mbm_total_bytes", "/@L3_00");
	CHECK(s->valid);
	CHECK_EQ_U64(s->value, 3000000);
	s = sample_of(&frame, &table, "resctrl.mbm_local_bytes", "/@L3_00");
	CHECK_EQ_U64(s->value, 1000000);
	s = sample_of(&frame, &table, "resctrl.mbm_total_bytes", "p1@L3_01");
	CHECK_EQ_U64(s->value, 65536);
	s = sample_of(&frame, &table, "resctrl.mbm_total_bytes", "/@L3_01");
	CHECK(s->valid);
	CHECK_EQ_U64(s->value, 0);
	s = sample_of(&frame, &table, "resctrl.llc_occupancy", "/@L3_00");
	CHECK_EQ_U64(s->value, 12288);

	/* The metrics of the plugin's catalog family on that frame. */
	if (catalog_load_default(&cat, &err) < 0 || resolve(&host, cat, &res, &err) < 0 ||
	    plan_names(res, "mem.total_bytes,mem.local_bytes,llc.occupancy_bytes", &plan, &err) < 0 ||
	    metric_engine_new(plan, &host, &table, &engine, &err) < 0) {
		CHECK_FAIL("metrics: %s", err.text);
	} else {
		compute(engine, &frame);
		CHECK_NEAR(metric(engine, plan, "mem.total_bytes", SCOPE_SYSTEM, 0), 3000000 + 65536, 0);
		CHECK_NEAR(metric(engine, plan, "mem.total_bytes", SCOPE_SOCKET, 0), 3000000, 0);
		CHECK_NEAR(metric(engine, plan, "mem.total_bytes", SCOPE_SOCKET, 1), 65536, 0);
		CHECK_NEAR(metric(engine, plan, "mem.local_bytes", SCOPE_NODE, 0), 1000000, 0);
		CHECK_NEAR(metric(engine, plan, "mem.local_bytes", SCOPE_NODE, 1), 65536, 0);
		/* Occupancy now: root 12288 + p1 8192 on L3 0; 4096 + 16384 on L3 1. */
		CHECK_NEAR(metric(engine, plan, "llc.occupancy_bytes", SCOPE_SYSTEM, 0), 12288 + 8192 + 4096 + 16384, 0);
		CHECK_EQ_INT(metric_engine_nr_scopes(engine, SCOPE_CHANNEL), 4);
		CHECK_NEAR(metric(engine, plan, "mem.total_bytes", SCOPE_CHANNEL, channel_of(engine, "/@L3_00")), 3000000, 0);
		CHECK_NEAR(metric(engine, plan, "mem.total_bytes", SCOPE_CHANNEL, channel_of(engine, "p1@L3_01")), 65536, 0);
		CHECK_NEAR(metric(engine, plan, "llc.occupancy_bytes", SCOPE_CHANNEL, channel_of(engine, "p1@L3_01")),
			   16384, 0);
	}

	/* Frame 2: p1's counters on L3 0 were reset (a new event configuration:
	 * the total went down), root's L3 1 reads "Unavailable". Neither has a
	 * value; the others count on. */
	mon("", 0, 1000 + 3000000 + 500, 100 + 1000000 + 200, 12288);
	mon("p1/", 0, 10, 5, 8192);
	tree_write(root, "fs/resctrl/mon_data/mon_L3_01/mbm_total_bytes", "Unavailable\n");
	CHECK_EQ_INT(src.ops->sample(&src, &frame), 0);
	CHECK_EQ_U64(sample_of(&frame, &table, "resctrl.mbm_total_bytes", "/@L3_00")->value, 500);
	CHECK_EQ_U64(sample_of(&frame, &table, "resctrl.mbm_local_bytes", "/@L3_00")->value, 200);
	CHECK(!sample_of(&frame, &table, "resctrl.mbm_total_bytes", "p1@L3_00")->valid);
	CHECK(!sample_of(&frame, &table, "resctrl.mbm_local_bytes", "p1@L3_00")->valid);
	CHECK(!sample_of(&frame, &table, "resctrl.mbm_total_bytes", "/@L3_01")->valid);
	CHECK(sample_of(&frame, &table, "resctrl.mbm_local_bytes", "/@L3_01")->valid);
	if (engine) {
		compute(engine, &frame);
		/* A scope with an input not read has no value, never a partial sum. */
		CHECK_NEAR(metric(engine, plan, "mem.total_bytes", SCOPE_SYSTEM, 0), -1, 0);
		CHECK_NEAR(metric(engine, plan, "mem.local_bytes", SCOPE_CHANNEL, channel_of(engine, "/@L3_00")), 200, 0);
	}

	/* Frame 3: counting from the reset value on; the file is back. */
	mon("p1/", 0, 10 + 4096, 5 + 1024, 8192);
	tree_write(root, "fs/resctrl/mon_data/mon_L3_01/mbm_total_bytes", "9001\n");
	CHECK_EQ_INT(src.ops->sample(&src, &frame), 0);
	CHECK_EQ_U64(sample_of(&frame, &table, "resctrl.mbm_total_bytes", "p1@L3_00")->value, 4096);
	CHECK(sample_of(&frame, &table, "resctrl.mbm_total_bytes", "p1@L3_00")->valid);
	/* "Unavailable" broke the chain: the next reading is a new start. */
	CHECK(!sample_of(&frame, &table, "resctrl.mbm_total_bytes", "/@L3_01")->valid);

	metric_values_free(values);
	values = NULL;
	metric_engine_free(engine);
	metric_plan_free(plan);
	resolution_free(res);
	catalog_free(cat);
	src.ops->close(&src);
	frame_free(&frame);
	series_table_free(&table);
	host_free(&host);
	plugins_unload(&set);
	tree_remove(root);
}

/* group= names MON groups too, and refuses a group together with one it contains. */
static void test_resctrl_groups(const char *plugin_dir)
{
	static const char *const names[] = { "resctrl.mbm_total_bytes" };
	const struct {
		const char *args;
		int series;           /* expected, or -1: refused at open */
		const char *why;
	} cases[] = {
		{ "group=/,group=/mon_groups/m0", -1, "group /mon_groups/m0 is counted within group / too" },
		/* Another CTRL_MON group's MON group is not the root's. */
		{ "group=/,group=p1/mon_groups/m1", 4, NULL },
		{ "group=p1,group=p1/mon_groups/m1", -1, "group p1/mon_groups/m1 is counted within group p1 too" },
		{ "group=p1/mon_groups/m1", 2, NULL },
		{ "group=nosuch", -1, "group nosuch: " },
		{ "group=/mon_groups/m0", 2, NULL },
	};

	make_machine();
	setenv("MEMSCOPE_SYSFS_ROOT", root, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[4300];
		char *specs[] = { spec };
		struct plugin_set set = { 0 };
		struct source_registry registry;
		const struct source_kind *kind;
		struct source_request req = { 0 };
		struct series_table table = { 0 };
		struct source src;
		struct ms_error err = { "" };

		snprintf(spec, sizeof(spec), "%s/resctrl.so:%s", plugin_dir, cases[i].args);
		source_registry_init(&registry);
		plugins_load(&set, specs, 1, &registry);
		kind = source_registry_find(&registry, "resctrl");
		CHECK(kind != NULL);
		if (!kind)
			continue;
		req.names = names;
		req.nr_names = 1;
		CHECK_EQ_INT(kind->create(kind, &src, &req, &err), 0);
		if (cases[i].series < 0) {
			CHECK_EQ_INT(src.ops->open(&src, &table, &err), -1);
			CHECK_CONTAINS(err.text, cases[i].why);
		} else {
			CHECK_EQ_INT(src.ops->open(&src, &table, &err), 0);
			CHECK_EQ_INT(table.nr, cases[i].series);
			CHECK(series_index(&table, "resctrl.mbm_total_bytes", "p1/m1@L3_01") >= 0 ||
			      series_index(&table, "resctrl.mbm_total_bytes", "/m0@L3_01") >= 0);
		}
		src.ops->close(&src);
		series_table_free(&table);
		plugins_unload(&set);
	}
	tree_remove(root);
}

/* Not mounted: the reason, and the fix, from the plugin. */
static void test_resctrl_not_mounted(const char *plugin_dir)
{
	char spec[4200];
	char *specs[] = { spec };
	struct plugin_set set = { 0 };
	struct source_registry registry;
	const struct plugin_vocabulary *v;

	tree_new(root, sizeof(root));
	tree_write(root, "filesystems", "nodev\tsysfs\nnodev\tresctrl\n");
	tree_write(root, "cpuinfo", "flags\t\t: fpu cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local\n");
	setenv("MEMSCOPE_SYSFS_ROOT", root, 1);
	setenv("MEMSCOPE_PROCFS_ROOT", root, 1);
	snprintf(spec, sizeof(spec), "%s/resctrl.so", plugin_dir);
	source_registry_init(&registry);
	plugins_load(&set, specs, 1, &registry);
	v = plugin_series_plugin("resctrl");
	CHECK(v && !v->available);
	if (v)
		CHECK_CONTAINS(v->why, "resctrl is not mounted at");
	if (v)
		CHECK_CONTAINS(v->why, "(mount -t resctrl resctrl /sys/fs/resctrl)");
	plugins_unload(&set);
	/* Neither the kernel nor the CPU: both said. */
	tree_write(root, "filesystems", "nodev\tsysfs\n");
	tree_write(root, "cpuinfo", "flags\t\t: fpu\n");
	source_registry_init(&registry);
	plugins_load(&set, specs, 1, &registry);
	v = plugin_series_plugin("resctrl");
	if (v) {
		CHECK_CONTAINS(v->why, "this kernel has no resctrl file system");
		CHECK_CONTAINS(v->why, "this CPU reports no resource monitoring");
	}
	plugins_unload(&set);
	tree_remove(root);
}

int main(void)
{
	const char *dir = getenv("MEMSCOPE_TEST_PLUGINS");

	if (!dir || !*dir) {
		fprintf(stderr, "MEMSCOPE_TEST_PLUGINS is not set (run through meson test)\n");
		return 2;
	}
	/* No plugin directory of the user running the tests. */
	setenv("XDG_DATA_HOME", "/nonexistent-memscope-test", 1);
	test_resctrl_frames(dir);
	test_resctrl_groups(dir);
	test_resctrl_not_mounted(dir);
	return check_summary("plugins");
}
