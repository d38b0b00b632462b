/* Loading and validating the catalog (format: docs/catalog.md).
 *
 * What is where: freeing; metrics.yaml (kinds, groups, formulas bound to
 * metric indices, cycles refused); catalog/pmu/<family>.yaml (detect, roles
 * with their events, mappings bound to role.event, unavailable, sampling;
 * the vendor keys are catalog_vendor.c's); then catalog_load,
 * catalog_add_plugin_family and catalog_load_default. */
#include "catalog/catalog.h"
#include "catalog/catalog_sampling.h"

#include <errno.h>
#include <limits.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog_vendor.h"
#include "catalog/catalog_yaml.h"
#include "util/text_append.h"
#include "util/data_dir.h"
#include "events/bpf_series.h"
#include "events/plugin_series.h"
#include "host/kernel_stats.h"

static const char *const metric_keys[] = { "name", "unit", "kind", "description", "formula", "vendors", "formerly",
	"plugin", "groups", "scale_unit", NULL };
static const char *const family_keys[] = { "family", "description", "priority", "sources", "detect", "pmus",
					   "metrics", "unavailable", "uncore_since", "sampling", "libpfm4", NULL };
static const char *const detect_keys[] = { "cpu", NULL };
static const char *const cpu_keys[] = { "vendor", "family", "model", "implementer", "part", NULL };
static const char *const role_keys[] = { "match", "source", "requires_formats", "rejects_formats", "scope",
					 "counters", "width", "description", "events", "counters_cpuid", "memory_node",
					 "driver", "maker", "libpfm4", NULL };
static const char *const event_keys[] = { "config", "perf", "procfs", "bpf", "plugin", "damon", "alias", "pfm",
					  "description", "upstream_differs", "fixed", NULL };
static const char *const mapping_keys[] = { "formula", "source", "caveat", "fidelity", "upstream_differs", "adds",
					    NULL };
static const char *const scopes[] = { "cpu", "core", "ccx", "channel", "die", "sccl", "node", "socket", "system",
				      "instance", NULL };

const char *metric_kind_name(enum metric_kind kind)
{
	return kind == METRIC_COUNTER ? "counter" : kind == METRIC_GAUGE ? "gauge" : "ratio";
}

const char *mapping_fidelity_name(enum mapping_fidelity f)
{
	return f == FIDELITY_EXACT ? "exact" : f == FIDELITY_APPROXIMATE ? "approximate" : "proxy";
}

int catalog_metric_index(const struct catalog *cat, const char *name)
{
	for (int i = 0; i < cat->nr_metrics; i++)
		if (strcmp(cat->metrics[i].name, name) == 0)
			return i;
	/* An old name still finds its metric: scripts and recordings that use it keep working. */
	for (int i = 0; i < cat->nr_metrics; i++)
		if (cat->metrics[i].formerly && strcmp(cat->metrics[i].formerly, name) == 0)
			return i;
	return -1;
}

