#include "events/pfm.h"

/* linux/perf_event.h first: libpfm4 then skips its own copy of the ABI. */
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/event.h"
#include "host/host.h"
#include "host/pmu_vendor.h"

static int pfm_ready(struct ms_error *err)
{
	static int state; /* 0 untried, 1 ok, -1 failed: libpfm4 itself is process-global */
	int ret;

	if (state)
		return state > 0 ? 0 : -1;
	/* PMUs libpfm4 considers absent must still encode: sysfs, not CPUID, says
	 * what exists (and fixture machines are never this CPU). */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
	ret = pfm_initialize();
	state = ret == PFM_SUCCESS ? 1 : -1;
	if (state < 0)
		ms_error_set(err, "libpfm4 failed to initialise: %s", pfm_strerror(ret));
	return state > 0 ? 0 : -1;
}

bool pfm_kernel_pmu_name(const char *pfm_name, char *buf, size_t size)
{
	return pmu_vendor_kernel_name(pmu_vendors_load(), pfm_name, buf, size);
}

/* Keep only the bits of code that the kernel PMU's format fields describe in
 * word: libpfm4's raw codes include enable/interrupt bits the driver sets itself. */
static uint64_t mask_for_word(const struct pmu *pmu, enum pmu_config_word word)
{
	uint64_t mask = 0;

	for (int i = 0; i < pmu->nr_formats; i++)
		if (pmu->formats[i].word == word)
			mask |= pmu->formats[i].mask;
	return mask;
}

static int encode_uncore(const struct host *host, const char *text, const char *pfm_pmu,
			 struct event *ev, struct ms_error *err)
{
	char kernel_name[64], *fstr = NULL;
	uint64_t *codes = NULL;
	int count = 0, idx, ret;
	const struct pmu *pmu;

	if (!pfm_kernel_pmu_name(pfm_pmu, kernel_name, sizeof(kernel_name))) {
		ms_error_set(err, "'%s': libpfm4 PMU %s has no known kernel PMU name; "
			     "use the kernel's spelling instead (pmu/event=...,umask=.../), or name it in the "
			     "libpfm4: key of its catalog family (docs/catalog.md)", text, pfm_pmu);
		return -1;
	}
	pmu = pmu_find(&host->pmus, kernel_name);
	if (!pmu) {
		ms_error_set(err, "'%s': libpfm4 knows this event, but this kernel has no '%s' PMU "
			     "(nothing in %s/bus/event_source/devices/%s); libpfm4 decides presence from "
			     "CPUID, the kernel decides what can be counted: is the uncore driver loaded, "
			     "or is this a virtual machine?",
			     text, kernel_name, host->roots.sys, kernel_name);
		return -1;
	}
	ret = pfm_get_event_encoding(text, PFM_PLM0 | PFM_PLM3, &fstr, &idx, &codes, &count);
	if (ret != PFM_SUCCESS) {
		ms_error_set(err, "'%s': libpfm4 cannot encode it: %s", text, pfm_strerror(ret));
		return -1;
	}
	ev->pfm_code = count > 0 ? codes[0] : 0;
	ev->has_pfm_code = true;
	ev->attr.type = (uint32_t)pmu->type;
	ev->attr.config = ev->pfm_code & mask_for_word(pmu, PMU_CONFIG);
	if (count > 1)
		ev->attr.config1 = codes[1] & mask_for_word(pmu, PMU_CONFIG1);
	free(codes);
	free(fstr);
	ev->pmu_name = strdup(pmu->name);
	if (!ev->pmu_name) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (event_bind_pmu(ev, pmu, err) < 0)
		return -1;
	return 0;
}

static int encode_core(const char *text, struct event *ev, struct ms_error *err)
{
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	memset(&arg, 0, sizeof(arg));
	arg.attr = &ev->attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(text, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		ms_error_set(err, "'%s': libpfm4 cannot encode it: %s", text, pfm_strerror(ret));
		return -1;
	}
	free(fstr);
	/* libpfm4 fills size for its own ABI; perf_event_open wants ours. */
	ev->attr.size = sizeof(ev->attr);
	ev->pmu_name = strdup(ev->attr.type == PERF_TYPE_SOFTWARE ? "software" : "cpu");
	return ev->pmu_name ? 0 : -1;
}

int pfm_event_encode(const struct host *host, const char *text, struct event *ev, struct ms_error *err)
{
	pfm_event_info_t einfo;
	pfm_pmu_info_t pinfo;
	int idx;

	if (pfm_ready(err) < 0)
		return -1;
	idx = pfm_find_event(text);
	if (idx < 0) {
		ms_error_set(err, "'%s': not a libpfm4 event (%s); list them with: showevtinfo "
			     "(libpfm4 examples) or memscope list --events", text, pfm_strerror(idx));
		return -1;
	}
	memset(&einfo, 0, sizeof(einfo));
	memset(&pinfo, 0, sizeof(pinfo));
	einfo.size = sizeof(einfo);
	pinfo.size = sizeof(pinfo);
	if (pfm_get_event_info(idx, PFM_OS_NONE, &einfo) != PFM_SUCCESS ||
	    pfm_get_pmu_info(einfo.pmu, &pinfo) != PFM_SUCCESS) {
		ms_error_set(err, "'%s': libpfm4 has no information about it", text);
		return -1;
	}
	ev->origin = EVENT_LIBPFM;
	if (pinfo.type == PFM_PMU_TYPE_UNCORE)
		return encode_uncore(host, text, pinfo.name, ev, err);
	return encode_core(text, ev, err);
}

bool pfm_pmu_iterate(int *cursor, struct pfm_pmu_view *view)
{
	pfm_pmu_info_t pinfo;

	if (pfm_ready(NULL) < 0)
		return false;
	for (; *cursor < PFM_PMU_MAX; (*cursor)++) {
		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info((pfm_pmu_t)*cursor, &pinfo) != PFM_SUCCESS || !pinfo.name)
			continue;
		memset(view, 0, sizeof(*view));
		snprintf(view->name, sizeof(view->name), "%s", pinfo.name);
		snprintf(view->desc, sizeof(view->desc), "%s", pinfo.desc ? pinfo.desc : "");
		view->libpfm_present = pinfo.is_present;
		view->uncore = pinfo.type == PFM_PMU_TYPE_UNCORE;
		view->nr_events = pinfo.nevents;
		view->nr_counters = pinfo.num_cntrs;
		if (!pfm_kernel_pmu_name(pinfo.name, view->kernel_pmu, sizeof(view->kernel_pmu)))
			view->kernel_pmu[0] = '\0';
		(*cursor)++;
		return true;
	}
	return false;
}
