/* PMU discovery and term encoding on every fixture machine, on this host's
 * live /sys, and the error messages for broken PMU directories. */
#include <linux/perf_event.h>

#include "check.h"
#include "fixture_tree.h"
#include "host/pmu.h"

static struct pmu_set load(const char *machine)
{
	struct pmu_set set = { 0 };
	struct ms_error err = { "" };

	if (pmu_set_load(&set, fixture_sys(machine), &err) < 0)
		CHECK_FAIL("%s: %s", machine, err.text);
	return set;
}

static const struct pmu *find(const struct pmu_set *set, const char *name)
{
	const struct pmu *pmu = pmu_find(set, name);

	if (!pmu)
		CHECK_FAIL("no PMU %s", name);
	return pmu;
}

/* pmu/terms/ must give exactly these config words. */
static void check_encoding(const struct pmu_set *set, const char *pmu_name, const char *terms,
			   uint64_t config, uint64_t config1, uint64_t config2)
{
	const struct pmu *pmu = find(set, pmu_name);
	struct perf_event_attr attr = { 0 };
	struct ms_error err = { "" };

	if (!pmu)
		return;
	if (pmu_encode_terms(pmu, terms, &attr, &err) < 0) {
		CHECK_FAIL("%s/%s/: %s", pmu_name, terms, err.text);
		return;
	}
	if (attr.config != config || attr.config1 != config1 || attr.config2 != config2)
		CHECK_FAIL("%s/%s/: config 0x%llx config1 0x%llx config2 0x%llx, expected 0x%" PRIx64
			   " 0x%" PRIx64 " 0x%" PRIx64, pmu_name, terms, attr.config, attr.config1,
			   attr.config2, config, config1, config2);
	check_count++;
}

static void check_encoding_error(const struct pmu_set *set, const char *pmu_name,
				 const char *terms, const char *expected)
{
	const struct pmu *pmu = find(set, pmu_name);
	struct perf_event_attr attr = { 0 };
	struct ms_error err = { "" };

	if (!pmu)
		return;
	if (pmu_encode_terms(pmu, terms, &attr, &err) == 0) {
		CHECK_FAIL("%s/%s/ was accepted", pmu_name, terms);
		return;
	}
	CHECK_CONTAINS(err.text, expected);
}

static void check_cpumask(const struct pmu_set *set, const char *pmu_name, bool has_cpumask,
			  const char *cpus)
{
	const struct pmu *pmu = find(set, pmu_name);
	char buf[256];

	if (!pmu)
		return;
	CHECK_EQ_INT(pmu->has_cpumask, has_cpumask);
	cpulist_format(&pmu->cpumask, buf, sizeof(buf));
	CHECK_EQ_STR(buf, cpus);
}

static int count_prefix(const struct pmu_set *set, const char *prefix)
{
	int n = 0;

	for (int i = 0; i < set->nr; i++)
		n += strncmp(set->pmus[i].name, prefix, strlen(prefix)) == 0;
	return n;
}

/* Sorted, unique types, the kernel's fixed ones in place; uncore PMUs get
 * dynamic types, above PERF_TYPE_MAX (6). */
static void check_common(const struct pmu_set *set, const char *machine)
{
	fprintf(stderr, "%s: %d PMUs\n", machine, set->nr);
	for (int i = 1; i < set->nr; i++) {
		CHECK(strcmp(set->pmus[i - 1].name, set->pmus[i].name) < 0);
		for (int j = 0; j < i; j++)
			if (set->pmus[i].type == set->pmus[j].type)
				CHECK_FAIL("%s: %s and %s share type %d", machine, set->pmus[i].name,
					   set->pmus[j].name, set->pmus[i].type);
	}
	CHECK_EQ_INT(find(set, "software")->type, 1);
	CHECK_EQ_INT(find(set, "tracepoint")->type, 2);
	CHECK(pmu_find_type(set, 1) == pmu_find(set, "software"));
	CHECK(pmu_find_type(set, 999) == NULL);
	CHECK(pmu_find(set, "no_such_pmu") == NULL);
	for (int i = 0; i < set->nr; i++) {
		const struct pmu *p = &set->pmus[i];

		if (p->has_cpumask) {
			CHECK(p->type >= 6);
			CHECK(p->cpumask.nr >= 1);
		}
		for (int f = 0; f < p->nr_formats; f++)
			CHECK(p->formats[f].width >= 1 && p->formats[f].mask != 0);
		/* .scale/.unit files are attributes of an alias, never aliases. */
		for (int a = 0; a < p->nr_aliases; a++)
			CHECK(strchr(p->aliases[a].name, '.') == NULL);
	}
}

