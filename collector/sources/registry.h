/* The source registry: every kind of source memscope can read from, and which
 * series names each one serves. The session asks the registry, never a source
 * by name: a name goes to the first kind that claims it (eBPF claims proc.*,
 * procfs claims vmstat/ and numastat/, a plugin claims the series it
 * declares, perf takes what is left), and each kind with names gets one
 * source. Adding a kind (a plugin, a new file format) changes neither the
 * session nor the commands.
 *
 * Kinds that read live data are tried in registration order; a file kind
 * (--replay) serves every name of a session that reads from its file. */
#ifndef MEMSCOPE_SOURCE_REGISTRY_H
#define MEMSCOPE_SOURCE_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host/host.h"
#include "sampler/source.h"
#include "sampler/target.h"
#include "util/error.h"

struct metric_plan;
struct sample_options;

/* What the session asks of a kind when it creates its source. */
/* stat -G: an event counted in one cgroup (a name of the cgroup v2 hierarchy). */
struct event_cgroup {
	const char *event;
	const char *cgroup;
};

struct source_request {
	const struct host *host;
	const struct target *target;       /* NULL for file kinds */
	const char *const *names;          /* the names this kind claimed, each once */
	int nr_names;
	const struct metric_plan *plan;    /* the metrics measured (their events are among names), or NULL */
	const char *path;                  /* file kinds: the file to read */
	bool per_cpu;                      /* task targets: also split by CPU (per-cpu/socket/node output) */
	bool per_process;                  /* also a series per process (labels pid, comm), where the kind can */
	bool per_thread;                   /* also a series per thread (labels pid, tid, comm), where the kind can */
	pid_t thread_pid;                  /* > 0: per-thread series of this process only */
	bool start_disabled;               /* counting starts when resumed (source_ops.resume), not at enable */
	FILE *notes;                       /* where a source reports what it left out; never NULL */
	const char *command_name;          /* "stat", for messages */
	const struct sample_options *sampling; /* the sampling kind: period, ring size, where samples go */
	/* stat -G: the perf events to count in cgroups, in output order (an
	 * event may repeat, in other cgroups); the names not among them are
	 * counted as without -G. */
	const struct event_cgroup *cgroups;
	int nr_cgroups;
	/* The damon source: a region is hot when accessed in at least this
	 * percent of its samples, cold when not accessed for this long (0: the
	 * defaults, sources/damon/damon_regions.h). */
	unsigned damon_hot_pct;
	uint64_t damon_cold_age_us;
	/* --damon: start memscope's own kdamond (active), read a running one
	 * (passive), or active unless one runs (auto, the default). */
	enum damon_mode { DAMON_MODE_AUTO, DAMON_MODE_ACTIVE, DAMON_MODE_PASSIVE } damon_mode;
	long interval_ms;                  /* -I (0: none): active mode's aggregation interval */
};

/* LIVE: reads the host; FILE: serves the names asked for from a file
 * (--replay); RECORDING: a file that says itself what it holds (--input),
 * claiming no name. */
enum source_kind_mode { SOURCE_LIVE, SOURCE_FILE, SOURCE_RECORDING };

struct source_kind {
	const char *name;                  /* "perf", "bpf", "procfs", "replay", a plugin's name */
	const char *description;           /* one line, for `memscope list --sources` */
	enum source_kind_mode mode;
	/* Does this kind serve the series (or event) called name? */
	bool (*claims)(const struct source_kind *kind, const char *name);
	/* Can it run on this host? When not, why (for list and doctor). NULL: always. */
	bool (*present)(const struct source_kind *kind, const struct host *host, struct ms_error *why);
	/* Optional: is name, which it claims, one it can serve here? Called for
	 * every name before anything starts (before a command is forked), so a
	 * name the user misspelt is a usage error that says why. */
	int (*check)(const struct source_kind *kind, const struct host *host, const char *name, struct ms_error *err);
	/* Set up src for the names it claimed (src->ops->open registers their
	 * series). 0, or -1 with err set; of kind MS_ERR_USAGE for a name the
	 * user wrote that means nothing. */
	int (*create)(const struct source_kind *kind, struct source *src, const struct source_request *req,
		      struct ms_error *err);
	/* Failing to start is a note, not an error, when other sources run
	 * (the eBPF probes: without them the counters still count). */
	bool optional;
	/* It also gives series per process and per thread when asked
	 * (source_request.per_process, per_thread): stat --per-thread needs one. */
	bool per_task;
	void *data;                        /* the kind's own (a plugin's handle) */
};

#define SOURCE_REGISTRY_MAX 32

struct source_registry {
	const struct source_kind *kinds[SOURCE_REGISTRY_MAX];
	int nr;
};

/* The built-in kinds, in claiming order: bpf, procfs, damon (damon.*), sample (sample:EVENT), then perf (which
 * takes every name no other kind claimed), and the file kinds: replay
 * (--replay: counter values for names) and recording (--input: whole
 * recordings, which claim no name). */
void source_registry_init(struct source_registry *r);
/* Add a kind before perf (plugins). -1 with err when the registry is full
 * or the name is taken. */
int source_registry_add(struct source_registry *r, const struct source_kind *kind, struct ms_error *err);
/* Take a kind out again (a plugin that failed after joining). */
void source_registry_remove(struct source_registry *r, const struct source_kind *kind);
/* The kind of this mode that serves name, or NULL when none does. */
const struct source_kind *source_registry_claim(const struct source_registry *r, enum source_kind_mode mode,
						const char *name);
const struct source_kind *source_registry_find(const struct source_registry *r, const char *kind_name);
/* The first kind of this mode (the recording reader for --input), or NULL. */
const struct source_kind *source_registry_first(const struct source_registry *r, enum source_kind_mode mode);
/* The registry of this process: the built-in kinds, then the plugins loaded
 * at start (sources/plugin_loader.h). Sessions use it unless given another. */
struct source_registry *source_registry_process(void);

/* The built-in kinds (each defined beside its source). */
extern const struct source_kind perf_source_kind;
extern const struct source_kind bpf_source_kind;
extern const struct source_kind procfs_source_kind;
extern const struct source_kind replay_source_kind;
extern const struct source_kind recording_source_kind;
extern const struct source_kind sample_source_kind;
extern const struct source_kind damon_source_kind;

#endif
