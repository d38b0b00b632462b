#include "cli/measure_options.h"
#include "util/report.h"

#include <stdio.h>

const struct cli_option measure_count_options[] = {
	{ 'e', "events", "LIST", "events to count: perf's names (page-faults), pmu/alias/,\n"
	  "pmu/field=val,.../, subsys:tracepoint, pmu::EVENT:UMASK (libpfm4),\n"
	  "proc.* (eBPF); memscope list --events. Without -m, by default:\n" SESSION_DEFAULT_EVENTS, CLI_COMPLETE_EVENTS, NULL, 0 },
	{ 'm', "metrics", "LIST", "portable metrics and metric groups (memscope list --metrics), e.g.\n"
	  "mem.read_bw,numa.hit or TopdownL1", CLI_COMPLETE_METRICS, NULL, 0 },
	{ 0 },
};

const struct cli_option measure_damon_options[] = {
	{ SESSION_OPT_DAMON_HOT, "damon-hot", "PCT", "damon.hot_bytes: regions accessed in at least PCT% of\n"
	  "the kdamond's samples of an aggregation (default 50)", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_DAMON_COLD_AGE, "damon-cold-age", "SECONDS", "damon.cold_bytes: regions not accessed for at\n"
	  "least SECONDS (default 60)", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_DAMON_MODE, "damon", "MODE", "damon.*: active (memscope's own kdamond, root), passive\n"
	  "(read the running kdamond) or auto (default: active unless one runs)", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

const struct cli_option measure_lua_options[] = {
	{ LUA_CLI_OPT_LUA, "lua", "SCRIPT", "run a Lua script on the frames: a built-in name (faults.lua,\n"
	  "remote_ratio.lua, ...) or a path, with :KEY=VAL,... arguments; repeatable", CLI_COMPLETE_SCRIPT, NULL, 0 },
	{ LUA_CLI_OPT_UNSAFE, "lua-unsafe", NULL, "give scripts io, os and package (sandboxed otherwise)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

const struct cli_option measure_target_options[] = {
	{ 'a', "all-cpus", NULL, "the whole system, one counter per CPU (with CMD: while it runs)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ 'p', "pid", "PIDS", "attach to running processes (all their threads), comma-separated",
	  CLI_COMPLETE_PID, NULL, 0 },
	{ 0 },
};

const struct cli_option measure_file_options[] = {
	{ SESSION_OPT_REPLAY, "replay", "FILE", "counter values from FILE instead of this machine\n"
	  "(docs/replay-format.md)", CLI_COMPLETE_FILE, NULL, 0 },
	{ SESSION_OPT_INPUT, "input", "FILE", "the frames of a recording (memscope record) instead of this machine",
	  CLI_COMPLETE_FILE, NULL, 0 },
	{ 0 },
};

const struct cli_option measure_interval_options[] = {
	{ 'I', "interval", "MS", "a frame every MS milliseconds (at least 1)", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

const struct cli_option measure_row_options[] = {
	{ SESSION_OPT_PER_CPU, "per-cpu", NULL, "one row per CPU", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_SOCKET, "per-socket", NULL, "one row per socket", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_CORE, "per-core", NULL, "one row per core (perf's S0-D0-C0: socket, die, core)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_DIE, "per-die", NULL, "one row per die (perf's S0-D0)", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_NODE, "per-node", NULL, "one row per NUMA node", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_CHANNEL, "per-channel", NULL,
	  "-m metrics per memory channel (PMUs the catalog scopes per channel)", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_TIER, "per-tier", NULL,
	  "-m metrics per memory tier (the sum of its nodes: memory_tiering/memory_tierN)", CLI_COMPLETE_NONE, NULL, 0 },
	{ SESSION_OPT_PER_INSTANCE, "per-instance", NULL,
	  "-m metrics per memory channel and per instance of a plugin's series", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

struct cli_option measure_sink_options[SINK_REGISTRY_MAX + 1];

void measure_options_init(void)
{
	for (int k = 0; sink_registry[k]; k++) {
		const struct sink_kind_option *o = &sink_registry[k]->option;

		measure_sink_options[k] = (struct cli_option){ MEASURE_SINK_KEY + k, o->name, o->arg, o->help,
							       o->file ? CLI_COMPLETE_FILE : CLI_COMPLETE_NONE, NULL, 0 };
	}
}

int measure_sink_option(struct measure_sinks *chosen, const char *command_name, int key, const char *arg)
{
	int k = key - MEASURE_SINK_KEY;

	if (k < 0 || k >= SINK_REGISTRY_MAX || !measure_sink_options[k].key)
		return OPTION_NOT_MINE;
	if (chosen->arg[k]) {
		ms_warn("--%s is given once", measure_sink_options[k].name);
		return -1;
	}
	if (!arg[0]) {
		ms_warn("--%s needs %s", measure_sink_options[k].name,
			measure_sink_options[k].complete == CLI_COMPLETE_FILE ? "a file name" : "a value");
		return -1;
	}
	chosen->arg[k] = arg;
	return 0;
}

static bool is_row_option(int key)
{
	for (const struct cli_option *o = measure_row_options; o->key; o++)
		if (o->key == key)
			return true;
	return false;
}

int measure_cli_option(struct session_options *opt, struct lua_cli *lua, int key, const char *arg)
{
	enum aggr_mode before = opt->aggr;

	if (is_row_option(key) && before != AGGR_TOTAL) {
		enum aggr_mode was = before;

		if (session_option(opt, key, arg) < 0)
			return -1;
		if (opt->aggr != was) {
			ms_warn("--per-%s and --per-%s: one kind of row at a time; choose one", aggr_mode_name(was), aggr_mode_name(opt->aggr));
			return -1;
		}
		return 0;
	}
	return measure_option(opt, lua, key, arg);
}