static void test_kunpeng920(void)
{
	struct pmu_set set = load("kunpeng920-2s");
	const struct pmu *ddrc = find(&set, "hisi_sccl1_ddrc0");

	check_common(&set, "kunpeng920-2s");
	CHECK_EQ_INT(set.nr, 36);
	CHECK_EQ_INT(count_prefix(&set, "hisi_sccl"), 32);
	check_cpumask(&set, "hisi_sccl1_ddrc0", true, "0");
	check_cpumask(&set, "hisi_sccl3_ddrc3", true, "8");
	check_cpumask(&set, "hisi_sccl7_hha3", true, "24");
	check_cpumask(&set, "hisi_sccl1_l3c11", true, "4");
	/* The core PMU lists its CPUs in `cpus`: not an uncore cpumask. */
	check_cpumask(&set, "armv8_pmuv3_0", false, "0-31");
	if (ddrc) {
		CHECK_EQ_INT(ddrc->nr_formats, 1);
		CHECK_EQ_INT(pmu_format_find(ddrc, "event")->width, 5);
		CHECK_EQ_INT(ddrc->nr_aliases, 8);
		CHECK_EQ_STR(pmu_alias_find(ddrc, "flux_rd")->terms, "config=0x01");
		CHECK_NEAR(pmu_alias_find(ddrc, "flux_rd")->scale, 1.0, 0);
		CHECK_EQ_STR(pmu_alias_find(ddrc, "flux_rd")->unit, "");
	}
	check_encoding(&set, "hisi_sccl1_ddrc0", "event=0x1", 0x1, 0, 0);
	check_encoding(&set, "hisi_sccl1_ddrc0", "flux_rd", 0x1, 0, 0);
	check_encoding(&set, "hisi_sccl5_ddrc2", "flux_wr", 0x0, 0, 0);
	check_encoding(&set, "hisi_sccl1_ddrc0", "event=0x1f", 0x1f, 0, 0);
	check_encoding_error(&set, "hisi_sccl1_ddrc0", "event=0x20",
			     "hisi_sccl1_ddrc0: event=0x20 does not fit: field 'event' is 5 bits "
			     "wide (config), at most 0x1f");
	check_encoding(&set, "hisi_sccl3_hha2", "rx_outer", 0x01, 0, 0);
	check_encoding(&set, "hisi_sccl3_hha2", "rd_ddr_128b", 0x1e, 0, 0);
	check_encoding(&set, "hisi_sccl1_l3c10", "rd_hit_cpipe", 0x02, 0, 0);
	check_encoding(&set, "armv8_pmuv3_0", "remote_access", 0x31, 0, 0);
	check_encoding(&set, "armv8_pmuv3_0", "event=0x37,long", 0x37, 1, 0);
	check_encoding_error(&set, "hisi_sccl1_ddrc0", "umask=1",
			     "hisi_sccl1_ddrc0: unknown term 'umask'; hisi_sccl1_ddrc0 fields: "
			     "event (or one of its 8 event names");
	pmu_set_free(&set);
	CHECK(set.pmus == NULL && set.nr == 0);
}

static void test_hip09(void)
{
	struct pmu_set set = load("hip09-2s");

	check_common(&set, "hip09-2s");
	CHECK_EQ_INT(count_prefix(&set, "hisi_sicl"), 2);
	check_cpumask(&set, "hisi_sicl2_pa0", true, "16");
	check_encoding(&set, "hisi_sccl1_ddrc0_0", "flux_rd", 0x84, 0, 0);
	check_encoding(&set, "hisi_sccl1_ddrc1_0", "event=0xff", 0xff, 0, 0);
	/* L3C v2: data source filter in config1, core tracetag in config2. */
	check_encoding(&set, "hisi_sccl1_l3c10", "dat_access,datasrc_cfg=0x10,tt_req=0x4", 0xb9,
		       (0x10ULL << 11) | (0x4ULL << 8), 0);
	check_encoding(&set, "hisi_sccl1_l3c10", "l3c_ref,tt_core=0xff", 0xb8, 0, 0xff);
	check_encoding(&set, "hisi_sccl1_l3c10", "event=0xb9,datasrc_skt", 0xb9, 1ULL << 16, 0);
	check_encoding_error(&set, "hisi_sccl1_l3c10", "datasrc_cfg=0x20",
			     "field 'datasrc_cfg' is 5 bits wide (config1), at most 0x1f");
	check_encoding(&set, "hisi_sicl0_pa0", "tx_req,srcid_cmd=0x1,srcid_msk=0x7ff", 0x5c,
		       (1ULL << 22) | (0x7ffULL << 33), 0);
	check_encoding(&set, "hisi_sccl5_sllc0", "rx_data,tracetag_en", 0x31, 1ULL << 44, 0);
	check_encoding(&set, "hisi_sccl7_hha2", "cycles,datasrc_skt", 0x55, 1ULL << 23, 0);
	pmu_set_free(&set);
}

