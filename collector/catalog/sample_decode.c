#include "catalog/sample_decode.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_yaml.h"
#include "events/spe_record.h"
#include "util/array.h"

#define PARTS_MAX 4

/* A field of perf_mem_data_src (data-src.yaml `fields`). */
struct dsrc_field {
	char *name;
	int shift, width;
	bool bits;                 /* a bit set (names are bits) rather than one value */
	struct dsrc_name { uint64_t value; char *name; } *names;
	int nr_names;
};

/* A field of a vendor's input: bits of a register, or of the capability word. */
struct input_field {
	char *name;
	int reg;                   /* -1: the capability word */
	struct { int lo, width; } parts[PARTS_MAX];   /* low part first */
	int nr_parts;
};

enum cond_on { ON_INPUT, ON_DSRC, ON_CPU_FAMILY, ON_CPU_MODEL, ON_CPU_IMPLEMENTER, ON_CPU_PART };

struct cond {
	enum cond_on on;
	int field;                 /* input or dsrc field index */
	uint64_t (*ranges)[2];     /* ON_INPUT / ON_CPU_*: any of these [lo, hi] */
	int nr_ranges;
	uint64_t dsrc_value;       /* ON_DSRC: bits that must be set, or the value */
};

struct cond_set {
	struct cond *conds;
	int nr;
};

struct assign {
	int field;                 /* dsrc field index */
	uint64_t value;            /* in the field's own bits (unshifted) */
};

struct rule {
	struct cond_set when;
	struct cond_set *unless;
	int nr_unless;
	struct assign *set, *add;
	int nr_set, nr_add;
	bool has_set;
	bool stop;
	int clear_reg;             /* -1: none */
	int weight_field;          /* input field index, -1: none */
	/* data-src.yaml attribution outputs */
	char *level;
	int remote, hitm, peer;    /* -1: not given */
};

struct rule_group {
	char *name;
	struct rule *rules;
	int nr;
};

struct decode_table {
	char *decode;
	char *file;
	int caps_bytes;
	char **registers;
	int nr_registers;
	bool spe;
	struct input_field *fields;
	int nr_fields;
	struct rule_group *groups;
	int nr_groups;
	const struct sample_decoders *owner;   /* data source fields live in the data-src table */
	/* data-src.yaml only */
	struct dsrc_field *dsrc;
	int nr_dsrc;
};

struct sample_decoders {
	struct decode_table *tables;
	int nr;
	const struct decode_table *data_src;
};

/* ---- Loading ---- */

static char *dup_scalar(yaml_node_t *n)
{
	return strdup((const char *)n->data.scalar.value);
}

static int dsrc_index(const struct decode_table *base, const char *name)
{
	for (int i = 0; base && i < base->nr_dsrc; i++)
		if (!strcmp(base->dsrc[i].name, name))
			return i;
	return -1;
}

static int input_index(const struct decode_table *t, const char *name)
{
	for (int i = 0; i < t->nr_fields; i++)
		if (!strcmp(t->fields[i].name, name))
			return i;
	return -1;
}

static int register_index(const struct decode_table *t, const char *name)
{
	for (int i = 0; i < t->nr_registers; i++)
		if (!strcmp(t->registers[i], name))
			return i;
	return -1;
}

/* "0-2,6-7" or "11": bit ranges, low part first. */
static int parse_bits(struct yaml_file *yf, yaml_node_t *n, struct input_field *f)
{
	const char *p = yaml_is_scalar(n) ? (const char *)n->data.scalar.value : NULL;
	int total = 0;

	if (!p)
		return yaml_fail(yf, n, "'bits' is a text such as \"0-2,6-7\"");
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return yaml_fail(yf, n, "'bits' is a text such as \"0-2,6-7\"");
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (lo < 0 || hi < lo || hi > 63 || f->nr_parts == PARTS_MAX || (*end && *end != ','))
			return yaml_fail(yf, n, "bad bit range in '%s' (bits 0 to 63, at most %d ranges)",
					 (const char *)n->data.scalar.value, PARTS_MAX);
		f->parts[f->nr_parts].lo = (int)lo;
		f->parts[f->nr_parts++].width = (int)(hi - lo + 1);
		total += (int)(hi - lo + 1);
		p = *end ? end + 1 : end;
	}
	if (total > 64)
		return yaml_fail(yf, n, "a field has at most 64 bits");
	return 0;
}

