/* The resolver, the metric plan and the metric engine end to end on fixture
 * machines, with counter values replayed from a file through the replay
 * source. Every expected number is worked out by hand in the comments. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "catalog/catalog.h"
#include "check.h"
#include "config.h"
#include "fixture_tree.h"
#include "host/host.h"
#include "metrics/metrics.h"
#include "catalog/resolver.h"
#include "sources/bpf_source.h"
#include "sources/registry.h"
#include "sources/replay_source.h"

/* metric_plan_build with the names as -m gives them. */
static int plan_names(const struct resolution *res, const char *names, struct metric_plan **plan, struct ms_error *err)
{
	struct name_list list = { NULL, 0 };
	int ret = name_list_add_text(&list, names, err) < 0 ? -1 : metric_plan_build(res, &list, plan, err);

	name_list_free(&list);
	return ret;
}

struct rig {
	struct host host;
	struct catalog *cat;
	struct resolution *res;
	struct metric_plan *plan;
	struct source src;
	struct series_table table;
	struct frame frame;
	struct metric_engine *engine;
	struct metric_values *values;
	char dir[4096];
	struct ms_error err;
};

static char replay[1 << 16];
static size_t replay_len;

static void values_begin(double t)
{
	replay_len = (size_t)snprintf(replay, sizeof(replay),
				      "{\"format\": \"memscope-replay\", \"version\": 1}\n{\"t\": %g, \"values\": {", t);
}

__attribute__((format(printf, 1, 2))) static void value(const char *fmt, ...)
{
	va_list ap;

	if (replay[replay_len - 1] != '{')
		replay_len += (size_t)snprintf(replay + replay_len, sizeof(replay) - replay_len, ", ");
	va_start(ap, fmt);
	replay_len += (size_t)vsnprintf(replay + replay_len, sizeof(replay) - replay_len, fmt, ap);
	va_end(ap);
}

static void values_end(void)
{
	replay_len += (size_t)snprintf(replay + replay_len, sizeof(replay) - replay_len, "}}\n");
}

static void use_machine(const char *machine)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/sys", getenv("MEMSCOPE_TEST_FIXTURES"), machine);
	setenv("MEMSCOPE_SYSFS_ROOT", path, 1);
	snprintf(path, sizeof(path), "%s/%s/proc", getenv("MEMSCOPE_TEST_FIXTURES"), machine);
	setenv("MEMSCOPE_PROCFS_ROOT", path, 1);
}

/* Resolve and plan metrics on machine, replay one frame and compute it. */
static int rig_run_quiet(struct rig *r, const char *machine, const char *metrics, bool quiet)
{
	char catalog_dir[4096];

	memset(r, 0, sizeof(*r));
	use_machine(machine);
	snprintf(catalog_dir, sizeof(catalog_dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (host_load(&r->host, &r->err) || catalog_load(&r->cat, catalog_dir, &r->err) ||
	    resolve(&r->host, r->cat, &r->res, &r->err) || plan_names(r->res, metrics, &r->plan, &r->err))
		goto fail;
	tree_new(r->dir, sizeof(r->dir));
	tree_write(r->dir, "replay.jsonl", replay);
	snprintf(catalog_dir, sizeof(catalog_dir), "%s/replay.jsonl", r->dir);
	if (replay_source_init(&r->src, &r->host, r->plan, catalog_dir, &r->err) ||
	    r->src.ops->open(&r->src, &r->table, &r->err) || frame_init(&r->frame, r->table.nr) ||
	    metric_engine_new(r->plan, &r->host, &r->table, &r->engine, &r->err))
		goto fail;
	r->src.ops->sample(&r->src, &r->frame);
	if (!(r->values = metric_values_new(r->engine))) {
		ms_error_set(&r->err, "out of memory");
		goto fail;
	}
	metric_engine_compute(r->engine, &r->frame, r->values);
	return 0;
fail:
	if (!quiet)
		CHECK_FAIL("%s: %s", machine, r->err.text);
	return -1;
}

static int rig_run(struct rig *r, const char *machine, const char *metrics)
{
	return rig_run_quiet(r, machine, metrics, false);
}

static void rig_free(struct rig *r)
{
	metric_values_free(r->values);
	metric_engine_free(r->engine);
	if (r->src.ops)
		r->src.ops->close(&r->src);
	frame_free(&r->frame);
	series_table_free(&r->table);
	metric_plan_free(r->plan);
	resolution_free(r->res);
	catalog_free(r->cat);
	host_free(&r->host);
	if (r->dir[0])
		tree_remove(r->dir);
}

/* Value of metric in the scope whose node/socket id is id (-1: system); NAN when invalid. */
static const struct metric_value *get(struct rig *r, const char *metric, enum metric_scope scope, int id)
{
	int m = metric_plan_find(r->plan, metric);

	if (m < 0) {
		CHECK_FAIL("metric %s not in plan", metric);
		exit(1);
	}
	for (int i = 0; i < metric_engine_nr_scopes(r->engine, scope); i++)
		if (scope == SCOPE_SYSTEM || metric_engine_scope_id(r->engine, scope, i) == id)
			return metric_engine_value(r->engine, r->values, m, scope, i);
	CHECK_FAIL("no scope %d/%d", scope, id);
	exit(1);
}

#define CHECK_METRIC(r, metric, scope, id, expected) do { \
	const struct metric_value *v_ = get(r, metric, scope, id); \
	CHECK(v_->valid); \
	CHECK_NEAR(v_->value, expected, 1e-6 * (1 + (expected))); \
} while (0)

#define CHECK_INVALID(r, metric, scope, id) CHECK(!get(r, metric, scope, id)->valid)

/* Kunpeng 920, 2 sockets x 2 SCCLs (ids 1,3,5,7 -> nodes 0..3), 4 DDRC and 2 HHA per SCCL. */
static void test_kunpeng920(void)
{
	static const int sccl[] = { 1, 3, 5, 7 };
	struct rig r;

	values_begin(1.0);
	for (int s = 0; s < 4; s++)
		for (int ch = 0; ch < 4; ch++) {
			/* the example: 1000 + 500 flux_rd on SCCL1 in 1 s */
			int rd = s == 0 && ch == 0 ? 1000 : s == 0 && ch == 1 ? 500 : 0;
			int wr = s == 2 ? 250 * (ch + 1) : 0;

			value("\"hisi_sccl%d_ddrc%d/flux_rd/\": %d", sccl[s], ch, rd);
			value("\"hisi_sccl%d_ddrc%d/event=0x00/\": %d", sccl[s], ch, wr);  /* the plan's own spelling */
		}
	for (int s = 0; s < 4; s++)
		for (int h = 2; h <= 3; h++) {
			/* node 0: hha2 1000/100/150, hha3 600/50/0; node 1: hha2 400/0/100 */
			int ops = s == 0 ? (h == 2 ? 1000 : 600) : s == 1 && h == 2 ? 400 : 0;
			int outer = s == 0 ? (h == 2 ? 100 : 50) : 0;
			int other_die = s == 0 && h == 2 ? 150 : s == 1 && h == 2 ? 100 : 0;

			value("\"hisi_sccl%d_hha%d/rx_ops_num/\": %d", sccl[s], h, ops);
			value("\"hisi_sccl%d_hha%d/rx_outer/\": %d", sccl[s], h, outer);
			value("\"hisi_sccl%d_hha%d/rx_sccl/\": %d", sccl[s], h, other_die);
		}
	values_end();
	if (rig_run(&r, "kunpeng920-2s", "mem.read_bw,mem.write_bytes,mem.remote_ratio") == 0) {
		/* (1000 + 500) x 32 B / 1 s on SCCL1 = node 0 */
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 0, 48000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 1, 0.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 0, 48000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 1, 0.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SYSTEM, -1, 48000.0);
		/* SCCL5 = node 2: (250 + 500 + 750 + 1000) x 32 = 80000 B */
		CHECK_METRIC(&r, "mem.write_bytes", SCOPE_NODE, 2, 80000.0);
		CHECK_METRIC(&r, "mem.write_bytes", SCOPE_SOCKET, 1, 80000.0);
		/* node 0: local (1000-100-150)+(600-50) = 1300, remote 250+50 = 300 -> 300/1600 */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_NODE, 0, 0.1875);
		/* node 1: local 400-100 = 300, remote 100 -> 0.25 */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_NODE, 1, 0.25);
		/* socket 0 and system: 400 / 2000 */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SOCKET, 0, 0.2);
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SYSTEM, -1, 0.2);
		/* node 2 had no accesses: a ratio of nothing is not shown as 0 */
		CHECK_INVALID(&r, "mem.remote_ratio", SCOPE_NODE, 2);
		CHECK_EQ_INT(get(&r, "mem.read_bw", SCOPE_NODE, 0)->coverage == 1.0, 1);
		/* 16 DDRC x 2 events + 8 HHA x 3 events, no duplicates */
		CHECK_EQ_INT(r.plan->nr_events, 16 * 2 + 8 * 3);
	}
	rig_free(&r);
}

