/* memscope report: Lua reports over a recording (default: memscope.rec in
 * the current directory, as perf report reads perf.data), or over a replay
 * file of counter values on a machine described by MEMSCOPE_SYSFS_ROOT, with
 * the catalog's metrics computed as they would be live. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "commands.h"
#include "host.h"
#include "lua_engine.h"
#include "metrics.h"
#include "recording.h"
#include "resolver.h"
#include "sources/replay_source.h"

#define MAX_SCRIPTS 32

enum { OPT_FORMAT = 0x3000, OPT_LUA_UNSAFE, OPT_REPLAY };

struct report_options {
	const char *scripts[MAX_SCRIPTS];
	int nr_scripts;
	enum lua_output_format format;
	bool unsafe;
	const char *replay;        /* counter values for a (fixture) machine, instead of a recording */
	char *metrics;             /* -m: catalog metrics to compute (replay) */
	const char *file;
};

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope report [--lua SCRIPT[:KEY=VAL,...]]... [--format text|csv|json] [FILE]\n"
		"       memscope report --replay COUNTS.jsonl [-m METRICS] --lua SCRIPT...\n\n"
		"  FILE                 a recording (default: " RECORDING_DEFAULT_FILE ")\n"
		"  --lua SCRIPT         run a report script: a built-in name (faults.lua, remote_ratio.lua,\n"
		"                       bandwidth.lua, topdown.lua, numa_balance.lua) or a path; repeatable.\n"
		"                       Without --lua: summary.lua (every series over the run)\n"
		"  --format FMT         text (default), csv or json\n"
		"  --lua-unsafe         give scripts io, os and package (off: sandboxed)\n"
		"  --replay FILE        counter values per interval (docs/replay-format.md) on the machine\n"
		"                       MEMSCOPE_SYSFS_ROOT describes; catalog metrics are computed from them\n"
		"  -m, --metrics LIST   catalog metrics to compute with --replay (scripts add the ones they use)\n");
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

static int parse_options(int argc, char **argv, struct report_options *o)
{
	static const struct option longopts[] = {
		{ "lua", required_argument, NULL, 'l' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "lua-unsafe", no_argument, NULL, OPT_LUA_UNSAFE },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "metrics", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "l:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (o->nr_scripts == MAX_SCRIPTS) {
				fprintf(stderr, "memscope report: at most %d --lua scripts\n", MAX_SCRIPTS);
				return -1;
			}
			o->scripts[o->nr_scripts++] = optarg;
			break;
		case OPT_FORMAT:
			if (lua_output_format_parse(optarg, &o->format) < 0) {
				fprintf(stderr, "memscope report: --format %s: expected text, csv or json\n", optarg);
				return -1;
			}
			break;
		case OPT_LUA_UNSAFE:
			o->unsafe = true;
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
	if (o->metrics && !o->replay) {
		fprintf(stderr, "memscope report: -m goes with --replay (a recording's metrics come from its series)\n");
		return -1;
	}
	if (!o->nr_scripts)
		o->scripts[o->nr_scripts++] = "summary.lua";
	if (!o->file)
		o->file = RECORDING_DEFAULT_FILE;
	return 0;
}

static int report_recording(const struct report_options *o, struct lua_engine *lua, struct ms_error *err)
{
	struct recording_reader *reader = NULL;
	const struct recording_header *h;
	struct recording_record rec;
	struct frame frame = { 0 };
	char cut[512];
	int status = 1;

	if (recording_reader_open(&reader, o->file, err) < 0)
		return 1;
	h = recording_reader_header(reader);
	if (frame_init(&frame, h->table.nr) < 0) {
		ms_error_set(err, "out of memory for a frame of %d series", h->table.nr);
		goto out;
	}
	struct lua_engine_inputs in = {
		.table = &h->table,
		.topo = h->has_topology ? &h->topo : NULL,
		.source = "recording",
		.source_name = o->file,
	};
	if (lua_engine_start(lua, &in, err) < 0)
		goto out;
	for (;;) {
		if (recording_reader_next(reader, &rec, &frame, err) < 0)
			goto out;
		if (rec.kind == RECORD_FRAME)
			lua_engine_frame(lua, &frame);
		else if (rec.kind == RECORD_LABEL)
			lua_engine_label(lua, (double)rec.t_ns / 1e9, rec.text);
		else if (rec.kind == RECORD_EOF || rec.kind == RECORD_END)
			break;
	}
	if (recording_reader_cut(reader, cut, sizeof(cut)))
		fprintf(stderr, "memscope report: %s\n", cut);
	lua_engine_end(lua);
	status = 0;
out:
	frame_free(&frame);
	recording_reader_close(reader);
	return status;
}

