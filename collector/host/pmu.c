/* Discovery of the PMUs under <sysfs>/bus/event_source/devices. */
#include "host/pmu.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/sysfs.h"
#include "util/array.h"

#define DEVICES_DIR "bus/event_source/devices"

/* Files beside an alias that describe it rather than define an event. */
static const char *const alias_suffixes[] = { ".scale", ".unit", ".per-pkg", ".snapshot" };

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_alias_attribute(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(alias_suffixes); i++)
		if (ends_with(name, alias_suffixes[i]))
			return true;
	return false;
}

/* dir + "/" + name + suffix into buf; -1 (ENAMETOOLONG) when it does not fit. */
static int make_path(char *buf, size_t size, const char *dir, const char *name, const char *suffix)
{
	int n = snprintf(buf, size, "%s/%s%s", dir, name, suffix);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Names of the regular files (or directories) in dir, sorted; NULL-terminated.
 * A missing directory gives an empty list. */
static char **list_dir(const char *dir_path, bool want_dirs, int *count, struct ms_error *err)
{
	DIR *dir = opendir(dir_path);
	struct dirent *entry;
	char **names = NULL;
	int nr = 0, capacity = 0;

	*count = 0;
	if (!dir) {
		if (errno == ENOENT)
			return calloc(1, sizeof(char *));
		ms_error_set(err, "%s: cannot list (%s)", dir_path, strerror(errno));
		return NULL;
	}
	while ((entry = readdir(dir))) {
		char path[4096];
		struct stat st;

		if (entry->d_name[0] == '.')
			continue;
		if (make_path(path, sizeof(path), dir_path, entry->d_name, "") < 0)
			continue;
		/* stat, not lstat: live PMU entries are symlinks to their devices. */
		if (stat(path, &st) < 0 || (want_dirs ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
			continue;
		if (nr + 1 >= capacity) {
			int grown = capacity ? capacity * 2 : 32;
			char **bigger = realloc(names, (size_t)grown * sizeof(*names));

			if (!bigger)
				goto oom;
			names = bigger;
			capacity = grown;
		}
		names[nr] = strdup(entry->d_name);
		if (!names[nr])
			goto oom;
		names[++nr] = NULL;
	}
	closedir(dir);
	if (!names)
		return calloc(1, sizeof(char *));
	*count = nr;
	return names;

oom:
	closedir(dir);
	for (int i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	ms_error_set(err, "%s: out of memory", dir_path);
	return NULL;
}

static void free_names(char **names)
{
	if (!names)
		return;
	for (char **n = names; *n; n++)
		free(*n);
	free(names);
}

static int compare_format(const void *a, const void *b)
{
	return strcmp(((const struct pmu_format *)a)->name, ((const struct pmu_format *)b)->name);
}

static int compare_alias(const void *a, const void *b)
{
	return strcmp(((const struct pmu_alias *)a)->name, ((const struct pmu_alias *)b)->name);
}

static int compare_pmu(const void *a, const void *b)
{
	return strcmp(((const struct pmu *)a)->name, ((const struct pmu *)b)->name);
}

static int load_formats(struct pmu *pmu, const char *pmu_dir, struct ms_error *err)
{
	char dir_path[4096];
	char **names;
	int nr;

	if (make_path(dir_path, sizeof(dir_path), pmu_dir, "format", "") < 0) {
		ms_error_set(err, "%s/format: path too long", pmu_dir);
		return -1;
	}
	names = list_dir(dir_path, false, &nr, err);
	if (!names)
		return -1;
	pmu->formats = calloc((size_t)nr + 1, sizeof(*pmu->formats));
	if (!pmu->formats) {
		free_names(names);
		ms_error_set(err, "%s: out of memory", dir_path);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		struct pmu_format *fmt = &pmu->formats[pmu->nr_formats];
		char path[4096], text[256];

		if (make_path(path, sizeof(path), dir_path, names[i], "") < 0 ||
		    sysfs_read_str(path, text, sizeof(text)) < 0) {
			ms_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
			goto fail;
		}
		if (pmu_format_parse(text, fmt, err) < 0) {
			ms_error_prefix(err, "%s", path);
			goto fail;
		}
		fmt->name = strdup(names[i]);
		if (!fmt->name) {
			ms_error_set(err, "%s: out of memory", path);
			goto fail;
		}
		pmu->nr_formats++;
	}
	free_names(names);
	qsort(pmu->formats, (size_t)pmu->nr_formats, sizeof(*pmu->formats), compare_format);
	return 0;

fail:
	free_names(names);
	return -1;
}

static int load_alias(struct pmu_alias *alias, const char *dir_path, const char *name,
		      struct ms_error *err)
{
	char path[4096], text[4096];

	alias->scale = 1.0;
	if (make_path(path, sizeof(path), dir_path, name, "") < 0 ||
	    sysfs_read_str(path, text, sizeof(text)) < 0) {
		ms_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
		return -1;
	}
	alias->name = strdup(name);
	alias->terms = strdup(text);
	if (!alias->name || !alias->terms)
		goto oom;

	if (make_path(path, sizeof(path), dir_path, name, ".scale") == 0 &&
	    sysfs_read_str(path, text, sizeof(text)) == 0) {
		char *end;

		errno = 0;
		alias->scale = strtod(text, &end);
		if (errno || end == text || *end || !(alias->scale > 0)) {
			ms_error_set(err, "%s: \"%s\": expected a positive number such as "
				     "\"6.103515625e-5\"", path, text);
			return -1;
		}
	} else if (errno != ENOENT) {
		ms_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
		return -1;
	}

	if (make_path(path, sizeof(path), dir_path, name, ".unit") < 0 ||
	    sysfs_read_str(path, text, sizeof(text)) < 0) {
		if (errno != ENOENT) {
			ms_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
			return -1;
		}
		text[0] = '\0';
	}
	alias->unit = strdup(text);
	if (!alias->unit)
		goto oom;
	return 0;

oom:
	ms_error_set(err, "%s: out of memory", path);
	return -1;
}

static int load_aliases(struct pmu *pmu, const char *pmu_dir, struct ms_error *err)
{
	char dir_path[4096];
	char **names;
	int nr;

	if (make_path(dir_path, sizeof(dir_path), pmu_dir, "events", "") < 0) {
		ms_error_set(err, "%s/events: path too long", pmu_dir);
		return -1;
	}
	names = list_dir(dir_path, false, &nr, err);
	if (!names)
		return -1;
	pmu->aliases = calloc((size_t)nr + 1, sizeof(*pmu->aliases));
	if (!pmu->aliases) {
		free_names(names);
		ms_error_set(err, "%s: out of memory", dir_path);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		if (is_alias_attribute(names[i]))
			continue;
		/* Count it first so a half-loaded alias is still freed. */
		if (load_alias(&pmu->aliases[pmu->nr_aliases++], dir_path, names[i], err) < 0) {
			free_names(names);
			return -1;
		}
	}
	free_names(names);
	qsort(pmu->aliases, (size_t)pmu->nr_aliases, sizeof(*pmu->aliases), compare_alias);
	return 0;
}

static int load_pmu(struct pmu *pmu, const char *devices_dir, const char *name,
		    struct ms_error *err)
{
	char pmu_dir[4096], path[4096];
	long long type;

	memset(pmu, 0, sizeof(*pmu));
	pmu->name = strdup(name);
	if (!pmu->name) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (make_path(pmu_dir, sizeof(pmu_dir), devices_dir, name, "") < 0 ||
	    make_path(path, sizeof(path), pmu_dir, "type", "") < 0) {
		ms_error_set(err, "%s/%s: path too long", devices_dir, name);
		return -1;
	}
	errno = 0;
	if (sysfs_read_int(path, &type) < 0 || type < 0 || type > INT32_MAX) {
		ms_error_set(err, "%s: cannot read (%s); expected the PMU's perf type number", path,
			     errno ? strerror(errno) : "out of range");
		return -1;
	}
	pmu->type = (int)type;

	/* Uncore PMUs publish `cpumask`; hybrid core PMUs publish `cpus`. */
	if (make_path(path, sizeof(path), pmu_dir, "cpumask", "") < 0) {
		ms_error_set(err, "%s/cpumask: path too long", pmu_dir);
		return -1;
	}
	pmu->has_cpumask = sysfs_exists(path);
	if (!pmu->has_cpumask)
		(void)make_path(path, sizeof(path), pmu_dir, "cpus", "");  /* shorter: fits */
	if ((pmu->has_cpumask || sysfs_exists(path)) && cpulist_read(path, &pmu->cpumask) < 0) {
		ms_error_set(err, "%s: cannot read (%s); expected a CPU list such as \"0,48\"", path,
			     strerror(errno));
		return -1;
	}

	if (load_formats(pmu, pmu_dir, err) < 0 || load_aliases(pmu, pmu_dir, err) < 0)
		return -1;
	return 0;
}

static void free_pmu(struct pmu *pmu)
{
	free(pmu->name);
	cpulist_free(&pmu->cpumask);
	for (int i = 0; i < pmu->nr_formats; i++)
		free(pmu->formats[i].name);
	free(pmu->formats);
	for (int i = 0; i < pmu->nr_aliases; i++) {
		free(pmu->aliases[i].name);
		free(pmu->aliases[i].terms);
		free(pmu->aliases[i].unit);
	}
	free(pmu->aliases);
	memset(pmu, 0, sizeof(*pmu));
}

int pmu_set_load(struct pmu_set *set, const char *sys_root, struct ms_error *err)
{
	char devices_dir[4096];
	char **names;
	int nr;

	set->pmus = NULL;
	set->nr = 0;
	if (sysfs_join(devices_dir, sizeof(devices_dir), sys_root, DEVICES_DIR) < 0) {
		ms_error_set(err, "%s: path too long", sys_root);
		return -1;
	}
	if (!sysfs_exists(devices_dir)) {
		ms_error_set(err, "%s: missing; expected the kernel's PMU list (is sysfs mounted, and "
			     "does MEMSCOPE_SYSFS_ROOT point at a sysfs tree?)", devices_dir);
		return -1;
	}
	names = list_dir(devices_dir, true, &nr, err);
	if (!names)
		return -1;
	set->pmus = calloc((size_t)nr + 1, sizeof(*set->pmus));
	if (!set->pmus) {
		free_names(names);
		ms_error_set(err, "%s: out of memory", devices_dir);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		/* Count it first so a half-loaded PMU is still freed. */
		if (load_pmu(&set->pmus[set->nr++], devices_dir, names[i], err) < 0) {
			free_names(names);
			pmu_set_free(set);
			return -1;
		}
	}
	free_names(names);
	qsort(set->pmus, (size_t)set->nr, sizeof(*set->pmus), compare_pmu);
	return 0;
}

void pmu_set_free(struct pmu_set *set)
{
	for (int i = 0; i < set->nr; i++)
		free_pmu(&set->pmus[i]);
	free(set->pmus);
	set->pmus = NULL;
	set->nr = 0;
}

const struct pmu *pmu_find(const struct pmu_set *set, const char *name)
{
	struct pmu key = { .name = (char *)name };

	if (set->nr == 0)
		return NULL;
	return bsearch(&key, set->pmus, (size_t)set->nr, sizeof(*set->pmus), compare_pmu);
}

const struct pmu *pmu_find_type(const struct pmu_set *set, int type)
{
	for (int i = 0; i < set->nr; i++)
		if (set->pmus[i].type == type)
			return &set->pmus[i];
	return NULL;
}

const struct pmu_format *pmu_format_find(const struct pmu *pmu, const char *name)
{
	struct pmu_format key = { .name = (char *)name };

	if (pmu->nr_formats == 0)
		return NULL;
	return bsearch(&key, pmu->formats, (size_t)pmu->nr_formats, sizeof(*pmu->formats),
		       compare_format);
}

const struct pmu_alias *pmu_alias_find(const struct pmu *pmu, const char *name)
{
	struct pmu_alias key = { .name = (char *)name };

	if (pmu->nr_aliases == 0)
		return NULL;
	return bsearch(&key, pmu->aliases, (size_t)pmu->nr_aliases, sizeof(*pmu->aliases),
		       compare_alias);
}
