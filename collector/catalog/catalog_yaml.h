/* Small helpers over libyaml's document API for the catalog loader: typed
 * access to nodes, and errors that carry file:line:column. */
#ifndef MEMSCOPE_CATALOG_YAML_H
#define MEMSCOPE_CATALOG_YAML_H

#include <stdbool.h>
#include <yaml.h>

#include "catalog/catalog.h"
#include "util/error.h"

struct yaml_file {
	yaml_document_t doc;
	const char *path;        /* owned by the catalog */
	struct ms_error *err;
};

/* Parse path into yf->doc. A syntax error names file:line:column. */
int yaml_file_load(struct yaml_file *yf, const char *path, struct ms_error *err);
void yaml_file_free(struct yaml_file *yf);

yaml_node_t *yaml_file_root(struct yaml_file *yf);
struct catalog_pos yaml_pos(const struct yaml_file *yf, const yaml_node_t *node);

/* Set "file:line:col: message" for node and return -1. */
__attribute__((format(printf, 3, 4)))
int yaml_fail(struct yaml_file *yf, const yaml_node_t *node, const char *fmt, ...);

const char *yaml_node_kind(const yaml_node_t *node);
bool yaml_is_scalar(const yaml_node_t *node);

/* Every key of map must be in allowed (NULL-terminated) and appear once. */
int yaml_check_keys(struct yaml_file *yf, yaml_node_t *map, const char *what, const char *const *allowed);
/* Value node for key, or NULL. */
yaml_node_t *yaml_get(struct yaml_file *yf, yaml_node_t *map, const char *key);

int yaml_expect(struct yaml_file *yf, yaml_node_t *node, yaml_node_type_t type, const char *what);
/* Scalar value of map[key] duplicated into *out; required keys fail when missing. */
int yaml_get_str(struct yaml_file *yf, yaml_node_t *map, const char *key, bool required, char **out,
		 const char *what);
/* Integer (decimal or 0x hex) value of a scalar node. */
int yaml_scalar_int(struct yaml_file *yf, yaml_node_t *node, long long *out, const char *what);
int yaml_get_int(struct yaml_file *yf, yaml_node_t *map, const char *key, bool required, long long *out,
		 const char *what);
/* Scalar or sequence of scalars into a string array. */
int yaml_get_str_list(struct yaml_file *yf, yaml_node_t *map, const char *key, char ***out, int *nr,
		      const char *what);

/* Column in the file of character `offset` of a scalar's text (for formula errors). */
int yaml_scalar_column(const yaml_node_t *node, int offset);

#endif