static int parse_input(struct yaml_file *yf, yaml_node_t *root, struct decode_table *t)
{
	static const char *const keys[] = { "caps_bytes", "registers", "spe", NULL };
	yaml_node_t *in = yaml_get(yf, root, "input"), *v;
	long long caps = 0;

	if (!in)
		return yaml_fail(yf, root, "a vendor decode table needs 'input' (its registers)");
	if (yaml_expect(yf, in, YAML_MAPPING_NODE, "'input'") || yaml_check_keys(yf, in, "'input'", keys) ||
	    yaml_get_int(yf, in, "caps_bytes", false, &caps, "input") ||
	    yaml_get_str_list(yf, in, "registers", &t->registers, &t->nr_registers, "input"))
		return -1;
	if (caps != 0 && caps != 4 && caps != 8)
		return yaml_fail(yf, yaml_get(yf, in, "caps_bytes"), "caps_bytes is 0, 4 or 8");
	t->caps_bytes = (int)caps;
	v = yaml_get(yf, in, "spe");
	t->spe = v && yaml_is_scalar(v) && !strcmp((const char *)v->data.scalar.value, "true");
	if (t->spe) {
		/* The record fields memscope's SPE packet decoder fills in. */
		for (int i = 0; i < t->nr_registers; i++)
			free(t->registers[i]);
		free(t->registers);
		t->registers = calloc(SPE_REGISTERS, sizeof(char *));
		if (!t->registers)
			return yaml_fail(yf, in, "out of memory");
		for (int i = 0; i < SPE_REGISTERS; i++)
			if (!(t->registers[t->nr_registers++] = strdup(spe_register_names[i])))
				return yaml_fail(yf, in, "out of memory");
	} else if (t->nr_registers == 0 || t->nr_registers > 16) {
		return yaml_fail(yf, in, "'registers' names 1 to 16 registers");
	}
	return 0;
}

static int parse_fields(struct yaml_file *yf, yaml_node_t *root, struct decode_table *t)
{
	static const char *const keys[] = { "register", "caps", "bits", NULL };
	yaml_node_t *fields = yaml_get(yf, root, "fields");

	if (!fields || yaml_expect(yf, fields, YAML_MAPPING_NODE, "'fields'"))
		return fields ? -1 : yaml_fail(yf, root, "a vendor decode table needs 'fields'");
	t->fields = calloc((size_t)(fields->data.mapping.pairs.top - fields->data.mapping.pairs.start) + 1,
			   sizeof(*t->fields));
	if (!t->fields)
		return yaml_fail(yf, fields, "out of memory");
	for (yaml_node_pair_t *p = fields->data.mapping.pairs.start; p < fields->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, p->key), *v = yaml_document_get_node(&yf->doc, p->value);
		struct input_field *f = &t->fields[t->nr_fields];
		yaml_node_t *reg, *caps;

		if (!yaml_is_scalar(k) || yaml_expect(yf, v, YAML_MAPPING_NODE, "a field") ||
		    yaml_check_keys(yf, v, "a field", keys))
			return -1;
		if (input_index(t, (const char *)k->data.scalar.value) >= 0)
			return yaml_fail(yf, k, "duplicate field '%s'", (const char *)k->data.scalar.value);
		if (!strncmp((const char *)k->data.scalar.value, "mem_", 4) ||
		    !strncmp((const char *)k->data.scalar.value, "cpu_", 4))
			return yaml_fail(yf, k, "field names starting with mem_ or cpu_ are the data source's and the "
					 "CPU's");
		f->name = dup_scalar(k);
		t->nr_fields++;
		reg = yaml_get(yf, v, "register");
		caps = yaml_get(yf, v, "caps");
		if (!!reg == !!caps)
			return yaml_fail(yf, v, "a field takes bits of one 'register' or of 'caps'");
		if (caps) {
			f->reg = -1;
			if (parse_bits(yf, caps, f))
				return -1;
			continue;
		}
		if (!yaml_is_scalar(reg) || (f->reg = register_index(t, (const char *)reg->data.scalar.value)) < 0)
			return yaml_fail(yf, reg, "unknown register '%s' (input.registers lists them)",
					 yaml_is_scalar(reg) ? (const char *)reg->data.scalar.value : "?");
		if (!yaml_get(yf, v, "bits"))
			return yaml_fail(yf, v, "a register field needs 'bits'");
		if (parse_bits(yf, yaml_get(yf, v, "bits"), f))
			return -1;
	}
	return 0;
}

