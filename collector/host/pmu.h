/* Performance monitoring units as the kernel describes them under
 * <sysfs>/bus/event_source/devices/<pmu>/: type, cpumask, format fields and
 * event aliases. Discovery only: nothing here opens a counter. */
#ifndef MEMSCOPE_PMU_H
#define MEMSCOPE_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include "host/cpulist.h"
#include "util/error.h"

struct perf_event_attr;

/* Which perf_event_attr word a format field lives in. */
enum pmu_config_word { PMU_CONFIG, PMU_CONFIG1, PMU_CONFIG2, PMU_CONFIG3 };

/* One format field, e.g. "event" = config:0-7,32-35. The field's value is
 * spread over the bits of `mask` from the lowest bit up. */
struct pmu_format {
	char *name;
	enum pmu_config_word word;
	uint64_t mask;
	int width;           /* number of bits in mask */
};

/* One event alias from events/<name>, with its optional .scale and .unit. */
struct pmu_alias {
	char *name;
	char *terms;         /* the file's text, e.g. "event=0x04,umask=0x03" */
	double scale;        /* 1.0 when there is no .scale file */
	char *unit;          /* "" when there is no .unit file */
};

struct pmu {
	char *name;
	int type;                 /* perf_event_attr.type */
	struct cpulist cpumask;   /* CPUs to open on; empty = no cpumask file (core/software PMU) */
	bool has_cpumask;         /* uncore-style PMU: system-wide only, on cpumask CPUs */
	bool outside_cpu_list;    /* stat -C names none of its cpumask CPUs: not opened (cpumask unchanged) */
	struct pmu_format *formats;
	int nr_formats;
	struct pmu_alias *aliases;
	int nr_aliases;
};

struct pmu_set {
	struct pmu *pmus;         /* sorted by name */
	int nr;
};

/* Read every PMU under <sys_root>/bus/event_source/devices. A PMU directory
 * that cannot be read completely is an error naming the file. */
int pmu_set_load(struct pmu_set *set, const char *sys_root, struct ms_error *err);
void pmu_set_free(struct pmu_set *set);

const struct pmu *pmu_find(const struct pmu_set *set, const char *name);
const struct pmu *pmu_find_type(const struct pmu_set *set, int type);
const struct pmu_format *pmu_format_find(const struct pmu *pmu, const char *name);
const struct pmu_alias *pmu_alias_find(const struct pmu *pmu, const char *name);

/* Parse a format file's text ("config:0-7,32-35", "config1:8") into fmt->word/mask/width. */
int pmu_format_parse(const char *text, struct pmu_format *fmt, struct ms_error *err);

/* Apply "field=value,field=value,flag" terms to attr through the PMU's format
 * fields. `config=`, `config1=`, `config2=` set whole words. A term naming
 * an alias is expanded. A value wider than its field is an error. */
int pmu_encode_terms(const struct pmu *pmu, const char *terms, struct perf_event_attr *attr,
		     struct ms_error *err);

/* Put value into the bits of fmt's mask in attr (no range check). */
void pmu_format_apply(const struct pmu_format *fmt, uint64_t value, struct perf_event_attr *attr);

#endif
