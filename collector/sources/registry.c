#include "sources/registry.h"

#include <stdbool.h>
#include <string.h>

void source_registry_init(struct source_registry *r)
{
	memset(r, 0, sizeof(*r));
	r->kinds[r->nr++] = &bpf_source_kind;
	r->kinds[r->nr++] = &procfs_source_kind;
	r->kinds[r->nr++] = &damon_source_kind;
	r->kinds[r->nr++] = &sample_source_kind;
	r->kinds[r->nr++] = &perf_source_kind;   /* last live kind: takes every name left */
	r->kinds[r->nr++] = &replay_source_kind;
	r->kinds[r->nr++] = &recording_source_kind;
}

int source_registry_add(struct source_registry *r, const struct source_kind *kind, struct ms_error *err)
{
	int at = 0;

	if (source_registry_find(r, kind->name)) {
		ms_error_set(err, "a source named '%s' is already registered", kind->name);
		return -1;
	}
	if (r->nr == SOURCE_REGISTRY_MAX) {
		ms_error_set(err, "cannot register source '%s': at most %d sources", kind->name, SOURCE_REGISTRY_MAX);
		return -1;
	}
	/* Before perf, which claims every name: otherwise it would take this
	 * kind's names too. */
	while (at < r->nr && r->kinds[at] != &perf_source_kind)
		at++;
	memmove(&r->kinds[at + 1], &r->kinds[at], sizeof(r->kinds[0]) * (size_t)(r->nr - at));
	r->kinds[at] = kind;
	r->nr++;
	return 0;
}

void source_registry_remove(struct source_registry *r, const struct source_kind *kind)
{
	for (int i = 0; i < r->nr; i++)
		if (r->kinds[i] == kind) {
			memmove(&r->kinds[i], &r->kinds[i + 1], sizeof(r->kinds[0]) * (size_t)(r->nr - i - 1));
			r->nr--;
			return;
		}
}

const struct source_kind *source_registry_claim(const struct source_registry *r, enum source_kind_mode mode,
						const char *name)
{
	for (int i = 0; i < r->nr; i++)
		if (r->kinds[i]->mode == mode && r->kinds[i]->claims(r->kinds[i], name))
			return r->kinds[i];
	return NULL;
}

const struct source_kind *source_registry_find(const struct source_registry *r, const char *kind_name)
{
	for (int i = 0; i < r->nr; i++)
		if (!strcmp(r->kinds[i]->name, kind_name))
			return r->kinds[i];
	return NULL;
}

struct source_registry *source_registry_process(void)
{
	static struct source_registry process;
	static bool ready;

	if (!ready) {
		source_registry_init(&process);
		ready = true;
	}
	return &process;
}

const struct source_kind *source_registry_first(const struct source_registry *r, enum source_kind_mode mode)
{
	for (int i = 0; i < r->nr; i++)
		if (r->kinds[i]->mode == mode)
			return r->kinds[i];
	return NULL;
}