static int parse_dsrc_fields(struct yaml_file *yf, yaml_node_t *root, struct decode_table *t)
{
	static const char *const keys[] = { "shift", "width", "bits", "values", NULL };
	yaml_node_t *fields = yaml_get(yf, root, "fields");

	if (!fields || yaml_expect(yf, fields, YAML_MAPPING_NODE, "'fields'"))
		return fields ? -1 : yaml_fail(yf, root, "data-src.yaml needs 'fields'");
	t->dsrc = calloc((size_t)(fields->data.mapping.pairs.top - fields->data.mapping.pairs.start) + 1,
			 sizeof(*t->dsrc));
	if (!t->dsrc)
		return yaml_fail(yf, fields, "out of memory");
	for (yaml_node_pair_t *p = fields->data.mapping.pairs.start; p < fields->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, p->key), *v = yaml_document_get_node(&yf->doc, p->value);
		struct dsrc_field *f = &t->dsrc[t->nr_dsrc];
		long long shift, width;
		yaml_node_t *names;

		if (!yaml_is_scalar(k) || yaml_expect(yf, v, YAML_MAPPING_NODE, "a data source field") ||
		    yaml_check_keys(yf, v, "a data source field", keys) ||
		    yaml_get_int(yf, v, "shift", true, &shift, "data source field") ||
		    yaml_get_int(yf, v, "width", true, &width, "data source field"))
			return -1;
		if (shift < 0 || width < 1 || shift + width > 64)
			return yaml_fail(yf, v, "a field lies within the 64 bits");
		f->name = dup_scalar(k);
		f->shift = (int)shift;
		f->width = (int)width;
		t->nr_dsrc++;
		names = yaml_get(yf, v, "bits");
		f->bits = names != NULL;
		if (!names && !(names = yaml_get(yf, v, "values")))
			return yaml_fail(yf, v, "a data source field names its 'bits' or its 'values'");
		if (yaml_expect(yf, names, YAML_MAPPING_NODE, "names of a field's bits or values"))
			return -1;
		f->names = calloc((size_t)(names->data.mapping.pairs.top - names->data.mapping.pairs.start) + 1,
				  sizeof(*f->names));
		if (!f->names)
			return yaml_fail(yf, names, "out of memory");
		for (yaml_node_pair_t *q = names->data.mapping.pairs.start; q < names->data.mapping.pairs.top; q++) {
			yaml_node_t *nk = yaml_document_get_node(&yf->doc, q->key);
			yaml_node_t *nv = yaml_document_get_node(&yf->doc, q->value);
			long long value;

			if (yaml_scalar_int(yf, nk, &value, "a field value") || !yaml_is_scalar(nv))
				return yaml_fail(yf, nk, "names are 'VALUE: NAME'");
			if (value <= 0 || (width < 64 && (unsigned long long)value >> width))
				return yaml_fail(yf, nk, "0x%llx does not fit in %s's %d bits", value, f->name, f->width);
			f->names[f->nr_names].value = (uint64_t)value;
			f->names[f->nr_names++].name = dup_scalar(nv);
		}
	}
	return 0;
}

/* A name of a data source field's bits or values. */
static int dsrc_name_value(const struct dsrc_field *f, const char *name, uint64_t *value)
{
	for (int i = 0; i < f->nr_names; i++)
		if (!strcmp(f->names[i].name, name)) {
			*value = f->names[i].value;
			return 0;
		}
	return -1;
}

/* NAME or [NAME, NAME]: bits are ORed; a values field takes one. */
static int parse_dsrc_value(struct yaml_file *yf, yaml_node_t *n, const struct dsrc_field *f, uint64_t *out)
{
	*out = 0;
	if (yaml_is_scalar(n)) {
		if (dsrc_name_value(f, (const char *)n->data.scalar.value, out) < 0)
			return yaml_fail(yf, n, "'%s' is not a name of %s", (const char *)n->data.scalar.value, f->name);
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE || !f->bits)
		return yaml_fail(yf, n, "%s takes %s", f->name, f->bits ? "a name or a list of names" : "one name");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(&yf->doc, *it);
		uint64_t v;

		if (!yaml_is_scalar(e) || dsrc_name_value(f, (const char *)e->data.scalar.value, &v) < 0)
			return yaml_fail(yf, e, "'%s' is not a name of %s",
					 yaml_is_scalar(e) ? (const char *)e->data.scalar.value : "?", f->name);
		*out |= v;
	}
	return 0;
}

