#include "sources/plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "config.h"
#include "events/plugin_series.h"
#include "host/sysfs.h"
#include "util/trusted_path.h"
#include "util/array.h"

/* Everything one plugin needs while it loads; freed with the entry. */
static struct loaded_plugin *new_entry(struct plugin_set *set, const char *path, bool named)
{
	struct loaded_plugin **grown = realloc(set->plugins, sizeof(*grown) * (size_t)(set->nr + 1));
	struct loaded_plugin *p = calloc(1, sizeof(*p));

	if (grown)
		set->plugins = grown;
	if (!grown || !p) {
		free(p);
		return NULL;
	}
	grown[set->nr++] = p;
	p->fd = -1;
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->named = named;
	return p;
}

__attribute__((format(printf, 2, 3)))
static int refuse(struct loaded_plugin *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	p->loaded = false;
	return -1;
}

/* An ELF shared object, by its header: a clearer reason than dlopen's for
 * the common mistakes (a source file, an executable). */
static int check_elf(struct loaded_plugin *p, int fd)
{
	unsigned char h[EI_NIDENT + 2];
	ssize_t n = pread(fd, h, sizeof(h), 0);
	unsigned type;

	if (n < 0)
		return refuse(p, "cannot read: %s", strerror(errno));
	if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
		return refuse(p, "not a shared object: not an ELF file (build a plugin with cc -shared -fPIC; "
			      "docs/plugins.md)");
	type = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[EI_NIDENT] << 8 | h[EI_NIDENT + 1]
					 : (unsigned)h[EI_NIDENT + 1] << 8 | h[EI_NIDENT];
	if (type != ET_DYN)
		return refuse(p, "not a shared object: an ELF %s (build a plugin with cc -shared -fPIC)",
			      type == ET_EXEC ? "executable" : type == ET_REL ? "object file (.o)" : "file of another type");
	return 0;
}

static bool valid_name(const char *s, bool dots)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || (dots && *s == '.')))
			return false;
	return true;
}

static int check_descriptor(const struct plugin_set *set, struct loaded_plugin *p, const struct memscope_plugin *d,
			    const struct source_registry *registry)
{
	static const struct {
		const char *what;
		size_t offset, ours;
	} sizes[] = {
		{ "struct memscope_plugin", offsetof(struct memscope_plugin, size), sizeof(struct memscope_plugin) },
		{ "struct memscope_series_decl", offsetof(struct memscope_plugin, series_decl_size),
		  sizeof(struct memscope_series_decl) },
		{ "struct memscope_arg_decl", offsetof(struct memscope_plugin, arg_decl_size),
		  sizeof(struct memscope_arg_decl) },
		{ "struct memscope_labels", offsetof(struct memscope_plugin, labels_size), sizeof(struct memscope_labels) },
	};

	if (d->abi_version != MEMSCOPE_PLUGIN_ABI_VERSION)
		return refuse(p, "plugin ABI version mismatch: built for version %u, this memscope loads version %u "
			      "(rebuild it against this memscope's <memscope/plugin.h>)", d->abi_version,
			      MEMSCOPE_PLUGIN_ABI_VERSION);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t theirs;

		memcpy(&theirs, (const char *)d + sizes[i].offset, sizeof(theirs));
		if (theirs != sizes[i].ours)
			return refuse(p, "struct size mismatch: %s is %u bytes in the plugin, %zu in this memscope "
				      "(both say ABI version %u: the plugin was built against a changed plugin.h; "
				      "rebuild it against this memscope's <memscope/plugin.h>)", sizes[i].what, theirs,
				      sizes[i].ours, MEMSCOPE_PLUGIN_ABI_VERSION);
	}
	if (!valid_name(d->name, false))
		return refuse(p, "the descriptor's name '%s' must be lower case letters, digits and '_'",
			      d->name ? d->name : "(null)");
	if (source_registry_find(registry, d->name)) {
		for (int i = 0; i < set->nr; i++) {
			const struct loaded_plugin *o = set->plugins[i];

			if (o != p && o->loaded && !strcmp(o->desc->name, d->name))
				return refuse(p, "a plugin named '%s' is already loaded from %s", d->name, o->path);
		}
		return refuse(p, "its name '%s' is the name of a built-in source", d->name);
	}
	if (!d->init || !d->open || !d->read || !d->close || !d->fini)
		return refuse(p, "plugin '%s' leaves init, open, read, close or fini NULL; all five are required",
			      d->name);
	if (!d->series || d->nr_series == 0)
		return refuse(p, "plugin '%s' declares no series", d->name);
	for (uint32_t i = 0; i < d->nr_series; i++) {
		const struct memscope_series_decl *s = &d->series[i];
		const struct source_kind *owner;

		if (!valid_name(s->name, true) || !strchr(s->name, '.') || !strncmp(s->name, "proc.", 5))
			return refuse(p, "plugin '%s': series name '%s' must be lower case letters, digits, '_' and "
				      "'.', contain a '.' and not start with 'proc.'", d->name, s->name ? s->name : "(null)");
		if (s->kind != MEMSCOPE_SERIES_COUNTER && s->kind != MEMSCOPE_SERIES_GAUGE)
			return refuse(p, "plugin '%s': series '%s' has kind %u; expected MEMSCOPE_SERIES_COUNTER "
				      "or MEMSCOPE_SERIES_GAUGE", d->name, s->name, s->kind);
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(d->series[j].name, s->name))
				return refuse(p, "plugin '%s' declares series '%s' twice", d->name, s->name);
		owner = source_registry_claim(registry, SOURCE_LIVE, s->name);
		if (owner && owner != &perf_source_kind)
			return refuse(p, "plugin '%s': series '%s' is already served by source '%s'", d->name, s->name,
				      owner->name);
	}
	for (uint32_t i = 0; i < d->nr_args; i++)
		if (!d->args || !valid_name(d->args[i].key, false))
			return refuse(p, "plugin '%s': argument %u has no valid key (lower case letters, digits, '_')",
				      d->name, i);
	return 0;
}

