/* memscope report: Lua reports over a recording (default: memscope.rec in
 * the current directory, as perf report reads perf.data), or over a replay
 * file of counter values on a machine described by MEMSCOPE_SYSFS_ROOT, with
 * the catalog's metrics computed as they would be live. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "host/host.h"
#include "lua/lua_engine.h"
#include "pipeline/lua_session.h"
#include "metrics/metrics.h"
#include "recording/recording.h"
#include "catalog/resolver.h"
#include "pipeline/session.h"
#include "pipeline/session_recording.h"
#include "sinks/lua_sink.h"

enum { OPT_FORMAT = 0x3000, OPT_REPLAY };

struct report_options {
	struct lua_cli lua;        /* --lua, --lua-unsafe: as stat takes them */
	enum lua_output_format format;
	const char *replay;        /* counter values for a (fixture) machine, instead of a recording */
	char *metrics;             /* -m: catalog metrics to compute */
	const char *file;
};

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope report [--lua SCRIPT[:KEY=VAL,...]]... [--format text|csv|json] [FILE]\n"
		"       memscope report --replay COUNTS.jsonl [-m METRICS] --lua SCRIPT...\n\n"
		"  FILE                 a recording (default: " RECORDING_DEFAULT_FILE ")\n"
		"  --lua SCRIPT         run a report script: a built-in name (faults.lua, remote_ratio.lua,\n"
		"                       bandwidth.lua, topdown.lua, numa_balance.lua, bench.lua) or a path; repeatable.\n"
		"                       Without --lua: summary.lua (every series over the run)\n"
		"  --format FMT         text (default), csv or json\n"
		"  --lua-unsafe         give scripts io, os and package (off: sandboxed)\n"
		"  --replay FILE        counter values per interval (docs/replay-format.md) on the machine\n"
		"                       MEMSCOPE_SYSFS_ROOT describes; catalog metrics are computed from them\n"
		"  -m, --metrics LIST   catalog metrics to compute (a recording: from its raw series, on the\n"
		"                       recorded machine; default: the ones it was recorded with; --replay:\n"
		"                       scripts add the ones they use that the machine has)\n");
}

static int append_list(char **list, const char *more)
{
	size_t old = *list ? strlen(*list) : 0;
	char *grown;

	if (!more[0])
		return 0;
	if (!(grown = realloc(*list, old + strlen(more) + 2)))
		return -1;
	if (old)
		grown[old++] = ',';
	strcpy(grown + old, more);
	*list = grown;
	return 0;
}

