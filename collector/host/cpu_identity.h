/* The CPU as /proc/cpuinfo (and MIDR_EL1 in sysfs on Arm) describe it, and
 * whether that agrees with the PMUs beside it. */
#ifndef MEMSCOPE_CPU_IDENTITY_H
#define MEMSCOPE_CPU_IDENTITY_H

#include <stdbool.h>

#include "host/pmu.h"
#include "host/pmu_vendor.h"
#include "host/sysfs.h"
#include "util/error.h"

struct cpu_identity {
	bool known;
	bool hypervisor;       /* cpuinfo flags name `hypervisor`: a virtual machine */
	char vendor[32];       /* x86 vendor_id; "" on Arm */
	int family, model;     /* x86; -1 when unknown */
	int implementer, part; /* Arm MIDR fields; -1 when unknown */
	char model_name[64];   /* cpuinfo "model name", "" when absent */
	char text[96];         /* for messages: "GenuineIntel family 0x6 model 0x55" */
};

int cpu_identity_read(const struct sysfs_roots *roots, struct cpu_identity *id);

/* A procfs and a sysfs of different machines (an Intel cpuinfo beside AMD's
 * uncore PMUs, an x86 cpuinfo beside Arm PMUs) is an error naming both. Which
 * maker's kernels create a PMU is the catalog's (vendors, may be NULL: no check). */
int cpu_identity_check_pmus(const struct cpu_identity *id, const struct pmu_set *pmus,
			    const struct pmu_vendors *vendors, const struct sysfs_roots *roots, struct ms_error *err);

#endif