/* -m plus the metrics the scripts ask for that this machine has (the
 * others are left to the scripts to explain, through memscope.why). */
static char *replay_metrics(const struct report_options *o, const struct lua_engine *lua,
			    const struct resolution *res)
{
	char *list = NULL, *copy, *save = NULL;

	if (o->metrics && append_list(&list, o->metrics) < 0)
		return NULL;
	copy = strdup(lua_engine_wanted_metrics(lua));
	if (!copy)
		return NULL;
	for (char *m = strtok_r(copy, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		int i = catalog_metric_index(res->cat, m);

		if (i >= 0 && res->metrics[i].available && (!list || !strstr(list, m)))
			append_list(&list, m);
	}
	free(copy);
	return list ? list : strdup("");
}

static int report_replay(const struct report_options *o, struct lua_engine *lua, struct ms_error *err)
{
	struct host host;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct metric_plan *plan = NULL;
	struct metric_engine *engine = NULL;
	struct source src = { 0 };
	struct series_table table = { 0 };
	struct frame frame = { 0 };
	char *metrics = NULL;
	bool host_ok = false;
	int status = 1;

	if (host_load(&host, err) < 0)
		return 1;
	host_ok = true;
	if (catalog_load_default(&cat, err) < 0 || resolve(&host, cat, &res, err) < 0)
		goto out;
	if (!(metrics = replay_metrics(o, lua, res))) {
		ms_error_set(err, "out of memory");
		goto out;
	}
	if (!metrics[0]) {
		ms_error_set(err, "--replay: no metric to compute: the scripts ask for none this machine has, and "
			     "no -m was given (e.g. -m mem.read_bw)");
		goto out;
	}
	if (metric_plan_build(res, metrics, &plan, err) < 0 ||
	    replay_source_create(&src, &host, plan, o->replay, err) < 0)
		goto out;
	if (src.ops->open(&src, &table, err) < 0)
		goto out;
	if (frame_init(&frame, table.nr) < 0 || metric_engine_new(plan, &host, &table, &engine, err) < 0)
		goto out;
	struct lua_engine_inputs in = {
		.table = &table,
		.topo = &host.topo,
		.plan = plan,
		.metrics = engine,
		.res = res,
		.source = "replay",
		.source_name = o->replay,
	};
	if (lua_engine_start(lua, &in, err) < 0)
		goto out;
	for (uint64_t seq = 0; !src.finished; seq++) {
		frame.seq = seq;
		src.ops->sample(&src, &frame);
		metric_engine_compute(engine, &frame);
		lua_engine_frame(lua, &frame);
	}
	lua_engine_end(lua);
	status = 0;
out:
	metric_engine_free(engine);
	frame_free(&frame);
	if (src.ops)
		src.ops->close(&src);
	series_table_free(&table);
	metric_plan_free(plan);
	resolution_free(res);
	catalog_free(cat);
	free(metrics);
	if (host_ok)
		host_free(&host);
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
	lopt.scripts = o.scripts;
	lopt.nr_scripts = o.nr_scripts;
	lopt.unsafe = o.unsafe;
	lopt.format = o.format;
	lopt.command_name = "report";
	if (lua_engine_open(&lua, &lopt, &err) < 0) {
		fprintf(stderr, "memscope report: %s\n", err.text);
		free(o.metrics);
		return EXIT_USAGE;
	}
	status = o.replay ? report_replay(&o, lua, &err) : report_recording(&o, lua, &err);
	if (status)
		fprintf(stderr, "memscope report: %s\n", err.text);
	else if (lua_engine_nr_failed(lua))
		status = 1;    /* the reports that ran are printed; the failures are listed above */
	lua_engine_free(lua);
	free(o.metrics);
	return status;
}
