/* The catalog's raw encodings agree with libpfm4: every catalog event that
 * names a libpfm4 event of a PMU Debian's libpfm4 knows (nhm_unc/wsm_unc,
 * amd64_fam15h_nb, skx_unc_*, amd64_fam19h_zen3_l3, the icx and spr cores) is
 * encoded both ways and the event/umask bits must be equal. The catalog side
 * goes through the same sysfs format fields memscope uses, on the family's
 * fixture machine. */
#include <linux/perf_event.h>
#include <perfmon/pfmlib.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "check.h"
#include "config.h"
#include "host/host.h"

static const struct {
	const char *family;
	const char *machine;
} fixtures[] = {
	{ "intel-nehalem-westmere", "westmere-ep-2s" },
	{ "intel-skylake-sp", "skylake-sp-2s" },
	{ "intel-icelake-sp", "icelake-sp-2s" },          /* core events only: libpfm4 4.13 has no ICX/SPR uncore */
	{ "intel-sapphire-rapids", "sapphire-rapids-2s" },
	{ "amd-fam15h-nb", "opteron6300-4s" },
	{ "amd-zen3", "epyc-zen3-2s" },
};

/* Bits of the format fields the catalog's terms set (event, umask, ...). */
static uint64_t term_mask(const struct pmu *pmu, const char *terms)
{
	char copy[256], *save = NULL;
	uint64_t mask = 0;

	snprintf(copy, sizeof(copy), "%s", terms);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		const struct pmu_format *fmt;

		if (eq)
			*eq = '\0';
		fmt = pmu_format_find(pmu, t);
		if (fmt && fmt->word == PMU_CONFIG)
			mask |= fmt->mask;
	}
	return mask;
}

static int compared;

static void check_family(const struct catalog_family *f, const char *machine)
{
	struct host host;
	struct ms_error err;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/sys", getenv("MEMSCOPE_TEST_FIXTURES"), machine);
	setenv("MEMSCOPE_SYSFS_ROOT", path, 1);
	if (host_load(&host, &err)) {
		CHECK_FAIL("%s: %s", machine, err.text);
		return;
	}
	for (int r = 0; r < f->nr_roles; r++) {
		const struct catalog_role *role = &f->roles[r];
		const struct pmu *pmu = NULL;

		for (int i = 0; i < host.pmus.nr && !pmu; i++)
			if (regexec(&role->match_re, host.pmus.pmus[i].name, 0, NULL, 0) == 0)
				pmu = &host.pmus.pmus[i];
		for (int e = 0; e < role->nr_events; e++) {
			const struct catalog_event *ev = &role->events[e];
			struct perf_event_attr attr;
			uint64_t *codes = NULL, mask;
			int count = 0, rc;

			if (!ev->pfm || ev->how != EVENT_HOW_CONFIG)
				continue;
			if (!pmu) {
				CHECK_FAIL("%s: no fixture PMU for role %s", machine, role->name);
				break;
			}
			memset(&attr, 0, sizeof(attr));
			if (pmu_encode_terms(pmu, ev->text, &attr, &err) < 0) {
				CHECK_FAIL("%s %s.%s: %s", f->name, role->name, ev->name, err.text);
				continue;
			}
			rc = pfm_get_event_encoding(ev->pfm, PFM_PLM0 | PFM_PLM3, NULL, NULL, &codes, &count);
			if (rc != PFM_SUCCESS || count < 1) {
				CHECK_FAIL("%s: libpfm4 cannot encode %s: %s", f->name, ev->pfm, pfm_strerror(rc));
				continue;
			}
			mask = term_mask(pmu, ev->text);
			if ((codes[0] & mask) != (attr.config & mask))
				CHECK_FAIL("%s %s.%s (%s): catalog config 0x%llx, libpfm4 %s = 0x%llx (compared bits 0x%llx)",
					   f->name, role->name, ev->name, ev->text, (unsigned long long)attr.config, ev->pfm,
					   (unsigned long long)codes[0], (unsigned long long)mask);
			check_count++;
			compared++;
			free(codes);
		}
	}
	host_free(&host);
}

int main(void)
{
	struct catalog *cat = NULL;
	struct ms_error err;
	char dir[4096];

	/* libpfm4 picks PMUs by CPUID; these are not this machine's, so ask for inactive ones too. */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	CHECK_EQ_INT(pfm_initialize(), PFM_SUCCESS);
	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (catalog_load(&cat, dir, &err)) {
		CHECK_FAIL("%s", err.text);
		return check_summary("catalog_pfm");
	}
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		bool found = false;

		for (int f = 0; f < cat->nr_families; f++)
			if (strcmp(cat->families[f].name, fixtures[i].family) == 0) {
				check_family(&cat->families[f], fixtures[i].machine);
				found = true;
			}
		CHECK(found);
	}
	/* the GQ, QHL, QMC, LLC (WSM), IMC/CHA/UPI (SKX), NB (fam15h) and Zen 3 L3 events */
	CHECK(compared >= 60);
	fprintf(stderr, "catalog_pfm: %d catalog encodings compared with libpfm4\n", compared);
	catalog_free(cat);
	return check_summary("catalog_pfm");
}