/* 3, [1, 2, 5] or "0x20-0x5f" */
static int parse_ranges(struct yaml_file *yf, yaml_node_t *n, struct cond *c)
{
	size_t nr = n->type == YAML_SEQUENCE_NODE
			    ? (size_t)(n->data.sequence.items.top - n->data.sequence.items.start) : 1;

	if (!nr)
		return yaml_fail(yf, n, "a condition value is empty ([]): give a number, a list of numbers or \"lo-hi\"");
	c->ranges = calloc(nr, sizeof(*c->ranges));
	if (!c->ranges)
		return yaml_fail(yf, n, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		yaml_node_t *e = n->type == YAML_SEQUENCE_NODE
					 ? yaml_document_get_node(&yf->doc, n->data.sequence.items.start[i]) : n;
		const char *text = yaml_is_scalar(e) ? (const char *)e->data.scalar.value : NULL;
		const char *dash = text && text[0] ? strchr(text + 1, '-') : NULL;
		char *end;

		if (!text)
			return yaml_fail(yf, e, "a condition value is a number, a list of numbers or \"lo-hi\"");
		if (!text[0])
			return yaml_fail(yf, e, "a condition value is empty: give a number, a list of numbers or \"lo-hi\"");
		c->ranges[i][0] = strtoull(text, &end, 0);
		if (end == text || (dash ? end != dash : *end != '\0'))
			return yaml_fail(yf, e, "a condition value is a number, a list of numbers or \"lo-hi\"");
		c->ranges[i][1] = dash ? strtoull(dash + 1, &end, 0) : c->ranges[i][0];
		if (*end || c->ranges[i][1] < c->ranges[i][0])
			return yaml_fail(yf, e, "a condition value is a number, a list of numbers or \"lo-hi\"");
		c->nr_ranges++;
	}
	return 0;
}

static int parse_conds(struct yaml_file *yf, yaml_node_t *n, const struct decode_table *t,
		       const struct decode_table *base, struct cond_set *out)
{
	if (yaml_expect(yf, n, YAML_MAPPING_NODE, "conditions ({ FIELD: VALUE, ... })"))
		return -1;
	out->conds = calloc((size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start) + 1, sizeof(*out->conds));
	if (!out->conds)
		return yaml_fail(yf, n, "out of memory");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, p->key), *v = yaml_document_get_node(&yf->doc, p->value);
		const char *name = yaml_is_scalar(k) ? (const char *)k->data.scalar.value : "";
		struct cond *c = &out->conds[out->nr++];
		static const struct { const char *name; enum cond_on on; } cpu[] = {
			{ "cpu_family", ON_CPU_FAMILY }, { "cpu_model", ON_CPU_MODEL },
			{ "cpu_implementer", ON_CPU_IMPLEMENTER }, { "cpu_part", ON_CPU_PART },
		};

		c->on = ON_INPUT;
		for (size_t i = 0; i < ARRAY_SIZE(cpu); i++)
			if (!strcmp(name, cpu[i].name))
				c->on = cpu[i].on;
		if (c->on == ON_INPUT && (c->field = dsrc_index(base, name)) >= 0) {
			c->on = ON_DSRC;
			if (parse_dsrc_value(yf, v, &base->dsrc[c->field], &c->dsrc_value))
				return -1;
			continue;
		}
		if (c->on == ON_INPUT && (c->field = input_index(t, name)) < 0)
			return yaml_fail(yf, k, "unknown field '%s' in a condition (the table's fields, mem_* data source "
					 "fields, cpu_family, cpu_model, cpu_implementer, cpu_part)", name);
		if (parse_ranges(yf, v, c))
			return -1;
	}
	return 0;
}

static int parse_assigns(struct yaml_file *yf, yaml_node_t *n, const struct decode_table *base, struct assign **out,
			 int *nr)
{
	if (yaml_expect(yf, n, YAML_MAPPING_NODE, "data source fields to set ({ mem_lvl: [L3, HIT] })"))
		return -1;
	*out = calloc((size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start) + 1, sizeof(**out));
	if (!*out)
		return yaml_fail(yf, n, "out of memory");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, p->key), *v = yaml_document_get_node(&yf->doc, p->value);
		struct assign *a = &(*out)[*nr];

		if (!yaml_is_scalar(k) || (a->field = dsrc_index(base, (const char *)k->data.scalar.value)) < 0)
			return yaml_fail(yf, k, "'%s' is not a data source field (data-src.yaml)",
					 yaml_is_scalar(k) ? (const char *)k->data.scalar.value : "?");
		if (parse_dsrc_value(yf, v, &base->dsrc[a->field], &a->value))
			return -1;
		(*nr)++;
	}
	return 0;
}

static int parse_bool(struct yaml_file *yf, yaml_node_t *map, const char *key, int *out)
{
	yaml_node_t *v = yaml_get(yf, map, key);

	*out = -1;
	if (!v)
		return 0;
	if (yaml_is_scalar(v) && !strcmp((const char *)v->data.scalar.value, "true"))
		*out = 1;
	else if (yaml_is_scalar(v) && !strcmp((const char *)v->data.scalar.value, "false"))
		*out = 0;
	else
		return yaml_fail(yf, v, "'%s' is true or false", key);
	return 0;
}

