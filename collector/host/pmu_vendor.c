#include "host/pmu_vendor.h"

#include <stdlib.h>
#include <string.h>

static pmu_vendors_loader loader;

void pmu_vendors_set_loader(pmu_vendors_loader load)
{
	loader = load;
}

const struct pmu_vendors *pmu_vendors_load(void)
{
	struct ms_error err;

	return loader ? loader(&err) : NULL;
}

const struct pmu_vendor_maker *pmu_vendor_maker_of(const struct pmu_vendors *v, const char *name)
{
	for (int i = 0; v && i < v->nr_makers; i++)
		if (regexec(v->makers[i].match, name, 0, NULL, 0) == 0)
			return &v->makers[i];
	return NULL;
}

bool pmu_vendor_made_by(const struct pmu_vendor_maker *m, const char *maker)
{
	for (int i = 0; i < m->nr_makers; i++)
		if (strcmp(m->makers[i], maker) == 0)
			return true;
	return false;
}

bool pmu_vendor_substitute(const char *tmpl, const char *subject, const regmatch_t *groups, size_t nr_groups,
			   char *buf, size_t size)
{
	size_t used = 0;

	for (const char *t = tmpl; *t; t++) {
		const char *from = t;
		size_t len = 1;

		if (t[0] == '\\' && t[1] >= '1' && t[1] <= '9') {
			size_t g = (size_t)(t[1] - '0');

			t++;
			if (g >= nr_groups || groups[g].rm_so < 0) {
				len = 0;
			} else {
				from = subject + groups[g].rm_so;
				len = (size_t)(groups[g].rm_eo - groups[g].rm_so);
			}
		}
		if (used + len >= size)
			return false;
		memcpy(buf + used, from, len);
		used += len;
	}
	buf[used] = '\0';
	return true;
}

bool pmu_vendor_kernel_name(const struct pmu_vendors *v, const char *pfm_name, char *buf, size_t size)
{
	regmatch_t groups[10];

	for (int i = 0; v && i < v->nr_pfm_names; i++)
		if (regexec(v->pfm_names[i].pfm, pfm_name, 10, groups, 0) == 0)
			return pmu_vendor_substitute(v->pfm_names[i].kernel, pfm_name, groups, 10, buf, size);
	return false;
}

void pmu_vendors_free(struct pmu_vendors *v)
{
	free(v->makers);
	free(v->pfm_names);
	memset(v, 0, sizeof(*v));
}
