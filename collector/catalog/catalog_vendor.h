/* The vendor facts of the catalog's PMU roles (docs/catalog.md, "Vendor
 * keys"): driver:, maker: and libpfm4:, read from the family files, and the
 * table host/ and events/ read them through (host/pmu_vendor.h). */
#ifndef MEMSCOPE_CATALOG_VENDOR_H
#define MEMSCOPE_CATALOG_VENDOR_H

#include <yaml.h>

#include "catalog/catalog.h"
#include "catalog/catalog_yaml.h"
#include "host/pmu_vendor.h"

/* The role's driver:, maker: and libpfm4: keys; -1 with file:line:col in yf. */
int catalog_vendor_parse_role(struct yaml_file *yf, yaml_node_t *role_map, struct catalog_role *role);
/* The family's top-level libpfm4: key. */
int catalog_vendor_parse_family(struct yaml_file *yf, yaml_node_t *root, struct catalog_family *f);
void catalog_vendor_free_role(struct catalog_role *role);
void catalog_vendor_free_family(struct catalog_family *f);

/* Fill v from cat's roles and families, in catalog order; rows point into cat. */
int catalog_vendor_table(const struct catalog *cat, struct pmu_vendors *v, struct ms_error *err);
/* pmu_vendors_loader over the default catalog (catalog_load_default), loaded
 * once per process and kept for its life. */
const struct pmu_vendors *catalog_pmu_vendors(struct ms_error *err);

#endif