static int parse_rule(struct yaml_file *yf, yaml_node_t *n, struct decode_table *t, const struct decode_table *base,
		      bool attribution, struct rule *r)
{
	static const char *const vendor_keys[] = { "when", "unless", "set", "add", "clear", "weight", "stop", NULL };
	static const char *const attrib_keys[] = { "when", "unless", "level", "remote", "hitm", "peer", NULL };
	yaml_node_t *v;
	int stop;

	r->clear_reg = -1;
	r->weight_field = -1;
	if (yaml_expect(yf, n, YAML_MAPPING_NODE, "a rule") ||
	    yaml_check_keys(yf, n, "a rule", attribution ? attrib_keys : vendor_keys))
		return -1;
	if ((v = yaml_get(yf, n, "when")) && parse_conds(yf, v, t, base, &r->when))
		return -1;
	if ((v = yaml_get(yf, n, "unless"))) {
		if (v->type != YAML_SEQUENCE_NODE)
			return yaml_fail(yf, v, "'unless' is a list of condition sets");
		r->unless = calloc((size_t)(v->data.sequence.items.top - v->data.sequence.items.start) + 1,
				   sizeof(*r->unless));
		if (!r->unless)
			return yaml_fail(yf, v, "out of memory");
		for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
			if (parse_conds(yf, yaml_document_get_node(&yf->doc, *it), t, base, &r->unless[r->nr_unless++]))
				return -1;
	}
	if (attribution) {
		if (yaml_get_str(yf, n, "level", false, &r->level, "rule") || parse_bool(yf, n, "remote", &r->remote) ||
		    parse_bool(yf, n, "hitm", &r->hitm) || parse_bool(yf, n, "peer", &r->peer))
			return -1;
		return 0;
	}
	r->remote = r->hitm = r->peer = -1;
	if ((v = yaml_get(yf, n, "set"))) {
		r->has_set = true;
		if (parse_assigns(yf, v, base, &r->set, &r->nr_set))
			return -1;
	}
	if ((v = yaml_get(yf, n, "add")) && parse_assigns(yf, v, base, &r->add, &r->nr_add))
		return -1;
	if ((v = yaml_get(yf, n, "clear")) &&
	    (!yaml_is_scalar(v) || (r->clear_reg = register_index(t, (const char *)v->data.scalar.value)) < 0))
		return yaml_fail(yf, v, "'clear' names a register of input.registers");
	if ((v = yaml_get(yf, n, "weight")) &&
	    (!yaml_is_scalar(v) || (r->weight_field = input_index(t, (const char *)v->data.scalar.value)) < 0))
		return yaml_fail(yf, v, "'weight' names a field");
	if (parse_bool(yf, n, "stop", &stop))
		return -1;
	r->stop = stop == 1;
	return 0;
}

static int parse_groups(struct yaml_file *yf, yaml_node_t *groups, struct decode_table *t,
			const struct decode_table *base, bool attribution)
{
	if (yaml_expect(yf, groups, YAML_MAPPING_NODE, attribution ? "'attribution'" : "'rules'"))
		return -1;
	t->groups = calloc((size_t)(groups->data.mapping.pairs.top - groups->data.mapping.pairs.start) + 1,
			   sizeof(*t->groups));
	if (!t->groups)
		return yaml_fail(yf, groups, "out of memory");
	for (yaml_node_pair_t *p = groups->data.mapping.pairs.start; p < groups->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, p->key), *v = yaml_document_get_node(&yf->doc, p->value);
		struct rule_group *g = &t->groups[t->nr_groups++];

		if (!yaml_is_scalar(k) || v->type != YAML_SEQUENCE_NODE)
			return yaml_fail(yf, v, "a rule group is a name and a list of rules");
		g->name = dup_scalar(k);
		g->rules = calloc((size_t)(v->data.sequence.items.top - v->data.sequence.items.start) + 1,
				  sizeof(*g->rules));
		if (!g->rules)
			return yaml_fail(yf, v, "out of memory");
		if (attribution && strcmp(g->name, "level") && strcmp(g->name, "remote") && strcmp(g->name, "hitm") &&
		    strcmp(g->name, "peer"))
			return yaml_fail(yf, k, "unknown attribution '%s'; expected level, remote, hitm or peer", g->name);
		for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
			if (parse_rule(yf, yaml_document_get_node(&yf->doc, *it), t, base, attribution,
				       &g->rules[g->nr++]))
				return -1;
	}
	return 0;
}