/* Westmere-EP: one `uncore` PMU counted on cpu0 (socket 0) and cpu1 (socket 1). */
static void test_westmere(void)
{
	struct rig r;

	values_begin(0.5);
	value("\"uncore/gq_cycles_full_rt/@cpu0\": 12345");
	value("\"uncore/gq_cycles_full_rt/@cpu1\": 0");
	value("\"uncore/qhl_occupancy_local/@cpu0\": 3000");
	value("\"uncore/qhl_occupancy_remote/@cpu0\": 1000");
	value("\"uncore/clockticks/@cpu0\": 2000");
	value("\"uncore/qhl_occupancy_local/@cpu1\": 0");
	value("\"uncore/qhl_occupancy_remote/@cpu1\": 500");
	value("\"uncore/clockticks/@cpu1\": 1000");
	value("\"uncore/qmc_normal_reads_any/@cpu0\": 1000000");
	value("\"uncore/qmc_normal_reads_any/@cpu1\": 250000");
	values_end();
	if (rig_run(&r, "westmere-ep-2s", "queue.full_cycles,queue.occupancy,mem.read_bw") == 0) {
		CHECK_METRIC(&r, "queue.full_cycles", SCOPE_SOCKET, 0, 12345.0);
		CHECK_METRIC(&r, "queue.full_cycles", SCOPE_SOCKET, 1, 0.0);
		/* (3000 + 1000) / 2000 */
		CHECK_METRIC(&r, "queue.occupancy", SCOPE_SOCKET, 0, 2.0);
		CHECK_METRIC(&r, "queue.occupancy", SCOPE_NODE, 1, 0.5);
		/* system: 4500 / 3000 */
		CHECK_METRIC(&r, "queue.occupancy", SCOPE_SYSTEM, -1, 1.5);
		/* 1e6 x 64 B / 0.5 s */
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 0, 128e6);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 1, 32e6);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SYSTEM, -1, 160e6);
	}
	rig_free(&r);
}

/* Skylake-SP: 6 IMCs per socket, counted on cpu0 (socket 0) and cpu4 (socket 1); 3 UPI links. */
static void test_skylake(void)
{
	struct rig r;

	values_begin(2.0);
	for (int i = 0; i < 6; i++) {
		value("\"uncore_imc_%d/cas_count_read/@cpu0\": %d", i, (i + 1) * 1000);   /* sum 21000 */
		value("\"uncore_imc_%d/cas_count_read/@cpu4\": %d", i, (i + 1) * 2000);   /* sum 42000 */
	}
	for (int i = 0; i < 3; i++) {
		value("\"uncore_upi_%d/txl_flits_all_data/@cpu0\": 900", i);
		value("\"uncore_upi_%d/txl_flits_all_data/@cpu4\": 0", i);
	}
	values_end();
	if (rig_run(&r, "skylake-sp-2s", "mem.read_bw,interconnect.tx_bytes") == 0) {
		/* 21000 x 64 / 2 s */
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 0, 672000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 1, 1344000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 1, 1344000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SYSTEM, -1, 2016000.0);
		/* 2700 flits x 64/9 B */
		CHECK_METRIC(&r, "interconnect.tx_bytes", SCOPE_SOCKET, 0, 19200.0);
		/* 6 IMC events fit 4 counters? one event per IMC instance: one group each */
		CHECK_EQ_INT(r.plan->nr_events, 6 + 3);
	}
	rig_free(&r);
}

