#include "catalog/catalog_yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text_append.h"

/* A catalog file is one YAML document. A second one ("---" and more) was
 * silently ignored, even when it was invalid: refused, with where it
 * starts (or its syntax error). */
static int second_document(yaml_parser_t *parser, const char *path, struct ms_error *err)
{
	yaml_document_t next;
	yaml_node_t *root;

	if (!yaml_parser_load(parser, &next)) {
		const yaml_mark_t *mark = parser->problem ? &parser->problem_mark : &parser->context_mark;

		ms_error_set(err, "%s:%zu:%zu: YAML syntax error: %s%s%s", path, mark->line + 1, mark->column + 1,
			     parser->problem ? parser->problem : "malformed document", parser->context ? " " : "",
			     parser->context ? parser->context : "");
		return -1;
	}
	root = yaml_document_get_root_node(&next);
	if (root)
		ms_error_set(err, "%s:%zu:%zu: a second YAML document: a catalog file holds one document; remove "
			     "the '---' line or move what follows into a file of its own", path,
			     next.start_mark.line + 1, next.start_mark.column + 1);
	yaml_document_delete(&next);
	return root ? -1 : 0;
}

/* Lists and mappings inside each other deeper than this are refused: a
 * catalog file needs a handful of levels. */
#define YAML_MAX_DEPTH 200

/* libyaml's scanner does work in proportion to the flow nesting at every
 * token ([[[[...]]]]: 100,000 levels took 30 s, 400,000 minutes), and so
 * would everything that walks the nodes: the nesting is checked on the
 * parser's events first, which stop at the first level past the limit, so
 * loading stays linear in the file's size. Only a file with more '[' and
 * '{' than the limit can nest that deep in flow style (every shipped file
 * has fewer): the others skip the check. A syntax error is left to the
 * load, which says where it is. */
