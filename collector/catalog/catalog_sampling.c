#include "catalog/catalog_sampling.h"

#include <stdlib.h>
#include <string.h>

#include "host/pmu.h"
#include "host/sysfs.h"

static const char *const entry_keys[] = { "events", "pmu", "requires_events", "requires_formats", "decode",
					  "description", "source", "caveat", "collector", NULL };
/* How samples are decoded (docs/catalog.md, "Sampling"). */
static const char *const decoders[] = { "data-src", "amd-ibs-op", "arm-spe", "page-fault", NULL };

static int parse_entry(struct yaml_file *yf, const char *name, yaml_node_t *node, struct catalog_sampling *e)
{
	char *collector = NULL;
	bool known = false;
	int rc;

	if (yaml_expect(yf, node, YAML_MAPPING_NODE, "a sampling entry") ||
	    yaml_check_keys(yf, node, "a sampling entry", entry_keys))
		return -1;
	e->pos = yaml_pos(yf, node);
	if (!(e->name = strdup(name)))
		return yaml_fail(yf, node, "out of memory");
	if (yaml_get_str_list(yf, node, "events", &e->events, &e->nr_events, "sampling entry") ||
	    yaml_get_str(yf, node, "pmu", true, &e->pmu, "sampling entry") ||
	    yaml_get_str_list(yf, node, "requires_events", &e->requires_events, &e->nr_requires_events,
			      "sampling entry") ||
	    yaml_get_str_list(yf, node, "requires_formats", &e->requires_formats, &e->nr_requires_formats,
			      "sampling entry") ||
	    yaml_get_str(yf, node, "decode", true, &e->decode, "sampling entry") ||
	    yaml_get_str(yf, node, "description", true, &e->description, "sampling entry") ||
	    yaml_get_str(yf, node, "source", true, &e->source, "sampling entry") ||
	    yaml_get_str(yf, node, "caveat", false, &e->caveat, "sampling entry") ||
	    yaml_get_str(yf, node, "collector", false, &collector, "sampling entry"))
		return -1;
	if (e->nr_events == 0 || e->nr_events > SAMPLING_EVENTS_MAX)
		return yaml_fail(yf, yaml_get(yf, node, "events") ? yaml_get(yf, node, "events") : node,
				 "a sampling entry names 1 to %d events in 'events'", SAMPLING_EVENTS_MAX);
	for (int i = 0; decoders[i]; i++)
		known |= !strcmp(decoders[i], e->decode);
	if (!known)
		return yaml_fail(yf, yaml_get(yf, node, "decode"), "unknown decode '%s'; expected one of: data-src, "
				 "amd-ibs-op, arm-spe, page-fault", e->decode);
	if (collector && strcmp(collector, "unsupported")) {
		rc = yaml_fail(yf, yaml_get(yf, node, "collector"), "'collector' is 'unsupported' or absent");
		free(collector);
		return rc;
	}
	e->unsupported = collector != NULL;
	free(collector);
	if (e->unsupported && !e->caveat)
		return yaml_fail(yf, node, "an entry the collector cannot read ('collector: unsupported') needs a "
				 "'caveat' saying why");
	if (regcomp(&e->pmu_re, e->pmu, REG_EXTENDED | REG_NOSUB))
		return yaml_fail(yf, yaml_get(yf, node, "pmu"), "bad regular expression '%s'", e->pmu);
	e->pmu_compiled = true;
	return 0;
}

int catalog_sampling_parse(struct yaml_file *yf, yaml_node_t *v, struct catalog_family *f)
{
	size_t total = 0;

	if (yaml_expect(yf, v, YAML_MAPPING_NODE, "'sampling'"))
		return -1;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *list = yaml_document_get_node(&yf->doc, p->value);

		if (list->type != YAML_SEQUENCE_NODE)
			return yaml_fail(yf, list, "'sampling' maps a name (mem) to a list of entries, in order of "
					 "preference");
		total += (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	}
	f->sampling = calloc(total + 1, sizeof(*f->sampling));
	if (!f->sampling)
		return yaml_fail(yf, v, "out of memory");
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, p->key);
		yaml_node_t *list = yaml_document_get_node(&yf->doc, p->value);
		const char *name = (const char *)k->data.scalar.value;

		if (!yaml_is_scalar(k) || strspn(name, "abcdefghijklmnopqrstuvwxyz_") != strlen(name))
			return yaml_fail(yf, k, "sampling names are lower-case words (mem)");
		for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++)
			if (parse_entry(yf, name, yaml_document_get_node(&yf->doc, *it),
					&f->sampling[f->nr_sampling++]))
				return -1;
	}
	return 0;
}

