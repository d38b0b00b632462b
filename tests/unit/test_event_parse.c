/* The one event parser, on fixture machines: every spelling gives the exact
 * perf_event_attr the kernel expects, and bad names give helpful errors. */
#include <stdlib.h>

#include "catalog/catalog_vendor.h"
#include "check.h"
#include "config.h"
#include "events/event.h"
#include "host/host.h"

static int load_fixture(struct host *host, const char *machine)
{
	char root[4096];
	struct ms_error err = { "" };

	snprintf(root, sizeof(root), "%s/%s/sys", getenv("MEMSCOPE_TEST_FIXTURES"), machine);
	setenv("MEMSCOPE_SYSFS_ROOT", root, 1);
	if (host_load(host, &err) < 0) {
		CHECK_FAIL("host_load(%s): %s", machine, err.text);
		return -1;
	}
	return 0;
}

/* Parse text on host; checks type (the PMU's sysfs type) and config words. */
static void check_encoding(const struct host *host, const char *text, const char *pmu_name,
			   uint64_t config, uint64_t config1)
{
	struct event ev;
	struct ms_error err = { "" };
	const struct pmu *pmu = pmu_find(&host->pmus, pmu_name);

	if (event_parse(host, text, &ev, &err) < 0) {
		CHECK_FAIL("event_parse(%s): %s", text, err.text);
		return;
	}
	CHECK(pmu != NULL);
	if (pmu)
		CHECK_EQ_INT(ev.attr.type, pmu->type);
	CHECK_EQ_STR(ev.pmu_name, pmu_name);
	CHECK_EQ_U64(ev.attr.config, config);
	CHECK_EQ_U64(ev.attr.config1, config1);
	if (pmu && pmu->has_cpumask) {
		CHECK(ev.system_wide_only);
		CHECK_EQ_INT(ev.cpus.nr, pmu->cpumask.nr);
		CHECK(ev.attr.exclude_user == 0 && ev.attr.exclude_kernel == 0);
	}
	event_free(&ev);
}

static void check_pfm(const struct host *host, const char *text, const char *pmu_name,
		      uint64_t libpfm_code, uint64_t config)
{
	struct event ev;
	struct ms_error err = { "" };

	if (event_parse(host, text, &ev, &err) < 0) {
		CHECK_FAIL("event_parse(%s): %s", text, err.text);
		return;
	}
	CHECK(ev.origin == EVENT_LIBPFM);
	CHECK(ev.has_pfm_code);
	/* The raw codes listed in the reference for libpfm4 4.13. */
	CHECK_EQ_U64(ev.pfm_code, libpfm_code);
	CHECK_EQ_U64(ev.attr.config, config);
	CHECK_EQ_STR(ev.pmu_name, pmu_name);
	CHECK_EQ_INT(ev.attr.type, pmu_find(&host->pmus, pmu_name)->type);
	CHECK(ev.system_wide_only);
	event_free(&ev);
}

static void check_error(const struct host *host, const char *text, const char *needle)
{
	struct event ev;
	struct ms_error err = { "" };

	CHECK_EQ_INT(event_parse(host, text, &ev, &err), -1);
	CHECK_CONTAINS(err.text, needle);
}

static void westmere(void)
{
	struct host host;

	if (load_fixture(&host, "westmere-ep-2s") < 0)
		return;
	check_encoding(&host, "uncore/event=0x03,umask=0x02/", "uncore", 0x0203, 0);
	check_encoding(&host, "uncore/event=0x2f,umask=0x0f,edge,inv,cmask=3/", "uncore",
		       0x2f | 0x0f << 8 | 1 << 18 | 1 << 23 | 3u << 24, 0);
	check_encoding(&host, "uncore/clockticks/", "uncore", 0xff, 0);
	check_encoding(&host, "uncore/config=0x500203/", "uncore", 0x500203, 0);
	/* Global Queue through libpfm4: the raw code keeps the enable/interrupt bits
	 * (0x50 << 16), the kernel's format fields do not. */
	check_pfm(&host, "wsm_unc::UNC_GQ_ALLOC:RT_LLC_MISS", "uncore", 0x500203, 0x0203);
	check_pfm(&host, "nhm_unc::UNC_GQ_CYCLES_FULL:READ_TRACKER", "uncore", 0x500100, 0x0100);
	check_error(&host, "uncore/event=0x1ff/", "event");
	check_error(&host, "uncore/clockticks/k", "counts for all privilege levels");
	check_error(&host, "uncore/clocktick/", "did you mean 'uncore/clockticks/'");
	check_error(&host, "uncor/clockticks/", "did you mean 'uncore'");
	host_free(&host);
}

static void opteron(void)
{
	struct host host;

	if (load_fixture(&host, "opteron6300-4s") < 0)
		return;
	/* amd_nb event = config:0-7,32-35: 0x4e1 puts 0x4 into bits 32-35. */
	check_encoding(&host, "amd_nb/event=0x4e1,umask=0xf7/", "amd_nb", 0x4000000e1ull | 0xf7 << 8, 0);
	check_pfm(&host, "amd64_fam15h_nb::L3_CACHE_MISSES", "amd_nb", 0x40053f7e1ull, 0x40000f7e1ull);
	host_free(&host);
}

