/* CPU identity from cpuinfo / MIDR_EL1, and its agreement with the PMUs. */
#include "host/cpu_identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cpuinfo_value(const char *line, char *out, size_t size)
{
	const char *colon = strchr(line, ':');
	size_t len;

	out[0] = '\0';
	if (!colon)
		return;
	colon++;
	while (*colon == ' ' || *colon == '\t')
		colon++;
	len = strcspn(colon, "\n");
	snprintf(out, size, "%.*s", (int)len, colon);
}

int cpu_identity_read(const struct sysfs_roots *roots, struct cpu_identity *id)
{
	char path[4200], line[4096], value[128];
	long long midr;
	FILE *fp;

	memset(id, 0, sizeof(*id));
	id->family = id->model = id->implementer = id->part = -1;
	sysfs_join(path, sizeof(path), roots->proc, "cpuinfo");
	fp = fopen(path, "r");
	if (fp) {
		/* The first processor block is enough: these are not hybrid-vendor machines. */
		while (fgets(line, sizeof(line), fp)) {
			if (line[0] == '\n' && (id->vendor[0] || id->implementer >= 0))
				break;
			cpuinfo_value(line, value, sizeof(value));
			if (strncmp(line, "vendor_id", 9) == 0)
				snprintf(id->vendor, sizeof(id->vendor), "%.31s", value);
			else if (strncmp(line, "cpu family", 10) == 0)
				id->family = (int)strtol(value, NULL, 0);
			else if (strncmp(line, "model name", 10) == 0)
				snprintf(id->model_name, sizeof(id->model_name), "%.63s", value);
			else if (strncmp(line, "model", 5) == 0 && line[5 + strspn(line + 5, " \t")] == ':')
				id->model = (int)strtol(value, NULL, 0);
			else if (strncmp(line, "CPU implementer", 15) == 0)
				id->implementer = (int)strtol(value, NULL, 0);
			else if (strncmp(line, "CPU part", 8) == 0)
				id->part = (int)strtol(value, NULL, 0);
			else if (strncmp(line, "flags", 5) == 0 && strstr(line, " hypervisor"))
				id->hypervisor = true;
		}
		fclose(fp);
	}
	/* Arm: MIDR_EL1 in sysfs is authoritative when cpuinfo is missing or partial. */
	sysfs_join(path, sizeof(path), roots->sys, "devices/system/cpu/cpu0/regs/identification/midr_el1");
	if (sysfs_read_int(path, &midr) == 0) {
		id->implementer = (int)((midr >> 24) & 0xff);
		id->part = (int)((midr >> 4) & 0xfff);
	}
	if (id->vendor[0] && id->family >= 0) {
		id->known = true;
		snprintf(id->text, sizeof(id->text), "%s family 0x%x model 0x%x", id->vendor, id->family,
			 id->model < 0 ? 0 : id->model);
	} else if (id->implementer >= 0 && id->part >= 0) {
		id->known = true;
		snprintf(id->text, sizeof(id->text), "Arm implementer 0x%02x part 0x%03x", id->implementer, id->part);
	} else {
		snprintf(id->text, sizeof(id->text), "unknown CPU (no readable %.50s/cpuinfo)", roots->proc);
	}
	return 0;
}

int cpu_identity_check_pmus(const struct cpu_identity *id, const struct pmu_set *pmus,
			    const struct pmu_vendors *vendors, const struct sysfs_roots *roots, struct ms_error *err)
{
	const char *cpu_maker = id->vendor[0] ? id->vendor : id->implementer >= 0 ? "Arm" : NULL;

	if (!cpu_maker)
		return 0;
	for (int i = 0; i < pmus->nr; i++) {
		/* The catalog's maker: of the first role whose match takes this name. */
		const struct pmu_vendor_maker *m = pmu_vendor_maker_of(vendors, pmus->pmus[i].name);
		const char *maker;

		if (!m || pmu_vendor_made_by(m, cpu_maker))
			continue;
		maker = m->makers[0];
		ms_error_set(err, "%s/cpuinfo describes %s but %s/bus/event_source/devices has %s's PMU %s: the "
			     "procfs and sysfs trees are of different machines; point MEMSCOPE_PROCFS_ROOT at the "
			     "tree's own proc/ (or unset it to use <tree>/proc)", roots->proc, id->text, roots->sys,
			     strcmp(maker, "Arm") == 0 ? "an Arm CPU" : maker, pmus->pmus[i].name);
		return -1;
	}
	return 0;
}