static int check_depth(const unsigned char *text, size_t len, const char *path, struct ms_error *err)
{
	yaml_parser_t parser;
	yaml_event_t event;
	int depth = 0, rc = 0;
	size_t opening = 0;
	bool done = false;

	for (size_t i = 0; i < len && opening <= YAML_MAX_DEPTH; i++)
		opening += text[i] == '[' || text[i] == '{';
	if (opening <= YAML_MAX_DEPTH)
		return 0;
	if (!yaml_parser_initialize(&parser)) {
		ms_error_set(err, "%s: cannot initialise the YAML parser", path);
		return -1;
	}
	yaml_parser_set_input_string(&parser, text, len);
	while (!done && yaml_parser_parse(&parser, &event)) {
		switch (event.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > YAML_MAX_DEPTH) {
				ms_error_set(err, "%s:%zu:%zu: lists and mappings nested deeper than %d levels: a catalog "
					     "file needs a few; close the brackets opened before this one", path,
					     event.start_mark.line + 1, event.start_mark.column + 1, YAML_MAX_DEPTH);
				rc = -1;
				done = true;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* The whole file (catalog files are a few kilobytes), read once for both
 * passes. */
static unsigned char *read_all(FILE *fp, size_t *len)
{
	unsigned char *text = NULL;
	size_t cap = 0, n = 0, got;

	do {
		if (n == cap) {
			unsigned char *grown = realloc(text, cap = cap ? 2 * cap : 16384);

			if (!grown) {
				free(text);
				errno = ENOMEM;
				return NULL;
			}
			text = grown;
		}
		got = fread(text + n, 1, cap - n, fp);
		n += got;
	} while (got > 0);
	if (ferror(fp)) {
		free(text);
		errno = EIO;
		return NULL;
	}
	*len = n;
	return text;
}

int yaml_file_load(struct yaml_file *yf, const char *path, struct ms_error *err)
{
	yaml_parser_t parser;
	unsigned char *text;
	size_t len;
	FILE *fp;
	int rc = 0;

	memset(yf, 0, sizeof(*yf));
	yf->path = path;
	yf->err = err;
	fp = fopen(path, "rb");
	if (!fp) {
		ms_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	text = read_all(fp, &len);
	fclose(fp);
	if (!text) {
		ms_error_set(err, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	if (check_depth(text, len, path, err) < 0) {
		free(text);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		ms_error_set(err, "%s: cannot initialise the YAML parser", path);
		return -1;
	}
	yaml_parser_set_input_string(&parser, text, len);
	if (!yaml_parser_load(&parser, &yf->doc)) {
		const yaml_mark_t *mark = parser.problem ? &parser.problem_mark : &parser.context_mark;

		ms_error_set(err, "%s:%zu:%zu: YAML syntax error: %s%s%s", path, mark->line + 1, mark->column + 1,
			     parser.problem ? parser.problem : "malformed document",
			     parser.context ? " " : "", parser.context ? parser.context : "");
		rc = -1;
	} else if (!yaml_document_get_root_node(&yf->doc)) {
		ms_error_set(err, "%s:1:1: the file is empty; expected a mapping", path);
		yaml_document_delete(&yf->doc);
		rc = -1;
	} else if (second_document(&parser, path, err) < 0) {
		yaml_document_delete(&yf->doc);
		rc = -1;
	}
	yaml_parser_delete(&parser);
	free(text);
	return rc;
}

void yaml_file_free(struct yaml_file *yf)
{
	yaml_document_delete(&yf->doc);
}

yaml_node_t *yaml_file_root(struct yaml_file *yf)
{
	return yaml_document_get_root_node(&yf->doc);
}

struct catalog_pos yaml_pos(const struct yaml_file *yf, const yaml_node_t *node)
{
	struct catalog_pos pos = { yf->path, (int)node->start_mark.line + 1, (int)node->start_mark.column + 1 };

	return pos;
}

int yaml_fail(struct yaml_file *yf, const yaml_node_t *node, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ms_error_set(yf->err, "%s:%zu:%zu: %s", yf->path, node->start_mark.line + 1, node->start_mark.column + 1,
		     msg);
	return -1;
}

const char *yaml_node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

bool yaml_is_scalar(const yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE;
}

static const char *scalar(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

int yaml_check_keys(struct yaml_file *yf, yaml_node_t *map, const char *what, const char *const *allowed)
{
	yaml_node_pair_t *pair, *other;

	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(&yf->doc, pair->key);
		const char *const *a;
		char expected[512] = "";
		size_t len = 0;

		if (!yaml_is_scalar(key))
			return yaml_fail(yf, key, "%s: a key must be a scalar, found %s", what, yaml_node_kind(key));
		for (a = allowed; *a; a++)
			if (strcmp(*a, scalar(key)) == 0)
				break;
		if (!*a) {
			for (a = allowed; *a; a++)
				text_appendf(expected, sizeof(expected), &len, "%s%s", a == allowed ? "" : ", ", *a);
			return yaml_fail(yf, key, "unknown key '%s' in %s; expected one of: %s", scalar(key), what,
					 expected);
		}
		for (other = map->data.mapping.pairs.start; other < pair; other++) {
			yaml_node_t *okey = yaml_document_get_node(&yf->doc, other->key);

			if (yaml_is_scalar(okey) && strcmp(scalar(okey), scalar(key)) == 0)
				return yaml_fail(yf, key, "duplicate key '%s' in %s (first at line %zu)", scalar(key),
						 what, okey->start_mark.line + 1);
		}
	}
	return 0;
}

yaml_node_t *yaml_get(struct yaml_file *yf, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&yf->doc, pair->key);

		if (yaml_is_scalar(k) && strcmp(scalar(k), key) == 0)
			return yaml_document_get_node(&yf->doc, pair->value);
	}
	return NULL;
}

int yaml_expect(struct yaml_file *yf, yaml_node_t *node, yaml_node_type_t type, const char *what)
{
	const char *want = type == YAML_SCALAR_NODE ? "a scalar" : type == YAML_SEQUENCE_NODE ? "a list" : "a mapping";

	if (node->type != type)
		return yaml_fail(yf, node, "%s must be %s, found %s", what, want, yaml_node_kind(node));
	return 0;
}

int yaml_get_str(struct yaml_file *yf, yaml_node_t *map, const char *key, bool required, char **out,
		 const char *what)
{
	yaml_node_t *v = yaml_get(yf, map, key);

	*out = NULL;
	if (!v) {
		if (required)
			return yaml_fail(yf, map, "%s: missing required key '%s'", what, key);
		return 0;
	}
	if (!yaml_is_scalar(v))
		return yaml_fail(yf, v, "%s: '%s' must be a scalar, found %s", what, key, yaml_node_kind(v));
	if (required && v->data.scalar.length == 0)
		return yaml_fail(yf, v, "%s: '%s' must not be empty", what, key);
	*out = strdup(scalar(v));
	if (!*out)
		return yaml_fail(yf, v, "out of memory");
	return 0;
}

int yaml_scalar_int(struct yaml_file *yf, yaml_node_t *node, long long *out, const char *what)
{
	char *end;

	if (!yaml_is_scalar(node))
		return yaml_fail(yf, node, "%s must be an integer, found %s", what, yaml_node_kind(node));
	errno = 0;
	*out = strtoll(scalar(node), &end, 0);
	if (errno || end == scalar(node) || *end)
		return yaml_fail(yf, node, "%s must be an integer (decimal or 0x hex), found '%s'", what,
				 scalar(node));
	return 0;
}

int yaml_get_int(struct yaml_file *yf, yaml_node_t *map, const char *key, bool required, long long *out,
		 const char *what)
{
	yaml_node_t *v = yaml_get(yf, map, key);
	char label[256];

	if (!v) {
		if (required)
			return yaml_fail(yf, map, "%s: missing required key '%s'", what, key);
		return 0;
	}
	snprintf(label, sizeof(label), "%s: '%s'", what, key);
	return yaml_scalar_int(yf, v, out, label);
}

int yaml_get_str_list(struct yaml_file *yf, yaml_node_t *map, const char *key, char ***out, int *nr,
		      const char *what)
{
	yaml_node_t *v = yaml_get(yf, map, key);
	yaml_node_item_t *item;
	int n = 0;

	*out = NULL;
	*nr = 0;
	if (!v)
		return 0;
	if (yaml_is_scalar(v)) {
		*out = calloc(1, sizeof(char *));
		if (!*out || !((*out)[0] = strdup(scalar(v))))
			return yaml_fail(yf, v, "out of memory");
		*nr = 1;
		return 0;
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return yaml_fail(yf, v, "%s: '%s' must be a scalar or a list of scalars, found %s", what, key,
				 yaml_node_kind(v));
	*out = calloc((size_t)(v->data.sequence.items.top - v->data.sequence.items.start) + 1, sizeof(char *));
	if (!*out)
		return yaml_fail(yf, v, "out of memory");
	for (item = v->data.sequence.items.start; item < v->data.sequence.items.top; item++) {
		yaml_node_t *s = yaml_document_get_node(&yf->doc, *item);

		if (!yaml_is_scalar(s))
			return yaml_fail(yf, s, "%s: each item of '%s' must be a scalar, found %s", what, key,
					 yaml_node_kind(s));
		if (!((*out)[n] = strdup(scalar(s))))
			return yaml_fail(yf, s, "out of memory");
		*nr = ++n;
	}
	return 0;
}

int yaml_scalar_column(const yaml_node_t *node, int offset)
{
	int quote = node->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		    node->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;

	return (int)node->start_mark.column + 1 + quote + offset;
}