static void free_strv(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void metric_free(struct catalog_metric *m)
{
	free(m->name);
	free(m->unit);
	free(m->perf_unit);
	free(m->description);
	free(m->formula_text);
	free(m->formerly);
	free(m->plugin);
	expr_free(m->formula);
	for (int i = 0; i < m->nr_vendors; i++) {
		free(m->vendors[i].vendor);
		free(m->vendors[i].text);
	}
	free(m->vendors);
	for (int i = 0; i < m->nr_groups; i++)
		free(m->groups[i]);
	free(m->groups);
}

/* groups: [TopdownL1, memory] - the metric groups a metric belongs to (perf's
 * MetricGroup names where perf has them); a name is letters, digits and '_'. */
/* scale_unit: perf's ScaleUnit, "100%": stat's perf-shaped outputs print the
 * value times 100 with the unit "%", as perf prints its metrics with one. */
static int parse_scale_unit(struct yaml_file *yf, yaml_node_t *m, struct catalog_metric *metric)
{
	char *text = NULL, *end;
	double scale;

	if (yaml_get_str(yf, m, "scale_unit", false, &text, metric->name))
		return -1;
	if (!text)
		return 0;
	scale = strtod(text, &end);
	while (*end == ' ')
		end++;
	if (end == text || !(scale > 0) || !*end) {
		yaml_fail(yf, yaml_get(yf, m, "scale_unit"), "metric '%s': scale_unit '%s' is not a factor and a unit "
			  "(perf's ScaleUnit, e.g. 100%%)", metric->name, text);
		free(text);
		return -1;
	}
	metric->perf_scale = scale;
	metric->perf_unit = strdup(end);
	free(text);
	return metric->perf_unit ? 0 : yaml_fail(yf, m, "out of memory");
}

static int parse_groups(struct yaml_file *yf, yaml_node_t *m, struct catalog_metric *metric)
{
	yaml_node_t *v = yaml_get(yf, m, "groups");
	yaml_node_item_t *item;

	if (!v)
		return 0;
	if (v->type != YAML_SEQUENCE_NODE)
		return yaml_fail(yf, v, "metric '%s': 'groups' must be a list of group names ([TopdownL1, memory])",
				 metric->name);
	metric->groups = calloc((size_t)(v->data.sequence.items.top - v->data.sequence.items.start) + 1,
				sizeof(*metric->groups));
	if (!metric->groups)
		return yaml_fail(yf, v, "out of memory");
	for (item = v->data.sequence.items.start; item < v->data.sequence.items.top; item++) {
		yaml_node_t *g = yaml_document_get_node(&yf->doc, *item);
		const char *name;

		if (!yaml_is_scalar(g) || !*(name = (const char *)g->data.scalar.value))
			return yaml_fail(yf, g, "metric '%s': each group must be a name", metric->name);
		for (const char *c = name; *c; c++)
			if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
				return yaml_fail(yf, g, "metric '%s': group '%s': use letters, digits and '_'",
						 metric->name, name);
		for (int i = 0; i < metric->nr_groups; i++)
			if (strcmp(metric->groups[i], name) == 0)
				return yaml_fail(yf, g, "metric '%s': group '%s' is listed twice", metric->name, name);
		if (!(metric->groups[metric->nr_groups] = strdup(name)))
			return yaml_fail(yf, g, "out of memory");
		metric->nr_groups++;
	}
	return 0;
}

static void role_free(struct catalog_role *r)
{
	free(r->name);
	free(r->match);
	if (r->match_compiled)
		regfree(&r->match_re);
	free_strv(r->requires_formats, r->nr_requires_formats);
	free_strv(r->rejects_formats, r->nr_rejects_formats);
	free(r->scope);
	free(r->description);
	free(r->counters_cpuid);
	free(r->memory_node);
	catalog_vendor_free_role(r);
	for (int i = 0; i < r->nr_events; i++) {
		struct catalog_event *e = &r->events[i];

		free(e->name);
		free(e->text);
		free(e->alias);
		free(e->pfm);
		free(e->description);
		free(e->upstream_differs);
	}
	free(r->events);
}

static void family_free(struct catalog_family *f)
{
	free(f->name);
	free(f->plugin);
	free(f->description);
	free(f->uncore_since);
	catalog_vendor_free_family(f);
	free_strv(f->sources, f->nr_sources);
	for (int i = 0; i < f->nr_cpus; i++) {
		free(f->cpus[i].vendor);
		free(f->cpus[i].families);
		free(f->cpus[i].models);
		free(f->cpus[i].implementers);
		free(f->cpus[i].parts);
	}
	free(f->cpus);
	for (int i = 0; i < f->nr_unavailable; i++)
		free(f->unavailable[i].reason);
	free(f->unavailable);
	catalog_sampling_free(f);
	for (int i = 0; i < f->nr_roles; i++)
		role_free(&f->roles[i]);
	free(f->roles);
	for (int i = 0; i < f->nr_metrics; i++) {
		struct catalog_family_metric *fm = &f->metrics[i];

		for (int j = 0; j < fm->nr_mappings; j++) {
			free(fm->mappings[j].formula_text);
			expr_free(fm->mappings[j].formula);
			free(fm->mappings[j].source);
			free(fm->mappings[j].caveat);
			free(fm->mappings[j].upstream_differs);
		}
		free(fm->mappings);
	}
	free(f->metrics);
}

void catalog_free(struct catalog *cat)
{
	if (!cat)
		return;
	for (int i = 0; i < cat->nr_metrics; i++)
		metric_free(&cat->metrics[i]);
	free(cat->metrics);
	for (int i = 0; i < cat->nr_families; i++)
		family_free(&cat->families[i]);
	free(cat->families);
	free_strv(cat->files, cat->nr_files);
	free(cat->dir);
	free(cat);
}

static const char *add_file(struct catalog *cat, const char *path)
{
	char **files = realloc(cat->files, sizeof(char *) * (size_t)(cat->nr_files + 1));

	if (!files)
		return NULL;
	cat->files = files;
	if (!(files[cat->nr_files] = strdup(path)))
		return NULL;
	return files[cat->nr_files++];
}

static size_t seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static size_t map_len(const yaml_node_t *n)
{
	return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

/* Parse a formula scalar; errors point at the offending character. */
static int parse_formula(struct yaml_file *yf, yaml_node_t *node, const char *what, struct expr **out)
{
	char msg[256];
	int offset = 0;

	if (!yaml_is_scalar(node))
		return yaml_fail(yf, node, "%s: 'formula' must be a scalar, found %s", what, yaml_node_kind(node));
	*out = expr_parse((const char *)node->data.scalar.value, &offset, msg, sizeof(msg));
	if (!*out) {
		const char *text = (const char *)node->data.scalar.value;

		/* A long formula is cut in the message: the reason must fit. */
		ms_error_set(yf->err, "%s:%zu:%d: %s: formula '%.*s%s': %s", yf->path, node->start_mark.line + 1,
			     yaml_scalar_column(node, offset), what, 120, text, strlen(text) > 120 ? "..." : "", msg);
		return -1;
	}
	return 0;
}

static int ref_fail(struct yaml_file *yf, yaml_node_t *node, const struct expr *ref, const char *fmt, const char *a,
		    const char *b)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	ms_error_set(yf->err, "%s:%zu:%d: %s", yf->path, node->start_mark.line + 1,
		     yaml_scalar_column(node, ref->column), msg);
	return -1;
}

/* ---- metrics.yaml ---- */

static int parse_kind(struct yaml_file *yf, yaml_node_t *m, struct catalog_metric *metric)
{
	yaml_node_t *v = yaml_get(yf, m, "kind");
	const char *s;

	if (!v)
		return yaml_fail(yf, m, "metric '%s': missing required key 'kind' (counter, gauge or ratio)",
				 metric->name);
	if (!yaml_is_scalar(v))
		return yaml_fail(yf, v, "metric '%s': 'kind' must be a scalar", metric->name);
	s = (const char *)v->data.scalar.value;
	if (strcmp(s, "counter") == 0)
		metric->kind = METRIC_COUNTER;
	else if (strcmp(s, "gauge") == 0)
		metric->kind = METRIC_GAUGE;
	else if (strcmp(s, "ratio") == 0)
		metric->kind = METRIC_RATIO;
	else
		return yaml_fail(yf, v, "metric '%s': unknown kind '%s'; expected counter, gauge or ratio",
				 metric->name, s);
	return 0;
}

static int parse_metric(struct catalog *cat, struct yaml_file *yf, yaml_node_t *m)
{
	struct catalog_metric *metric = &cat->metrics[cat->nr_metrics];
	char *formerly = NULL;
	yaml_node_t *v;
	int first;

	memset(metric, 0, sizeof(*metric));
	if (yaml_expect(yf, m, YAML_MAPPING_NODE, "each metric") || yaml_check_keys(yf, m, "a metric", metric_keys))
		return -1;
	if (yaml_get_str(yf, m, "name", true, &metric->name, "metric"))
		return -1;
	cat->nr_metrics++;  /* owned from here on, so errors free it */
	metric->pos = yaml_pos(yf, m);
	first = catalog_metric_index(cat, metric->name);
	if (first >= 0 && first != cat->nr_metrics - 1)
		return yaml_fail(yf, yaml_get(yf, m, "name"), "duplicate metric '%s' (first defined at line %d)",
				 metric->name, cat->metrics[first].pos.line);
	for (const char *c = metric->name; *c; c++)
		if (!(*c == '.' || *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return yaml_fail(yf, yaml_get(yf, m, "name"),
					 "metric name '%s': use lower-case letters, digits, '_' and '.'", metric->name);
	if (yaml_get_str(yf, m, "formerly", false, &formerly, metric->name))
		return -1;
	/* Checked before it is this metric's: an old name may not be any metric's name. */
	first = formerly ? catalog_metric_index(cat, formerly) : -1;
	metric->formerly = formerly;
	if (first >= 0)
		return yaml_fail(yf, yaml_get(yf, m, "formerly"), "'formerly: %s' names metric '%s' (line %d)",
				 formerly, cat->metrics[first].name, cat->metrics[first].pos.line);
	if (yaml_get_str(yf, m, "plugin", false, &metric->plugin, metric->name) ||
	    yaml_get_str(yf, m, "unit", false, &metric->unit, metric->name) ||
	    yaml_get_str(yf, m, "description", true, &metric->description, metric->name) ||
	    yaml_get_str(yf, m, "formula", false, &metric->formula_text, metric->name) ||
	    parse_kind(yf, m, metric) || parse_groups(yf, m, metric) || parse_scale_unit(yf, m, metric))
		return -1;
	if (!metric->unit && !(metric->unit = strdup("")))
		return yaml_fail(yf, m, "out of memory");
	if (metric->formula_text && parse_formula(yf, yaml_get(yf, m, "formula"), metric->name, &metric->formula))
		return -1;
	v = yaml_get(yf, m, "vendors");
	if (v) {
		yaml_node_pair_t *pair;

		if (yaml_expect(yf, v, YAML_MAPPING_NODE, "'vendors'"))
			return -1;
		metric->vendors = calloc(map_len(v) + 1, sizeof(*metric->vendors));
		if (!metric->vendors)
			return yaml_fail(yf, v, "out of memory");
		for (pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++) {
			yaml_node_t *key = yaml_document_get_node(&yf->doc, pair->key);
			yaml_node_t *val = yaml_document_get_node(&yf->doc, pair->value);
			struct catalog_vendor_note *note = &metric->vendors[metric->nr_vendors];

			if (!yaml_is_scalar(key) || !yaml_is_scalar(val))
				return yaml_fail(yf, yaml_is_scalar(key) ? val : key,
						 "metric '%s': each vendor note must be 'vendor: text'", metric->name);
			note->vendor = strdup((const char *)key->data.scalar.value);
			note->text = strdup((const char *)val->data.scalar.value);
			metric->nr_vendors++;
			if (!note->vendor || !note->text)
				return yaml_fail(yf, val, "out of memory");
		}
	}
	return 0;
}

static int bind_metric_ref(struct expr *ref, void *ctx)
{
	struct { struct catalog *cat; struct yaml_file *yf; yaml_node_t *node; int self; } *c = ctx;
	int idx;

	if (catalog_builtin_slot(ref->name)) {
		ref->slot = catalog_builtin_slot(ref->name);
		return 0;
	}
	idx = catalog_metric_index(c->cat, ref->name);
	if (idx < 0)
		return ref_fail(c->yf, c->node, ref, "formula refers to unknown metric '%s'%s", ref->name,
				"; expected a metric defined in this file, 'seconds', 'smt_on' or 'core_wide'");
	if (idx == c->self)
		return ref_fail(c->yf, c->node, ref, "metric '%s' refers to itself%s", ref->name, "");
	ref->slot = idx;
	return 0;
}

/* Derived metrics may refer to each other but not in a cycle. */
static int find_cycle(const struct catalog *cat, int idx, int *state)
{
	struct expr *stack[64];
	int top = 0;

	if (state[idx] == 2)
		return 0;
	if (state[idx] == 1)
		return 1;
	state[idx] = 1;
	if (cat->metrics[idx].formula)
		stack[top++] = cat->metrics[idx].formula;
	while (top > 0) {
		struct expr *e = stack[--top];

		if (e->op == EXPR_REF) {
			if (e->slot >= 0 && find_cycle(cat, e->slot, state))
				return 1;
			continue;
		}
		if (e->a && top < 64)
			stack[top++] = e->a;
		if (e->b && top < 64)
			stack[top++] = e->b;
		if (e->cond && top < 64)
			stack[top++] = e->cond;
	}
	state[idx] = 2;
	return 0;
}

static int load_metrics(struct catalog *cat, const char *path, struct ms_error *err)
{
	struct yaml_file yf;
	yaml_node_t *root, *list;
	yaml_node_item_t *item;
	const char *file = add_file(cat, path);
	int rc = -1;
	int *state = NULL;

	if (!file) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (yaml_file_load(&yf, file, err))
		return -1;
	root = yaml_file_root(&yf);
	if (yaml_expect(&yf, root, YAML_MAPPING_NODE, "the top of metrics.yaml"))
		goto out;
	{
		static const char *const top_keys[] = { "metrics", NULL };

		if (yaml_check_keys(&yf, root, "metrics.yaml", top_keys))
			goto out;
	}
	list = yaml_get(&yf, root, "metrics");
	if (!list) {
		yaml_fail(&yf, root, "missing required key 'metrics' (a list of metrics)");
		goto out;
	}
	if (yaml_expect(&yf, list, YAML_SEQUENCE_NODE, "'metrics'"))
		goto out;
	cat->metrics = calloc(seq_len(list) + 1, sizeof(*cat->metrics));
	if (!cat->metrics) {
		ms_error_set(err, "out of memory");
		goto out;
	}
	for (item = list->data.sequence.items.start; item < list->data.sequence.items.top; item++)
		if (parse_metric(cat, &yf, yaml_document_get_node(&yf.doc, *item)))
			goto out;
	/* Bind derived metrics once every name is known. */
	for (item = list->data.sequence.items.start; item < list->data.sequence.items.top; item++) {
		yaml_node_t *m = yaml_document_get_node(&yf.doc, *item);
		int idx = (int)(item - list->data.sequence.items.start);
		struct { struct catalog *cat; struct yaml_file *yf; yaml_node_t *node; int self; } ctx = {
			cat, &yf, yaml_get(&yf, m, "formula"), idx
		};

		if (cat->metrics[idx].formula && expr_each_ref(cat->metrics[idx].formula, bind_metric_ref, &ctx))
			goto out;
	}
	state = calloc((size_t)cat->nr_metrics + 1, sizeof(int));
	if (!state) {
		ms_error_set(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < cat->nr_metrics; i++)
		if (find_cycle(cat, i, state)) {
			ms_error_set(err, "%s:%d:%d: metric '%s': its formula depends on itself through other metrics",
				     file, cat->metrics[i].pos.line, cat->metrics[i].pos.column, cat->metrics[i].name);
			goto out;
		}
	rc = 0;
out:
	free(state);
	yaml_file_free(&yf);
	return rc;
}

/* ---- catalog/pmu/<family>.yaml ---- */

static int parse_range(struct yaml_file *yf, yaml_node_t *s, const char *key, int range[2])
{
	const char *text;
	char *end;
	long lo, hi;

	if (!yaml_is_scalar(s))
		return yaml_fail(yf, s, "'%s': expected a value or a range \"lo-hi\"", key);
	text = (const char *)s->data.scalar.value;
	errno = 0;
	lo = strtol(text, &end, 0);
	hi = lo;
	if (end != text && *end == '-') {
		const char *second = end + 1;

		hi = strtol(second, &end, 0);
		if (end == second)
			end = (char *)text;
	}
	if (errno || end == text || *end || hi < lo || lo < 0 || hi > INT_MAX)
		return yaml_fail(yf, s, "'%s': expected a value or a range \"lo-hi\" from 0 to %d (0x hex allowed), "
				 "found '%s'", key, INT_MAX, text);
	range[0] = (int)lo;
	range[1] = (int)hi;
	return 0;
}

static int parse_range_list(struct yaml_file *yf, yaml_node_t *cpu, const char *key, int (**out)[2], int *nr)
{
	yaml_node_t *v = yaml_get(yf, cpu, key);
	yaml_node_item_t *item;

	*out = NULL;
	*nr = 0;
	if (!v)
		return 0;
	if (v->type == YAML_MAPPING_NODE)
		return yaml_fail(yf, v, "'%s' must be a value, a range \"lo-hi\" or a list of them", key);
	*out = calloc(v->type == YAML_SEQUENCE_NODE ? seq_len(v) + 1 : 1, sizeof(**out));
	if (!*out)
		return yaml_fail(yf, v, "out of memory");
	if (yaml_is_scalar(v)) {
		*nr = 1;
		return parse_range(yf, v, key, (*out)[0]);
	}
	for (item = v->data.sequence.items.start; item < v->data.sequence.items.top; item++)
		if (parse_range(yf, yaml_document_get_node(&yf->doc, *item), key, (*out)[(*nr)++]))
			return -1;
	return 0;
}

static int parse_cpu(struct yaml_file *yf, yaml_node_t *cpu, struct catalog_cpu_match *m)
{
	if (yaml_expect(yf, cpu, YAML_MAPPING_NODE, "each 'detect: cpu' entry") ||
	    yaml_check_keys(yf, cpu, "'detect: cpu'", cpu_keys))
		return -1;
	m->pos = yaml_pos(yf, cpu);
	if (yaml_get_str(yf, cpu, "vendor", false, &m->vendor, "detect: cpu") ||
	    parse_range_list(yf, cpu, "family", &m->families, &m->nr_families) ||
	    parse_range_list(yf, cpu, "model", &m->models, &m->nr_models) ||
	    parse_range_list(yf, cpu, "implementer", &m->implementers, &m->nr_implementers) ||
	    parse_range_list(yf, cpu, "part", &m->parts, &m->nr_parts))
		return -1;
	if (!m->vendor && !m->nr_implementers)
		return yaml_fail(yf, cpu, "'detect: cpu' needs 'vendor' (x86 vendor_id) or 'implementer' (Arm MIDR)");
	if (m->vendor && (m->nr_implementers || m->nr_parts))
		return yaml_fail(yf, cpu, "'detect: cpu': 'vendor' (x86) and 'implementer'/'part' (Arm) do not mix; "
				 "give a list of entries instead");
	return 0;
}

static int parse_detect(struct yaml_file *yf, yaml_node_t *detect, struct catalog_family *f)
{
	yaml_node_t *cpu;
	yaml_node_item_t *item;

	if (yaml_expect(yf, detect, YAML_MAPPING_NODE, "'detect'") ||
	    yaml_check_keys(yf, detect, "'detect'", detect_keys))
		return -1;
	cpu = yaml_get(yf, detect, "cpu");
	if (!cpu)
		return 0;
	if (cpu->type == YAML_MAPPING_NODE) {
		if (!(f->cpus = calloc(1, sizeof(*f->cpus))))
			return yaml_fail(yf, cpu, "out of memory");
		f->nr_cpus = 1;
		return parse_cpu(yf, cpu, &f->cpus[0]);
	}
	if (cpu->type != YAML_SEQUENCE_NODE || seq_len(cpu) == 0)
		return yaml_fail(yf, cpu, "'detect: cpu' must be a mapping or a list of mappings, found %s",
				 yaml_node_kind(cpu));
	if (!(f->cpus = calloc(seq_len(cpu), sizeof(*f->cpus))))
		return yaml_fail(yf, cpu, "out of memory");
	for (item = cpu->data.sequence.items.start; item < cpu->data.sequence.items.top; item++)
		if (parse_cpu(yf, yaml_document_get_node(&yf->doc, *item), &f->cpus[f->nr_cpus++]))
			return -1;
	return 0;
}

static int parse_unavailable(struct catalog *cat, struct yaml_file *yf, yaml_node_t *v, struct catalog_family *f)
{
	yaml_node_pair_t *pair;

	if (yaml_expect(yf, v, YAML_MAPPING_NODE, "'unavailable'"))
		return -1;
	if (!(f->unavailable = calloc(map_len(v) + 1, sizeof(*f->unavailable))))
		return yaml_fail(yf, v, "out of memory");
	for (pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, pair->key);
		yaml_node_t *val = yaml_document_get_node(&yf->doc, pair->value);
		int idx;

		if (!yaml_is_scalar(k) || !yaml_is_scalar(val))
			return yaml_fail(yf, yaml_is_scalar(k) ? val : k, "'unavailable' entries are 'metric: reason'");
		idx = catalog_metric_index(cat, (const char *)k->data.scalar.value);
		if (idx < 0)
			return yaml_fail(yf, k, "unknown metric '%s' in 'unavailable'", (const char *)k->data.scalar.value);
		for (int i = 0; i < f->nr_metrics; i++)
			if (f->metrics[i].metric == idx)
				return yaml_fail(yf, k, "metric '%s' is both mapped (line %d) and listed as unavailable",
						 cat->metrics[idx].name, f->metrics[i].pos.line);
		f->unavailable[f->nr_unavailable].metric = idx;
		if (!(f->unavailable[f->nr_unavailable++].reason = strdup((const char *)val->data.scalar.value)))
			return yaml_fail(yf, val, "out of memory");
	}
	return 0;
}

static const char *role_source_name(enum catalog_role_source source)
{
	return source == ROLE_PROCFS ? "procfs" : source == ROLE_BPF ? "bpf" : source == ROLE_PLUGIN ? "plugin"
	       : source == ROLE_DAMON ? "damon" : "perf";
}

/* A bpf event must name a series the eBPF source provides: a typo would
 * otherwise only show up as a metric that is never counted. */
static int check_bpf_series(struct yaml_file *yf, yaml_node_t *node, const char *name, const char *series)
{
	char known[1024];
	size_t len = 0;

	if (bpf_series_name_known(series))
		return 0;
	known[0] = '\0';
	for (const char *const *n = bpf_series_names(); *n; n++)
		text_appendf(known, sizeof(known), &len, "%s%s", len ? ", " : "", *n);
	return yaml_fail(yf, node, "event '%s': unknown eBPF series '%s'; expected one of: %s", name, series, known);
}

static int parse_event(struct yaml_file *yf, yaml_node_t *key, yaml_node_t *val, struct catalog_role *role)
{
	struct catalog_event *ev = &role->events[role->nr_events];
	const char *name = (const char *)key->data.scalar.value;
	char *config = NULL, *perf = NULL, *procfs = NULL, *bpf = NULL, *plugin = NULL, *damon = NULL;
	int given;

	memset(ev, 0, sizeof(*ev));
	if (!(ev->name = strdup(name)))
		return yaml_fail(yf, key, "out of memory");
	role->nr_events++;
	ev->pos = yaml_pos(yf, key);
	for (const char *c = name; *c; c++)
		if (*c == '.' || *c == ' ')
			return yaml_fail(yf, key, "event name '%s' must not contain '.' or spaces", name);
	if (yaml_is_scalar(val)) {
		/* shorthand: name: "event=0x01" */
		ev->how = role->source == ROLE_PROCFS ? EVENT_HOW_PROCFS
			  : role->source == ROLE_BPF  ? EVENT_HOW_BPF
			  : role->source == ROLE_PLUGIN ? EVENT_HOW_PLUGIN
			  : role->source == ROLE_DAMON ? EVENT_HOW_DAMON
						      : EVENT_HOW_CONFIG;
		if (!(ev->text = strdup((const char *)val->data.scalar.value)))
			return yaml_fail(yf, val, "out of memory");
		if (!*ev->text)
			return yaml_fail(yf, val, "event '%s': empty definition", name);
		return ev->how == EVENT_HOW_BPF ? check_bpf_series(yf, val, name, ev->text) : 0;
	}
	if (val->type != YAML_MAPPING_NODE)
		return yaml_fail(yf, val, "event '%s' must be a mapping (config/perf/procfs/bpf/plugin, alias, pfm, description) "
				 "or a scalar of format terms, found %s", name, yaml_node_kind(val));
	if (yaml_check_keys(yf, val, "an event", event_keys))
		return -1;
	if (yaml_get_str(yf, val, "config", false, &config, name) ||
	    yaml_get_str(yf, val, "perf", false, &perf, name) ||
	    yaml_get_str(yf, val, "procfs", false, &procfs, name) ||
	    yaml_get_str(yf, val, "bpf", false, &bpf, name) ||
	    yaml_get_str(yf, val, "plugin", false, &plugin, name) ||
	    yaml_get_str(yf, val, "damon", false, &damon, name) ||
	    yaml_get_str(yf, val, "alias", false, &ev->alias, name) ||
	    yaml_get_str(yf, val, "pfm", false, &ev->pfm, name) ||
	    yaml_get_str(yf, val, "description", false, &ev->description, name) ||
	    yaml_get_str(yf, val, "upstream_differs", false, &ev->upstream_differs, name)) {
		free(config), free(perf), free(procfs), free(bpf), free(plugin), free(damon);
		return -1;
	}
	if (yaml_get(yf, val, "fixed")) {
		yaml_node_t *f = yaml_get(yf, val, "fixed");
		const char *t = yaml_is_scalar(f) ? (const char *)f->data.scalar.value : "";

		if (strcmp(t, "true") && strcmp(t, "false")) {
			free(config), free(perf), free(procfs), free(bpf), free(plugin);
			return yaml_fail(yf, f, "event '%s': 'fixed' is true or false (true: a fixed counter of the PMU "
					 "counts it, as Intel's cycles and reference cycles)", name);
		}
		ev->fixed = !strcmp(t, "true");
	}
	given = !!config + !!perf + !!procfs + !!bpf + !!plugin + !!damon;
	if (given != 1) {
		free(config), free(perf), free(procfs), free(bpf), free(plugin), free(damon);
		return yaml_fail(yf, val, "event '%s': give exactly one of 'config' (format terms), 'perf' (an event "
				 "string), 'procfs' (vmstat/KEY, numastat/KEY, node_vmstat/KEY or node_meminfo/KEY), 'bpf' (an eBPF series), "
				 "'plugin' (a plugin's series) or 'damon' (a DAMON series)", name);
	}
	ev->how = config ? EVENT_HOW_CONFIG : perf ? EVENT_HOW_PERF : procfs ? EVENT_HOW_PROCFS
		: bpf ? EVENT_HOW_BPF : plugin ? EVENT_HOW_PLUGIN : EVENT_HOW_DAMON;
	ev->text = config ? config : perf ? perf : procfs ? procfs : bpf ? bpf : plugin ? plugin : damon;
	if ((ev->how == EVENT_HOW_PROCFS) != (role->source == ROLE_PROCFS) ||
	    (ev->how == EVENT_HOW_BPF) != (role->source == ROLE_BPF) ||
	    (ev->how == EVENT_HOW_PLUGIN) != (role->source == ROLE_PLUGIN) ||
	    (ev->how == EVENT_HOW_DAMON) != (role->source == ROLE_DAMON)) {
		const char *kind = ev->how == EVENT_HOW_PROCFS ? "procfs" : ev->how == EVENT_HOW_BPF ? "bpf"
				 : ev->how == EVENT_HOW_PLUGIN ? "plugin" : ev->how == EVENT_HOW_DAMON ? "damon" : NULL;

		if (role->source != ROLE_PERF)
			return yaml_fail(yf, val, "event '%s': a 'source: %s' role takes only '%s' events", name,
					 role_source_name(role->source), role_source_name(role->source));
		return yaml_fail(yf, val, "event '%s': '%s' events belong in a role with 'source: %s'", name, kind,
				 kind);
	}
	if (ev->how == EVENT_HOW_BPF)
		return check_bpf_series(yf, yaml_get(yf, val, "bpf"), name, ev->text);
	if (ev->how == EVENT_HOW_DAMON && strncmp(ev->text, "damon.", 6) != 0)
		return yaml_fail(yf, yaml_get(yf, val, "damon"), "event '%s': DAMON series '%s' must be damon.NAME",
				 name, ev->text);
	if (ev->how == EVENT_HOW_PROCFS && (!kernel_stat_file_of(ev->text) || !strchr(ev->text, '/')[1]))
		return yaml_fail(yf, yaml_get(yf, val, "procfs"), "event '%s': procfs statistic '%s' must be %s",
				 name, ev->text, kernel_stat_forms());
	return 0;
}

static int parse_role(struct yaml_file *yf, yaml_node_t *key, yaml_node_t *val, struct catalog_family *f)
{
	struct catalog_role *role = &f->roles[f->nr_roles];
	const char *name = (const char *)key->data.scalar.value;
	char *source = NULL;
	yaml_node_t *events;
	yaml_node_pair_t *pair;
	long long n;

	memset(role, 0, sizeof(*role));
	if (!(role->name = strdup(name)))
		return yaml_fail(yf, key, "out of memory");
	f->nr_roles++;
	role->pos = yaml_pos(yf, key);
	for (const char *c = name; *c; c++)
		if (*c == '.' || *c == ' ')
			return yaml_fail(yf, key, "PMU role name '%s' must not contain '.' or spaces", name);
	if (yaml_expect(yf, val, YAML_MAPPING_NODE, "a PMU role") || yaml_check_keys(yf, val, "a PMU role", role_keys))
		return -1;
	if (yaml_get_str(yf, val, "source", false, &source, name))
		return -1;
	if (source && strcmp(source, "procfs") != 0 && strcmp(source, "perf") != 0 && strcmp(source, "bpf") != 0 &&
	    strcmp(source, "plugin") != 0 && strcmp(source, "damon") != 0) {
		free(source);
		return yaml_fail(yf, yaml_get(yf, val, "source"), "role '%s': unknown source; expected perf, procfs, "
				 "bpf, plugin or damon", name);
	}
	role->source = !source ? ROLE_PERF : !strcmp(source, "procfs") ? ROLE_PROCFS
				 : !strcmp(source, "bpf")      ? ROLE_BPF
				 : !strcmp(source, "plugin")   ? ROLE_PLUGIN
				 : !strcmp(source, "damon")    ? ROLE_DAMON
							       : ROLE_PERF;
	free(source);
	if (yaml_get_str(yf, val, "match", role->source == ROLE_PERF, &role->match, name) ||
	    yaml_get_str(yf, val, "scope", true, &role->scope, name) ||
	    yaml_get_str(yf, val, "description", false, &role->description, name) ||
	    yaml_get_str_list(yf, val, "requires_formats", &role->requires_formats, &role->nr_requires_formats, name) ||
	    yaml_get_str_list(yf, val, "rejects_formats", &role->rejects_formats, &role->nr_rejects_formats, name))
		return -1;
	{
		const char *const *s;

		for (s = scopes; *s && strcmp(*s, role->scope) != 0; s++)
			;
		if (!*s)
			return yaml_fail(yf, yaml_get(yf, val, "scope"), "role '%s': unknown scope '%s'; expected one "
					 "of: cpu, core, ccx, channel, die, sccl, node, socket, system, instance", name,
					 role->scope);
		if (!strcmp(role->scope, "instance") && role->source != ROLE_PLUGIN)
			return yaml_fail(yf, yaml_get(yf, val, "scope"), "role '%s': scope 'instance' (a row per "
					 "instance or cgroup label) is for 'source: plugin' roles", name);
	}
	if (role->match) {
		int rc = regcomp(&role->match_re, role->match, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char msg[256];

			regerror(rc, &role->match_re, msg, sizeof(msg));
			return yaml_fail(yf, yaml_get(yf, val, "match"), "role '%s': 'match' is not a valid POSIX "
					 "extended regular expression: %s", name, msg);
		}
		role->match_compiled = true;
	}
	if (yaml_get_str(yf, val, "memory_node", false, &role->memory_node, name) ||
	    catalog_vendor_parse_role(yf, val, role))
		return -1;
	if (role->memory_node && (strcmp(role->memory_node, "cxl_memdev") != 0 || role->source != ROLE_PERF))
		return yaml_fail(yf, yaml_get(yf, val, "memory_node"), "role '%s': memory_node '%s' is not known; "
				 "expected cxl_memdev (a perf role of CXL memory device PMUs: the node of the memory "
				 "the device backs)", name, role->memory_node);
	n = 0;
	if (yaml_get_int(yf, val, "counters", false, &n, name))
		return -1;
	if (n < 0 || n > 64)
		return yaml_fail(yf, yaml_get(yf, val, "counters"), "role '%s': counters must be 0..64", name);
	role->counters = (int)n;
	n = 0;
	if (yaml_get_int(yf, val, "width", false, &n, name))
		return -1;
	if (n != 0 && (n < 16 || n > 64))
		return yaml_fail(yf, yaml_get(yf, val, "width"), "role '%s': width must be 16..64 bits", name);
	role->width = (int)n;
	if (yaml_get_str(yf, val, "counters_cpuid", false, &role->counters_cpuid, name))
		return -1;
	if (role->counters_cpuid) {
		static const char *const regs[] = { "eax", "ebx", "ecx", "edx" };
		char reg[8] = "";
		int used = 0;

		role->cpuid_reg = -1;
		if (sscanf(role->counters_cpuid, "%x %7s %d-%d%n", &role->cpuid_leaf, reg, &role->cpuid_lo,
			   &role->cpuid_hi, &used) == 4 && role->counters_cpuid[used] == '\0')
			for (int r = 0; r < 4; r++)
				if (strcmp(reg, regs[r]) == 0)
					role->cpuid_reg = r;
		if (role->cpuid_reg < 0 || role->cpuid_lo < 0 || role->cpuid_hi > 31 || role->cpuid_lo > role->cpuid_hi)
			return yaml_fail(yf, yaml_get(yf, val, "counters_cpuid"), "role '%s': counters_cpuid '%s': expected "
					 "LEAF REGISTER LO-HI such as \"0x80000022 ebx 10-15\" (register eax, ebx, ecx or edx, "
					 "bits 0..31)", name, role->counters_cpuid);
	}
	events = yaml_get(yf, val, "events");
	if (!events)
		return yaml_fail(yf, val, "role '%s': missing required key 'events'", name);
	if (yaml_expect(yf, events, YAML_MAPPING_NODE, "'events'"))
		return -1;
	role->events = calloc(map_len(events) + 1, sizeof(*role->events));
	if (!role->events)
		return yaml_fail(yf, events, "out of memory");
	for (pair = events->data.mapping.pairs.start; pair < events->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, pair->key);

		if (!yaml_is_scalar(k))
			return yaml_fail(yf, k, "role '%s': event names must be scalars", name);
		for (int i = 0; i < role->nr_events; i++)
			if (strcmp(role->events[i].name, (const char *)k->data.scalar.value) == 0)
				return yaml_fail(yf, k, "role '%s': duplicate event '%s' (first at line %d)", name,
						 role->events[i].name, role->events[i].pos.line);
		if (parse_event(yf, k, yaml_document_get_node(&yf->doc, pair->value), role))
			return -1;
	}
	return 0;
}

struct bind_ctx {
	struct catalog_family *f;
	struct yaml_file *yf;
	yaml_node_t *node;
};

static int bind_event_ref(struct expr *ref, void *ctx)
{
	struct bind_ctx *c = ctx;
	const char *dot = strchr(ref->name, '.');
	char role_name[128], known[512];
	size_t len = 0;
	int r, e;

	if (catalog_builtin_slot(ref->name)) {
		ref->slot = catalog_builtin_slot(ref->name);
		return 0;
	}
	if (!dot || strchr(dot + 1, '.') || (size_t)(dot - ref->name) >= sizeof(role_name))
		return ref_fail(c->yf, c->node, ref, "'%s' is not an event reference; expected ROLE.EVENT (e.g. "
				"%s), 'seconds', 'smt_on' or 'core_wide'", ref->name, c->f->nr_roles ? "ddrc.flux_rd" : "role.event");
	snprintf(role_name, sizeof(role_name), "%.*s", (int)(dot - ref->name), ref->name);
	for (r = 0; r < c->f->nr_roles && strcmp(c->f->roles[r].name, role_name) != 0; r++)
		text_appendf(known, sizeof(known), &len, "%s%s", r ? ", " : "", c->f->roles[r].name);
	if (r == c->f->nr_roles)
		return ref_fail(c->yf, c->node, ref, "formula refers to unknown PMU role '%s'; roles in this family: %s",
				role_name, len ? known : "(none)");
	len = 0;
	known[0] = '\0';
	for (e = 0; e < c->f->roles[r].nr_events && strcmp(c->f->roles[r].events[e].name, dot + 1) != 0; e++)
		text_appendf(known, sizeof(known), &len, "%s%s", e ? ", " : "", c->f->roles[r].events[e].name);
	if (e == c->f->roles[r].nr_events)
		return ref_fail(c->yf, c->node, ref, "formula refers to unknown event '%s'; events defined for this "
				"role: %s", ref->name, len ? known : "(none)");
	ref->slot = catalog_slot(r, e);
	return 0;
}

static int parse_fidelity(struct yaml_file *yf, yaml_node_t *map, struct catalog_mapping *m)
{
	yaml_node_t *v = yaml_get(yf, map, "fidelity");
	const char *s;

	m->fidelity = FIDELITY_EXACT;
	if (!v)
		return 0;
	if (!yaml_is_scalar(v))
		return yaml_fail(yf, v, "'fidelity' must be exact, approximate or proxy");
	s = (const char *)v->data.scalar.value;
	if (strcmp(s, "exact") == 0)
		m->fidelity = FIDELITY_EXACT;
	else if (strcmp(s, "approximate") == 0)
		m->fidelity = FIDELITY_APPROXIMATE;
	else if (strcmp(s, "proxy") == 0)
		m->fidelity = FIDELITY_PROXY;
	else
		return yaml_fail(yf, v, "unknown fidelity '%s'; expected exact, approximate or proxy", s);
	if (m->fidelity != FIDELITY_EXACT && !m->caveat)
		return yaml_fail(yf, v, "an %s mapping needs a 'caveat' saying what differs", s);
	return 0;
}

/* adds: true - the mapping's value is added to the one another family's
 * mapping gives for the metric, in the scopes it has counters in (a CXL
 * device's bytes on the node it backs, next to the DDR controllers'). */
static int parse_adds(struct yaml_file *yf, yaml_node_t *map, const char *what, struct catalog_mapping *m)
{
	yaml_node_t *v = yaml_get(yf, map, "adds");
	const char *s;

	m->adds = false;
	if (!v)
		return 0;
	s = yaml_is_scalar(v) ? (const char *)v->data.scalar.value : "";
	if (strcmp(s, "true") == 0)
		m->adds = true;
	else if (strcmp(s, "false") != 0)
		return yaml_fail(yf, v, "%s: 'adds' must be true or false", what);
	return 0;
}

static int parse_family_metric(struct catalog *cat, struct yaml_file *yf, yaml_node_t *key, yaml_node_t *val,
			       struct catalog_family *f)
{
	struct catalog_family_metric *fm = &f->metrics[f->nr_metrics];
	const char *name = (const char *)key->data.scalar.value;
	yaml_node_item_t *item;
	int idx = catalog_metric_index(cat, name);

	memset(fm, 0, sizeof(*fm));
	fm->pos = yaml_pos(yf, key);
	if (idx < 0)
		return yaml_fail(yf, key, "unknown metric '%s'; a family may only map metrics defined in metrics.yaml",
				 name);
	if (cat->metrics[idx].formula)
		return yaml_fail(yf, key, "metric '%s' is derived in metrics.yaml (%s); map its inputs instead", name,
				 cat->metrics[idx].formula_text);
	fm->metric = idx;
	f->nr_metrics++;
	if (val->type != YAML_SEQUENCE_NODE || seq_len(val) == 0)
		return yaml_fail(yf, val, "metric '%s': expected a list of mappings (formula, source, fidelity, caveat), "
				 "in order of preference", name);
	fm->mappings = calloc(seq_len(val), sizeof(*fm->mappings));
	if (!fm->mappings)
		return yaml_fail(yf, val, "out of memory");
	for (item = val->data.sequence.items.start; item < val->data.sequence.items.top; item++) {
		yaml_node_t *m = yaml_document_get_node(&yf->doc, *item);
		struct catalog_mapping *mapping = &fm->mappings[fm->nr_mappings];
		struct bind_ctx ctx = { f, yf, NULL };
		char what[160];

		snprintf(what, sizeof(what), "mapping of %s", name);
		if (yaml_expect(yf, m, YAML_MAPPING_NODE, "each mapping") || yaml_check_keys(yf, m, what, mapping_keys))
			return -1;
		fm->nr_mappings++;
		mapping->pos = yaml_pos(yf, m);
		if (yaml_get_str(yf, m, "formula", true, &mapping->formula_text, what) ||
		    yaml_get_str(yf, m, "source", true, &mapping->source, what) ||
		    yaml_get_str(yf, m, "caveat", false, &mapping->caveat, what) ||
		    yaml_get_str(yf, m, "upstream_differs", false, &mapping->upstream_differs, what) ||
		    parse_fidelity(yf, m, mapping) || parse_adds(yf, m, what, mapping) ||
		    parse_formula(yf, yaml_get(yf, m, "formula"), what, &mapping->formula))
			return -1;
		ctx.node = yaml_get(yf, m, "formula");
		if (expr_each_ref(mapping->formula, bind_event_ref, &ctx))
			return -1;
	}
	return 0;
}

/* A plugin's family may name only the series that plugin serves: a typo
 * would otherwise only show up as a metric never counted. */
static int check_plugin_events(const struct catalog_family *f, struct ms_error *err)
{
	const struct plugin_vocabulary *v = f->plugin ? plugin_series_plugin(f->plugin) : NULL;

	for (int r = 0; v && r < f->nr_roles; r++)
		for (int e = 0; e < f->roles[r].nr_events; e++) {
			const struct catalog_event *ev = &f->roles[r].events[e];
			char known[1024] = "";
			size_t len = 0;
			bool found = false;

			if (ev->how != EVENT_HOW_PLUGIN)
				continue;
			for (int i = 0; i < v->nr_series; i++) {
				found |= !strcmp(v->series[i].name, ev->text);
				if (len < sizeof(known))
					len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
								v->series[i].name);
			}
			if (!found) {
				ms_error_set(err, "%s:%d:%d: event '%s': plugin '%s' serves no series '%s'; it serves: %s",
					     ev->pos.file, ev->pos.line, ev->pos.column, ev->name, f->plugin, ev->text, known);
				return -1;
			}
		}
	return 0;
}

static int load_family(struct catalog *cat, const char *path, const char *plugin, struct ms_error *err)
{
	struct catalog_family *f = &cat->families[cat->nr_families];
	struct yaml_file yf;
	yaml_node_t *root, *v;
	yaml_node_pair_t *pair;
	const char *file = add_file(cat, path);
	long long prio = 50;
	int rc = -1;

	if (!file) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	memset(f, 0, sizeof(*f));
	if (yaml_file_load(&yf, file, err))
		return -1;
	cat->nr_families++;
	f->file = (char *)file;
	if (plugin && !(f->plugin = strdup(plugin)))
		goto oom;
	root = yaml_file_root(&yf);
	if (yaml_expect(&yf, root, YAML_MAPPING_NODE, "the top of a PMU family file") ||
	    yaml_check_keys(&yf, root, "a PMU family file", family_keys) ||
	    yaml_get_str(&yf, root, "family", true, &f->name, "PMU family file") ||
	    yaml_get_str(&yf, root, "description", true, &f->description, f->name) ||
	    yaml_get_str(&yf, root, "uncore_since", false, &f->uncore_since, f->name) ||
	    yaml_get_int(&yf, root, "priority", false, &prio, f->name) ||
	    yaml_get_str_list(&yf, root, "sources", &f->sources, &f->nr_sources, f->name) ||
	    catalog_vendor_parse_family(&yf, root, f))
		goto out;
	/* Narrowed to int only once in range: 9223372036854775807 became -1 and won. */
	if (prio < CATALOG_PRIORITY_MIN || prio > CATALOG_PRIORITY_MAX) {
		yaml_fail(&yf, yaml_get(&yf, root, "priority"), "%s: priority %lld is out of range: give %d (first) "
			  "to %d (last)", f->name, prio, CATALOG_PRIORITY_MIN, CATALOG_PRIORITY_MAX);
		goto out;
	}
	f->priority = (int)prio;
	for (int i = 0; i < cat->nr_families - 1; i++)
		if (strcmp(cat->families[i].name, f->name) == 0) {
			yaml_fail(&yf, yaml_get(&yf, root, "family"), "duplicate family '%s' (also in %s)", f->name,
				  cat->families[i].file);
			goto out;
		}
	if (f->nr_sources == 0) {
		yaml_fail(&yf, root, "family '%s': missing required key 'sources' (where its facts come from)", f->name);
		goto out;
	}
	v = yaml_get(&yf, root, "detect");
	if (v && parse_detect(&yf, v, f))
		goto out;
	v = yaml_get(&yf, root, "pmus");
	if (!v) {
		yaml_fail(&yf, root, "family '%s': missing required key 'pmus'", f->name);
		goto out;
	}
	if (yaml_expect(&yf, v, YAML_MAPPING_NODE, "'pmus'"))
		goto out;
	f->roles = calloc(map_len(v) + 1, sizeof(*f->roles));
	if (!f->roles)
		goto oom;
	for (pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&yf.doc, pair->key);

		if (!yaml_is_scalar(k)) {
			yaml_fail(&yf, k, "PMU role names must be scalars");
			goto out;
		}
		for (int i = 0; i < f->nr_roles; i++)
			if (strcmp(f->roles[i].name, (const char *)k->data.scalar.value) == 0) {
				yaml_fail(&yf, k, "duplicate PMU role '%s' (first at line %d)", f->roles[i].name,
					  f->roles[i].pos.line);
				goto out;
			}
		if (parse_role(&yf, k, yaml_document_get_node(&yf.doc, pair->value), f))
			goto out;
	}
	if (check_plugin_events(f, err))
		goto out;
	v = yaml_get(&yf, root, "metrics");
	if (v) {
		if (yaml_expect(&yf, v, YAML_MAPPING_NODE, "'metrics'"))
			goto out;
		f->metrics = calloc(map_len(v) + 1, sizeof(*f->metrics));
		if (!f->metrics)
			goto oom;
		for (pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top; pair++) {
			yaml_node_t *k = yaml_document_get_node(&yf.doc, pair->key);

			if (!yaml_is_scalar(k)) {
				yaml_fail(&yf, k, "metric names must be scalars");
				goto out;
			}
			for (int i = 0; i < f->nr_metrics; i++)
				if (strcmp(cat->metrics[f->metrics[i].metric].name,
					   (const char *)k->data.scalar.value) == 0) {
					yaml_fail(&yf, k, "duplicate metric '%s' in this family (first at line %d); "
						  "list fallbacks under one key", (const char *)k->data.scalar.value,
						  f->metrics[i].pos.line);
					goto out;
				}
			if (parse_family_metric(cat, &yf, k, yaml_document_get_node(&yf.doc, pair->value), f))
				goto out;
		}
	}
	v = yaml_get(&yf, root, "unavailable");
	if (v && parse_unavailable(cat, &yf, v, f))
		goto out;
	v = yaml_get(&yf, root, "sampling");
	if (v && catalog_sampling_parse(&yf, v, f))
		goto out;
	rc = 0;
	goto out;
oom:
	ms_error_set(err, "%s: out of memory", file);
out:
	yaml_file_free(&yf);
	return rc;
}

