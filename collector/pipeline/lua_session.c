#include "pipeline/lua_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/event.h"
#include "events/event_names.h"
#include "metrics/metrics.h"
#include "events/bpf_series.h"


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
	if (lua_engine_open(out, &lopt, err) < 0) {
		ms_error_mark(err, MS_ERR_USAGE);
		return -1;
	}
	events = lua_engine_wanted_events(*out);
	/* The scripts' events join the user's (once each); a replay's series
	 * come from its file. */
	if (events[0] && !opt->replay_path && name_list_add_text(&opt->events, events, err) < 0) {
		ms_error_prefix(err, "the events the --lua scripts ask for");
		return -1;
	}
	return 0;
}

/* What a Lua metric computes from must be measured: series go to the events,
 * anything else is taken as a catalog metric. */
static int add_input(struct session_options *opt, const char *input)
{
	bool series = bpf_series_name_known(input) || strpbrk(input, "/:") || generic_event_find(input);

	return name_list_add(series ? &opt->events : &opt->metrics, input);
}

/* -m names that a --lua script defines are computed by the script, not the
 * catalog: take them out of the catalog's list and measure their inputs. */
int lua_cli_take_metrics(struct lua_engine *lua, struct session_options *opt, int **indices, int *nr_indices)
{
	*indices = NULL;
	*nr_indices = 0;
	if (!lua || !opt->metrics.nr)
		return 0;
	if (!(*indices = calloc((size_t)opt->metrics.nr + 1, sizeof(int))))
		return -1;
	for (int i = 0; i < opt->metrics.nr;) {
		int index = lua_engine_find_metric(lua, opt->metrics.names[i]);

		if (index < 0) {
			i++;
			continue;
		}
		(*indices)[(*nr_indices)++] = index;
		name_list_remove(&opt->metrics, opt->metrics.names[i]);
	}
	for (int i = 0; i < (*nr_indices); i++) {
		const char *const *inputs;
		int n = lua_engine_metric_inputs(lua, (*indices)[i], &inputs);

		for (int k = 0; k < n; k++)
			if (lua_engine_find_metric(lua, inputs[k]) < 0 && add_input(opt, inputs[k]) < 0)
				return -1;
	}
	return 0;
}