static void free_strv(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void catalog_sampling_free(struct catalog_family *f)
{
	for (int i = 0; i < f->nr_sampling; i++) {
		struct catalog_sampling *e = &f->sampling[i];

		free(e->name);
		free_strv(e->events, e->nr_events);
		free(e->pmu);
		if (e->pmu_compiled)
			regfree(&e->pmu_re);
		free_strv(e->requires_events, e->nr_requires_events);
		free_strv(e->requires_formats, e->nr_requires_formats);
		free(e->decode);
		free(e->description);
		free(e->source);
		free(e->caveat);
	}
	free(f->sampling);
	f->sampling = NULL;
	f->nr_sampling = 0;
}

/* Can entry e be used on this host? NULL and the PMU when it can, else why not. */
static const char *entry_usable(const struct resolution *res, const struct catalog_sampling *e,
				const struct pmu **found, char *why, size_t size)
{
	const struct pmu_set *set = &res->host->pmus;
	const struct pmu *pmu = NULL;

	for (int i = 0; i < set->nr && !pmu; i++)
		if (!regexec(&e->pmu_re, set->pmus[i].name, 0, NULL, 0))
			pmu = &set->pmus[i];
	if (!pmu) {
		snprintf(why, size, "no PMU matching '%s' in %s/bus/event_source/devices", e->pmu, res->host->roots.sys);
		return why;
	}
	for (int i = 0; i < e->nr_requires_events; i++)
		if (!pmu_alias_find(pmu, e->requires_events[i])) {
			snprintf(why, size, "PMU %s has no event '%s' (events/%s in sysfs)", pmu->name,
				 e->requires_events[i], e->requires_events[i]);
			return why;
		}
	for (int i = 0; i < e->nr_requires_formats; i++)
		if (!pmu_format_find(pmu, e->requires_formats[i])) {
			snprintf(why, size, "PMU %s has no format field '%s'", pmu->name, e->requires_formats[i]);
			return why;
		}
	if (e->unsupported) {
		snprintf(why, size, "memscope cannot read these samples yet: %s", e->caveat);
		return why;
	}
	*found = pmu;
	return NULL;
}

static void fill_events(const struct catalog_sampling *e, const struct pmu *pmu, struct sampling_choice *out)
{
	out->nr_events = 0;
	for (int i = 0; i < e->nr_events; i++) {
		const char *at = strstr(e->events[i], "{pmu}");
		char *text = out->events[out->nr_events++];

		if (at)
			snprintf(text, 256, "%.*s%s%s", (int)(at - e->events[i]), e->events[i], pmu->name, at + 5);
		else
			snprintf(text, 256, "%s", e->events[i]);
	}
}

/* Families in the order choices are made: by priority (catalog order), among
 * those for this CPU. */
int sampling_choose(const struct resolution *res, const char *name, struct sampling_choice *out, struct ms_error *err)
{
	size_t len = 0;
	bool named = false;

	memset(out, 0, sizeof(*out));
	err->text[0] = '\0';
	for (int f = 0; f < res->nr_families; f++) {
		const struct catalog_family *fam = res->families[f].family;

		for (int i = 0; i < fam->nr_sampling; i++) {
			const struct catalog_sampling *e = &fam->sampling[i];
			const struct pmu *pmu = NULL;
			char why[512];

			if (strcmp(e->name, name))
				continue;
			named = out->named = true;
			if (!res->families[f].cpu_match)
				continue;
			if (!entry_usable(res, e, &pmu, why, sizeof(why))) {
				out->family = fam;
				out->entry = e;
				fill_events(e, pmu, out);
				return 0;
			}
			len += (size_t)snprintf(err->text + len, len < sizeof(err->text) ? sizeof(err->text) - len : 0,
						"%s%s: %s", len ? "; " : "", fam->name, why);
		}
	}
	if (!named)
		ms_error_set(err, "no catalog family names a sampling event 'sample.%s' (known: sample.mem)", name);
	else
		ms_error_prefix(err, "no sampling event for sample.%s can be used on this host", name);
	return -1;
}

static void numa_balancing_note(const struct resolution *res, FILE *out)
{
	char path[4200], text[32];

	snprintf(path, sizeof(path), "%s/sys/kernel/numa_balancing", res->host->roots.proc);
	if (sysfs_read_str(path, text, sizeof(text)) < 0) {
		fprintf(out, "  NUMA balancing: %s/sys/kernel/numa_balancing cannot be read: no hinting faults are "
			"known to be sampled\n", res->host->roots.proc);
		return;
	}
	if (!strcmp(text, "0"))
		fprintf(out, "  NUMA balancing is off (numa_balancing = 0): page faults are first touches only. With "
			"it on (sysctl kernel.numa_balancing=1) the kernel also samples ongoing accesses as NUMA hinting "
			"faults, which this event records too (Documentation/admin-guide/sysctl/kernel.rst, "
			"numa_balancing).\n");
	else
		fprintf(out, "  NUMA balancing is on (numa_balancing = %s): NUMA hinting faults - the kernel's own "
			"sampling of ongoing accesses - are page faults too and are sampled with their addresses "
			"(Documentation/admin-guide/sysctl/kernel.rst, numa_balancing; mm/memory.c do_numa_page).\n",
			text);
}

static void others_line(const struct resolution *res, const char *name, FILE *out)
{
	const char *last = NULL;
	int n = 0;

	for (int f = 0; f < res->nr_families; f++) {
		const struct catalog_family *fam = res->families[f].family;

		if (res->families[f].cpu_match)
			continue;
		for (int i = 0; i < fam->nr_sampling; i++)
			if (!strcmp(fam->sampling[i].name, name) && last != fam->name) {
				fprintf(out, "%s%s", n++ ? ", " : "  families for other CPUs: ", fam->name);
				last = fam->name;
			}
	}
	if (n)
		fprintf(out, " (memscope list --explain sample.%s on such a machine, or with MEMSCOPE_SYSFS_ROOT)\n",
			name);
}

int sampling_explain(const struct resolution *res, const char *name, FILE *out, struct ms_error *err)
{
	struct sampling_choice choice;
	struct ms_error why_none = { "" };
	bool chosen = sampling_choose(res, name, &choice, &why_none) == 0;

	if (!chosen && !choice.named) {
		*err = why_none;
		return -1;
	}
	fprintf(out, "sample.%s: memory accesses sampled with their data addresses\n", name);
	fprintf(out, "  CPU: %s\n", res->cpu.known ? res->cpu.text : "unknown (no /proc/cpuinfo)");
	if (chosen) {
		fprintf(out, "  this host uses: ");
		for (int i = 0; i < choice.nr_events; i++)
			fprintf(out, "%s%s", i ? ", " : "", choice.events[i]);
		fprintf(out, "\n    family %s (pmu/%s), decoded as %s (sampling/%s.yaml)\n    %s\n    source: %s\n",
			choice.family->name, strrchr(choice.family->file, '/') ? strrchr(choice.family->file, '/') + 1
									     : choice.family->file,
			choice.entry->decode, choice.entry->decode, choice.entry->description, choice.entry->source);
		if (choice.entry->caveat)
			fprintf(out, "    caveat: %s\n", choice.entry->caveat);
		if (!strcmp(choice.entry->decode, "page-fault"))
			numa_balancing_note(res, out);
	} else {
		fprintf(out, "  this host uses: none (%s)\n", why_none.text);
	}
	fprintf(out, "  candidates for this CPU, in order:\n");
	for (int f = 0; f < res->nr_families; f++) {
		const struct catalog_family *fam = res->families[f].family;

		for (int i = 0; i < fam->nr_sampling; i++) {
			const struct catalog_sampling *e = &fam->sampling[i];
			const struct pmu *pmu = NULL;
			char why[512];
			const char *not;

			if (strcmp(e->name, name) || !res->families[f].cpu_match)
				continue;
			fprintf(out, "    %s:", fam->name);
			for (int k = 0; k < e->nr_events; k++)
				fprintf(out, " %s", e->events[k]);
			fprintf(out, " (decode %s)\n", e->decode);
			not = entry_usable(res, e, &pmu, why, sizeof(why));
			if (chosen && e == choice.entry)
				fprintf(out, "      used\n");
			else if (not)
				fprintf(out, "      not used: %s\n", not);
			else
				fprintf(out, "      usable, but an earlier candidate is used\n");
			fprintf(out, "      source: %s\n", e->source);
		}
	}
	others_line(res, name, out);
	return 0;
}
