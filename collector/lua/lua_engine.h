/* The Lua engine: user and built-in scripts (lua/) that define derived
 * metrics and print reports from frames, live (stat, top, record) or over a
 * recording (report). The API scripts see is documented in docs/lua-api.md.
 *
 * Scripts are a sink: they run on frames after the sampler produced them,
 * never inside a source. Each script has its own Lua state, sandboxed (no
 * os.execute, io.*, package.loadlib unless `unsafe`), with a memory budget
 * and a CPU time limit per callback. A script that fails (syntax error,
 * runtime error, limit) is reported as "script.lua:LINE: message (frame N)"
 * and disabled; the other scripts and the command go on.
 *
 * Life cycle: lua_engine_open (load scripts, read their metadata: what they
 * need) -> the command opens its sources -> lua_engine_start (bind to the
 * series table, topology and metric engine; on_start) -> lua_engine_frame
 * per frame, lua_engine_label per label -> lua_engine_end (on_end, reports)
 * -> lua_engine_free. */
#ifndef MEMSCOPE_LUA_ENGINE_H
#define MEMSCOPE_LUA_ENGINE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "sampler/frame.h"
#include "host/topology.h"

struct metric_plan;
struct metric_engine;
struct metric_values;
struct resolution;

enum lua_output_format { LUA_OUTPUT_TEXT, LUA_OUTPUT_CSV, LUA_OUTPUT_JSON };

#define LUA_ENGINE_DEFAULT_MEMORY_MB 64
#define LUA_ENGINE_DEFAULT_CPU_MS 2000
#define LUA_ENGINE_DEFAULT_HISTORY 600

struct lua_engine_options {
	const char *const *scripts;   /* "NAME.lua" (built-in), a path, either with ":key=val,key=val" */
	int nr_scripts;
	bool unsafe;                  /* give scripts io, os and package (--lua-unsafe) */
	enum lua_output_format format;
	FILE *out;                    /* reports; NULL: stdout */
	FILE *errors;                 /* script errors; NULL: stderr */
	size_t memory_limit;          /* bytes per script; 0: MEMSCOPE_LUA_MEMORY_MB or 64 MiB */
	unsigned cpu_limit_ms;        /* per callback; 0: MEMSCOPE_LUA_CPU_MS or 2000 ms */
	int history;                  /* frames kept for history windows; 0: 600 */
	const char *command_name;     /* "stat", "report": for messages */
};

/* What the data comes from (lua_engine_start). */
struct lua_engine_inputs {
	const struct series_table *table;
	const struct topology *topo;
	const struct host *host;              /* its sysfs root gives the memory tiers, or NULL */
	const struct metric_plan *plan;       /* catalog metrics, or NULL */
	const struct metric_engine *metrics;  /* reads the values handed with each frame, or NULL */
	const struct resolution *res;         /* why catalog metrics are unavailable, or NULL */
	const char *source;                   /* "live", "recording", "replay" */
	const char *source_name;              /* the recording's path, the target, ... */
	bool task_target;                     /* a command or PIDs: series that count the whole machine say so */
};

struct lua_engine;

/* What memscope.validated(metric [, node]) reads: the store `memscope validate`
 * writes, which the command layer owns (1 with *measured and the date, else
 * 0 or -1 with why). Set once at start; unset, scripts get nil and a reason. */
typedef int (*lua_validation_reader)(const char *metric, int node, double *measured, char *date, size_t date_size,
				     char *why, size_t why_size);
void lua_engine_set_validation_reader(lua_validation_reader reader);

/* Find and load every script (a syntax error or a missing file is an error:
 * nothing has run yet, the user should fix the command line). */
int lua_engine_open(struct lua_engine **out, const struct lua_engine_options *opt, struct ms_error *err);

/* What the loaded scripts ask to be measured (their script.events and
 * script.metrics lists), comma-separated without duplicates, or "" when none.
 * Owned by the engine. */
const char *lua_engine_wanted_events(const struct lua_engine *engine);
const char *lua_engine_wanted_metrics(const struct lua_engine *engine);

/* Bind to the data and call each script's on_start. */
int lua_engine_start(struct lua_engine *engine, const struct lua_engine_inputs *in, struct ms_error *err);
/* values: the frame's catalog metric values (computed by the session), or
 * NULL without metrics; the engine keeps a copy for the scripts. merged:
 * the sampler frames it stands for (more than 1 when the scripts fell
 * behind), frame.merged for them. */
void lua_engine_frame(struct lua_engine *engine, const struct frame *frame, const struct metric_values *values,
		      uint64_t merged);
/* A label (phase NULL) or a phase's begin or end ("begin", "end"): on_label. */
void lua_engine_label(struct lua_engine *engine, double time_s, const char *text, const char *phase);
/* on_sample(sample) of every live script that defines it: one attributed
 * sample of a recording made with --sample (docs/lua-api.md, "Samples"). */
struct attributed_sample;
void lua_engine_sample(struct lua_engine *engine, const struct attributed_sample *s, double time_s);
/* Does a script define on_sample? (Then samples are attributed for it.) */
bool lua_engine_wants_samples(const struct lua_engine *engine);
/* on_end of every live script (their reports), then flush the output. */
void lua_engine_end(struct lua_engine *engine);

/* Scripts loaded, and how many were disabled by an error. */
int lua_engine_nr_scripts(const struct lua_engine *engine);
int lua_engine_nr_failed(const struct lua_engine *engine);
/* Script index's file name, as reports name it ("remote_ratio.lua"). */
const char *lua_engine_script_label(const struct lua_engine *engine, int index);

/* Metrics the scripts define with memscope.metric{} (first-class: a command
 * may show them like catalog metrics). Values are per scope: node -1 is the
 * whole system; valid after lua_engine_frame. */
int lua_engine_nr_metrics(const struct lua_engine *engine);
const char *lua_engine_metric_name(const struct lua_engine *engine, int index);
const char *lua_engine_metric_unit(const struct lua_engine *engine, int index);
int lua_engine_find_metric(const struct lua_engine *engine, const char *name);
/* The names a metric computes from (series or metrics); returns how many. */
int lua_engine_metric_inputs(const struct lua_engine *engine, int index, const char *const **inputs);
bool lua_engine_metric_value(const struct lua_engine *engine, int index, int node, double *value);
/* Its description (memscope.metric{description=}), or "". */
const char *lua_engine_metric_description(const struct lua_engine *engine, int index);
/* Why lua_engine_metric_value() has no value for this scope in the current
 * frame: the script failed, no input had a value (which, and why), or
 * compute() returned no number. */
void lua_engine_metric_why(struct lua_engine *engine, int index, int node, char *buf, size_t size);

void lua_engine_free(struct lua_engine *engine);

/* The directories a bare --lua NAME is looked for in, in order
 * ($MEMSCOPE_LUA_DIR, the user's, the built-in ones); returns how many. */
int lua_script_dirs(char (*dirs)[PATH_MAX], int max);
/* The .lua files of dir, sorted (*names and each name: caller frees). */
int lua_script_names(const char *dir, char ***names);

/* Resolve a script name as --lua does (a path names that file; a bare NAME
 * is looked for in lua_script_dirs()) and open it for reading as
 * trusted_open() does: as root, a script another user could change is
 * refused. The path into path; a descriptor the caller closes, or -1. */
int lua_script_open(const char *name, char *path, size_t size, struct ms_error *err);

/* "--lua-format" etc. parsing for commands: "text", "csv", "json". */
int lua_output_format_parse(const char *text, enum lua_output_format *format);

#endif
