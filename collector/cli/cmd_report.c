/* memscope report: Lua reports over a recording (default: memscope.rec in
 * the current directory, as perf report reads perf.data), or over a replay
 * file of counter values on a machine described by MEMSCOPE_SYSFS_ROOT, with
 * the catalog's metrics computed as they would be live. A recording made
 * with --sample also has its samples attributed: --sort (code, data object,
 * nodes), --c2c (contended cache lines), --samples (each sample). --regions
 * totals every counter and metric per marked phase (LIKWID's marker API). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/measure_options.h"
#include "cli/measure_run.h"
#include "host/host.h"
#include "lua/lua_engine.h"
#include "pipeline/lua_session.h"
#include "recording/damon_heatmap.h"
#include "metrics/metrics.h"
#include "recording/recording.h"
#include "catalog/resolver.h"
#include "pipeline/session.h"
#include "pipeline/session_recording.h"
#include "sinks/lua_sink.h"
#include "sinks/region_sink.h"
#include "sinks/sample_sink.h"
#include "util/report.h"

enum { OPT_FORMAT = CLI_LONG_ONLY, OPT_REPLAY, OPT_SORT, OPT_C2C, OPT_SAMPLES, OPT_TOP, OPT_REGIONS, OPT_HEATMAP, OPT_PLOT, OPT_NODE };

/* perf report sorts by comm,dso,sym; a memory report asks which code and which data. */
#define DEFAULT_SORT "sym,obj,node"

struct report_options {
	struct lua_cli lua;        /* --lua, --lua-unsafe: as stat takes them */
	enum lua_output_format format;
	const char *replay;        /* counter values for a (fixture) machine, instead of a recording */
	struct name_list metrics;  /* -m: catalog metrics to compute */
	const char *file;
	const char *sort;          /* --sort KEYS: the samples by these keys */
	bool c2c;                  /* --c2c: contended cache lines */
	bool samples;              /* --samples: every sample */
	bool regions;              /* --regions: totals per marked phase */
	int top;                   /* --top N: rows shown in text */
	bool heatmap;              /* --heatmap: DAMON's regions, time x physical address */
	const char *plot;          /* --plot FILE.png|FILE.svg: the heat map drawn */
	int node;                  /* --node N: the heat map of node N's regions (-1: all) */
};

