/* --lua for the measuring commands (stat, top, record): what the shared
 * options ask for, and the steps that tie a Lua engine to a session, so each command adds a
 * few lines rather than its own copy:
 *
 *   parse:  cli/measure_options.c fills a struct lua_cli from --lua
 *   after session_options_finish:  lua_cli_open(&cli, &opt, format, &lua, &err)
 *   after session_open:            a Lua sink (sinks/lua_sink.h) added to the session
 *   after the run:                 lua_engine_free(lua)
 */
#ifndef MEMSCOPE_LUA_SESSION_H
#define MEMSCOPE_LUA_SESSION_H

#include <stdbool.h>
#include <stdio.h>

#include "util/error.h"
#include "lua/lua_engine.h"
#include "pipeline/session.h"

#define LUA_CLI_MAX_SCRIPTS 32
struct lua_cli {
	const char *scripts[LUA_CLI_MAX_SCRIPTS];
	int nr_scripts;
	bool unsafe;
	FILE *out;              /* the scripts' reports; NULL: stdout */
};

/* Load the scripts (none: *out = NULL, returns 0) and add the events they
 * ask for to opt (not with --replay, whose series come from the file).
 * 0, or -1 with err (MS_ERR_USAGE: a script cannot be found or loaded). */
int lua_cli_open(const struct lua_cli *cli, struct session_options *opt, enum lua_output_format format,
		 struct lua_engine **out, struct ms_error *err);
/* -m names that the scripts define (memscope.metric{}) are computed by the
 * scripts, not the catalog: take them out of opt->metrics, add what they
 * compute from (series to the events, other names to the catalog metrics),
 * and give their engine indices (*indices: caller frees). */
int lua_cli_take_metrics(struct lua_engine *lua, struct session_options *opt, int **indices, int *nr_indices);

#endif
