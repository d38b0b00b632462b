#include "host/caches.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_DIR "devices/system/cpu"

void cache_name(const struct cache *c, char *buf, size_t size)
{
	const char *suffix = !strcmp(c->type, "Data") ? "d" : !strcmp(c->type, "Instruction") ? "i" : "";

	snprintf(buf, size, "L%d%s", c->level, suffix);
}

static int type_order(const char *type)
{
	return !strcmp(type, "Data") ? 0 : !strcmp(type, "Instruction") ? 1 : 2;
}

/* "32K", "1024K", "32M": the kernel's cacheinfo size. */
static int parse_size(const char *text, uint64_t *bytes)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text)
		return -1;
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*bytes = v;
	return 0;
}

static int read_field(const char *dir, const char *name, char *buf, size_t size, bool optional,
		      struct ms_error *err)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (sysfs_read_str(path, buf, size) == 0)
		return 1;
	if (optional && errno == ENOENT)
		return 0;
	ms_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
	return -1;
}

static int read_int_field(const char *dir, const char *name, int *value, struct ms_error *err)
{
	char text[32], *end;
	int got = read_field(dir, name, text, sizeof(text), true, err);
	long v;

	if (got <= 0)
		return got;
	v = strtol(text, &end, 10);
	if (end == text || *end || v < 0 || v > 1 << 30) {
		ms_error_set(err, "%s/%s: '%s' is not a number", dir, name, text);
		return -1;
	}
	*value = (int)v;
	return 1;
}

static bool same_cpus(const struct cpulist *a, const struct cpulist *b)
{
	return a->nr == b->nr && !memcmp(a->cpus, b->cpus, sizeof(int) * (size_t)a->nr);
}

/* Keep c unless a cache of its kind with the same CPUs is known; takes
 * c->shared either way. A kind is made with its first instance, so it is
 * never empty. */
static int add_cache(struct cache_set *set, struct cache *c)
{
	struct cache_kind *kind = NULL;
	struct cache *grown;

	for (int k = 0; k < set->nr_kinds && !kind; k++) {
		const struct cache *first = &set->kinds[k].instances[0];

		if (first->level == c->level && !strcmp(first->type, c->type))
			kind = &set->kinds[k];
	}
	if (kind) {
		for (int i = 0; i < kind->nr_instances; i++)
			if (same_cpus(&kind->instances[i].shared, &c->shared)) {
				cpulist_free(&c->shared);
				return 0;
			}
	} else {
		struct cache_kind *kinds = realloc(set->kinds, sizeof(*kinds) * (size_t)(set->nr_kinds + 1));

		if (!kinds)
			goto oom;
		set->kinds = kinds;
		kind = &kinds[set->nr_kinds];
		*kind = (struct cache_kind){ NULL, 0 };
		grown = malloc(sizeof(*grown));
		if (!grown)
			goto oom;
		kind->instances = grown;
		set->nr_kinds++;
		grown[kind->nr_instances++] = *c;
		return 0;
	}
	grown = realloc(kind->instances, sizeof(*grown) * (size_t)(kind->nr_instances + 1));
	if (!grown)
		goto oom;
	kind->instances = grown;
	grown[kind->nr_instances++] = *c;
	return 0;
oom:
	cpulist_free(&c->shared);
	return -1;
}

static int kind_order(const void *a, const void *b)
{
	const struct cache *x = &((const struct cache_kind *)a)->instances[0];
	const struct cache *y = &((const struct cache_kind *)b)->instances[0];

	if (x->level != y->level)
		return x->level - y->level;
	return type_order(x->type) - type_order(y->type);
}

static int read_index(struct cache_set *set, const char *dir, struct ms_error *err)
{
	struct cache c = { 0 };
	char text[256];
	int got;

	if ((got = read_int_field(dir, "level", &c.level, err)) <= 0)
		return got < 0 ? -1 : 0;
	if (read_field(dir, "type", c.type, sizeof(c.type), false, err) < 0)
		return -1;
	if ((got = read_field(dir, "size", text, sizeof(text), true, err)) < 0)
		return -1;
	if (got && parse_size(text, &c.size) < 0) {
		ms_error_set(err, "%s/size: '%s' is not a cache size (e.g. 32K)", dir, text);
		return -1;
	}
	if (read_int_field(dir, "coherency_line_size", &c.line_size, err) < 0 ||
	    read_int_field(dir, "ways_of_associativity", &c.ways, err) < 0)
		return -1;
	if (read_field(dir, "shared_cpu_list", text, sizeof(text), false, err) < 0)
		return -1;
	if (cpulist_parse(text, &c.shared) < 0) {
		ms_error_set(err, "%s/shared_cpu_list: '%s' is not a CPU list", dir, text);
		return -1;
	}
	if (add_cache(set, &c) < 0) {
		ms_error_set(err, "out of memory reading %s", dir);
		return -1;
	}
	return 0;
}

int caches_load(struct cache_set *set, const struct sysfs_roots *roots, const struct topology *topo,
		struct ms_error *err)
{
	memset(set, 0, sizeof(*set));
	for (int i = 0; i < topo->nr_cpus; i++) {
		for (int index = 0;; index++) {
			char rel[128], dir[4200];

			snprintf(rel, sizeof(rel), CPU_DIR "/cpu%d/cache/index%d", topo->cpus[i].cpu, index);
			if (sysfs_join(dir, sizeof(dir), roots->sys, rel) < 0 || !sysfs_exists(dir))
				break;
			if (read_index(set, dir, err) < 0) {
				caches_free(set);
				return -1;
			}
		}
	}
	if (set->nr_kinds)
		qsort(set->kinds, (size_t)set->nr_kinds, sizeof(*set->kinds), kind_order);
	return 0;
}

void caches_free(struct cache_set *set)
{
	for (int k = 0; k < set->nr_kinds; k++) {
		for (int i = 0; i < set->kinds[k].nr_instances; i++)
			cpulist_free(&set->kinds[k].instances[i].shared);
		free(set->kinds[k].instances);
	}
	free(set->kinds);
	memset(set, 0, sizeof(*set));
}