static void test_thunderx2(void)
{
	struct pmu_set set = load("thunderx2-2s");

	check_common(&set, "thunderx2-2s");
	CHECK_EQ_INT(count_prefix(&set, "uncore_"), 6);
	check_cpumask(&set, "uncore_dmc_1", true, "8");
	check_cpumask(&set, "uncore_l3c_0", true, "0");
	check_encoding(&set, "uncore_dmc_0", "read_txns", 0xf, 0, 0);
	check_encoding(&set, "uncore_dmc_1", "event=0xb", 0xb, 0, 0);
	check_encoding(&set, "uncore_l3c_1", "read_hit", 0x17, 0, 0);
	check_encoding(&set, "uncore_ccpi2_1", "data_pktsent", 0x105, 0, 0);
	check_encoding(&set, "uncore_ccpi2_0", "event=0x3ff", 0x3ff, 0, 0);
	check_encoding_error(&set, "uncore_ccpi2_0", "event=0x400", "10 bits wide");
	check_encoding_error(&set, "uncore_l3c_0", "event=0x20", "5 bits wide");
	pmu_set_free(&set);
}

static void test_neoverse_cmn(void)
{
	struct pmu_set set = load("neoverse-n1-cmn");
	const struct pmu *cmn = find(&set, "arm_cmn_0");

	check_common(&set, "neoverse-n1-cmn");
	check_cpumask(&set, "arm_cmn_0", true, "0");
	check_cpumask(&set, "armv8_pmuv3_0", false, "0-7");
	if (cmn)
		CHECK_EQ_INT(pmu_format_find(cmn, "eventid")->width, 11);
	check_encoding(&set, "arm_cmn_0", "type=0x5,eventid=0x1,nodeid=0x24,bynodeid=1",
		       0x5 | (1ULL << 16) | (1ULL << 31) | (0x24ULL << 32), 0, 0);
	check_encoding(&set, "arm_cmn_0", "hnf_cache_miss", 0x10005, 0, 0);
	check_encoding(&set, "arm_cmn_0", "hnf_cache_miss,bynodeid,nodeid=0x24",
		       0x10005 | (1ULL << 31) | (0x24ULL << 32), 0, 0);
	check_encoding(&set, "arm_cmn_0", "hnf_qos_pocq_occupancy_all,occupid=0x1",
		       0x5 | (0xfULL << 16) | (0x1ULL << 27), 0, 0);
	check_encoding(&set, "arm_cmn_0", "dtc_cycles", 0x3, 0, 0);
	check_encoding(&set, "arm_cmn_0", "rnid_rxdat_flits", 0xa | (0x4ULL << 16), 0, 0);
	/* Watchpoints: the kernel's alias leaves five fields as '?'. */
	check_encoding_error(&set, "arm_cmn_0", "watchpoint_up",
			     "arm_cmn_0/watchpoint_up/ needs a value for 'wp_dev_sel'");
	check_encoding_error(&set, "arm_cmn_0", "watchpoint_up,wp_dev_sel=1,wp_chn_sel=0,wp_grp=0,"
			     "wp_val=0xff", "needs a value for 'wp_mask'");
	check_encoding(&set, "arm_cmn_0",
		       "watchpoint_down,wp_dev_sel=1,wp_chn_sel=2,wp_grp=1,wp_val=0xff,wp_mask=0xff00",
		       0x7770 | (0x2ULL << 16) | (1ULL << 48) | (2ULL << 51) | (1ULL << 56), 0xff,
		       0xff00);
	check_encoding_error(&set, "arm_cmn_0", "foo=1", "unknown term 'foo'; arm_cmn_0 fields: "
			     "bynodeid, eventid, nodeid, occupid, type, wp_chn_sel, wp_combine, "
			     "wp_dev_sel, wp_exclusive, wp_grp, wp_mask, wp_val (or one of its");
	check_encoding_error(&set, "arm_cmn_0", "nodeid=0x10000", "16 bits wide");
	check_encoding(&set, "armv8_pmuv3_0", "ll_cache_miss_rd", 0x37, 0, 0);
	check_encoding(&set, "armv8_pmuv3_0", "mem_access", 0x13, 0, 0);
	check_encoding(&set, "armv8_pmuv3_0", "ll_cache_rd", 0x36, 0, 0);
	pmu_set_free(&set);
}

