/* Vendor facts as catalog data: which kernel module creates a role's PMUs,
 * which CPU makers' kernels do, and what libpfm4 calls them. */
#include "catalog/catalog_vendor.h"

#include <stdlib.h>
#include <string.h>

static const char *const pfm_name_keys[] = { "pmu", "kernel", NULL };

static int parse_pfm_name(struct yaml_file *yf, yaml_node_t *node, const char *what, struct catalog_pfm_name *out)
{
	int rc;

	if (yaml_expect(yf, node, YAML_MAPPING_NODE, "a libpfm4 name ({ pmu: REGEX, kernel: NAME })") ||
	    yaml_check_keys(yf, node, "a libpfm4 name", pfm_name_keys) ||
	    yaml_get_str(yf, node, "pmu", true, &out->pfm, what) ||
	    yaml_get_str(yf, node, "kernel", true, &out->kernel, what))
		return -1;
	out->pos = yaml_pos(yf, node);
	rc = regcomp(&out->pfm_re, out->pfm, REG_EXTENDED);
	if (rc) {
		char msg[256];

		regerror(rc, &out->pfm_re, msg, sizeof(msg));
		return yaml_fail(yf, yaml_get(yf, node, "pmu"), "%s: libpfm4 'pmu' is not a valid POSIX extended "
				 "regular expression: %s", what, msg);
	}
	out->compiled = true;
	for (const char *k = out->kernel; *k; k++)
		if (k[0] == '\\' && (k[1] < '1' || k[1] > '9' || (size_t)(k[1] - '0') > out->pfm_re.re_nsub))
			return yaml_fail(yf, yaml_get(yf, node, "kernel"), "%s: libpfm4 'kernel' %s: '\\%c' names no "
					 "group of '%s' (it has %zu; write \\1..\\%zu)", what, out->kernel,
					 k[1] ? k[1] : ' ', out->pfm, out->pfm_re.re_nsub, out->pfm_re.re_nsub);
	return 0;
}

/* libpfm4: one { pmu, kernel } mapping or a list of them. */
static int parse_pfm_names(struct yaml_file *yf, yaml_node_t *map, const char *what, struct catalog_pfm_name **out,
			   int *nr)
{
	yaml_node_t *v = yaml_get(yf, map, "libpfm4");
	size_t n;

	if (!v)
		return 0;
	n = v->type == YAML_SEQUENCE_NODE ? (size_t)(v->data.sequence.items.top - v->data.sequence.items.start) : 1;
	if (!(*out = calloc(n, sizeof(**out))))
		return yaml_fail(yf, v, "out of memory");
	if (v->type != YAML_SEQUENCE_NODE) {
		*nr = 1;
		return parse_pfm_name(yf, v, what, *out);
	}
	for (yaml_node_item_t *item = v->data.sequence.items.start; item < v->data.sequence.items.top; item++) {
		(*nr)++;
		if (parse_pfm_name(yf, yaml_document_get_node(&yf->doc, *item), what, &(*out)[*nr - 1]))
			return -1;
	}
	return 0;
}

int catalog_vendor_parse_role(struct yaml_file *yf, yaml_node_t *role_map, struct catalog_role *role)
{
	if (yaml_get_str(yf, role_map, "driver", false, &role->driver, role->name) ||
	    yaml_get_str_list(yf, role_map, "maker", &role->makers, &role->nr_makers, role->name) ||
	    parse_pfm_names(yf, role_map, role->name, &role->pfm_names, &role->nr_pfm_names))
		return -1;
	if ((role->driver || role->nr_makers || role->nr_pfm_names) && role->source != ROLE_PERF)
		return yaml_fail(yf, role_map, "role '%s': driver, maker and libpfm4 describe kernel PMUs: they are "
				 "for perf roles (this one is not)", role->name);
	return 0;
}

int catalog_vendor_parse_family(struct yaml_file *yf, yaml_node_t *root, struct catalog_family *f)
{
	return parse_pfm_names(yf, root, f->name, &f->pfm_names, &f->nr_pfm_names);
}

static void free_pfm_names(struct catalog_pfm_name *names, int nr)
{
	for (int i = 0; i < nr; i++) {
		free(names[i].pfm);
		free(names[i].kernel);
		if (names[i].compiled)
			regfree(&names[i].pfm_re);
	}
	free(names);
}

void catalog_vendor_free_role(struct catalog_role *role)
{
	free(role->driver);
	for (int i = 0; i < role->nr_makers; i++)
		free(role->makers[i]);
	free(role->makers);
	free_pfm_names(role->pfm_names, role->nr_pfm_names);
}

void catalog_vendor_free_family(struct catalog_family *f)
{
	free_pfm_names(f->pfm_names, f->nr_pfm_names);
}

static int add_pfm_names(struct pmu_vendors *v, const struct catalog_pfm_name *names, int nr)
{
	for (int i = 0; i < nr; i++) {
		v->pfm_names[v->nr_pfm_names].pfm = &names[i].pfm_re;
		v->pfm_names[v->nr_pfm_names++].kernel = names[i].kernel;
	}
	return 0;
}

int catalog_vendor_table(const struct catalog *cat, struct pmu_vendors *v, struct ms_error *err)
{
	int roles = 0, names = 0;

	memset(v, 0, sizeof(*v));
	for (int f = 0; f < cat->nr_families; f++) {
		names += cat->families[f].nr_pfm_names;
		for (int r = 0; r < cat->families[f].nr_roles; r++) {
			roles += cat->families[f].roles[r].nr_makers > 0;
			names += cat->families[f].roles[r].nr_pfm_names;
		}
	}
	v->makers = calloc((size_t)roles + 1, sizeof(*v->makers));
	v->pfm_names = calloc((size_t)names + 1, sizeof(*v->pfm_names));
	if (!v->makers || !v->pfm_names) {
		pmu_vendors_free(v);
		ms_error_set(err, "out of memory");
		return -1;
	}
	/* A role's own names before its family's catch-all rules. */
	for (int f = 0; f < cat->nr_families; f++) {
		const struct catalog_family *fam = &cat->families[f];

		for (int r = 0; r < fam->nr_roles; r++) {
			const struct catalog_role *role = &fam->roles[r];

			add_pfm_names(v, role->pfm_names, role->nr_pfm_names);
			if (role->nr_makers && role->match_compiled) {
				v->makers[v->nr_makers].match = &role->match_re;
				v->makers[v->nr_makers].makers = role->makers;
				v->makers[v->nr_makers++].nr_makers = role->nr_makers;
			}
		}
	}
	for (int f = 0; f < cat->nr_families; f++)
		add_pfm_names(v, cat->families[f].pfm_names, cat->families[f].nr_pfm_names);
	return 0;
}

const struct pmu_vendors *catalog_pmu_vendors(struct ms_error *err)
{
	/* Kept for the process: hosts hold pointers into it. */
	static struct catalog *cat;
	static struct pmu_vendors table;
	static int state; /* 0 untried, 1 loaded, -1 failed */

	if (state == 0) {
		state = catalog_load_default(&cat, err) == 0 && catalog_vendor_table(cat, &table, err) == 0 ? 1 : -1;
	}
	return state > 0 ? &table : NULL;
}