static void skylake(void)
{
	struct host host;
	struct event ev;
	struct ms_error err = { "" };

	if (load_fixture(&host, "skylake-sp-2s") < 0)
		return;
	check_encoding(&host, "uncore_imc_3/event=0x04,umask=0x03/", "uncore_imc_3", 0x0304, 0);
	check_pfm(&host, "skx_unc_imc3::UNC_M_CAS_COUNT:RD", "uncore_imc_3", 0x0304, 0x0304);
	check_pfm(&host, "skx_unc_imc0::UNC_M_CAS_COUNT:WR", "uncore_imc_0", 0x0c04, 0x0c04);
	/* An alias carries its .scale and .unit. */
	CHECK_EQ_INT(event_parse(&host, "uncore_imc_0/cas_count_read/", &ev, &err), 0);
	CHECK_NEAR(ev.scale, 6.103515625e-5, 1e-15);
	CHECK_EQ_STR(ev.unit, "MiB");
	event_free(&ev);
	host_free(&host);
}

static void amd_zen(void)
{
	struct host host;

	if (load_fixture(&host, "epyc-zen3-2s") < 0)
		return;
	/* amd_df event = config:0-7,32-35,59-60 (Linux arch/x86/events/amd/uncore.c). */
	check_encoding(&host, "amd_df/event=0x1f7,umask=0x38/", "amd_df", 0xf7 | 0x38 << 8 | 1ull << 32, 0);
	check_pfm(&host, "amd64_fam19h_zen3_l3::UNC_L3_MISSES", "amd_l3", 0x53ff9a, 0xff9a);
	host_free(&host);
}

static void arm(void)
{
	struct host host;

	if (load_fixture(&host, "kunpeng920-2s") < 0)
		return;
	check_encoding(&host, "hisi_sccl1_ddrc0/flux_rd/", "hisi_sccl1_ddrc0", 0x1, 0);
	check_encoding(&host, "hisi_sccl3_hha2/event=0x1c/", "hisi_sccl3_hha2", 0x1c, 0);
	check_error(&host, "hisi_sccl1_ddrc0/event=0x20/", "event");
	/* libpfm4's Westmere uncore has no kernel PMU on this machine. */
	check_error(&host, "wsm_unc::UNC_GQ_ALLOC:RT_LLC_MISS", "this kernel has no 'uncore' PMU");
	host_free(&host);

	if (load_fixture(&host, "thunderx2-2s") < 0)
		return;
	check_encoding(&host, "uncore_dmc_1/event=0xf/", "uncore_dmc_1", 0xf, 0);
	check_encoding(&host, "uncore_ccpi2_0/event=0x105/", "uncore_ccpi2_0", 0x105, 0);
	host_free(&host);

	if (load_fixture(&host, "neoverse-n1-cmn") < 0)
		return;
	/* arm-cmn: type 0-15, eventid 16-26, bynodeid 31, nodeid 32-47. */
	check_encoding(&host, "arm_cmn_0/type=0x5,eventid=0x1,bynodeid=1,nodeid=0x24/", "arm_cmn_0",
		       0x5 | 1ull << 16 | 1ull << 31 | 0x24ull << 32, 0);
	host_free(&host);
}

static void generic_and_lists(void)
{
	struct host host;
	struct event *events;
	int nr;
	struct ms_error err = { "" };

	if (load_fixture(&host, "westmere-ep-2s") < 0)
		return;
	CHECK_EQ_INT(event_list_parse(&host, "page-faults,uncore/event=0x03,umask=0x02/,cs,task-clock",
				      &events, &nr, &err), 0);
	CHECK_EQ_INT(nr, 4);
	CHECK_EQ_INT(events[0].attr.type, PERF_TYPE_SOFTWARE);
	CHECK_EQ_U64(events[0].attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK_EQ_STR(events[1].name, "uncore/event=0x03,umask=0x02/");
	CHECK_EQ_U64(events[1].attr.config, 0x0203);
	CHECK_EQ_U64(events[2].attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	CHECK_EQ_STR(events[3].unit, "msec");
	event_list_free(events, nr);
	CHECK_EQ_INT(event_list_parse(&host, "page-faults,nosuch", &events, &nr, &err), -1);
	CHECK_CONTAINS(err.text, "unknown event 'nosuch'");
	CHECK_EQ_INT(event_list_parse(&host, "", &events, &nr, &err), -1);
	CHECK_CONTAINS(err.text, "an empty list names nothing");
	check_error(&host, "context-switchs", "did you mean 'context-switches'");
	host_free(&host);
}

int main(void)
{
	/* libpfm4's PMU names are the catalog's libpfm4: keys, loaded as memscope's main sets it. */
	setenv("MEMSCOPE_CATALOG_DIR", MEMSCOPE_SOURCE_DIR "/catalog", 1);
	pmu_vendors_set_loader(catalog_pmu_vendors);
	westmere();
	opteron();
	skylake();
	amd_zen();
	arm();
	generic_and_lists();
	return check_summary("test_event_parse");
}
