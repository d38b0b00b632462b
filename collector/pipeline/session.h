/* A measurement session: what every measuring command (stat, record, top)
 * shares. Options that name what to measure and how often, then the host, the
 * events, the target, the sources and the sampler built from them. Commands
 * add only their own options and what they do with frames. */
#ifndef MEMSCOPE_SESSION_H
#define MEMSCOPE_SESSION_H

#include <stdbool.h>
#include <stdio.h>

#include "metrics/aggregate.h"
#include "util/error.h"
#include "util/name_list.h"
#include "host/host.h"
#include "sampler/sampler.h"
#include "sampler/source.h"
#include "sources/registry.h"
#include "sources/sample_source.h"
#include "sampler/target.h"
#include "sinks/sink.h"

/* -I limits: shorter intervals cost more than they measure. */
#define SESSION_MIN_INTERVAL_MS 1
#define SESSION_MAX_INTERVAL_MS (24L * 3600 * 1000)

#define SESSION_DEFAULT_EVENTS \
	"page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"

struct session_options {
	const char *command_name;   /* "stat", for messages */
	struct name_list events;     /* -e, each given once; -e may repeat */
	struct name_list metrics;    /* -m: catalog metrics */
	const char *input_path;     /* frames from a recording (memscope record) */
	const char *replay_path;    /* counter values from a replay file instead of the kernel */
	long interval_ms;           /* 0: no periodic frames */
	bool system_wide;
	const char *cpu_list;       /* stat -C: count only on these CPUs (implies system_wide) */
	/* stat -G: cgroup names, comma list, the n-th for the n-th -e event (one
	 * name: every event), as perf's; with for_each_cgroup, every event in
	 * each cgroup (--for-each-cgroup). */
	const char *cgroups;
	bool for_each_cgroup;
	const char *pids;
	char **command;             /* argv of the command to run, or NULL */
	enum aggr_mode aggr;
	int cache_level;            /* AGGR_CACHE: the cache level to group by (--per-cache=L2), 0: the last */
	/* For commands that show what they can and say why not for the rest
	 * (top): plan only the metrics this host can measure (the others:
	 * session_metric_why), and go on without the eBPF probes when they do
	 * not load (the reason: session_name_why(s, "proc.faults")). */
	bool metrics_if_available;
	/* stat -m: the same for the metrics the user named, as -e treats events
	 * (the rest is counted, each missing one has the resolver's reason in
	 * session_metric_why); a name not in the catalog stays a usage error. */
	bool metrics_partial;
	bool bpf_optional;          /* an optional source that does not start is not even noted */
	bool per_process;           /* sources that can also give a series per process do (top, record -a) */
	bool per_thread;            /* ... and per thread (stat --per-thread) */
	pid_t thread_pid;           /* > 0: per-thread series of this process only (top -p) */
	/* stat -D -1: nothing is counted until the control says enable (the
	 * counters start disabled, no frame is handed on). */
	bool start_disabled;
	/* Without -e or -m: these events (NULL: SESSION_DEFAULT_EVENTS); stat's
	 * are perf's. A default event the host cannot count is shown as such,
	 * without a note, as perf does (default_events_used). */
	const char *default_events;
	bool default_events_used;
	bool quiet_notes;           /* no notes at all (stat -q) */
	bool threads_only;          /* pids are threads, counted alone (stat -t TID) */
	FILE *notes;                /* where notes go (left-out probes, events not counted); NULL: stderr */
	const struct source_registry *registry; /* NULL: source_registry_process() (built-ins and plugins) */
	/* record --sample: sampling events, comma list ("mem" is the catalog's
	 * memory sampling event of this host), and how to sample them. */
	char *samples;
	struct sample_options sampling;
	/* --damon-hot PCT, --damon-cold-age SECONDS (0: the defaults) */
	unsigned damon_hot_pct;
	uint64_t damon_cold_age_us;
	/* --damon auto|active|passive (sources/registry.h: enum damon_mode) */
	int damon_mode;
};

void session_options_init(struct session_options *opt, const char *command_name);
/* After the options: take the command (the operands, NULL-terminated; none:
 * NULL or empty), check the target and fill defaults. -1 (message printed)
 * on a usage error. */
int session_options_finish(struct session_options *opt, char **command);
void session_options_free(struct session_options *opt);
/* "'cmd args'", "process id '12'", "system wide". */
void session_describe_target(const struct session_options *opt, char *buf, size_t size);

#define SESSION_MAX_SOURCES SOURCE_REGISTRY_MAX
#define SESSION_MAX_SINKS 8

/* A metric asked for that this host cannot measure (metrics_if_available,
 * metrics_partial), made where the resolver says so: its name, why in a
 * code and in words, and the line that shows both. */
enum unmeasured_reason {
	UNMEASURED_NOT_IN_CATALOG,  /* no catalog metric has the name */
	UNMEASURED_NOT_ON_HOST,     /* the catalog's metric, which this host has no counters for */
};
struct session_unmeasured {
	char *name;
	enum unmeasured_reason reason;
	char *why;                  /* the resolver's reason */
	char *line;                 /* "NAME: WHY", as top and validate show it */
};

struct catalog;
struct resolution;
struct metric_plan;
struct metric_engine;
struct session_pipeline;
struct session_control;

