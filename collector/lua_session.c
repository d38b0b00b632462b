#include "lua_session.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "metrics.h"

const char lua_cli_help[] =
	"      --lua SCRIPT[:KEY=VAL,...]  run a Lua script on the frames (built-in name or path;\n"
	"                      repeatable): faults.lua, remote_ratio.lua, bandwidth.lua, topdown.lua,\n"
	"                      numa_balance.lua\n"
	"      --lua-unsafe    give scripts io, os and package (sandboxed otherwise)\n";

int lua_cli_option(struct lua_cli *cli, int c, const char *arg)
{
	switch (c) {
	case LUA_CLI_OPT_LUA:
		if (cli->nr_scripts == LUA_CLI_MAX_SCRIPTS) {
			fprintf(stderr, "memscope: at most %d --lua scripts\n", LUA_CLI_MAX_SCRIPTS);
			return -1;
		}
		cli->scripts[cli->nr_scripts++] = arg;
		return 1;
	case LUA_CLI_OPT_UNSAFE:
		cli->unsafe = true;
		return 1;
	default:
		return 0;
	}
}

static bool in_list(const char *list, const char *name, size_t len)
{
	for (const char *p = list; p && (p = strstr(p, name)); p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

static int add_missing_events(struct session_options *opt, const char *events)
{
	char name[256];

	for (const char *p = events; *p;) {
		size_t len = strcspn(p, ",");

		if (len && len < sizeof(name)) {
			memcpy(name, p, len);
			name[len] = '\0';
			if (!in_list(opt->events, name, len) && session_option(opt, 'e', name) < 0)
				return -1;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

int lua_cli_open(const struct lua_cli *cli, struct session_options *opt, enum lua_output_format format,
		 struct lua_engine **out, struct ms_error *err)
{
	struct lua_engine_options lopt = {
		.scripts = cli->scripts,
		.nr_scripts = cli->nr_scripts,
		.unsafe = cli->unsafe,
		.format = format,
		.command_name = opt->command_name,
		.out = cli->out,
	};
	const char *events;

	*out = NULL;
	if (!cli->nr_scripts)
		return 0;
	if (lua_engine_open(out, &lopt, err) < 0)
		return EXIT_USAGE;
	events = lua_engine_wanted_events(*out);
	/* The scripts' events join the user's (once each); a replay's series
	 * come from its file. */
	if (events[0] && !opt->replay_path && add_missing_events(opt, events) < 0) {
		ms_error_set(err, "out of memory");
		return 1;
	}
	return 0;
}

int lua_cli_start(struct lua_engine *lua, const struct session *s, const struct session_options *opt,
		  const char *title, struct ms_error *err)
{
	struct lua_engine_inputs in = {
		.table = &s->sampler.table,
		.topo = &s->host.topo,
		.plan = s->plan,
		.metrics = s->engine,
		.res = s->resolution,
		.source = opt->replay_path ? "replay" : "live",
		.source_name = opt->replay_path ? opt->replay_path : title,
	};

	if (!lua)
		return 0;
	return lua_engine_start(lua, &in, err);
}

void lua_cli_frame(struct lua_engine *lua, const struct session *s, const struct frame *frame)
{
	if (!lua)
		return;
	if (s->engine)
		metric_engine_compute(s->engine, frame);
	lua_engine_frame(lua, frame);
}
