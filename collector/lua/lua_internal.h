/* Inside the Lua engine: the state per script, the engine, and the entry
 * points its parts (lua_engine.c, lua_api.c, lua_format.c, lua_metrics.c)
 * give each other. Not for use outside the engine: commands use
 * lua_engine.h. */
#ifndef MEMSCOPE_LUA_INTERNAL_H
#define MEMSCOPE_LUA_INTERNAL_H

#include <limits.h>
#include <lua.h>
#include <stdint.h>

#include "lua/lua_data.h"
#include "lua/lua_engine.h"

struct lua_script {
	struct lua_engine *engine;
	int index;
	char name[128];            /* as scripts and errors show it: "faults.lua" or the path given */
	const char *label;         /* the file name in name: how CSV and JSON records name the script */
	char path[PATH_MAX];
	char *args;                /* "key=val,key=val" from the command line, or NULL */
	lua_State *L;
	lua_State *runner;         /* a thread for callbacks: its stack survives an error */
	/* Limits. */
	size_t mem_used, mem_limit;
	size_t json_bytes;         /* jansson's memory made in this callback (memscope.json, emit), still held */
	bool mem_exceeded;
	uint64_t deadline_ns;       /* thread CPU time; 0 outside a callback */
	uint64_t started_ns;        /* the callback's start, monotonic */
	bool timed_out;
	bool failed;
	bool in_callback;          /* inside lua_script_run: budget and deadline apply */
	const char *phase;         /* "on_frame", ... for errors */
	uint64_t calls, busy_ns;   /* callbacks run and time spent in them (MEMSCOPE_LUA_STATS) */
};

struct lua_metric {
	char *name;
	char unit[32];
	char *description;
	int script;
	int compute_ref;           /* registry ref in the script's state */
	char **inputs;
	int nr_inputs;
	double *values;            /* 1 + nr_nodes: system, then topology node order */
	bool *valid;
	bool failed;
};

struct lua_engine {
	struct lua_engine_options opt;
	FILE *out, *errors;
	struct lua_script *scripts;
	int nr_scripts;
	int nr_failed;
	char *wanted_events, *wanted_metrics;
	/* Bound at start. */
	bool started;
	struct lua_engine_inputs in;
	struct metric_values *values; /* the current frame's catalog metric values (a copy), when in.metrics */
	uint64_t merged;              /* sampler frames the current one stands for */
	struct lua_data data;
	bool data_ready;
	struct lua_metric *metrics;
	int nr_metrics, cap_metrics;
	/* Output state: CSV header per table is printed by emit. */
	int tables_emitted;
	bool wants_samples;        /* a script defines on_sample */
};

/* lua_engine.c: run body(L) with ud as its one argument (a light userdata)
 * as the script's own code: on its runner thread, inside a protected call,
 * under its count hook, deadline and memory budget. Every touch of a
 * script's state that can reach its code (a global lookup, a field read or
 * write, a call, loading) goes through here; on an error or a limit the
 * script is reported with script:line and disabled. 0, or -1 when it
 * failed (or had failed before). */
int lua_script_run(struct lua_script *s, const char *phase, lua_CFunction body, void *ud);
/* Has the running callback used up its CPU time? For C code that loops
 * where the count hook cannot see it (a JSON conversion, the bounded
 * built-ins): it then calls lua_script_cpu_error. */
bool lua_script_over_cpu(struct lua_script *s);
/* Raise the CPU limit error (the hook's: script:line, the limit, how to
 * allow more); from then on the hook strikes at every instruction. */
int lua_script_cpu_error(lua_State *L);
/* Report a script's error (with frame number) and disable it. */
void lua_script_fail(struct lua_script *s, const char *where_msg);
/* seq, time and interval of the current frame into the table at the top
 * (on_frame's argument and memscope.frame() both carry them). */
void lua_frame_fields(lua_State *L, const struct lua_engine *e);
uint64_t lua_now_ns(void);

/* lua_builtins.c: the standard library's functions whose C loops the count
 * hook cannot stop (table.move, table.concat, table.insert/remove/sort,
 * string.find/match/gmatch/gsub), replaced in the state by versions that
 * check the clock or the budget (docs/lua-api.md, "Sandbox and limits"). */
void lua_builtins_bound(lua_State *L);
/* lua_pattern.c: string.find, match, gmatch and gsub by a matcher that
 * keeps the CPU limit (called by lua_builtins_bound). */
void lua_pattern_bound(lua_State *L);

/* lua_api.c: the `memscope` table. */
void lua_api_open(lua_State *L, struct lua_script *s);
/* Labels table at index idx (or none) -> filter. A key that is not a label is an error. */
void lua_api_filter(lua_State *L, int idx, struct label_filter *f);
/* Value of series / catalog metric / Lua metric by name for the current
 * frame; false with *why when there is none. */
bool lua_api_value(struct lua_engine *e, const char *name, const struct label_filter *f, double *value,
		   const char **why);

/* lua_format.c: output helpers. */
void lua_format_open(lua_State *L);
/* memscope.emit / print: a table or a note to the report, in the chosen format. */
int lua_format_emit(lua_State *L);
int lua_format_print(lua_State *L);

/* lua_metrics.c. */
int lua_metrics_define(lua_State *L);
void lua_metrics_compute(struct lua_engine *e);
void lua_metrics_free(struct lua_engine *e);

static inline struct lua_script *lua_script_of(lua_State *L)
{
	void *ud;

	lua_getallocf(L, &ud);
	return ud;
}

#endif
