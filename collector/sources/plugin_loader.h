/* Loading source plugins (include/memscope/plugin.h): the ones the user names
 * (--plugin PATH.so[:key=val,...]) and every *.so in the plugin directories
 * ($XDG_DATA_HOME/memscope/plugins, then the installation's
 * LIBDIR/memscope/plugins). Nothing else is ever loaded.
 *
 * Each plugin that loads becomes a source kind in the process's registry
 * (claiming the series names it declares) and adds its vocabulary and its
 * catalog family to the event vocabulary (events/plugin_series.h). A plugin
 * that cannot load is kept with the reason: not a shared object, no
 * descriptor, another ABI version, other struct sizes, an argument it does not
 * take, its init failing, or (as root) a file other users can write. */
#ifndef MEMSCOPE_PLUGIN_LOADER_H
#define MEMSCOPE_PLUGIN_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include <memscope/plugin.h>

#include "sources/registry.h"

struct loaded_plugin {
	char path[PATH_MAX];           /* as named or found */
	bool named;                    /* by --plugin (else found in a directory) */
	bool loaded;
	char why[1024];                /* !loaded: the cause */
	void *handle;                  /* dlopen() */
	int fd;                        /* the file loaded, as /proc/self/fd/N: open until plugins_unload so
					* no two plugins ever share that name (the dynamic loader reuses an
					* object loaded under the same name) */
	const struct memscope_plugin *desc;
	void *state;                   /* the plugin's, from init */
	char real[PATH_MAX];           /* the path it was opened by, links resolved */
	/* Its catalog family: path, and why it was not accepted (else ""). */
	char catalog[PATH_MAX];
	char catalog_why[1024];
	struct memscope_arg *args;     /* key=value pairs of --plugin */
	int nr_args;
	char *args_text;               /* storage the args point into */
	struct source_kind kind;       /* in the registry while loaded */
};

struct plugin_set {
	struct loaded_plugin **plugins;  /* each allocated once: the registry points at their kinds */
	int nr;
	char dirs[2][PATH_MAX];        /* the plugin directories, in search order ("" when unknown) */
	int nr_dirs;
};

/* Load the named plugins (specs: "PATH[:key=val,...]") then those of the
 * directories, adding each that loads to registry. Every plugin that did
 * not load is in set with its reason; nothing here is fatal. -1 only when
 * memory runs out. */
int plugins_load(struct plugin_set *set, char *const *specs, int nr_specs, struct source_registry *registry);
/* fini and dlclose every loaded plugin; the vocabulary is cleared. */
void plugins_unload(struct plugin_set *set);

/* The plugins of this process (loaded into source_registry_process()). */
struct plugin_set *plugins_process(void);

/* The source kind of a loaded plugin (sources/plugin_source.c). */
void plugin_kind_init(struct loaded_plugin *p);

#endif
