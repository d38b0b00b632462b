#include "util/name_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the name that starts at p ends: at a comma outside pmu/.../. */
static const char *name_end(const char *p)
{
	bool inside = false;

	for (; *p; p++) {
		if (*p == '/')
			inside = !inside;
		else if (*p == ',' && !inside)
			return p;
	}
	return p;
}

bool name_list_contains(const struct name_list *l, const char *name)
{
	for (int i = 0; i < l->nr; i++)
		if (!strcmp(l->names[i], name))
			return true;
	return false;
}

int name_list_add(struct name_list *l, const char *name)
{
	char **grown;

	if (name_list_contains(l, name))
		return 0;
	grown = realloc(l->names, sizeof(char *) * (size_t)(l->nr + 2));
	if (!grown)
		return -1;
	l->names = grown;
	if (!(grown[l->nr] = strdup(name)))
		return -1;
	grown[++l->nr] = NULL;
	return 0;
}

int name_list_add_text(struct name_list *l, const char *text, struct ms_error *err)
{
	int before = l->nr;

	if (!text[0]) {
		ms_error_set(err, "an empty list names nothing; give names separated by commas");
		return -1;
	}
	for (const char *p = text;;) {
		const char *end = name_end(p);
		char *name;

		if (end == p) {
			ms_error_set(err, "'%s': an empty name (%s); give names separated by single commas", text,
				     p == text ? "at the start" : *end ? "between two commas" : "after the last comma");
			goto fail;
		}
		if (!(name = strndup(p, (size_t)(end - p))) || name_list_add(l, name) < 0) {
			free(name);
			ms_error_set(err, "out of memory");
			goto fail;
		}
		free(name);
		if (!*end)
			return 0;
		p = end + 1;
	}
fail:
	while (l->nr > before)
		free(l->names[--l->nr]);
	if (l->names)
		l->names[l->nr] = NULL;
	return -1;
}

bool name_list_remove(struct name_list *l, const char *name)
{
	for (int i = 0; i < l->nr; i++)
		if (!strcmp(l->names[i], name)) {
			free(l->names[i]);
			memmove(&l->names[i], &l->names[i + 1], sizeof(char *) * (size_t)(l->nr - i));
			l->nr--;
			return true;
		}
	return false;
}

char *name_list_join(const struct name_list *l)
{
	size_t size = 1, len = 0;
	char *text;

	for (int i = 0; i < l->nr; i++)
		size += strlen(l->names[i]) + 1;
	if (!(text = malloc(size)))
		return NULL;
	text[0] = '\0';
	for (int i = 0; i < l->nr; i++)
		len += (size_t)snprintf(text + len, size - len, "%s%s", i ? "," : "", l->names[i]);
	return text;
}

void name_list_free(struct name_list *l)
{
	for (int i = 0; i < l->nr; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->nr = 0;
}
