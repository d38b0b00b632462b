/* The option tables the measuring commands (stat, record, top) share, and
 * the parser step that hands their values to the session and the Lua
 * engine. Each command puts the groups it takes in its own table. */
#ifndef MEMSCOPE_MEASURE_OPTIONS_H
#define MEMSCOPE_MEASURE_OPTIONS_H

#include "cli/measure_run.h"
#include "cli/options.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"

/* Keys of the shared options without a short letter; below cli/ their
 * values are session_options' and lua_cli's fields. */
enum {
	SESSION_OPT_PER_CPU = 0x1000,
	SESSION_OPT_PER_SOCKET,
	SESSION_OPT_PER_NODE,
	SESSION_OPT_PER_CHANNEL,
	SESSION_OPT_PER_INSTANCE,
	SESSION_OPT_PER_CORE,
	SESSION_OPT_PER_DIE,
	SESSION_OPT_PER_TIER,
	SESSION_OPT_REPLAY,
	SESSION_OPT_INPUT,
	SESSION_OPT_DAMON_HOT,
	SESSION_OPT_DAMON_COLD_AGE,
	SESSION_OPT_DAMON_MODE,
};
enum { LUA_CLI_OPT_LUA = 0x4000, LUA_CLI_OPT_UNSAFE };

extern const struct cli_option measure_count_options[];   /* -e, -m */
extern const struct cli_option measure_damon_options[];    /* --damon-hot, --damon-cold-age */
extern const struct cli_option measure_lua_options[];     /* --lua, --lua-unsafe */
extern const struct cli_option measure_target_options[];  /* -a, -p */
extern const struct cli_option measure_file_options[];    /* --replay, --input */
extern const struct cli_option measure_interval_options[]; /* -I */
extern const struct cli_option measure_row_options[];     /* --per-cpu ... --per-instance */

/* The sink registry's options (--influx FILE), a row per kind
 * (sinks/sink_registry.h); measure_options_init() makes them, before any
 * command table is read. Their keys start at MEASURE_SINK_KEY. */
#define MEASURE_SINK_KEY 0x2000
extern struct cli_option measure_sink_options[];
void measure_options_init(void);
/* One of the registry's options (its argument kept in chosen): an
 * option_answer (cli/options.h); given twice is OPTION_BAD. */
int measure_sink_option(struct measure_sinks *chosen, const char *command_name, int key, const char *arg);

/* One option of the session's (-e, -m, -I, -a, -p, --replay, --input,
 * --per-*, --damon-*) into opt's fields: an option_answer (cli/options.h). */
int session_option(struct session_options *opt, int c, const char *arg);
/* --lua, --lua-unsafe into cli's fields: an option_answer. */
int lua_cli_option(struct lua_cli *cli, int c, const char *arg);
/* The options stat and record share: session's, then --lua; an option_answer. */
int measure_option(struct session_options *opt, struct lua_cli *cli, int c, const char *arg);

/* One option of those tables: an option_answer, as session_option's. Two
 * different --per-* options are refused. */
int measure_cli_option(struct session_options *opt, struct lua_cli *lua, int key, const char *arg);

#endif