/* Ice Lake-SP: 4 IMCs per socket on cpu0 / cpu4. The fixture's aliases are the
 * stale pre-2021 ones (umask 0x03/0x0c); the catalog opens umask 0x0f/0x30. */
static void test_icelake(void)
{
	struct rig r;

	values_begin(2.0);
	for (int i = 0; i < 4; i++) {
		/* the plan's own spelling for reads, the catalog event name for writes */
		value("\"uncore_imc_%d/event=0x04,umask=0x0f/@cpu0\": %d", i, (i + 1) * 1000);   /* sum 10000 */
		value("\"uncore_imc_%d/event=0x04,umask=0x0f/@cpu4\": %d", i, (i + 1) * 3000);   /* sum 30000 */
		value("\"uncore_imc_%d/cas_count_write/@cpu0\": 500", i);                         /* sum 2000 */
		value("\"uncore_imc_%d/cas_count_write/@cpu4\": 0", i);
	}
	values_end();
	if (rig_run(&r, "icelake-sp-2s", "mem.read_bw,mem.write_bw") == 0) {
		/* 10000 x 64 B / 2 s; 30000 x 64 / 2 */
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 0, 320000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 1, 960000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 1, 960000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SYSTEM, -1, 1280000.0);
		/* 2000 x 64 / 2 */
		CHECK_METRIC(&r, "mem.write_bw", SCOPE_SOCKET, 0, 64000.0);
		CHECK_METRIC(&r, "mem.write_bw", SCOPE_SOCKET, 1, 0.0);
		/* each uncore_imc_N is a channel on each socket: 4 x 2, socket 0 first */
		CHECK_EQ_INT(metric_engine_nr_scopes(r.engine, SCOPE_CHANNEL), 8);
		for (int c = 0; c < 8 && c < metric_engine_nr_scopes(r.engine, SCOPE_CHANNEL); c++) {
			const struct metric_channel *ch = metric_engine_channel(r.engine, c);
			char name[32];

			snprintf(name, sizeof(name), "uncore_imc_%d", c % 4);
			CHECK_EQ_STR(ch->instance, name);
			CHECK_EQ_INT(ch->cpu, c < 4 ? 0 : 4);
			CHECK_EQ_INT(ch->socket, c < 4 ? 0 : 1);
			/* (i + 1) x 1000 (socket 0) or x 3000 (socket 1) CAS x 64 B / 2 s */
			CHECK_METRIC(&r, "mem.read_bw", SCOPE_CHANNEL, c, (c % 4 + 1) * (c < 4 ? 32000.0 : 96000.0));
			CHECK_METRIC(&r, "mem.write_bw", SCOPE_CHANNEL, c, c < 4 ? 16000.0 : 0.0);
		}
		/* read and write on each of the 4 instances */
		CHECK_EQ_INT(r.plan->nr_events, 4 * 2);
	}
	rig_free(&r);

	/* the stale alias encoding is not what memscope opens */
	values_begin(1.0);
	value("\"uncore_imc_0/event=0x04,umask=0x03/@cpu0\": 1");
	values_end();
	CHECK(rig_run_quiet(&r, "icelake-sp-2s", "mem.read_bw", true) < 0);
	CHECK_CONTAINS(r.err.text, "unknown series 'uncore_imc_0/event=0x04,umask=0x03/': the metrics asked for do not "
				   "count it; they count e.g. 'uncore_imc_0/event=0x04,umask=0x0f/'");
	rig_free(&r);
}

/* Sapphire Rapids: IMC box IDs 0, 2, 3, 10 (discovery table, gaps), no IMC
 * aliases; local/remote from the CHA request counts (box IDs 0, 1, 2, 4), the
 * home-agent view as on Skylake-SP. */
