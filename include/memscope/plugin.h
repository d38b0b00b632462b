/* memscope source plugins: the public, versioned C ABI.
 *
 * A plugin is a shared object that feeds series into memscope's frames, like
 * its built-in sources (perf counters, eBPF probes, /proc/vmstat). It exports
 * one descriptor, `memscope_plugin`, that says which series it serves and
 * gives memscope a few functions to call:
 *
 *     #include <memscope/plugin.h>
 *
 *     static const struct memscope_series_decl series[] = {
 *         { "example.bytes", "B", MEMSCOPE_SERIES_COUNTER, "bytes moved" },
 *     };
 *     MEMSCOPE_PLUGIN_EXPORT const struct memscope_plugin memscope_plugin = {
 *         MEMSCOPE_PLUGIN_HEADER,
 *         .name = "example",
 *         .series = series, .nr_series = 1,
 *         .init = ..., .open = ..., .read = ..., .close = ..., .fini = ...,
 *     };
 *
 * Build: cc -shared -fPIC -o example.so example.c (no library to link).
 * Load:  memscope --plugin ./example.so stat -e example.bytes -a -I 1000
 * docs/plugins.md is the guide; this header is the reference.
 *
 * Life of a plugin, in the one thread that calls it:
 *   init      once, after loading: parse the arguments, keep the roots.
 *   available whenever memscope asks whether it can run on this host (list,
 *             before a session): 1, or 0 with the reason.
 *   open      at the start of a measurement: add the series it will read
 *             (each a declared name with its labels) through add_series.
 *   read      once per frame: the current value of every series it added,
 *             into memscope's buffers, in the order they were added.
 *   close     at the end of the measurement (after a successful open).
 *   fini      once, before unloading.
 *
 * Values. A gauge is read as its current value (bytes resident now). A
 * counter is read as its running total since any point before open (bytes
 * moved since boot); memscope takes the difference between two reads, so a
 * counter never needs resetting. A total that goes down is taken as a reset
 * of the counter: that interval has no value (never a huge wrapped delta).
 * Values are unsigned 64-bit integers, in the declared unit.
 *
 * read runs on memscope's sampling path: no allocation, no printing, no
 * blocking beyond reading the files or devices it opened in open; set
 * valid[i] = 0 for a value it could not read this time (never a made-up 0).
 *
 * ABI rules. memscope loads a plugin only when abi_version equals its own
 * MEMSCOPE_PLUGIN_ABI_VERSION and every struct size the plugin recorded
 * (MEMSCOPE_PLUGIN_HEADER fills them in) equals memscope's: a plugin built
 * against another version of this header is refused with both numbers, never
 * half-used. Within one ABI version nothing in this file changes; any change
 * to a struct, a function's meaning or a constant is a new ABI version.
 * The structs memscope passes to the plugin carry their size too, so a plugin
 * may check them the same way.
 *
 * Strings memscope passes are valid for the duration of the call only (the
 * arguments in memscope_host: until fini). Strings in the descriptor and in
 * labels given to add_series are copied by memscope when it needs them. */
#ifndef MEMSCOPE_PLUGIN_H
#define MEMSCOPE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMSCOPE_PLUGIN_ABI_VERSION 1u

/* The name of the descriptor memscope looks up with dlsym(). */
#define MEMSCOPE_PLUGIN_SYMBOL "memscope_plugin"

/* Exports the descriptor even when the plugin is built with
 * -fvisibility=hidden. */
#define MEMSCOPE_PLUGIN_EXPORT __attribute__((visibility("default")))

enum memscope_series_kind {
	MEMSCOPE_SERIES_COUNTER = 0,   /* read a running total; memscope shows per-interval differences */
	MEMSCOPE_SERIES_GAUGE = 1,     /* read the current value */
};

/* One series name the plugin serves. Names are lower case letters, digits,
 * '_' and '.', contain a '.', and must not start with "proc." (memscope's
 * eBPF series): "cgroup.memory.anon", "resctrl.mbm_total_bytes". A name may
 * be added many times in open, once per set of labels. */
struct memscope_series_decl {
	const char *name;
	const char *unit;              /* "B", "pages", "us", "" */
	uint32_t kind;                 /* enum memscope_series_kind */
	const char *description;       /* one line, for memscope list --plugins */
};

/* One argument the plugin accepts on the command line:
 * memscope --plugin PATH.so:key=value,key=value,... */
struct memscope_arg_decl {
	const char *key;
	const char *description;       /* one line: what it does, its default */
};