static int load_table(struct sample_decoders *d, const char *path, const struct decode_table *base, bool want_base,
		      struct ms_error *err)
{
	static const char *const base_keys[] = { "decode", "description", "source", "fields", "attribution", NULL };
	static const char *const vendor_keys[] = { "decode", "description", "source", "input", "fields", "rules", NULL };
	struct decode_table *t = &d->tables[d->nr];
	struct yaml_file yf;
	yaml_node_t *root, *v;
	char *description = NULL, *source = NULL;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (!(t->file = strdup(path))) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	d->nr++;
	t->owner = d;
	if (yaml_file_load(&yf, t->file, err))
		return -1;
	root = yaml_file_root(&yf);
	if (yaml_expect(&yf, root, YAML_MAPPING_NODE, "the top of a decode table") ||
	    yaml_get_str(&yf, root, "decode", true, &t->decode, "decode table"))
		goto out;
	if (want_base != !strcmp(t->decode, "data-src"))
		goto skip;
	if (yaml_check_keys(&yf, root, "a decode table", want_base ? base_keys : vendor_keys) ||
	    yaml_get_str(&yf, root, "description", true, &description, t->decode) ||
	    yaml_get_str(&yf, root, "source", true, &source, t->decode))
		goto out;
	if (want_base) {
		if (parse_dsrc_fields(&yf, root, t))
			goto out;
		v = yaml_get(&yf, root, "attribution");
		if (!v) {
			yaml_fail(&yf, root, "data-src.yaml needs 'attribution'");
			goto out;
		}
		if (parse_groups(&yf, v, t, t, true))
			goto out;
	} else {
		if (parse_input(&yf, root, t) || parse_fields(&yf, root, t))
			goto out;
		v = yaml_get(&yf, root, "rules");
		if (!v) {
			yaml_fail(&yf, root, "a vendor decode table needs 'rules'");
			goto out;
		}
		if (parse_groups(&yf, v, t, base, false))
			goto out;
	}
	for (int i = 0; i < d->nr - 1; i++)
		if (d->tables[i].decode && !strcmp(d->tables[i].decode, t->decode)) {
			yaml_fail(&yf, yaml_get(&yf, root, "decode"), "decode '%s' is also defined in %s", t->decode,
				  d->tables[i].file);
			goto out;
		}
	rc = 0;
	goto out;
skip:
	/* Read in the other pass. */
	rc = 1;
out:
	free(description);
	free(source);
	yaml_file_free(&yf);
	return rc;
}

static void table_free(struct decode_table *t)
{
	for (int i = 0; i < t->nr_registers; i++)
		free(t->registers[i]);
	free(t->registers);
	for (int i = 0; i < t->nr_fields; i++)
		free(t->fields[i].name);
	free(t->fields);
	for (int g = 0; g < t->nr_groups; g++) {
		struct rule_group *grp = &t->groups[g];

		for (int r = 0; r < grp->nr; r++) {
			struct rule *rule = &grp->rules[r];

			for (int c = 0; c < rule->when.nr; c++)
				free(rule->when.conds[c].ranges);
			free(rule->when.conds);
			for (int u = 0; u < rule->nr_unless; u++) {
				for (int c = 0; c < rule->unless[u].nr; c++)
					free(rule->unless[u].conds[c].ranges);
				free(rule->unless[u].conds);
			}
			free(rule->unless);
			free(rule->set);
			free(rule->add);
			free(rule->level);
		}
		free(grp->rules);
		free(grp->name);
	}
	free(t->groups);
	for (int i = 0; i < t->nr_dsrc; i++) {
		for (int n = 0; n < t->dsrc[i].nr_names; n++)
			free(t->dsrc[i].names[n].name);
		free(t->dsrc[i].names);
		free(t->dsrc[i].name);
	}
	free(t->dsrc);
	free(t->decode);
	free(t->file);
}