static void test_westmere(void)
{
	struct pmu_set set = load("westmere-ep-2s");
	const struct pmu *uncore = find(&set, "uncore");

	check_common(&set, "westmere-ep-2s");
	check_cpumask(&set, "uncore", true, "0-1");
	CHECK_EQ_INT(find(&set, "cpu")->type, 4);
	check_cpumask(&set, "cpu", false, "");
	if (uncore)
		CHECK_EQ_INT(uncore->nr_aliases, 9);
	check_encoding(&set, "uncore", "event=0x03,umask=0x02", 0x0203, 0, 0);
	check_encoding(&set, "uncore", "qhl_request_remote_reads", 0x0420, 0, 0);
	check_encoding(&set, "uncore", "qhl_request_local_reads", 0x1020, 0, 0);
	check_encoding(&set, "uncore", "qmc_normal_reads_any", 0x0f2c, 0, 0);
	check_encoding(&set, "uncore", "clockticks", 0xff, 0, 0);
	check_encoding(&set, "uncore", "event=0x00,umask=0x01,edge,inv,cmask=1",
		       0x0100 | (1ULL << 18) | (1ULL << 23) | (1ULL << 24), 0, 0);
	check_encoding(&set, "cpu", "event=0xb7,umask=0x01,offcore_rsp=0x5011", 0x01b7, 0x5011, 0);
	check_encoding(&set, "cpu", "cpu-cycles", 0x3c, 0, 0);
	check_encoding(&set, "msr", "tsc", 0x0, 0, 0);
	check_encoding(&set, "msr", "event=0xffffffffffffffff", ~0ULL, 0, 0);
	pmu_set_free(&set);
}

static void test_skylake(void)
{
	struct pmu_set set = load("skylake-sp-2s");
	const struct pmu *imc = find(&set, "uncore_imc_0");
	const struct pmu *power = find(&set, "power");

	check_common(&set, "skylake-sp-2s");
	CHECK_EQ_INT(count_prefix(&set, "uncore_imc_"), 6);
	CHECK_EQ_INT(count_prefix(&set, "uncore_cha_"), 4);
	CHECK_EQ_INT(count_prefix(&set, "uncore_upi_"), 3);
	check_cpumask(&set, "uncore_imc_5", true, "0,4");
	if (imc) {
		const struct pmu_alias *rd = pmu_alias_find(imc, "cas_count_read");

		CHECK_EQ_INT(imc->nr_aliases, 3);
		if (rd) {
			CHECK_EQ_STR(rd->terms, "event=0x04,umask=0x03");
			CHECK_NEAR(rd->scale, 6.103515625e-5, 1e-18);
			CHECK_EQ_STR(rd->unit, "MiB");
			/* 64-byte lines in MiB. */
			CHECK_NEAR(rd->scale * 1048576.0, 64.0, 1e-9);
		} else {
			CHECK_FAIL("uncore_imc_0 has no cas_count_read alias");
		}
		CHECK_NEAR(pmu_alias_find(imc, "clockticks")->scale, 1.0, 0);
	}
	if (power) {
		CHECK_NEAR(pmu_alias_find(power, "energy-pkg")->scale, 2.3283064365386962890625e-10,
			   1e-24);
		CHECK_EQ_STR(pmu_alias_find(power, "energy-pkg")->unit, "Joules");
	}
	check_encoding(&set, "uncore_imc_0", "cas_count_read", 0x0304, 0, 0);
	check_encoding(&set, "uncore_imc_3", "cas_count_write", 0x0c04, 0, 0);
	check_encoding(&set, "uncore_cha_2", "event=0x35,umask=0x21,filter_opc0=0x202,filter_nc",
		       0x2135, (0x202ULL << 41) | (1ULL << 62), 0);
	check_encoding(&set, "uncore_cha_0", "event=0x50,umask=0x02,thresh=1,tid_en",
		       0x0250 | (1ULL << 24) | (1ULL << 19), 0, 0);
	/* UPI umask spreads over 8-15, 32-43 and 45-55. */
	check_encoding(&set, "uncore_upi_1", "event=0x02,umask=0x1fff", 0xff02 | (0x1fULL << 32),
		       0, 0);
	check_encoding(&set, "uncore_upi_1", "umask=0x100000", (1ULL << 45), 0, 0);
	pmu_set_free(&set);
}

