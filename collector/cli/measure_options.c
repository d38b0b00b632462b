#include "cli/measure_options.h"
#include "util/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --damon-hot 1..100 (percent of samples), --damon-cold-age 1..86400 (seconds). */
static int parse_damon_threshold(struct session_options *opt, int c, const char *text)
{
	bool hot = c == SESSION_OPT_DAMON_HOT;
	long max = hot ? 100 : 86400;
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > max) {
		ms_warn("--damon-%s %s: expected %s from 1 to %ld",
			hot ? "hot" : "cold-age", text, hot ? "a percentage of a region's samples" : "seconds", max);
		return -1;
	}
	if (hot)
		opt->damon_hot_pct = (unsigned)v;
	else
		opt->damon_cold_age_us = (uint64_t)v * 1000000u;
	return 0;
}

/* --damon auto|active|passive */
static int parse_damon_mode(struct session_options *opt, const char *text)
{
	static const char *const names[] = { "auto", "active", "passive" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(text, names[i])) {
			opt->damon_mode = i;
			return 0;
		}
	ms_warn("--damon %s: expected auto (memscope's own kdamond unless one runs), active "
		"(its own) or passive (read the running one)", text);
	return -1;
}

static int parse_interval(const struct session_options *opt, const char *text, long *ms)
{
	char *end;

	errno = 0;
	*ms = strtol(text, &end, 10);
	if (errno || end == text || *end) {
		ms_warn("-I %s: not a number of milliseconds (e.g. -I 500)", text);
		return -1;
	}
	if (*ms < SESSION_MIN_INTERVAL_MS || *ms > SESSION_MAX_INTERVAL_MS) {
		ms_warn("-I %s: the interval must be between %d ms and %ld ms "
			"(shorter intervals cost more than they measure)", text,
			SESSION_MIN_INTERVAL_MS, SESSION_MAX_INTERVAL_MS);
		return -1;
	}
	return 0;
}

/* perf's event groups, -e '{a,b}:u': the members, each with the group's
 * modifiers in braces ("a{u},b{u}": event_parse counts them as a:u but names
 * the event "a", as perf names a group's members); memscope groups the events
 * of one PMU itself. A new string, or NULL (out of memory, or a brace not
 * closed: said in err). */
static char *expand_event_groups(const char *text, struct ms_error *err)
{
	/* Each member may take the modifiers: room for all of them on each. */
	size_t cap = strlen(text) * (strlen(text) + 2) + 1, len = 0;
	char *out = malloc(cap);

	if (!out) {
		ms_error_set(err, "out of memory");
		return NULL;
	}
	while (*text) {
		const char *close, *mods, *end;

		if (*text != '{') {
			out[len++] = *text++;
			continue;
		}
		close = strchr(text, '}');
		if (!close) {
			free(out);
			ms_error_set(err, "'{' opens an event group that no '}' closes");
			return NULL;
		}
		mods = close + 1;   /* ":u..." applies to each member */
		end = mods + strcspn(mods, ",");
		for (const char *m = text + 1; m < close;) {
			size_t n = strcspn(m, ",}");

			if (len + n + (size_t)(end - mods) + 4 >= cap)
				break;
			memcpy(out + len, m, n);
			len += n;
			if (end - mods > 1 && *mods == ':') {
				out[len++] = '{';
				memcpy(out + len, mods + 1, (size_t)(end - mods - 1));
				len += (size_t)(end - mods - 1);
				out[len++] = '}';
			} else {   /* not modifiers: left for event_parse to name */
				memcpy(out + len, mods, (size_t)(end - mods));
				len += (size_t)(end - mods);
			}
			m += n;
			if (*m == ',') {
				out[len++] = ',';
				m++;
			}
		}
		text = end;
	}
	out[len] = '\0';
	return out;
}

int session_option(struct session_options *opt, int c, const char *arg)
{
	switch (c) {
	case 'e':
	case 'm': {
		struct ms_error err;
		char *expanded = c == 'e' && strchr(arg, '{') ? expand_event_groups(arg, &err) : NULL;
		int ret;

		if (c == 'e' && strchr(arg, '{') && !expanded) {
			ms_warn("-e '%s': %s", arg, err.text);
			return OPTION_BAD;
		}
		/* Split here, once: everything after works on the names. */
		ret = name_list_add_text(c == 'e' ? &opt->events : &opt->metrics, expanded ? expanded : arg, &err);
		free(expanded);
		if (ret < 0) {
			ms_warn("-%c '%s': %s (e.g. -%c %s)", c, arg, err.text, c,
				c == 'e' ? "page-faults,context-switches" : "mem.read_bw,numa.hit");
			return OPTION_BAD;
		}
		return OPTION_TAKEN;
	}
	case 'I':
		return parse_interval(opt, arg, &opt->interval_ms) < 0 ? OPTION_BAD : OPTION_TAKEN;
	case 'a': opt->system_wide = true; return OPTION_TAKEN;
	case 'p': opt->pids = arg; return OPTION_TAKEN;
	case SESSION_OPT_REPLAY: opt->replay_path = arg; return OPTION_TAKEN;
	case SESSION_OPT_INPUT: opt->input_path = arg; return OPTION_TAKEN;
	case SESSION_OPT_PER_CPU: opt->aggr = AGGR_CPU; return OPTION_TAKEN;
	case SESSION_OPT_PER_SOCKET: opt->aggr = AGGR_SOCKET; return OPTION_TAKEN;
	case SESSION_OPT_PER_NODE: opt->aggr = AGGR_NODE; return OPTION_TAKEN;
	case SESSION_OPT_PER_CHANNEL: opt->aggr = AGGR_CHANNEL; return OPTION_TAKEN;
	case SESSION_OPT_PER_INSTANCE: opt->aggr = AGGR_INSTANCE; return OPTION_TAKEN;
	case SESSION_OPT_PER_CORE: opt->aggr = AGGR_CORE; return OPTION_TAKEN;
	case SESSION_OPT_PER_DIE: opt->aggr = AGGR_DIE; return OPTION_TAKEN;
	case SESSION_OPT_DAMON_HOT:
	case SESSION_OPT_DAMON_COLD_AGE:
		return parse_damon_threshold(opt, c, arg) < 0 ? OPTION_BAD : OPTION_TAKEN;
	case SESSION_OPT_DAMON_MODE:
		return parse_damon_mode(opt, arg) < 0 ? OPTION_BAD : OPTION_TAKEN;
	case SESSION_OPT_PER_TIER: opt->aggr = AGGR_TIER; return OPTION_TAKEN;
	default: return OPTION_NOT_MINE;
	}
}

int lua_cli_option(struct lua_cli *cli, int c, const char *arg)
{
	switch (c) {
	case LUA_CLI_OPT_LUA:
		if (cli->nr_scripts == LUA_CLI_MAX_SCRIPTS) {
			ms_warn("at most %d --lua scripts", LUA_CLI_MAX_SCRIPTS);
			return OPTION_BAD;
		}
		cli->scripts[cli->nr_scripts++] = arg;
		return OPTION_TAKEN;
	case LUA_CLI_OPT_UNSAFE:
		cli->unsafe = true;
		return OPTION_TAKEN;
	default:
		return OPTION_NOT_MINE;
	}
}

int measure_option(struct session_options *opt, struct lua_cli *cli, int c, const char *arg)
{
	int taken = session_option(opt, c, arg);

	return taken != OPTION_NOT_MINE ? taken : lua_cli_option(cli, c, arg);
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
