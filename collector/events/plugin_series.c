#include "events/plugin_series.h"

#include <stdlib.h>
#include <string.h>

static struct plugin_vocabulary *vocab;
static int nr_vocab;

static void vocabulary_free(struct plugin_vocabulary *v)
{
	for (int i = 0; i < v->nr_series; i++) {
		free(v->series[i].name);
		free(v->series[i].unit);
		free(v->series[i].description);
	}
	free(v->series);
	free(v->plugin);
	free(v->path);
	free(v->family_file);
	memset(v, 0, sizeof(*v));
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int plugin_series_add(const struct plugin_vocabulary *v)
{
	struct plugin_vocabulary *grown = realloc(vocab, sizeof(*vocab) * (size_t)(nr_vocab + 1));
	struct plugin_vocabulary *c;
	bool ok;

	if (!grown)
		return -1;
	vocab = grown;
	c = &vocab[nr_vocab];
	memset(c, 0, sizeof(*c));
	c->available = v->available;
	memcpy(c->why, v->why, sizeof(c->why));
	c->plugin = dup_or_empty(v->plugin);
	c->path = dup_or_empty(v->path);
	c->family_file = v->family_file ? strdup(v->family_file) : NULL;
	c->series = calloc((size_t)v->nr_series + 1, sizeof(*c->series));
	ok = c->plugin && c->path && c->series && (c->family_file || !v->family_file);
	for (int i = 0; ok && i < v->nr_series; i++) {
		struct plugin_series_decl *d = &c->series[c->nr_series++];

		d->gauge = v->series[i].gauge;
		d->name = dup_or_empty(v->series[i].name);
		d->unit = dup_or_empty(v->series[i].unit);
		d->description = dup_or_empty(v->series[i].description);
		ok = d->name && d->unit && d->description;
	}
	if (!ok) {
		vocabulary_free(c);
		return -1;
	}
	nr_vocab++;
	return 0;
}

int plugin_series_set_family(const char *plugin, const char *path)
{
	struct plugin_vocabulary *v = (struct plugin_vocabulary *)plugin_series_plugin(plugin);
	char *copy = path ? strdup(path) : NULL;

	if (!v || (path && !copy)) {
		free(copy);
		return -1;
	}
	free(v->family_file);
	v->family_file = copy;
	return 0;
}

const struct plugin_vocabulary *plugin_series_owner(const char *name)
{
	for (int p = 0; p < nr_vocab; p++)
		for (int i = 0; i < vocab[p].nr_series; i++)
			if (!strcmp(vocab[p].series[i].name, name))
				return &vocab[p];
	return NULL;
}

const struct plugin_vocabulary *plugin_series_plugin(const char *plugin)
{
	for (int p = 0; p < nr_vocab; p++)
		if (!strcmp(vocab[p].plugin, plugin))
			return &vocab[p];
	return NULL;
}

int plugin_series_count(void)
{
	return nr_vocab;
}

const struct plugin_vocabulary *plugin_series_at(int i)
{
	return i >= 0 && i < nr_vocab ? &vocab[i] : NULL;
}

void plugin_series_clear(void)
{
	for (int p = 0; p < nr_vocab; p++)
		vocabulary_free(&vocab[p]);
	free(vocab);
	vocab = NULL;
	nr_vocab = 0;
}