/* "key=val,key2=val2,flag" against the declared keys. */
static int parse_args(struct loaded_plugin *p, const char *text)
{
	const struct memscope_plugin *d = p->desc;
	char *save = NULL, *item;

	if (!text || !*text)
		return 0;
	if (!(p->args_text = strdup(text)) || !(p->args = calloc(strlen(text) + 1, sizeof(*p->args))))
		return refuse(p, "out of memory");
	for (item = strtok_r(p->args_text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		bool known = false;

		if (eq)
			*eq = '\0';
		for (uint32_t i = 0; i < d->nr_args; i++)
			known |= !strcmp(d->args[i].key, item);
		if (!known) {
			char keys[512] = "";
			size_t len = 0;

			for (uint32_t i = 0; i < d->nr_args && len < sizeof(keys); i++)
				len += (size_t)snprintf(keys + len, sizeof(keys) - len, "%s%s", i ? ", " : "", d->args[i].key);
			return refuse(p, "plugin '%s' takes no argument '%s' (%s%s)", d->name, item,
				      d->nr_args ? "it takes: " : "it takes none", keys);
		}
		p->args[p->nr_args].key = item;
		p->args[p->nr_args++].value = eq ? eq + 1 : "";
	}
	return 0;
}

/* The family file the plugin ships, checked against the catalog now so a
 * mistake in it is reported once, with the plugin, and never stops -m. */
static void accept_catalog(struct loaded_plugin *p)
{
	struct catalog *cat = NULL;
	struct ms_error err = { "" };
	const char *slash = strrchr(p->real, '/');

	if (!p->desc->catalog)
		return;
	if (p->desc->catalog[0] == '/')
		snprintf(p->catalog, sizeof(p->catalog), "%s", p->desc->catalog);
	else
		snprintf(p->catalog, sizeof(p->catalog), "%.*s/%s", (int)(slash - p->real), p->real, p->desc->catalog);
	if (catalog_load_default(&cat, &err) < 0 || catalog_add_plugin_family(cat, p->catalog, p->desc->name, &err) < 0)
		snprintf(p->catalog_why, sizeof(p->catalog_why), "%s", err.text);
	else if (plugin_series_set_family(p->desc->name, p->catalog) < 0)
		snprintf(p->catalog_why, sizeof(p->catalog_why), "out of memory");
	catalog_free(cat);
}

static int add_vocabulary(struct loaded_plugin *p)
{
	const struct memscope_plugin *d = p->desc;
	struct plugin_vocabulary v = { 0 };
	struct plugin_series_decl *decls = calloc(d->nr_series, sizeof(*decls));
	char why[sizeof(v.why)] = "";
	int ret;

	if (!decls)
		return refuse(p, "out of memory");
	v.plugin = (char *)d->name;
	v.path = p->path;
	v.available = !d->available || d->available(p->state, why, sizeof(why)) == 1;
	if (!v.available)
		snprintf(v.why, sizeof(v.why), "%s", why[0] ? why : "the plugin says it cannot run here (no reason given)");
	for (uint32_t i = 0; i < d->nr_series; i++) {
		decls[i].name = (char *)d->series[i].name;
		decls[i].unit = (char *)d->series[i].unit;
		decls[i].gauge = d->series[i].kind == MEMSCOPE_SERIES_GAUGE;
		decls[i].description = (char *)d->series[i].description;
	}
	v.series = decls;
	v.nr_series = (int)d->nr_series;
	ret = plugin_series_add(&v);
	free(decls);
	return ret < 0 ? refuse(p, "out of memory") : 0;
}

static void unload_one(struct loaded_plugin *p)
{
	if (p->state && p->desc)
		p->desc->fini(p->state);
	p->state = NULL;
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
	p->desc = NULL;
	free(p->args);
	free(p->args_text);
	p->args = NULL;
	p->args_text = NULL;
	p->nr_args = 0;
}

/* Open the file, and (as root) make sure no other user can change it or any
 * directory on its way (links included): a plugin runs with memscope's
 * rights. Decided on the descriptor opened, which is the one loaded. */
static int open_checked(struct loaded_plugin *p)
{
	struct ms_error err = { "" };
	int fd = trusted_open(p->path, "plugin", true, p->real, sizeof(p->real), &err);

	if (fd == TRUSTED_CANNOT_OPEN)
		return refuse(p, "cannot open: %s", strerror(errno));
	if (fd == TRUSTED_NOT_REGULAR)
		return refuse(p, "not a shared object: not a regular file");
	if (fd < 0)
		return refuse(p, "refused: %s", err.text);
	if (check_elf(p, fd) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Is the file open as fd one another plugin was loaded from? */
static const struct loaded_plugin *loaded_from(const struct plugin_set *set, const struct loaded_plugin *p, int fd)
{
	struct stat st, theirs;

	if (fstat(fd, &st) < 0)
		return NULL;
	for (int i = 0; i < set->nr; i++) {
		const struct loaded_plugin *o = set->plugins[i];

		if (o != p && o->handle && o->fd >= 0 && fstat(o->fd, &theirs) == 0 && theirs.st_dev == st.st_dev &&
		    theirs.st_ino == st.st_ino)
			return o;
	}
	return NULL;
}

/* Load the file the checks were made on, through its descriptor: a file
 * put in its place after the checks is never the one loaded. */
static int load_file(struct loaded_plugin *p, int fd)
{
	char via[64];
	const char *msg;

	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	p->fd = fd;
	dlerror();
	p->handle = dlopen(via, RTLD_NOW | RTLD_LOCAL);
	if (p->handle)
		return 0;
	msg = dlerror();
	if (msg && !strncmp(msg, via, strlen(via)) && msg[strlen(via)] == ':')
		msg += strlen(via) + 1;
	while (msg && *msg == ' ')
		msg++;
	return refuse(p, "not a loadable shared object: %s", msg ? msg : "dlopen failed");
}

static int load_one(struct plugin_set *set, struct loaded_plugin *p, const char *args,
		    struct source_registry *registry)
{
	struct memscope_host host;
	struct sysfs_roots roots;
	char why[512] = "";
	const struct loaded_plugin *o;
	int fd;

	if ((fd = open_checked(p)) < 0)
		return -1;
	if ((o = loaded_from(set, p, fd))) {
		close(fd);
		return refuse(p, "already loaded as %s", o->path);
	}
	if (load_file(p, fd) < 0)
		return -1;
	p->desc = dlsym(p->handle, MEMSCOPE_PLUGIN_SYMBOL);
	if (!p->desc)
		return refuse(p, "no descriptor: the shared object has no '%s' symbol, so it is not a memscope "
			      "plugin (define `MEMSCOPE_PLUGIN_EXPORT const struct memscope_plugin %s` from "
			      "<memscope/plugin.h>; docs/plugins.md)", MEMSCOPE_PLUGIN_SYMBOL, MEMSCOPE_PLUGIN_SYMBOL);
	if (check_descriptor(set, p, p->desc, registry) < 0 || parse_args(p, args) < 0)
		return -1;
	sysfs_roots_from_env(&roots);
	memset(&host, 0, sizeof(host));
	host.size = sizeof(host);
	host.plugin_path = p->path;
	host.sysfs_root = roots.sys;
	host.procfs_root = roots.proc;
	host.args = p->args;
	host.nr_args = (uint32_t)p->nr_args;
	host.euid = (int32_t)geteuid();
	if (p->desc->init(&host, &p->state, why, sizeof(why)) != 0) {
		p->state = NULL;
		return refuse(p, "plugin '%s' failed to start: %s", p->desc->name,
			      why[0] ? why : "init failed (the plugin gave no reason)");
	}
	plugin_kind_init(p);
	if (source_registry_add(registry, &p->kind, &(struct ms_error){ "" }) < 0)
		return refuse(p, "plugin '%s': the source registry is full", p->desc->name);
	p->loaded = true;
	if (add_vocabulary(p) < 0) {
		source_registry_remove(registry, &p->kind);
		return -1;
	}
	accept_catalog(p);
	return 0;
}

/* PATH[:ARGS]: the arguments start after the first ".so:" (their values may
 * hold '/' and ':'); a path not ending in .so takes none. */
static void split_spec(const char *spec, char *path, size_t size, const char **args)
{
	const char *so = strstr(spec, ".so:");
	const char *colon = so ? so + 3 : NULL;

	*args = colon ? colon + 1 : NULL;
	snprintf(path, size, "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
}

static void find_dirs(struct plugin_set *set)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	set->nr_dirs = 0;
	if (xdg && xdg[0] == '/')
		snprintf(set->dirs[set->nr_dirs++], sizeof(set->dirs[0]), "%s/memscope/plugins", xdg);
	else if (home && home[0] == '/')
		snprintf(set->dirs[set->nr_dirs++], sizeof(set->dirs[0]), "%s/.local/share/memscope/plugins", home);
	snprintf(set->dirs[set->nr_dirs++], sizeof(set->dirs[0]), "%s", MEMSCOPE_PLUGINDIR);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_plugin_file(const struct dirent *e)
{
	size_t len = strlen(e->d_name);

	return e->d_name[0] != '.' && len > 3 && !strcmp(e->d_name + len - 3, ".so");
}

static int load_dir(struct plugin_set *set, const char *dir, struct source_registry *registry)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, is_plugin_file, by_name);

	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], real[PATH_MAX];
		struct loaded_plugin *p;
		bool seen = false;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		/* A file also named with --plugin is that one. */
		for (int k = 0; realpath(path, real) && k < set->nr; k++)
			seen |= !strcmp(set->plugins[k]->real, real);
		if (!seen) {
			if (!(p = new_entry(set, path, false))) {
				for (; i < n; i++)
					free(names[i]);
				free(names);
				return -1;
			}
			if (load_one(set, p, NULL, registry) < 0)
				unload_one(p);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

int plugins_load(struct plugin_set *set, char *const *specs, int nr_specs, struct source_registry *registry)
{
	find_dirs(set);
	for (int i = 0; i < nr_specs; i++) {
		char path[PATH_MAX];
		const char *args;
		struct loaded_plugin *p;

		split_spec(specs[i], path, sizeof(path), &args);
		if (!(p = new_entry(set, path, true)))
			return -1;
		if (load_one(set, p, args, registry) < 0)
			unload_one(p);
	}
	for (int d = 0; d < set->nr_dirs; d++)
		if (load_dir(set, set->dirs[d], registry) < 0)
			return -1;
	return 0;
}

void plugins_unload(struct plugin_set *set)
{
	for (int i = 0; i < set->nr; i++) {
		unload_one(set->plugins[i]);
		if (set->plugins[i]->fd >= 0)
			close(set->plugins[i]->fd);
		free(set->plugins[i]);
	}
	free(set->plugins);
	memset(set, 0, sizeof(*set));
	plugin_series_clear();
}

struct plugin_set *plugins_process(void)
{
	static struct plugin_set process;

	return &process;
}