static void test_sapphire_rapids(void)
{
	static const int imc[] = { 0, 2, 3, 10 };
	struct rig r;

	values_begin(1.0);
	for (int k = 0; k < 4; k++) {
		value("\"uncore_imc_%d/event=0x05,umask=0xcf/@cpu0\": %d", imc[k], (k + 1) * 100);    /* sum 1000 */
		value("\"uncore_imc_%d/event=0x05,umask=0xcf/@cpu4\": %d", imc[k], (k + 1) * 1000);   /* sum 10000 */
		value("\"uncore_imc_%d/cas_count_write/@cpu0\": 50", imc[k]);                          /* sum 200 */
		value("\"uncore_imc_%d/cas_count_write/@cpu4\": 25", imc[k]);                          /* sum 100 */
	}
	/* each CHA is read on cpu0 (socket 0) and cpu4 (socket 1) */
	for (int k = 0; k < 4; k++) {
		static const int cha[] = { 0, 1, 2, 4 };

		value("\"uncore_cha_%d/reads_local/@cpu0\": 200", cha[k]);
		value("\"uncore_cha_%d/writes_local/@cpu0\": 25", cha[k]);
		value("\"uncore_cha_%d/reads_remote/@cpu0\": 20", cha[k]);
		value("\"uncore_cha_%d/writes_remote/@cpu0\": 5", cha[k]);
		value("\"uncore_cha_%d/reads_local/@cpu4\": 100", cha[k]);
		value("\"uncore_cha_%d/writes_local/@cpu4\": 50", cha[k]);
		value("\"uncore_cha_%d/reads_remote/@cpu4\": 80", cha[k]);
		value("\"uncore_cha_%d/writes_remote/@cpu4\": 20", cha[k]);
	}
	values_end();
	if (rig_run(&r, "sapphire-rapids-2s", "mem.read_bw,mem.write_bw,mem.remote_ratio") == 0) {
		/* 1000 x 64 B / 1 s; 10000 x 64 */
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 0, 64000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 1, 640000.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SYSTEM, -1, 704000.0);
		/* 200 x 64; 100 x 64 */
		CHECK_METRIC(&r, "mem.write_bw", SCOPE_SOCKET, 0, 12800.0);
		CHECK_METRIC(&r, "mem.write_bw", SCOPE_SOCKET, 1, 6400.0);
		/* the gapped instances in natural order (10 after 3), socket 0 first */
		CHECK_EQ_INT(metric_engine_nr_scopes(r.engine, SCOPE_CHANNEL), 8);
		for (int c = 0; c < 8 && c < metric_engine_nr_scopes(r.engine, SCOPE_CHANNEL); c++) {
			const struct metric_channel *ch = metric_engine_channel(r.engine, c);
			char name[32];

			snprintf(name, sizeof(name), "uncore_imc_%d", imc[c % 4]);
			CHECK_EQ_STR(ch->instance, name);
			CHECK_EQ_INT(ch->cpu, c < 4 ? 0 : 4);
			CHECK_EQ_INT(ch->socket, c < 4 ? 0 : 1);
			/* (k + 1) x 100 (socket 0) or x 1000 (socket 1) CAS x 64 B */
			CHECK_METRIC(&r, "mem.read_bw", SCOPE_CHANNEL, c, (c % 4 + 1) * (c < 4 ? 6400.0 : 64000.0));
			CHECK_METRIC(&r, "mem.write_bw", SCOPE_CHANNEL, c, c < 4 ? 3200.0 : 1600.0);
		}
		/* socket 0: 4 CHAs x (20 + 5) remote over 4 x (200 + 25 + 20 + 5) = 100 / 1000 */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SOCKET, 0, 0.1);
		/* socket 1: 4 x (80 + 20) / 4 x (100 + 50 + 80 + 20) */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SOCKET, 1, 0.4);
		/* system: (100 + 400) / (1000 + 1000) */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SYSTEM, -1, 0.25);
		/* 4 IMCs x 2 events + 4 CHAs x 4 events */
		CHECK_EQ_INT(r.plan->nr_events, 4 * 2 + 4 * 4);
	}
	rig_free(&r);
}

/* EPYC Zen 3: 8 DF DRAM-channel events on 4 DF counters: two groups, multiplexed. */
static void test_zen3_multiplexing(void)
{
	struct rig r;

	values_begin(1.0);
	for (int ch = 0; ch < 8; ch++)
		for (int cpu = 0; cpu <= 8; cpu += 8)
			value("\"amd_df/dram_channel_%d/@cpu%d\": {\"value\": 1000, \"enabled_ns\": 1000000000, "
			      "\"running_ns\": 500000000}", ch, cpu);
	values_end();
	if (rig_run(&r, "epyc-zen3-2s", "mem.total_bw") == 0) {
		const struct metric_value *v = get(&r, "mem.total_bw", SCOPE_SOCKET, 0);

		/* each count extrapolated 1000 x 1/0.5 = 2000; 8 x 2000 x 64 B / 1 s */
		CHECK_METRIC(&r, "mem.total_bw", SCOPE_SOCKET, 0, 1024000.0);
		CHECK_METRIC(&r, "mem.total_bw", SCOPE_SYSTEM, -1, 2048000.0);
		CHECK_NEAR(v->coverage, 0.5, 1e-9);
		CHECK(v->mixed_slices);
		/* the first four share one group, the next four another */
		CHECK_EQ_INT(r.plan->nr_groups, 2);
		CHECK_EQ_INT(r.plan->events[0].group, r.plan->events[3].group);
		CHECK(r.plan->events[0].group != r.plan->events[4].group);
	}
	rig_free(&r);
}

/* Skylake-SP top-down: the latency estimate's 5 core events are one group on
 * the 4 general counters, since cycles and reference cycles take the fixed
 * ones; the TSC is the msr PMU's, on CPU 0. */
static void test_skx_topdown_group_with_fixed_counters(void)
{
	static const char *const names[] = { "cycles", "ref_tsc", "l3_miss_local_dram", "load_fb_hit", "load_l1_miss" };
	static const int counts[] = { 1000, 500, 1, 50, 200 };
	struct rig r;

	values_begin(1.0);
	for (int i = 0; i < 5; i++)
		for (int cpu = 0; cpu < 16; cpu++)
			value("\"cpu/%s/@cpu%d\": %d", names[i], cpu, counts[i]);
	value("\"msr/tsc/\": 2000000000");
	values_end();
	if (rig_run(&r, "skylake-sp-2s", "topdown.local_dram") == 0) {
		int group = -1;

		/* 59.5 ns x (16000 / 8000 x 2 GHz) x 16 loads x (1 + 50/200/2) / 16000 cycles */
		CHECK_METRIC(&r, "topdown.local_dram", SCOPE_SYSTEM, -1, 59.5 * 4 * 1.125 / 1000);
		for (int i = 0; i < r.plan->nr_events; i++)
			if (!strncmp(r.plan->events[i].text, "cpu/", 4)) {
				if (group < 0)
					group = r.plan->events[i].group;
				CHECK_EQ_INT(r.plan->events[i].group, group);
			}
		CHECK(group >= 0);
		CHECK(!get(&r, "topdown.local_dram", SCOPE_SYSTEM, -1)->mixed_slices);
	}
	rig_free(&r);
}

/* The group of one plan metric's perf events; -1 when they are in more than one. */
static int metric_group(const struct metric_plan *plan, const char *metric)
{
	const struct plan_metric *pm = &plan->metrics[metric_plan_find(plan, metric)];
	int group = -2;

	for (int s = 0; s < pm->nr_slot_inputs; s++) {
		const struct plan_input *in = &plan->inputs[pm->slot_inputs[2 * s + 1]];

		for (int e = 0; e < in->nr_events; e++) {
			int g = plan->events[in->events[e]].group;

			if (group != -2 && g != group)
				return -1;
			group = g;
		}
	}
	return group;
}

