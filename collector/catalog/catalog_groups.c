#include "catalog/catalog_groups.h"

#include <stdlib.h>
#include <string.h>

#include "util/suggest.h"

static bool metric_in_group(const struct catalog_metric *m, const char *group)
{
	for (int g = 0; g < m->nr_groups; g++)
		if (strcmp(m->groups[g], group) == 0)
			return true;
	return false;
}

bool catalog_is_group(const struct catalog *cat, const char *group)
{
	for (int i = 0; i < cat->nr_metrics; i++)
		if (metric_in_group(&cat->metrics[i], group))
			return true;
	return false;
}

int catalog_group_names(const struct catalog *cat, const char ***names, int *nr)
{
	int total = 0;
	const char **list;

	for (int i = 0; i < cat->nr_metrics; i++)
		total += cat->metrics[i].nr_groups;
	if (!(list = calloc((size_t)total + 1, sizeof(*list))))
		return -1;
	*nr = 0;
	for (int i = 0; i < cat->nr_metrics; i++)
		for (int g = 0; g < cat->metrics[i].nr_groups; g++) {
			const char *group = cat->metrics[i].groups[g];
			bool seen = false;

			for (int k = 0; k < *nr && !seen; k++)
				seen = strcmp(list[k], group) == 0;
			if (!seen)
				list[(*nr)++] = group;
		}
	*names = list;
	return 0;
}

/* "unknown metric 'x'; did you mean ...?; nor is it a metric group (the
 * groups: A, B); see ...": the start as for a metric alone, then the groups. */
static void unknown_name(const struct catalog *cat, const char *name, struct ms_error *err)
{
	struct suggestions sug;
	const char **groups = NULL;
	char hint[600];
	int nr_groups = 0;

	suggestions_init(&sug, name);
	for (int m = 0; m < cat->nr_metrics; m++)
		suggestions_offer(&sug, cat->metrics[m].name);
	if (catalog_group_names(cat, &groups, &nr_groups) < 0)
		nr_groups = 0;
	for (int g = 0; g < nr_groups; g++)
		suggestions_offer(&sug, groups[g]);
	suggestions_format(&sug, hint, sizeof(hint));
	ms_error_set(err, "unknown metric '%s'%s", name, hint);
	for (int g = 0; g < nr_groups; g++)
		ms_error_append(err, "%s%s", g ? ", " : "; nor is it a metric group (the groups: ", groups[g]);
	ms_error_append(err, "%s; see memscope list --metrics and --groups", nr_groups ? ")" : "");
	free(groups);
}

int catalog_expand_groups(const struct catalog *cat, const struct name_list *in, bool unknown_ok,
			  struct name_list *out, struct ms_error *err)
{
	for (int i = 0; i < in->nr; i++) {
		const char *name = in->names[i];
		int idx = catalog_metric_index(cat, name);

		if (idx >= 0 || (unknown_ok && !catalog_is_group(cat, name))) {
			/* A former name is kept as given: the planner maps it. */
			if (name_list_add(out, name) < 0)
				goto oom;
			continue;
		}
		if (!catalog_is_group(cat, name)) {
			unknown_name(cat, name, err);
			return -1;
		}
		for (int m = 0; m < cat->nr_metrics; m++)
			if (metric_in_group(&cat->metrics[m], name) && name_list_add(out, cat->metrics[m].name) < 0)
				goto oom;
	}
	return 0;
oom:
	ms_error_set(err, "out of memory");
	return -2;
}