static const struct cli_option report_options[] = {
	{ LUA_CLI_OPT_LUA, "lua", "SCRIPT", "run a report script: a built-in name (faults.lua, remote_ratio.lua,\n"
	  "bandwidth.lua, topdown.lua, numa_balance.lua, bench.lua) or a path, with :KEY=VAL,...\n"
	  "arguments; repeatable. Without --lua: summary.lua (every series over the run)", CLI_COMPLETE_SCRIPT, NULL, 0 },
	{ LUA_CLI_OPT_UNSAFE, "lua-unsafe", NULL, "give scripts io, os and package (sandboxed otherwise)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_FORMAT, "format", "FORMAT", "text (default), csv or json", CLI_COMPLETE_WORDS, "text csv json", 0 },
	{ 'm', "metrics", "LIST", "catalog metrics to compute (a recording: from its raw series, on the\n"
	  "recorded machine; default: the ones it was recorded with; --replay: scripts add the\n"
	  "ones they use that the machine has)", CLI_COMPLETE_METRICS, NULL, 0 },
	{ OPT_REGIONS, "regions", NULL, "every counter and metric totalled per marked region (the program's\n"
	  "phases: memscope_phase_begin/end, ctl phase begin|end NAME), with\n"
	  "calls and time, for the system and each node and socket, as LIKWID's\n"
	  "marker API reports", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(0, struct report_options, regions) },
	{ OPT_HEATMAP, "heatmap", NULL, "DAMON's regions (record -e damon.accessed_bytes) as a map of time\n"
	  "(rows) by physical address (columns), the access rate as a character\n"
	  "ramp, with each node's address range and the labels", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(0, struct report_options, heatmap) },
	{ OPT_NODE, "node", "N", "with --heatmap: only the regions on node N's memory, across the\n"
	  "addresses they span", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_INT(0, struct report_options, node, 0, 63) },
	{ OPT_PLOT, "plot", "FILE", "with --heatmap: also draw it into FILE.png or FILE.svg (matplotlib,\n"
	  "as memscope bench draws)", CLI_COMPLETE_FILE, NULL, 0, CLI_TO_STRING(0, struct report_options, plot) },
	{ OPT_REPLAY, "replay", "FILE", "counter values per interval (docs/replay-format.md) on the machine\n"
	  "MEMSCOPE_SYSFS_ROOT describes, instead of a recording", CLI_COMPLETE_FILE, NULL, 0, CLI_TO_STRING(0, struct report_options, replay) },
	{ 0 },
};

static const struct cli_option report_sample_options[] = {
	{ OPT_SORT, "sort", "KEYS", "samples (record --sample) grouped by keys, most first: sym, srcline, dso,\n"
	  "obj (data object), node (of the data), cpu_node, remote, level, op, pid,\n"
	  "tid, comm, cpu, event, caller (default for a recording with samples and no\n"
	  "--lua: " DEFAULT_SORT ")", CLI_COMPLETE_WORDS,
	  "sym srcline dso obj node cpu_node remote level op pid tid comm cpu event caller", 0, CLI_TO_STRING(0, struct report_options, sort) },
	{ OPT_C2C, "c2c", NULL, "cache lines whose loads hit modified data (HITM), by offset and code",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(0, struct report_options, c2c) },
	{ OPT_SAMPLES, "samples", NULL, "every sample, attributed", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(0, struct report_options, samples) },
	{ OPT_TOP, "top", "N", "rows (lines) shown as text (default 25; 0: all)", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_INT(0, struct report_options, top, 0, 1000000) },
	{ 0 },
};

static const struct cli_group report_groups[] = {
	{ NULL, report_options },
	{ "Samples", report_sample_options },
	{ NULL, NULL },
};

#define REPORT_HEATMAP_ALONE "--heatmap is a report of its own: give it alone (with --plot and a recording)"
#define REPORT_HEATMAP_OPTIONS "--plot and --node are options of the heat map: give --heatmap with them"
#define REPORT_SAMPLES_NOT_REPLAY \
	"--sort, --c2c and --samples read the samples of a recording; a --replay file has none"

/* Combinations report refuses, in the order they are checked; --help lists them. */
static const struct cli_rule report_rules[] = {
	{ CLI_NEEDS, OPT_PLOT, { OPT_HEATMAP }, REPORT_HEATMAP_OPTIONS },
	{ CLI_NEEDS, OPT_NODE, { OPT_HEATMAP }, REPORT_HEATMAP_OPTIONS },
	{ CLI_EXCLUDES, OPT_HEATMAP, { OPT_REPLAY }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_HEATMAP, { OPT_SORT }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_HEATMAP, { OPT_C2C }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_HEATMAP, { OPT_SAMPLES }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_HEATMAP, { OPT_REGIONS }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_HEATMAP, { LUA_CLI_OPT_LUA }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_HEATMAP, { 'm' }, REPORT_HEATMAP_ALONE },
	{ CLI_EXCLUDES, OPT_SORT, { OPT_REPLAY }, REPORT_SAMPLES_NOT_REPLAY },
	{ CLI_EXCLUDES, OPT_C2C, { OPT_REPLAY }, REPORT_SAMPLES_NOT_REPLAY },
	{ CLI_EXCLUDES, OPT_SAMPLES, { OPT_REPLAY }, REPORT_SAMPLES_NOT_REPLAY },
	{ 0 },
};

const struct cli_command report_command = {
	.name = "report",
	.summary = "Lua reports over a recording (remote_ratio.lua, faults.lua, ...)",
	.usage = "[--lua SCRIPT]... [--format FORMAT] [-m METRICS] [FILE]\n"
		 "--regions [--format FORMAT] [-m METRICS] [FILE]\n"
		 "[--sort KEYS] [--c2c] [--samples] [--top N] [FILE]\n"
		 "--heatmap [--node N] [--plot FILE.png|FILE.svg] [FILE]\n"
		 "--replay FILE [-m METRICS] --lua SCRIPT...",
	.groups = report_groups,
	.epilog = "FILE is a recording (default: " RECORDING_DEFAULT_FILE ").\n",
	.operands = CLI_COMPLETE_FILE,
	.rules = report_rules,
};

static int report_option(void *ctx, int key, const char *arg)
{
	struct report_options *o = ctx;
	struct ms_error err;

	if (key == LUA_CLI_OPT_LUA || key == LUA_CLI_OPT_UNSAFE)
		return lua_cli_option(&o->lua, key, arg) < 0 ? -1 : 0;
	switch (key) {
	case OPT_FORMAT:
		if (lua_output_format_parse(arg, &o->format) < 0) {
			ms_warn("--format %s: expected text, csv or json", arg);
			return -1;
		}
		return 0;
	case 'm':
		if (name_list_add_text(&o->metrics, arg, &err) < 0) {
			ms_warn("-m '%s': %s", arg, err.text);
			return -1;
		}
		return 0;
	default:
		return -1;
	}
}

/* 0, 1 after --help, -1 on a usage error. */
static int parse_options(int argc, char **argv, struct report_options *o)
{
	void *const dest[] = { o };
	int status, first = cli_parse_into(&report_command, argc, argv, report_option, o, dest, &status);

	if (first < 0)
		return status ? -1 : 1;
	if (first < argc)
		o->file = argv[first++];
	if (first < argc) {
		ms_warn("one recording at a time ('%s' is one too many)", argv[first]);
		return -1;
	}
	if (o->replay && o->file) {
		ms_warn("--replay and a recording exclude each other; give one");
		return -1;
	}
	if (!o->file)
		o->file = RECORDING_DEFAULT_FILE;
	/* --format text is as good as none: the heat map's check of the value is here. */
	if (o->heatmap && o->format != LUA_OUTPUT_TEXT) {
		ms_warn(REPORT_HEATMAP_ALONE);
		return -1;
	}
	if (o->format != LUA_OUTPUT_TEXT && (!!o->sort + o->c2c + o->samples + (o->lua.nr_scripts > 0) + o->regions) > 1) {
		ms_warn("--format csv or json writes one table: give one of --sort, --c2c, "
			"--samples, --regions and --lua");
		return -1;
	}
	return 0;
}

/* Without --lua, --sort, --c2c or --samples: the samples by the default keys
 * when the recording has samples, else the summary of every series. */
static void default_reports(struct report_options *o)
{
	struct recording_reader *reader;
	struct ms_error ignored = { "" };
	bool sampled = false;

	if (o->lua.nr_scripts || o->sort || o->c2c || o->samples || o->regions)
		return;
	if (!o->replay && recording_reader_open(&reader, o->file, &ignored) == 0) {
		sampled = recording_has_samples(recording_reader_header(reader));
		recording_reader_close(reader);
	}
	if (sampled)
		o->sort = DEFAULT_SORT;
	else
		o->lua.scripts[o->lua.nr_scripts++] = "summary.lua";
}

/* -m plus the metrics the scripts ask for that the replayed machine has
 * (the others are for the scripts to explain, through memscope.why). */
static int replay_metrics(const struct report_options *o, const struct lua_engine *lua, struct name_list *out,
			  struct ms_error *err)
{
	struct host host;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct name_list wanted = { NULL, 0 };
	const char *text = lua_engine_wanted_metrics(lua);
	int status = -1;

	for (int i = 0; i < o->metrics.nr; i++)
		if (name_list_add(out, o->metrics.names[i]) < 0)
			goto oom_early;
	if (host_load(&host, err) < 0)
		return -1;
	if (catalog_load_default(&cat, err) < 0 || resolve(&host, cat, &res, err) < 0)
		goto out;
	if (text[0] && name_list_add_text(&wanted, text, err) < 0)
		goto out;
	for (int k = 0; k < wanted.nr; k++) {
		int i = catalog_metric_index(cat, wanted.names[k]);

		if (i >= 0 && res->metrics[i].available && name_list_add(out, wanted.names[k]) < 0)
			goto oom;
	}
	status = 0;
	goto out;
oom:
	ms_error_set(err, "out of memory");
out:
	name_list_free(&wanted);
	resolution_free(res);
	catalog_free(cat);
	host_free(&host);
	return status;
oom_early:
	ms_error_set(err, "out of memory");
	return -1;
}

static int open_session(const struct report_options *o, struct lua_engine *lua, struct session *s,
			struct session_options *opt, struct ms_error *err)
{
	if (!o->replay) {
		for (int i = 0; i < o->metrics.nr; i++)
			if (name_list_add(&opt->metrics, o->metrics.names[i]) < 0) {
				ms_error_set(err, "out of memory");
				return -1;
			}
		opt->input_path = o->file;      /* what the sinks name as the run's origin */
		return session_open_recording(s, opt, o->file, err);
	}
	if (replay_metrics(o, lua, &opt->metrics, err) < 0)
		return -1;
	if (!opt->metrics.nr) {
		ms_error_usage(err, "--replay: no metric to compute: the scripts ask for none this machine has, and "
			       "no -m was given (e.g. -m mem.read_bw)");
		return -1;
	}
	opt->replay_path = o->replay;
	return session_open(s, opt, err);
}

/* A sample for the scripts' on_sample (on the sample sink's thread, which
 * the Lua sink shares). */
static void lua_sample(const struct attributed_sample *s, double time_s, void *ctx)
{
	lua_engine_sample(ctx, s, time_s);
}

/* The sample sink, when a sample report is asked for or the scripts have
 * on_sample (and the recording has samples: otherwise on_sample is simply
 * never called). 0 without one, 1 with one, else the exit code. */
static int open_samples(const struct report_options *o, struct session *session, struct lua_engine *lua,
			struct sink *sink, struct ms_error *err)
{
	bool asked = o->sort || o->c2c || o->samples;
	bool for_lua = o->lua.nr_scripts && lua_engine_wants_samples(lua);
	struct sample_sink_options so = {
		.c2c = o->c2c,
		.list = o->samples,
		.format = o->format == LUA_OUTPUT_CSV ? SAMPLE_CSV : o->format == LUA_OUTPUT_JSON ? SAMPLE_JSON
												: SAMPLE_TEXT,
		.top = o->top,
		.out = stdout,
		.file = o->file,
		.on_sample = for_lua ? lua_sample : NULL,
		.ctx = lua,
	};

	if (o->replay || !(asked || for_lua))
		return 0;
	if (!asked && !recording_has_samples(session_recording_header(session)))
		return 0;
	if (o->sort && sort_keys_parse(o->sort, so.keys, &so.nr_keys, err) < 0)
		return -EXIT_USAGE;
	return sample_sink_init(sink, session_recording_header(session), &so, err) < 0 ? -1 : 1;
}

/* What report's steps share (measure_run's ctx). */
struct report_run {
	const struct report_options *o;
	struct lua_engine *lua;
	struct session_options *opt;
	struct sink lua_sink, sample_sink, region_sink;
	int sampled;
};

static int report_open(struct measure_run *m, struct ms_error *err)
{
	struct report_run *r = m->ctx;

	return open_session(r->o, r->lua, m->session, r->opt, err);
}

/* The frames (and labels) of the recording or replay go to the scripts, the
 * samples to the sample sink, whose thread the scripts share (on_sample). A
 * file's frames and samples are never merged or dropped: the reader waits. */
static int report_sinks(struct measure_run *m, struct ms_error *err)
{
	struct report_run *r = m->ctx;
	const struct report_options *o = r->o;

	r->sampled = open_samples(o, m->session, r->lua, &r->sample_sink, err);
	if (r->sampled < 0) {
		ms_report(err);
		return -r->sampled;
	}
	if (r->sampled && measure_run_add(m, &r->sample_sink, NULL, err) < 0)
		return -1;
	if (o->lua.nr_scripts &&
	    (lua_sink_init(&r->lua_sink, r->lua, err) < 0 ||
	     measure_run_add(m, &r->lua_sink, r->sampled ? &r->sample_sink : NULL, err) < 0))
		return -1;
	if (o->regions) {
		struct region_sink_options ro = {
			.format = o->format == LUA_OUTPUT_CSV ? STAT_CSV : o->format == LUA_OUTPUT_JSON ? STAT_JSON : STAT_TEXT,
			.out = stdout,
		};

		/* After the scripts: their reports, then the regions. */
		if (region_sink_init(&r->region_sink, &ro, err) < 0 || measure_run_add(m, &r->region_sink, NULL, err) < 0)
			return -1;
	}
	return 0;
}

static int report_ended(struct measure_run *m)
{
	struct report_run *r = m->ctx;

	if (r->sampled && sample_sink_failed(&r->sample_sink)) {
		struct ms_error err = { "" };

		ms_error_set(&err, "out of memory while attributing samples");
		ms_report(&err);
		return 1;
	}
	return 0;
}

/* 0, or the exit code with the reason said. */
static int report(const struct report_options *o, struct lua_engine *lua)
{
	struct session_options opt;
	struct session session;
	struct report_run r = { .o = o, .lua = lua, .opt = &opt };
	struct measure_run m = {
		.session = &session, .opt = &opt, .ctx = &r,
		.open = report_open, .opened = report_sinks, .ended = report_ended,
	};
	int status;

	memset(&session, 0, sizeof(session));
	session_options_init(&opt, "report");
	status = measure_run(&m);   /* closes the session with every sink handed to it */
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

	o.top = 25;
	o.node = -1;
	status = parse_options(argc, argv, &o);
	if (status) {
		name_list_free(&o.metrics);
		return status < 0 ? EXIT_USAGE : 0;
	}
	if (o.heatmap) {
		status = damon_heatmap_report(o.file, o.node, stdout, o.plot, &err);
		if (status)
			ms_report(&err);
		name_list_free(&o.metrics);
		return status;
	}
	default_reports(&o);
	lopt.scripts = o.lua.scripts;
	lopt.nr_scripts = o.lua.nr_scripts;
	lopt.unsafe = o.lua.unsafe;
	lopt.format = o.format;
	lopt.command_name = "report";
	if (lua_engine_open(&lua, &lopt, &err) < 0) {
		ms_report(&err);
		name_list_free(&o.metrics);
		return EXIT_USAGE;
	}
	status = report(&o, lua);
	if (!status && lua_engine_nr_failed(lua))
		status = 1;    /* the reports that ran are printed; the failures are listed above */
	lua_engine_free(lua);
	name_list_free(&o.metrics);
	return status;
}