static void test_amd(void)
{
	struct pmu_set set = load("epyc-zen3-2s");

	check_common(&set, "epyc-zen3-2s");
	check_cpumask(&set, "amd_df", true, "0,8");
	check_cpumask(&set, "amd_l3", true, "0,4,8,12");
	CHECK_EQ_INT(find(&set, "amd_df")->nr_aliases, 0);
	CHECK_EQ_INT(pmu_format_find(find(&set, "amd_df"), "event")->width, 14);
	/* Split event field: 0x1f7 -> bits 0-7 and 32-35. */
	check_encoding(&set, "amd_df", "event=0x1f7,umask=0x38",
		       0xf7 | (0x38ULL << 8) | (0x1ULL << 32), 0, 0);
	check_encoding(&set, "amd_df", "event=0x7c7,umask=0x02", 0x02c7 | (0x7ULL << 32), 0, 0);
	check_encoding(&set, "amd_df", "event=0x3007", 0x07 | (0x3ULL << 59), 0, 0);
	check_encoding_error(&set, "amd_df", "event=0x4000", "14 bits wide");
	check_encoding(&set, "amd_l3", "event=0x04,umask=0xff,threadmask=0x3,enallslices,enallcores",
		       0xff04 | (0x3ULL << 56) | (1ULL << 46) | (1ULL << 47), 0, 0);
	check_encoding(&set, "amd_l3", "event=0x9a,umask=0x1f,sliceid=0x7,coreid=0x5",
		       0x1f9a | (0x7ULL << 48) | (0x5ULL << 42), 0, 0);
	check_encoding(&set, "cpu", "event=0x44,umask=0x40", 0x4044, 0, 0);
	check_encoding(&set, "cpu", "event=0x1c0", 0xc0 | (0x1ULL << 32), 0, 0);
	pmu_set_free(&set);

	set = load("epyc-zen4-2s");
	check_common(&set, "epyc-zen4-2s");
	CHECK_EQ_INT(count_prefix(&set, "amd_umc_"), 8);
	check_cpumask(&set, "amd_umc_3", true, "0");
	check_cpumask(&set, "amd_umc_5", true, "8");
	/* PerfMonV2 DF: event 0-7,32-37; umask 8-15,24-27. */
	check_encoding(&set, "amd_df", "event=0x1f,umask=0x7fe", 0x1f | (0xfeULL << 8) | (0x7ULL << 24),
		       0, 0);
	check_encoding(&set, "amd_df", "event=0x2df,umask=0xbff",
		       0xdf | (0x2ULL << 32) | (0xffULL << 8) | (0xbULL << 24), 0, 0);
	check_encoding(&set, "amd_df", "event=0x3fff", 0xff | (0x3fULL << 32), 0, 0);
	check_encoding(&set, "amd_umc_0", "event=0x0a,rdwrmask=0x1", 0x10a, 0, 0);
	check_encoding_error(&set, "amd_umc_0", "rdwrmask=4", "2 bits wide");
	pmu_set_free(&set);

	set = load("opteron6300-4s");
	check_common(&set, "opteron6300-4s");
	check_cpumask(&set, "amd_nb", true, "0,4,8,12,16,20,24,28");
	CHECK(pmu_find(&set, "amd_df") == NULL);
	check_encoding(&set, "amd_nb", "event=0x1f0,umask=0x40", 0x40f0 | (0x1ULL << 32), 0, 0);
	check_encoding(&set, "amd_nb", "event=0x4e1,umask=0xf7", 0xf7e1 | (0x4ULL << 32), 0, 0);
	check_encoding_error(&set, "amd_nb", "event=0x1000", "12 bits wide");
	check_encoding(&set, "cpu", "cache-misses", 0x077e, 0, 0);
	pmu_set_free(&set);
}