void sample_decoders_free(struct sample_decoders *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nr; i++)
		table_free(&d->tables[i]);
	free(d->tables);
	free(d);
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sample_decoders_load(struct sample_decoders **out, const char *catalog_dir, struct ms_error *err)
{
	struct sample_decoders *d = calloc(1, sizeof(*d));
	char dir[4200], *names[64];
	int nr = 0, ret = -1;
	DIR *dh;
	struct dirent *de;

	*out = NULL;
	snprintf(dir, sizeof(dir), "%s/sampling", catalog_dir);
	if (!d || !(dh = opendir(dir))) {
		ms_error_set(err, "%s: cannot read the sampling decode tables (%s)", dir, d ? "missing" : "out of memory");
		free(d);
		return -1;
	}
	while ((de = readdir(dh)) && nr < 64) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".yaml") && (names[nr] = malloc(len + strlen(dir) + 2)))
			sprintf(names[nr++], "%s/%s", dir, de->d_name);
	}
	closedir(dh);
	qsort(names, (size_t)nr, sizeof(names[0]), name_order);
	d->tables = calloc((size_t)nr * 2 + 1, sizeof(*d->tables));
	if (!d->tables) {
		ms_error_set(err, "out of memory");
		goto out;
	}
	/* data-src.yaml first: the others name its fields. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nr; i++) {
			int rc = load_table(d, names[i], d->data_src, pass == 0, err);

			if (rc < 0)
				goto out;
			if (rc > 0) {
				table_free(&d->tables[--d->nr]);
				continue;
			}
			if (pass == 0)
				d->data_src = &d->tables[d->nr - 1];
		}
	if (!d->data_src) {
		ms_error_set(err, "%s: no data-src.yaml (decode: data-src): the data source fields are not defined", dir);
		goto out;
	}
	ret = 0;
	*out = d;
	d = NULL;
out:
	for (int i = 0; i < nr; i++)
		free(names[i]);
	sample_decoders_free(d);
	return ret;
}

const struct decode_table *sample_decoders_find(const struct sample_decoders *d, const char *decode)
{
	for (int i = 0; d && i < d->nr; i++)
		if (!strcmp(d->tables[i].decode, decode))
			return &d->tables[i];
	return NULL;
}

/* ---- Running ---- */

static uint64_t field_bits(uint64_t word, int lo, int width)
{
	return width >= 64 ? word >> lo : (word >> lo) & ((UINT64_C(1) << width) - 1);
}

static uint64_t input_value(const struct decode_table *t, const struct decode_input *in, int field)
{
	const struct input_field *f = &t->fields[field];
	uint64_t word = f->reg < 0 ? in->caps : f->reg < in->nr_regs ? in->regs[f->reg] : 0, v = 0;
	int at = 0;

	for (int i = 0; i < f->nr_parts; i++) {
		v |= field_bits(word, f->parts[i].lo, f->parts[i].width) << at;
		at += f->parts[i].width;
	}
	return v;
}

static uint64_t dsrc_get(const struct dsrc_field *f, uint64_t data_src)
{
	return field_bits(data_src, f->shift, f->width);
}

static bool in_ranges(const struct cond *c, uint64_t v)
{
	for (int i = 0; i < c->nr_ranges; i++)
		if (v >= c->ranges[i][0] && v <= c->ranges[i][1])
			return true;
	return false;
}

static bool cond_holds(const struct decode_table *t, const struct decode_table *base, const struct cond *c,
		       const struct decode_input *in, const struct decode_cpu *cpu, uint64_t data_src)
{
	switch (c->on) {
	case ON_INPUT:
		return in_ranges(c, input_value(t, in, c->field));
	case ON_DSRC: {
		const struct dsrc_field *f = &base->dsrc[c->field];
		uint64_t v = dsrc_get(f, data_src);

		return f->bits ? (v & c->dsrc_value) == c->dsrc_value : v == c->dsrc_value;
	}
	case ON_CPU_FAMILY:
		return cpu && cpu->family >= 0 && in_ranges(c, (uint64_t)cpu->family);
	case ON_CPU_MODEL:
		return cpu && cpu->model >= 0 && in_ranges(c, (uint64_t)cpu->model);
	case ON_CPU_IMPLEMENTER:
		return cpu && cpu->implementer >= 0 && in_ranges(c, (uint64_t)cpu->implementer);
	case ON_CPU_PART:
		return cpu && cpu->part >= 0 && in_ranges(c, (uint64_t)cpu->part);
	}
	return false;
}

static bool set_holds(const struct decode_table *t, const struct decode_table *base, const struct cond_set *s,
		      const struct decode_input *in, const struct decode_cpu *cpu, uint64_t data_src)
{
	for (int i = 0; i < s->nr; i++)
		if (!cond_holds(t, base, &s->conds[i], in, cpu, data_src))
			return false;
	return true;
}

static bool rule_applies(const struct decode_table *t, const struct decode_table *base, const struct rule *r,
			 const struct decode_input *in, const struct decode_cpu *cpu, uint64_t data_src)
{
	if (!set_holds(t, base, &r->when, in, cpu, data_src))
		return false;
	for (int u = 0; u < r->nr_unless; u++)
		if (set_holds(t, base, &r->unless[u], in, cpu, data_src))
			return false;
	return true;
}

static uint64_t dsrc_mask(const struct dsrc_field *f)
{
	return (f->width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->width) - 1) << f->shift;
}

