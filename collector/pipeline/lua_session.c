#include "pipeline/lua_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/event.h"
#include "events/event_names.h"
#include "metrics/metrics.h"
#include "events/bpf_series.h"

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

int measure_option(struct session_options *opt, struct lua_cli *cli, int c, const char *arg)
{
	int taken = session_option(opt, c, arg);

	return taken ? taken : lua_cli_option(cli, c, arg);
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

/* What a Lua metric computes from must be measured: series go to the events,
 * anything else is taken as a catalog metric. */
static int add_input(struct session_options *opt, const char *input)
{
	char **list;
	const char *sep;
	size_t len;

	if (bpf_series_name_known(input) || strpbrk(input, "/:") || generic_event_find(input))
		list = &opt->events;
	else
		list = &opt->metrics;
	if (*list) {
		char **names;
		int nr;
		bool have = false;

		if (event_list_split(*list, &names, &nr) < 0)
			return -1;
		for (int i = 0; i < nr; i++)
			have |= !strcmp(names[i], input);
		event_names_free(names, nr);
		if (have)
			return 0;
	}
	len = *list ? strlen(*list) : 0;
	sep = len ? "," : "";
	*list = realloc(*list, len + strlen(sep) + strlen(input) + 1);
	if (!*list)
		return -1;
	sprintf(*list + len, "%s%s", sep, input);
	return 0;
}

/* -m names that a --lua script defines are computed by the script, not the
 * catalog: take them out of the catalog's list and measure their inputs. */
int lua_cli_take_metrics(struct lua_engine *lua, struct session_options *opt, int **indices, int *nr_indices)
{
	char **names;
	int nr;
	char *rest = NULL;
	size_t len = 0;

	*indices = NULL;
	*nr_indices = 0;
	if (!lua || !opt->metrics)
		return 0;
	if (event_list_split(opt->metrics, &names, &nr) < 0)
		return -1;
	(*indices) = calloc((size_t)nr + 1, sizeof(int));
	rest = calloc(strlen(opt->metrics) + 1, 1);
	if (!(*indices) || !rest) {
		event_names_free(names, nr);
		free(rest);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		int index = lua_engine_find_metric(lua, names[i]);

		if (index < 0) {
			len += (size_t)sprintf(rest + len, "%s%s", len ? "," : "", names[i]);
			continue;
		}
		(*indices)[(*nr_indices)++] = index;
	}
	event_names_free(names, nr);
	free(opt->metrics);
	opt->metrics = len ? rest : NULL;
	if (!len)
		free(rest);
	for (int i = 0; i < (*nr_indices); i++) {
		const char *const *inputs;
		int n = lua_engine_metric_inputs(lua, (*indices)[i], &inputs);

		for (int k = 0; k < n; k++)
			if (lua_engine_find_metric(lua, inputs[k]) < 0 && add_input(opt, inputs[k]) < 0)
				return -1;
	}
	return 0;
}