static int family_order(const void *a, const void *b)
{
	const struct catalog_family *fa = a, *fb = b;

	if (fa->priority != fb->priority)
		return fa->priority < fb->priority ? -1 : 1;
	return strcmp(fa->name, fb->name);
}

int catalog_load(struct catalog **out, const char *dir, struct ms_error *err)
{
	struct catalog *cat = calloc(1, sizeof(*cat));
	char path[4096];
	glob_t g;
	int grc;

	*out = NULL;
	if (!cat || !(cat->dir = strdup(dir))) {
		free(cat);
		ms_error_set(err, "out of memory");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/metrics.yaml", dir);
	if (load_metrics(cat, path, err))
		goto fail;
	snprintf(path, sizeof(path), "%s/pmu/*.yaml", dir);
	grc = glob(path, 0, NULL, &g);
	if (grc == GLOB_NOMATCH) {
		ms_error_set(err, "%s/pmu: no PMU family files (*.yaml); the catalog is incomplete", dir);
		goto fail;
	}
	if (grc) {
		ms_error_set(err, "%s/pmu: cannot list the PMU family files", dir);
		goto fail;
	}
	cat->families = calloc(g.gl_pathc + (size_t)plugin_series_count() + 1, sizeof(*cat->families));
	if (!cat->families) {
		globfree(&g);
		ms_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < g.gl_pathc; i++)
		if (load_family(cat, g.gl_pathv[i], NULL, err)) {
			globfree(&g);
			goto fail;
		}
	globfree(&g);
	/* The families of the loaded plugins (checked when each was loaded). */
	for (int i = 0; i < plugin_series_count(); i++) {
		const struct plugin_vocabulary *v = plugin_series_at(i);

		if (v->family_file && load_family(cat, v->family_file, v->plugin, err)) {
			ms_error_append(err, " (the catalog family of plugin %s)", v->plugin);
			goto fail;
		}
	}
	qsort(cat->families, (size_t)cat->nr_families, sizeof(*cat->families), family_order);
	*out = cat;
	return 0;
fail:
	catalog_free(cat);
	return -1;
}

int catalog_add_plugin_family(struct catalog *cat, const char *path, const char *plugin, struct ms_error *err)
{
	struct catalog_family *grown = realloc(cat->families, sizeof(*grown) * (size_t)(cat->nr_families + 2));
	int before = cat->nr_families;

	if (!grown) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	cat->families = grown;
	if (load_family(cat, path, plugin, err)) {
		if (cat->nr_families > before)
			family_free(&cat->families[--cat->nr_families]);
		return -1;
	}
	qsort(cat->families, (size_t)cat->nr_families, sizeof(*cat->families), family_order);
	return 0;
}

int catalog_load_default(struct catalog **out, struct ms_error *err)
{
	const char *env = getenv("MEMSCOPE_CATALOG_DIR");
	char path[4096];

	if (env && *env)
		return catalog_load(out, env, err);
	data_dir("catalog", path, sizeof(path));
	if (catalog_load(out, path, err)) {
		ms_error_append(err, " (set MEMSCOPE_CATALOG_DIR to the directory holding metrics.yaml)");
		return -1;
	}
	return 0;
}