void decode_table_run(const struct decode_table *t, const struct decode_input *in, const struct decode_cpu *cpu,
		      uint64_t *data_src, uint64_t *weight, bool *has_weight)
{
	const struct decode_table *base = t->owner->data_src;
	struct decode_input work = *in;

	*data_src = 0;
	*has_weight = false;
	for (int g = 0; g < t->nr_groups; g++) {
		const struct rule_group *grp = &t->groups[g];

		for (int i = 0; i < grp->nr; i++) {
			const struct rule *r = &grp->rules[i];

			if (!rule_applies(t, base, r, &work, cpu, *data_src))
				continue;
			for (int a = 0; a < r->nr_set; a++) {
				const struct dsrc_field *f = &base->dsrc[r->set[a].field];

				*data_src = (*data_src & ~dsrc_mask(f)) | (r->set[a].value << f->shift);
			}
			for (int a = 0; a < r->nr_add; a++)
				*data_src |= r->add[a].value << base->dsrc[r->add[a].field].shift;
			if (r->clear_reg >= 0 && r->clear_reg < work.nr_regs)
				work.regs[r->clear_reg] = 0;
			if (r->weight_field >= 0) {
				*weight = input_value(t, &work, r->weight_field);
				*has_weight = true;
			}
			if (r->stop) {
				*data_src = 0;
				return;
			}
			break;
		}
	}
}

int decode_input_from_raw(const struct decode_table *t, const uint8_t *raw, size_t size, struct decode_input *in,
			  struct ms_error *err)
{
	memset(in, 0, sizeof(*in));
	if (t->spe)
		return spe_record_decode(raw, size, in->regs, &in->nr_regs, err);
	if (size < (size_t)t->caps_bytes + 8 * (size_t)t->nr_registers) {
		ms_error_set(err, "%s samples carry %d bytes of capabilities and %d registers (%d bytes); this one has "
			     "%zu bytes of raw data", t->decode, t->caps_bytes, t->nr_registers,
			     t->caps_bytes + 8 * t->nr_registers, size);
		return -1;
	}
	memcpy(&in->caps, raw, (size_t)t->caps_bytes);
	for (int i = 0; i < t->nr_registers; i++)
		memcpy(&in->regs[i], raw + t->caps_bytes + 8 * i, 8);
	in->nr_regs = t->nr_registers;
	return 0;
}

void sample_decode_access(const struct sample_decoders *d, uint64_t data_src, struct mem_access *out)
{
	const struct decode_table *base = d->data_src;
	const struct dsrc_field *op = NULL;
	struct decode_input none = { .nr_regs = 0 };

	memset(out, 0, sizeof(*out));
	out->remote = -1;
	if (!data_src)
		return;
	for (int g = 0; g < base->nr_groups; g++) {
		const struct rule_group *grp = &base->groups[g];

		for (int i = 0; i < grp->nr; i++) {
			const struct rule *r = &grp->rules[i];

			if (!rule_applies(base, base, r, &none, NULL, data_src))
				continue;
			if (r->level)
				out->level = r->level;
			if (r->remote >= 0)
				out->remote = r->remote;
			if (r->hitm >= 0)
				out->hitm = r->hitm == 1;
			if (r->peer >= 0)
				out->peer = r->peer == 1;
			break;
		}
	}
	for (int i = 0; i < base->nr_dsrc; i++)
		if (!strcmp(base->dsrc[i].name, "mem_op"))
			op = &base->dsrc[i];
	if (op) {
		uint64_t v = dsrc_get(op, data_src), bit;
		static const struct { const char *name; int letter; } ops[] = {
			{ "LOAD", 'L' }, { "STORE", 'S' }, { "PFETCH", 'P' }, { "EXEC", 'X' },
		};

		for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
			if (!dsrc_name_value(op, ops[i].name, &bit) && (v & bit))
				out->op = ops[i].letter;
	}
}

void sample_decode_describe(const struct sample_decoders *d, uint64_t data_src, char *buf, size_t size)
{
	const struct decode_table *base = d->data_src;
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < base->nr_dsrc && len < size; i++) {
		const struct dsrc_field *f = &base->dsrc[i];
		uint64_t v = dsrc_get(f, data_src);
		bool first = true;

		if (!v)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s=", len ? " " : "", f->name + 4);
		for (int n = 0; n < f->nr_names && len < size; n++) {
			bool on = f->bits ? (v & f->names[n].value) != 0 : v == f->names[n].value;

			if (on) {
				len += (size_t)snprintf(buf + len, size - len, "%s%s", first ? "" : "|", f->names[n].name);
				first = false;
			}
		}
		if (first && len < size)
			len += (size_t)snprintf(buf + len, size - len, "0x%llx", (unsigned long long)v);
	}
}