/* Does plan metric `metric` read the plan event named text? */
static bool metric_reads(const struct metric_plan *plan, const char *metric, const char *text)
{
	const struct plan_metric *pm = &plan->metrics[metric_plan_find(plan, metric)];

	for (int s = 0; s < pm->nr_slot_inputs; s++) {
		const struct plan_input *in = &plan->inputs[pm->slot_inputs[2 * s + 1]];

		for (int e = 0; e < in->nr_events; e++)
			if (!strcmp(plan->events[in->events[e]].text, text))
				return true;
	}
	return false;
}

/* Skylake-SP level 3 (L1, L2, L3, DRAM and store bound): an event two
 * metrics share is opened in each metric's group, perf's rule. Largest
 * first: DRAM bound's 7 general events take two groups of 4; L2 bound's are
 * a subset and too many for one group, so it reads them; L3 bound's are in
 * the first of them, so it reads those too; L1 bound has STALLS_MEM_ANY,
 * which none has, and gets a group of its own (cycles and STALLS_L1D_MISS
 * #2); store bound's new event fits beside it. Each metric is computed from
 * its own group's counts, which here differ from copy 1's. */
static void test_skx_shared_events_in_each_group(void)
{
	static const char *const copy1[] = { "cycles", "stalls_l3_miss", "stalls_l1d_miss", "stalls_l2_miss",
					     "load_l2_hit", "load_fb_hit", "load_l1_miss", "fb_full_cycles" };
	static const int counts[] = { 1000, 100, 400, 300, 100, 50, 200, 125 };
	/* L1 and store bound's group, counted half the time */
	static const struct { const char *key; int value; } own[] = {
		{ "stalls_mem_any/", 300 }, { "stalls_l1d_miss/#2", 200 }, { "cycles/#2", 800 }, { "bound_on_stores/", 120 },
	};
	const char *metrics = "topdown.l1_bound,topdown.l2_bound,topdown.l3_bound,topdown.dram_bound,topdown.store_bound";
	struct rig r;

	values_begin(1.0);
	for (int cpu = 0; cpu < 16; cpu++) {
		for (int i = 0; i < 8; i++)
			value("\"cpu/%s/@cpu%d\": %d", copy1[i], cpu, counts[i]);
		for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
			value("\"cpu/%s@cpu%d\": {\"value\": %d, \"enabled_ns\": 1000000000, \"running_ns\": 500000000}",
			      own[i].key, cpu, own[i].value);
	}
	values_end();
	if (rig_run(&r, "skylake-sp-2s", metrics) == 0) {
		const struct metric_value *l1 = get(&r, "topdown.l1_bound", SCOPE_SYSTEM, -1);

		/* DRAM bound's 8 events, then 3 + 1 (L1 and store bound) */
		CHECK_EQ_INT(r.plan->nr_events, 12);
		CHECK_EQ_INT(r.plan->nr_groups, 3);
		CHECK_EQ_INT(r.plan->nr_copies, 2);   /* cycles and STALLS_L1D_MISS #2 */
		CHECK(metric_group(r.plan, "topdown.l1_bound") >= 0);
		CHECK_EQ_INT(metric_group(r.plan, "topdown.store_bound"), metric_group(r.plan, "topdown.l1_bound"));
		CHECK(metric_group(r.plan, "topdown.l3_bound") >= 0);
		CHECK(metric_group(r.plan, "topdown.l3_bound") != metric_group(r.plan, "topdown.l1_bound"));
		CHECK_EQ_INT(metric_group(r.plan, "topdown.dram_bound"), -1);   /* 7 general events on 4 counters */
		CHECK(metric_reads(r.plan, "topdown.l1_bound", "cpu/event=0x3c/#2"));
		CHECK(!metric_reads(r.plan, "topdown.l1_bound", "cpu/event=0x3c/"));
		CHECK(metric_reads(r.plan, "topdown.l3_bound", "cpu/event=0x3c/"));
		CHECK(metric_reads(r.plan, "topdown.store_bound", "cpu/event=0x3c/#2"));
		/* its own group: (300 - 200) x 2 / (800 x 2) */
		CHECK_METRIC(&r, "topdown.l1_bound", SCOPE_SYSTEM, -1, 0.125);
		CHECK_NEAR(l1->coverage, 0.5, 1e-9);
		CHECK(!l1->mixed_slices);
		/* 120 x 2 / 1600 */
		CHECK_METRIC(&r, "topdown.store_bound", SCOPE_SYSTEM, -1, 0.15);
		/* copy 1: (300 - 100) / 1000; 100 x 1.25 / (125 + 125) x (400 - 300) / 1000; 0.1 + 0.1 - 0.05 */
		CHECK_METRIC(&r, "topdown.l3_bound", SCOPE_SYSTEM, -1, 0.2);
		CHECK_NEAR(get(&r, "topdown.l3_bound", SCOPE_SYSTEM, -1)->coverage, 1.0, 1e-9);
		CHECK_METRIC(&r, "topdown.l2_bound", SCOPE_SYSTEM, -1, 0.05);
		CHECK_METRIC(&r, "topdown.dram_bound", SCOPE_SYSTEM, -1, 0.15);
	}
	rig_free(&r);

	/* A replay line without a copy's value gives it copy 1's (as if every
	 * group counted the same): (500 - 400) / 1000, 100 / 1000. */
	values_begin(1.0);
	for (int cpu = 0; cpu < 16; cpu++) {
		for (int i = 0; i < 8; i++)
			value("\"cpu/%s/@cpu%d\": %d", copy1[i], cpu, counts[i]);
		value("\"cpu/stalls_mem_any/@cpu%d\": 500, \"cpu/bound_on_stores/@cpu%d\": 100", cpu, cpu);
	}
	values_end();
	if (rig_run(&r, "skylake-sp-2s", metrics) == 0) {
		CHECK_METRIC(&r, "topdown.l1_bound", SCOPE_SYSTEM, -1, 0.1);
		CHECK_METRIC(&r, "topdown.store_bound", SCOPE_SYSTEM, -1, 0.1);
		CHECK_NEAR(get(&r, "topdown.l1_bound", SCOPE_SYSTEM, -1)->coverage, 1.0, 1e-9);
	}
	rig_free(&r);
}