struct memscope_arg {
	const char *key;
	const char *value;             /* "" for a bare key */
};

/* Given to init. */
struct memscope_host {
	uint32_t size;                 /* sizeof(struct memscope_host) */
	const char *plugin_path;       /* the shared object's path, as loaded */
	const char *sysfs_root;        /* "/sys", or the root a test moved it to */
	const char *procfs_root;       /* "/proc", or the root a test moved it to */
	const struct memscope_arg *args; /* in command-line order; keys are declared ones; may repeat */
	uint32_t nr_args;
	int32_t euid;                  /* memscope's effective user id */
};

#define MEMSCOPE_LABEL_NONE (-1)

/* What a series is about. Unused fields: MEMSCOPE_LABEL_NONE or NULL. A
 * series with a node or socket is summed into that node's or socket's
 * metrics; instance and cgroup name a row of their own (memscope stat
 * --per-instance). */
struct memscope_labels {
	int32_t node;                  /* NUMA node */
	int32_t socket;
	int32_t cpu;
	int32_t pid;
	const char *cgroup;            /* cgroup path, "/" for the root */
	const char *instance;          /* what else tells the series apart ("p1/mon_L3_00"); < 64 bytes */
};

/* Given to open: what memscope measures and how to add series. */
struct memscope_target {
	uint32_t size;                 /* sizeof(struct memscope_target) */
	int32_t system_wide;           /* 1: the whole system (-a) */
	const int32_t *pids;           /* the processes measured (-p, or the command: forked, not yet run) */
	uint32_t nr_pids;
	const char *const *names;      /* the declared names asked for, each once */
	uint32_t nr_names;
	/* Add a series (name: one of names). Returns its index in read's
	 * buffers (0, 1, 2 ... in call order), or -1 when name was not asked
	 * for or memory ran out. */
	int (*add_series)(void *ctx, const char *name, const struct memscope_labels *labels);
	void *ctx;                     /* pass to add_series */
};

struct memscope_plugin {
	/* Filled in by MEMSCOPE_PLUGIN_HEADER: checked before anything else. */
	uint32_t abi_version;
	uint32_t size;                 /* sizeof(struct memscope_plugin) */
	uint32_t series_decl_size;     /* sizeof(struct memscope_series_decl) */
	uint32_t arg_decl_size;        /* sizeof(struct memscope_arg_decl) */
	uint32_t labels_size;          /* sizeof(struct memscope_labels) */

	const char *name;              /* [a-z0-9_]+, unique among loaded plugins */
	const char *version;           /* the plugin's own version, shown by list --plugins */
	const char *description;       /* one line */
	const struct memscope_series_decl *series;
	uint32_t nr_series;
	const struct memscope_arg_decl *args;   /* may be NULL */
	uint32_t nr_args;
	/* A catalog family file (docs/catalog.md) mapping these series to
	 * portable metrics; a path relative to the shared object's directory, or
	 * NULL. Its events are written `plugin: SERIES`. */
	const char *catalog;

	/* Returns 0, or -1 with a one-line reason in why (a bad argument). A
	 * plugin that fails init is not loaded; memscope goes on without it.
	 * *state is passed to every other call. */
	int (*init)(const struct memscope_host *host, void **state, char *why, size_t why_size);
	/* Optional (NULL: always). 1 when the plugin can read on this host, 0
	 * with the reason and its fix in why ("resctrl is not mounted: mount -t
	 * resctrl resctrl /sys/fs/resctrl"). */
	int (*available)(void *state, char *why, size_t why_size);
	/* Add the series to read. 0, or -1 with the reason in why. */
	int (*open)(void *state, const struct memscope_target *target, char *why, size_t why_size);
	/* values[i], valid[i] for the i-th series added (nr of them). 0, or -1
	 * when nothing could be read (every value of this frame is invalid). */
	int (*read)(void *state, uint64_t *values, uint8_t *valid, uint32_t nr);
	void (*close)(void *state);
	void (*fini)(void *state);
};

#define MEMSCOPE_PLUGIN_HEADER \
	.abi_version = MEMSCOPE_PLUGIN_ABI_VERSION, \
	.size = sizeof(struct memscope_plugin), \
	.series_decl_size = sizeof(struct memscope_series_decl), \
	.arg_decl_size = sizeof(struct memscope_arg_decl), \
	.labels_size = sizeof(struct memscope_labels)

#ifdef __cplusplus
}
#endif

#endif