static void test_live(void)
{
	struct pmu_set set = { 0 };
	struct ms_error err = { "" };
	const struct pmu *msr;

	if (pmu_set_load(&set, "/sys", &err) < 0) {
		CHECK_FAIL("live /sys: %s", err.text);
		return;
	}
	check_common(&set, "live /sys");
	msr = pmu_find(&set, "msr");
	if (msr) {
		CHECK(msr->type >= 6);
		CHECK_EQ_INT(pmu_format_find(msr, "event")->width, 64);
		CHECK_EQ_STR(pmu_alias_find(msr, "tsc")->terms, "event=0x00");
	}
	for (int i = 0; i < set.nr; i++) {
		char mask[64];

		cpulist_format(&set.pmus[i].cpumask, mask, sizeof(mask));
		fprintf(stderr, "  live %-12s type %-3d cpumask '%s' formats %d aliases %d\n",
			set.pmus[i].name, set.pmus[i].type, mask, set.pmus[i].nr_formats,
			set.pmus[i].nr_aliases);
	}
	pmu_set_free(&set);
}

static void test_broken_trees(void)
{
	char root[256];
	struct pmu_set set = { 0 };
	struct ms_error err = { "" };

	CHECK_EQ_INT(pmu_set_load(&set, "/nonexistent-sysfs-root", &err), -1);
	CHECK_CONTAINS(err.text, "/nonexistent-sysfs-root/bus/event_source/devices: missing");

	tree_new(root, sizeof(root));
	tree_write(root, "bus/event_source/devices/good/type", "11\n");
	tree_write(root, "bus/event_source/devices/good/format/event", "config:0-7\n");
	tree_write(root, "bus/event_source/devices/bad/type", "12\n");
	tree_write(root, "bus/event_source/devices/bad/format/event", "config:0-7,\n");
	CHECK_EQ_INT(pmu_set_load(&set, root, &err), -1);
	CHECK_CONTAINS(err.text, "devices/bad/format/event: format \"config:0-7,\": bad bit list");
	CHECK(set.pmus == NULL && set.nr == 0);

	tree_write(root, "bus/event_source/devices/bad/format/event", "config:0-7\n");
	tree_write(root, "bus/event_source/devices/bad/events/ev", "event=1\n");
	tree_write(root, "bus/event_source/devices/bad/events/ev.scale", "lots\n");
	CHECK_EQ_INT(pmu_set_load(&set, root, &err), -1);
	CHECK_CONTAINS(err.text, "devices/bad/events/ev.scale: \"lots\": expected a positive number");

	tree_write(root, "bus/event_source/devices/bad/events/ev.scale", "0.5\n");
	tree_write(root, "bus/event_source/devices/bad/cpumask", "0-\n");
	CHECK_EQ_INT(pmu_set_load(&set, root, &err), -1);
	CHECK_CONTAINS(err.text, "devices/bad/cpumask: cannot read (Invalid argument); expected a "
		       "CPU list");

	tree_write(root, "bus/event_source/devices/bad/cpumask", "3\n");
	tree_write(root, "bus/event_source/devices/bad/type", "\n");
	CHECK_EQ_INT(pmu_set_load(&set, root, &err), -1);
	CHECK_CONTAINS(err.text, "devices/bad/type: cannot read");
	CHECK_CONTAINS(err.text, "expected the PMU's perf type number");

	tree_write(root, "bus/event_source/devices/bad/type", "12\n");
	if (pmu_set_load(&set, root, &err) == 0) {
		const struct pmu *bad = pmu_find(&set, "bad");

		CHECK_EQ_INT(set.nr, 2);
		CHECK_EQ_STR(set.pmus[0].name, "bad");
		CHECK_NEAR(pmu_alias_find(bad, "ev")->scale, 0.5, 0);
		CHECK_EQ_INT(bad->nr_aliases, 1);
		check_cpumask(&set, "bad", true, "3");
		check_cpumask(&set, "good", false, "");
		CHECK_EQ_INT(pmu_find(&set, "good")->nr_aliases, 0);
		pmu_set_free(&set);
	} else {
		CHECK_FAIL("repaired tree: %s", err.text);
	}
	tree_remove(root);
}

int main(void)
{
	test_kunpeng920();
	test_hip09();
	test_thunderx2();
	test_neoverse_cmn();
	test_westmere();
	test_skylake();
	test_amd();
	test_live();
	test_broken_trees();
	return check_summary("test_pmu");
}