struct session {
	struct host host;
	struct target target;
	struct source_registry registry;
	char **names;               /* every series asked for, once each: -e's, then the plan's events */
	int nr_names;
	/* -G: the events counted in cgroups, in output order; cgroup_text holds the names. */
	struct event_cgroup *cgroups;
	int nr_cgroups;
	char *cgroup_text;
	struct source sources[SESSION_MAX_SOURCES];
	int nr_sources;
	struct sampler sampler;
	/* Metrics (-m): the catalog resolved on this host, the plan of raw events,
	 * and the engine that computes the metrics from frames. */
	struct catalog *catalog;
	struct resolution *resolution;
	struct metric_plan *plan;
	struct metric_engine *engine;
	struct session_unmeasured *unmeasured; /* metrics_if_available: one per left-out metric */
	int nr_unmeasured, cap_unmeasured;
	/* Optional sources that did not start (the eBPF probes), and why. */
	struct session_left_out {
		const struct source_kind *kind;
		struct ms_error why;
	} left_out[SESSION_MAX_SOURCES];
	int nr_left_out;
	bool host_loaded;
	bool sampler_opened;
	bool recording;             /* sources[0] replays a recording (session_recording.h) */
	/* Where frames go (session_add_sink), in the order they were added. */
	struct sink *sinks[SESSION_MAX_SINKS];
	const struct sink *follows[SESSION_MAX_SINKS]; /* the sink whose thread it shares, or NULL */
	bool sink_opened[SESSION_MAX_SINKS];
	int nr_sinks;
	struct session_pipeline *pipeline; /* the sinks' queues and threads (session_run.c) */
	struct sample_hub sample_hub;      /* where the sampling source hands its items (session_run.c) */
	struct session_control *control;   /* the control socket and FIFO, when attached */
	char title[512];            /* what is measured, for people */
};

/* Load the host, parse events, prepare the target (a command is forked and
 * held before exec), create and open the sources. Notes about events that
 * cannot be counted go to stderr. 0, or -1 with err set: its kind says
 * whether what was asked means nothing here (MS_ERR_USAGE: a misspelt
 * event, -C with a source that does not count per CPU) or failed. */
int session_open(struct session *s, const struct session_options *opt, struct ms_error *err);
/* Add a sink (before session_run); sinks end in the order they are added.
 * The session owns the sink from here, whether it was added or not: it is
 * closed with the session, or at once when it could not be added (-1 with
 * err). A sink whose init failed holds nothing and is not handed over.
 * follows: another sink of the session (added before or after) whose thread
 * this one shares, running after it on the same frames (stat's columns of
 * metrics a Lua script computes), or NULL for a thread of its own. */
int session_add_sink(struct session *s, struct sink *sink, const struct sink *follows, struct ms_error *err);
/* Open every sink, then sample until the target ends, a signal arrives, a
 * sink asks to stop, or a replayed file ends: each frame's metrics are
 * computed once and the frame goes to every sink's queue (session_run.c).
 * Then the sinks take what is left and end, in the order they were added.
 * -1 with err when a sink could not open, or a broken record ended a
 * replayed recording early (the sinks do not end then: no report of part of
 * a file as if it were all of it). */
int session_run(struct session *s, const struct session_options *opt, struct ms_error *err);
/* From the sampling thread during the run (a watch callback: top's terminal):
 * ev, stamped with the time since the start, to every sink, in order with
 * the frames. -1 when a sink's queue has no room for it now. */
int session_event(struct session *s, const struct sink_event *ev);
/* Why the run ended, for people: "the command exited", "SIGINT", ... */
const char *session_end_reason(const struct session *s);
/* Does one of the session's sources give series per process and per thread
 * (a kind with per_task, such as the eBPF probes when proc.* series were
 * asked for and they started)? */
bool session_per_task(const struct session *s);
/* Is what is measured a command or PIDs (not -a)? A value that counts the
 * whole machine (series_labels.whole_system) then says so. A recording's
 * target is the one it was made with. */
bool session_task_target(const struct session *s);
/* Why the optional source that serves the series name (the eBPF probes for
 * proc.*) did not start, or NULL when it started or was not needed. */
const char *session_name_why(const struct session *s, const char *name);
/* Why a metric asked for is not measured ("METRIC: reason"), or NULL when it
 * is (or was not asked for). */
const char *session_metric_why(const struct session *s, const char *metric);
/* The exit code after a run: the command's status, else 0. */
int session_exit_code(const struct session *s);
/* What commands read of the sampler and the target, so that they do not
 * reach into either: */
/* Why the run ended (after session_run): the target, a signal, a source. */
enum sampler_end session_end(const struct session *s);
/* The series of every frame (after session_open). */
const struct series_table *session_series(const struct session *s);
/* The command given could not be run (exec refused: 127 or 126 in
 * session_exit_code). */
bool session_exec_failed(const struct session *s);
/* How many processes -p named, when the target is those processes; else 0. */
int session_attached_processes(const struct session *s);
/* The command's resource use (perf's seconds user/sys): filled when the
 * command ended, so read after session_run; valid while the session is. */
const struct rusage *session_child_rusage(const struct session *s);
/* A descriptor the run waits on beside its sources (a timer, a terminal):
 * fn is called on the sampling thread when it is ready (sampler_watch_add). */
int session_watch_add(struct session *s, int fd, sampler_ready_fn fn, void *ctx, struct ms_error *err);
void session_close(struct session *s);

#endif