static int append_unique(char **list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = *list; p && (p = strstr(p, name)); p += len)
		if ((p == *list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 0;
	return append_list(list, name);
}

static int parse_options(int argc, char **argv, struct report_options *o)
{
	static const struct option longopts[] = {
		LUA_CLI_LONG_OPTIONS,
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "metrics", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, taken;

	optind = 1;
	while ((c = getopt_long(argc, argv, "m:h", longopts, NULL)) != -1) {
		taken = lua_cli_option(&o->lua, c, optarg);
		if (taken < 0)
			return -1;
		if (taken)
			continue;
		switch (c) {
		case OPT_FORMAT:
			if (lua_output_format_parse(optarg, &o->format) < 0) {
				fprintf(stderr, "memscope report: --format %s: expected text, csv or json\n", optarg);
				return -1;
			}
			break;
		case OPT_REPLAY:
			o->replay = optarg;
			break;
		case 'm':
			if (append_list(&o->metrics, optarg) < 0)
				return -1;
			break;
		case 'h':
			report_usage(stdout);
			exit(0);
		default:
			report_usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		o->file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "memscope report: one recording at a time ('%s' is one too many)\n", argv[optind]);
		return -1;
	}
	if (o->replay && o->file) {
		fprintf(stderr, "memscope report: --replay and a recording exclude each other; give one\n");
		return -1;
	}
	if (!o->lua.nr_scripts)
		o->lua.scripts[o->lua.nr_scripts++] = "summary.lua";
	if (!o->file)
		o->file = RECORDING_DEFAULT_FILE;
	return 0;
}

/* -m plus the metrics the scripts ask for that the replayed machine has
 * (the others are for the scripts to explain, through memscope.why). */
static int replay_metrics(const struct report_options *o, const struct lua_engine *lua, char **out,
			  struct ms_error *err)
{
	struct host host;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	char *copy = NULL, *save = NULL;
	int status = -1;

	*out = NULL;
	if (o->metrics && append_list(out, o->metrics) < 0)
		goto oom;
	if (host_load(&host, err) < 0)
		return -1;
	if (catalog_load_default(&cat, err) < 0 || resolve(&host, cat, &res, err) < 0)
		goto out;
	if (!(copy = strdup(lua_engine_wanted_metrics(lua))))
		goto oom;
	for (char *m = strtok_r(copy, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		int i = catalog_metric_index(cat, m);

		if (i >= 0 && res->metrics[i].available && append_unique(out, m) < 0)
			goto oom;
	}
	status = 0;
	goto out;
oom:
	ms_error_set(err, "out of memory");
out:
	free(copy);
	resolution_free(res);
	catalog_free(cat);
	host_free(&host);
	return status;
}

static int open_session(const struct report_options *o, struct lua_engine *lua, struct session *s,
			struct session_options *opt, struct ms_error *err)
{
	char *metrics = NULL;
	int status;

	if (!o->replay) {
		if (o->metrics)
			opt->metrics = strdup(o->metrics);
		return session_open_recording(s, opt, o->file, err);
	}
	if (replay_metrics(o, lua, &metrics, err) < 0)
		return 1;
	if (!metrics || !metrics[0]) {
		free(metrics);
		ms_error_set(err, "--replay: no metric to compute: the scripts ask for none this machine has, and "
			     "no -m was given (e.g. -m mem.read_bw)");
		return EXIT_USAGE;
	}
	opt->metrics = metrics;
	opt->replay_path = o->replay;
	status = session_open(s, opt, err);
	return status;
}

/* The frames (and labels) of the recording or replay go to one sink: the
 * scripts. A file's frames are never merged: the reader waits for them. */
static int report(const struct report_options *o, struct lua_engine *lua, struct ms_error *err)
{
	struct session_options opt;
	struct session session;
	struct sink lua_sink = { 0 };
	int status;

	memset(&session, 0, sizeof(session));
	session_options_init(&opt, "report");
	status = open_session(o, lua, &session, &opt, err);
	if (status)
		goto out;
	status = 1;
	if (lua_sink_init(&lua_sink, lua, err) < 0 || session_add_sink(&session, &lua_sink, NULL, err) < 0 ||
	    session_run(&session, &opt, err) < 0)
		goto out;
	status = 0;
out:
	session_close(&session);
	if (lua_sink.ops && lua_sink.priv)
		lua_sink.ops->close(&lua_sink);
	session_options_free(&opt);
	return status;
}

int cmd_report(int argc, char **argv)
{
	struct report_options o = { .format = LUA_OUTPUT_TEXT };
	struct lua_engine_options lopt = { 0 };
	struct lua_engine *lua = NULL;
	struct ms_error err = { "" };
	int status;

	if (parse_options(argc, argv, &o) < 0) {
		free(o.metrics);
		return EXIT_USAGE;
	}
	lopt.scripts = o.lua.scripts;
	lopt.nr_scripts = o.lua.nr_scripts;
	lopt.unsafe = o.lua.unsafe;
	lopt.format = o.format;
	lopt.command_name = "report";
	if (lua_engine_open(&lua, &lopt, &err) < 0) {
		fprintf(stderr, "memscope report: %s\n", err.text);
		free(o.metrics);
		return EXIT_USAGE;
	}
	status = report(&o, lua, &err);
	if (status)
		fprintf(stderr, "memscope report: %s\n", err.text);
	else if (lua_engine_nr_failed(lua))
		status = 1;    /* the reports that ran are printed; the failures are listed above */
	lua_engine_free(lua);
	free(o.metrics);
	return status;
}
