/* The series the loaded plugins serve ("resctrl.mbm_total_bytes", ...) and
 * the catalog family file each ships: part of the event vocabulary, like the
 * eBPF series names, so the catalog and the resolver can know them without
 * the plugin loader (sources/plugin_loader.h fills this in when it loads a
 * plugin). One list for the process: plugins are loaded once, at start. */
#ifndef MEMSCOPE_PLUGIN_SERIES_H
#define MEMSCOPE_PLUGIN_SERIES_H

#include <stdbool.h>

struct plugin_series_decl {
	char *name;
	char *unit;
	bool gauge;                /* else a counter */
	char *description;
};

struct plugin_vocabulary {
	char *plugin;              /* the plugin's name ("resctrl") */
	char *path;                /* its shared object */
	bool available;            /* it can read on this host */
	char why[512];             /* when not: the plugin's own reason */
	char *family_file;         /* its catalog family file once accepted, else NULL */
	struct plugin_series_decl *series;
	int nr_series;
};

/* Add a loaded plugin's vocabulary (copied). -1 when out of memory. */
int plugin_series_add(const struct plugin_vocabulary *v);
/* Set the family file of a plugin added before (NULL: none). */
int plugin_series_set_family(const char *plugin, const char *path);
/* The plugin that serves the series called name, or NULL. */
const struct plugin_vocabulary *plugin_series_owner(const char *name);
const struct plugin_vocabulary *plugin_series_plugin(const char *plugin);
int plugin_series_count(void);
const struct plugin_vocabulary *plugin_series_at(int i);
/* Forget every plugin (at exit, and between unit tests). */
void plugin_series_clear(void);

#endif