/* EPYC Zen 4: one amd_umc_N per channel, 4 per socket (cpu0 / cpu8). */
static void test_zen4(void)
{
	struct rig r;

	values_begin(1.0);
	for (int u = 0; u < 8; u++)
		value("\"amd_umc_%d/cas_rd/\": %d", u, u < 4 ? 1000 : 3000);
	values_end();
	if (rig_run(&r, "epyc-zen4-2s", "mem.read_bw") == 0) {
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 0, 4 * 1000 * 64.0);
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_SOCKET, 1, 4 * 3000 * 64.0);
	}
	rig_free(&r);
}

/* Opteron 6300, 4 sockets x 2 nodes: amd_nb counted on cpu 4k for node k. */
static void test_opteron(void)
{
	struct rig r;

	values_begin(1.0);
	for (int n = 0; n < 8; n++) {
		value("\"amd_nb/cpu_to_local_mem/@cpu%d\": %d", n * 4, 100 * (n + 1));
		value("\"amd_nb/cpu_to_remote_mem/@cpu%d\": %d", n * 4, n == 7 ? 700 : 10 * (n + 1));
	}
	values_end();
	if (rig_run(&r, "opteron6300-4s", "mem.remote_ratio") == 0) {
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_NODE, 0, 10.0 / 110.0);
		/* node 7: 700 / (800 + 700) */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_NODE, 7, 700.0 / 1500.0);
		/* socket 3 = nodes 6 and 7: (70 + 700) / (700 + 70 + 800 + 700) */
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SOCKET, 3, 770.0 / 2270.0);
	}
	rig_free(&r);
}

/* ThunderX2: uncore_dmc_<node>, one per socket. */
static void test_thunderx2(void)
{
	struct rig r;

	values_begin(4.0);
	value("\"uncore_dmc_0/read_txns/\": 1000");
	value("\"uncore_dmc_1/read_txns/\": 3000");
	values_end();
	if (rig_run(&r, "thunderx2-2s", "mem.read_bw") == 0) {
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 0, 16000.0);   /* 1000 x 64 / 4 s */
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 1, 48000.0);
	}
	rig_free(&r);
}

/* hip09: L3C v2 data-source filters give local/remote per SCCL. */
static void test_hip09(void)
{
	static const int sccl[] = { 1, 3, 5, 7 };
	struct rig r;

	values_begin(1.0);
	for (int s = 0; s < 4; s++) {
		value("\"hisi_sccl%d_l3c10/dat_local_ddr/\": %d", sccl[s], 900);
		value("\"hisi_sccl%d_l3c10/dat_cross_die_ddr/\": %d", sccl[s], s == 0 ? 60 : 0);
		value("\"hisi_sccl%d_l3c10/dat_cross_socket_ddr/\": %d", sccl[s], s == 0 ? 40 : 100);
	}
	values_end();
	if (rig_run(&r, "hip09-2s", "mem.remote_ratio") == 0) {
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_NODE, 0, 100.0 / 1000.0);
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_NODE, 3, 100.0 / 1000.0);
		CHECK_METRIC(&r, "mem.remote_ratio", SCOPE_SYSTEM, -1, 400.0 / 4000.0);
	}
	rig_free(&r);
}

/* Neoverse N1 + CMN: the system-level cache from the mesh's HN-F nodes (the
 * cores' LL_CACHE events depend on CPUECTLR.EXTLLC), CMN on one CPU. */
static void test_neoverse(void)
{
	struct rig r;

	values_begin(1.0);
	value("\"arm_cmn_0/hnf_slc_sf_cache_access/\": 8000");
	value("\"arm_cmn_0/hnf_cache_miss/\": 1600");
	value("\"arm_cmn_0/hnf_snp_sent/\": 777");
	values_end();
	if (rig_run(&r, "neoverse-n1-cmn", "llc.miss_rate,coherence.snoops_sent") == 0) {
		CHECK_METRIC(&r, "llc.miss_rate", SCOPE_SYSTEM, -1, 1600.0 / 8000.0);
		CHECK_METRIC(&r, "coherence.snoops_sent", SCOPE_SOCKET, 0, 777.0);
	}
	rig_free(&r);
}

/* Mistakes in a replay file are errors naming file:line, never ignored. */
static void test_replay_errors(void)
{
	struct rig r;

	values_begin(1.0);
	value("\"hisi_sccl1_ddrc0/flux_rx/\": 1");
	values_end();
	CHECK(rig_run_quiet(&r, "kunpeng920-2s", "mem.read_bw", true) < 0);
	CHECK_CONTAINS(r.err.text, "replay.jsonl:2: unknown series 'hisi_sccl1_ddrc0/flux_rx/'");
	rig_free(&r);

	values_begin(1.0);
	value("\"uncore/clockticks/\": 1");
	values_end();
	CHECK(rig_run_quiet(&r, "westmere-ep-2s", "uncore.clockticks", true) < 0);
	CHECK_CONTAINS(r.err.text, "series 'uncore/clockticks/' is counted on several CPUs/nodes; name one: @cpu0 @cpu1");
	rig_free(&r);

	/* a metric this machine cannot give says why */
	values_begin(1.0);
	values_end();
	CHECK(rig_run_quiet(&r, "thunderx2-2s", "mem.remote_ratio", true) < 0);
	CHECK_CONTAINS(r.err.text, "metric 'mem.remote_ratio' is not available on this host: needs mem.remote_accesses, "
				   "not available: thunderx2: ThunderX2 has no local/remote split of memory requests (memscope list");
	rig_free(&r);
}

static const struct resolved_metric *resolved(const struct resolution *res, const char *metric)
{
	int idx = catalog_metric_index(res->cat, metric);

	if (idx < 0) {
		CHECK_FAIL("metric %s not in the catalog", metric);
		exit(1);
	}
	return &res->metrics[idx];
}

/* The eBPF metrics on this host: the kernel has BTF and the tests run as
 * root, so they resolve through the linux-ebpf family. */
static void test_bpf_resolution_live(void)
{
	struct host host;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct metric_plan *plan = NULL;
	struct ms_error err = { "" };
	char dir[4096];

	unsetenv("MEMSCOPE_SYSFS_ROOT");
	unsetenv("MEMSCOPE_PROCFS_ROOT");
	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (host_load(&host, &err) || catalog_load(&cat, dir, &err) || resolve(&host, cat, &res, &err)) {
		CHECK_FAIL("live: %s", err.text);
		goto out;
	}
	if (geteuid() != 0) {
		CHECK_CONTAINS(resolved(res, "proc.faults")->why, "need root, or CAP_BPF and CAP_PERFMON");
		goto out;
	}
	CHECK(resolved(res, "proc.faults")->available);
	CHECK(resolved(res, "proc.pages_alloc")->available);
	CHECK(resolved(res, "proc.offcpu_ratio")->available);
	CHECK_EQ_STR(res->families[resolved(res, "proc.faults")->family].family->name, "linux-ebpf");
	if (plan_names(res, "proc.faults,proc.pages_alloc,proc.offcpu_ratio,proc.oncpu_ns", &plan, &err)) {
		CHECK_FAIL("live plan: %s", err.text);
		goto out;
	}
	/* eBPF series, once each (oncpu_ns serves the ratio and itself), never in a perf group */
	CHECK_EQ_INT(plan->nr_events, 4);
	CHECK_EQ_INT(plan->nr_groups, 0);
	for (int i = 0; i < plan->nr_events; i++) {
		CHECK_EQ_INT(plan->events[i].how, EVENT_HOW_BPF);
		CHECK_EQ_INT(plan->events[i].group, -1);
		CHECK(!plan_event_is_perf(&plan->events[i]));
		CHECK(bpf_series_name_known(plan->events[i].text));
	}
	CHECK(!metric_plan_needs_procfs(plan));
out:
	metric_plan_free(plan);
	resolution_free(res);
	catalog_free(cat);
	host_free(&host);
}

/* A fixture machine has no BTF file: the eBPF metrics are unavailable and say why. */
static void test_bpf_unavailable_without_btf(void)
{
	struct rig r;

	unsetenv("MEMSCOPE_BPF_BTF");
	values_begin(1.0);
	values_end();
	CHECK(rig_run_quiet(&r, "kunpeng920-2s", "proc.pages_alloc", true) < 0);
	CHECK_CONTAINS(r.err.text, "metric 'proc.pages_alloc' is not available on this host: linux-ebpf: pages.alloc: "
				   "no kernel BTF at ");
	CHECK_CONTAINS(r.err.text, "kunpeng920-2s/sys/kernel/btf/vmlinux (a kernel built with "
				   "CONFIG_DEBUG_INFO_BTF=y has it): the eBPF probes cannot load");
	CHECK(!resolved(r.res, "proc.faults")->available);
	CHECK_CONTAINS(resolved(r.res, "proc.offcpu_ratio")->why, "needs proc.offcpu_ns, not available: linux-ebpf: proc.offcpu_ns: no "
				   "kernel BTF at ");
	CHECK_CONTAINS(resolved(r.res, "proc.offcpu_ratio")->detail, "needs proc.offcpu_ns, which is not available (");
	rig_free(&r);
}

/* eBPF series replayed on a 4-node machine (a BTF stand-in lets the family
 * resolve there: only its presence is checked before loading): pages by node
 * land in their node's scope, series without a node only in the system's. */
static void test_bpf_replay_per_node(void)
{
	struct rig r;
	char btf_dir[4096], btf[4200];

	tree_new(btf_dir, sizeof(btf_dir));
	tree_write(btf_dir, "vmlinux", "stand-in");
	snprintf(btf, sizeof(btf), "%s/vmlinux", btf_dir);
	setenv("MEMSCOPE_BPF_BTF", btf, 1);
	values_begin(2.0);
	value("\"proc.pages_alloc@node0\": 1000");
	value("\"proc.pages_alloc@node1\": 3000");
	value("\"proc.pages_alloc@node2\": 0");
	value("\"proc.pages_alloc@node3\": 0");
	value("\"proc.faults\": 4100");
	value("\"proc.oncpu_ns\": 750000");
	value("\"proc.offcpu_ns\": 250000");
	value("\"proc.migrations_cross_node\": 7");
	values_end();
	if (rig_run(&r, "kunpeng920-2s",
		    "proc.pages_alloc,proc.faults,proc.offcpu_ratio,proc.migrations_cross_node") == 0) {
		CHECK_METRIC(&r, "proc.pages_alloc", SCOPE_NODE, 0, 1000.0);
		CHECK_METRIC(&r, "proc.pages_alloc", SCOPE_NODE, 1, 3000.0);
		CHECK_METRIC(&r, "proc.pages_alloc", SCOPE_NODE, 2, 0.0);
		/* nodes 0 and 1 are socket 0 */
		CHECK_METRIC(&r, "proc.pages_alloc", SCOPE_SOCKET, 0, 4000.0);
		CHECK_METRIC(&r, "proc.pages_alloc", SCOPE_SYSTEM, -1, 4000.0);
		CHECK_METRIC(&r, "proc.faults", SCOPE_SYSTEM, -1, 4100.0);
		/* a fault count has no node: shown as not counted there, never as 0 */
		CHECK_INVALID(&r, "proc.faults", SCOPE_NODE, 0);
		CHECK_CONTAINS(get(&r, "proc.faults", SCOPE_NODE, 0)->why, "no counter of this metric belongs");
		/* ... with the code a page decides on (it drops the column), not the words */
		CHECK_EQ_INT(get(&r, "proc.faults", SCOPE_NODE, 0)->why_code, METRIC_WHY_NOT_IN_SCOPE);
		CHECK_INVALID(&r, "proc.offcpu_ratio", SCOPE_NODE, 0);
		CHECK_EQ_INT(get(&r, "proc.offcpu_ratio", SCOPE_NODE, 0)->why_code, METRIC_WHY_NOT_IN_SCOPE);
		CHECK_EQ_INT(get(&r, "proc.faults", SCOPE_SYSTEM, -1)->why_code, METRIC_WHY_OTHER);
		/* 250000 / (750000 + 250000) */
		CHECK_METRIC(&r, "proc.offcpu_ratio", SCOPE_SYSTEM, -1, 0.25);
		CHECK_METRIC(&r, "proc.migrations_cross_node", SCOPE_SYSTEM, -1, 7.0);
	}
	rig_free(&r);
	unsetenv("MEMSCOPE_BPF_BTF");
	tree_remove(btf_dir);
}

/* A series the file does not give is "not read", not zero. */
static void test_missing_value_is_not_zero(void)
{
	struct rig r;

	values_begin(1.0);
	value("\"uncore_dmc_0/read_txns/\": 1000");
	values_end();
	if (rig_run(&r, "thunderx2-2s", "mem.read_bw") == 0) {
		CHECK_METRIC(&r, "mem.read_bw", SCOPE_NODE, 0, 64000.0);
		CHECK_INVALID(&r, "mem.read_bw", SCOPE_NODE, 1);
		CHECK_INVALID(&r, "mem.read_bw", SCOPE_SYSTEM, -1);
		CHECK_CONTAINS(get(&r, "mem.read_bw", SCOPE_SYSTEM, -1)->why, "not read");
	}
	rig_free(&r);
}

/* On this host, for real: the kernel's numastat counts a workload's page allocations. */
/* The procfs source for a plan's kernel statistics, made as the session
 * makes it: through the registry, with the names the source claims. */
static int create_procfs(struct source *src, const struct host *host, const struct metric_plan *plan,
			 struct ms_error *err)
{
	const char *names[64];
	struct source_request req = { .host = host, .names = names, .plan = plan, .notes = stderr };

	for (int i = 0; i < plan->nr_events && req.nr_names < 64; i++)
		if (procfs_source_kind.claims(&procfs_source_kind, plan->events[i].text))
			names[req.nr_names++] = plan->events[i].text;
	return procfs_source_kind.create(&procfs_source_kind, src, &req, err);
}

static void test_live_numastat(void)
{
	struct host host;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct metric_plan *plan = NULL;
	struct metric_engine *engine = NULL;
	struct metric_values *values = NULL;
	struct series_table table = { 0 };
	struct frame frame = { 0 };
	struct source src = { 0 };
	struct ms_error err = { "" };
	char dir[4096];
	size_t size = 64u << 20;
	char *mem;

	unsetenv("MEMSCOPE_SYSFS_ROOT");
	unsetenv("MEMSCOPE_PROCFS_ROOT");
	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (host_load(&host, &err) || catalog_load(&cat, dir, &err) || resolve(&host, cat, &res, &err) ||
	    plan_names(res, "numa.hit,numa.local,kernel.pages_migrated", &plan, &err) ||
	    create_procfs(&src, &host, plan, &err) || src.ops->open(&src, &table, &err) ||
	    frame_init(&frame, table.nr) || metric_engine_new(plan, &host, &table, &engine, &err) ||
	    src.ops->enable(&src, &err)) {
		CHECK_FAIL("live: %s", err.text);
		goto out;
	}
	/* Each plan metric's catalog definition, by the plan's own index. */
	for (int i = 0; i < plan->nr_metrics; i++)
		CHECK_EQ_INT(metric_plan_find(plan, metric_plan_catalog_metric(plan, i)->name), i);
	CHECK_EQ_STR(metric_plan_catalog_metric(plan, metric_plan_find(plan, "numa.local"))->name, "numa.local");
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(mem, size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < size; i += 4096)
		mem[i] = 1;
	src.ops->sample(&src, &frame);
	frame.interval_ns = 1000000000;
	values = metric_values_new(engine);
	CHECK(values != NULL);
	if (values) {
		const struct metric_value *hit, *sys;

		metric_engine_compute(engine, &frame, values);
		hit = metric_engine_value(engine, values, metric_plan_find(plan, "numa.hit"), SCOPE_NODE, 0);
		sys = metric_engine_value(engine, values, metric_plan_find(plan, "numa.local"), SCOPE_SYSTEM, 0);

		/* 16384 pages touched, each allocated on node 0 */
		CHECK(hit->valid);
		CHECK(hit->value >= 16384 * 0.95);
		CHECK(sys->valid);
		CHECK(sys->value >= 16384 * 0.95);
		fprintf(stderr, "live: numa.hit on node0 = %.0f pages for 16384 touched\n", hit->value);
	}
	munmap(mem, size);
out:
	metric_values_free(values);
	metric_engine_free(engine);
	if (src.ops)
		src.ops->close(&src);
	frame_free(&frame);
	series_table_free(&table);
	metric_plan_free(plan);
	resolution_free(res);
	catalog_free(cat);
	host_free(&host);
}

int main(void)
{
	test_kunpeng920();
	test_westmere();
	test_skylake();
	test_icelake();
	test_sapphire_rapids();
	test_zen3_multiplexing();
	test_skx_topdown_group_with_fixed_counters();
	test_skx_shared_events_in_each_group();
	test_zen4();
	test_opteron();
	test_thunderx2();
	test_hip09();
	test_neoverse();
	test_replay_errors();
	test_missing_value_is_not_zero();
	test_live_numastat();
	test_bpf_resolution_live();
	test_bpf_unavailable_without_btf();
	test_bpf_replay_per_node();
	return check_summary("metrics");
}
