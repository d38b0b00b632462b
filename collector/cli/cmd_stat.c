/* memscope stat: count events for a command, processes or the whole system,
 * printing periodic lines (-I) and final totals. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "metrics/aggregate.h"
#include "cli/commands.h"
#include "events/event.h"
#include "pipeline/session.h"
#include "metrics/metrics.h"
#include "pipeline/lua_session.h"
#include "sinks/stat_output.h"
#include "sinks/stat_threads.h"

enum { OPT_JSON = 0x2000, OPT_PER_THREAD };

struct stat_run {
	struct session *session;
	struct aggregation aggr;
	struct aggr_cell *interval_cells;
	struct aggr_cell *total_cells;
	struct frame total_frame;     /* every frame summed: metrics over the whole run */
	struct stat_table table;
	struct stat_threads *threads;  /* --per-thread: rows from the eBPF per-thread maps */
	struct lua_engine *lua;        /* --lua scripts, or NULL */
	int *lua_metrics;              /* -m names that the scripts define: their engine indices */
	int nr_lua_metrics;
	int frames;                    /* frames seen: Lua metrics cover the run only when it is 1 */
	struct stat_output output;
	uint64_t start_ns;
	bool print_intervals;
};

static void stat_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope stat [-e EVENTS] [-m METRICS] [-I MS] [-a | -p PID[,PID...] | [--] CMD [ARGS...]]\n"
		"                     [--per-cpu | --per-socket | --per-node | --per-channel | --per-instance]\n"
		"                     [-x SEP | --json]\n"
		"       memscope stat --replay FILE -m METRICS [--per-node | --per-socket | --per-channel] ...\n\n%s"
		"  -x, --field-separator SEP   CSV output\n"
		"      --json          one JSON object per line\n"
		"      --per-thread    one row per thread of the measured processes (proc.* events)\n%s",
		session_options_help, lua_cli_help);
}

static int parse_options(int argc, char **argv, struct session_options *opt, struct stat_output *output,
			 bool *per_thread, struct lua_cli *lua)
{
	static const struct option longopts[] = {
		SESSION_LONG_OPTIONS,
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		LUA_CLI_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, shared;

	optind = 1;
	/* '+': options end at the command's name, as with perf stat. */
	while ((c = getopt_long(argc, argv, "+" SESSION_SHORT_OPTIONS "x:h", longopts, NULL)) != -1) {
		shared = measure_option(opt, lua, c, optarg);
		if (shared < 0)
			return -1;
		if (shared)
			continue;
		switch (c) {
		case 'x':
			if (!optarg[0] || strlen(optarg) >= sizeof(output->separator)) {
				fprintf(stderr, "memscope stat: -x needs a short separator, e.g. -x,\n");
				return -1;
			}
			output->format = STAT_CSV;
			snprintf(output->separator, sizeof(output->separator), "%s", optarg);
			break;
		case OPT_JSON:
			output->format = STAT_JSON;
			break;
		case OPT_PER_THREAD:
			*per_thread = true;
			break;
		case 'h':
			stat_usage(stdout);
			exit(0);
		default:
			stat_usage(stderr);
			return -1;
		}
	}
	if (session_options_finish(opt, argc, argv) < 0)
		return -1;
	if (*per_thread && (opt->aggr != AGGR_TOTAL || opt->metrics || opt->system_wide || opt->replay_path)) {
		fprintf(stderr, "memscope stat: --per-thread splits the proc.* events of -p PID or a command by "
			"thread; it excludes -a, -m, --replay and --per-cpu/socket/node\n");
		return -1;
	}
	return 0;
}

/* Fill the table from cells and, when metrics are shown, from the engine
 * computed over frame. */
static void fill_table(struct stat_run *run, const struct aggr_cell *cells, const struct frame *frame)
{
	struct session *s = run->session;

	stat_table_set_events(&run->table, &run->aggr, cells);
	if (s->engine) {
		metric_engine_compute(s->engine, frame);
		stat_table_set_metrics(&run->table, s->plan, s->engine);
	}
	/* Lua metrics were computed on the latest frame: they are the whole
	 * run's when that frame was the only one. */
	if (run->nr_lua_metrics)
		stat_table_set_lua_metrics(&run->table, run->lua, frame != &run->total_frame || run->frames == 1);
}

static int on_frame(const struct frame *frame, bool last, void *ctx)
{
	struct stat_run *run = ctx;
	double time_s = (double)(frame->time_ns - run->start_ns) / 1e9;

	lua_cli_frame(run->lua, run->session, frame);
	run->frames++;

	aggregation_clear(&run->aggr, run->interval_cells);
	aggregation_add(&run->aggr, frame, run->interval_cells);
	aggregation_add(&run->aggr, frame, run->total_cells);
	frame_accumulate(&run->total_frame, frame, &run->session->sampler.table);
	/* The last frame is usually a partial interval; it is printed too, so the
	 * interval lines always add up to the totals. */
	if (run->print_intervals && (frame->interval_ns > 0 || !last)) {
		if (run->threads) {
			if (stat_threads_fill(run->threads, false) == 0)
				stat_output_interval(&run->output, time_s, (double)frame->interval_ns / 1e9,
						     &run->threads->table);
			return 0;
		}
		fill_table(run, run->interval_cells, frame);
		stat_output_interval(&run->output, time_s, (double)frame->interval_ns / 1e9, &run->table);
	}
	return 0;
}

/* --per-channel (--per-instance) needs catalog metrics, and memory channels
 * (or plugin instances) among what they count. */
static int check_channels(const struct session *s, enum aggr_mode mode)
{
	const char *option = mode == AGGR_INSTANCE ? "--per-instance" : "--per-channel";

	if (!s->plan) {
		fprintf(stderr, "memscope stat: %s shows catalog metrics per memory channel%s: "
			"name some with -m (e.g. -m mem.read_bw,mem.write_bw)\n", option,
			mode == AGGR_INSTANCE ? " or plugin instance" : "");
		return EXIT_USAGE;
	}
	if (metric_engine_nr_scopes(s->engine, SCOPE_CHANNEL) == 0) {
		fprintf(stderr, "memscope stat: %s: none of the metrics asked for is counted per memory "
			"channel%s on this machine: the PMUs behind them cover a socket, die or node, or the host has "
			"none (channel PMUs: Intel uncore_imc_N, HiSilicon DDRC, AMD UMC; memscope list --explain "
			"METRIC shows what a metric uses here)\n", option,
			mode == AGGR_INSTANCE ? " or plugin instance" : "");
		return 1;
	}
	return 0;
}

static int terminal_rows(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4)
		return ws.ws_row - 2;
	return 25;
}

int cmd_stat(int argc, char **argv)
{
	struct session_options opt;
	struct session session;
	struct stat_run run;
	struct ms_error err = { "" };
	char title[512];
	size_t cells;
	char **shown = NULL;
	int nr_shown = 0, status = 1;
	bool per_thread = false;
	struct stat_threads threads;
	struct lua_cli lua_cli = { .nr_scripts = 0 };

	memset(&run, 0, sizeof(run));
	memset(&session, 0, sizeof(session));
	session_options_init(&opt, "stat");
	run.output.format = STAT_TEXT;
	memset(&threads, 0, sizeof(threads));
	if (parse_options(argc, argv, &opt, &run.output, &per_thread, &lua_cli) < 0) {
		session_options_free(&opt);
		return EXIT_USAGE;
	}
	/* What -e named: with metrics, only these events are shown. */
	if (event_list_split(opt.events ? opt.events : "", &shown, &nr_shown) < 0 ||
	    (!shown && !(shown = calloc(1, sizeof(char *)))))
		goto oom;
	status = lua_cli_open(&lua_cli, &opt, run.output.format == STAT_CSV ? LUA_OUTPUT_CSV :
			      run.output.format == STAT_JSON ? LUA_OUTPUT_JSON : LUA_OUTPUT_TEXT, &run.lua, &err);
	if (status) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}
	status = 1;
	if (lua_cli_take_metrics(run.lua, &opt, &run.lua_metrics, &run.nr_lua_metrics) < 0)
		goto oom;
	status = session_open(&session, &opt, &err);
	if (status) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}
	status = 1;
	run.session = &session;
	if ((opt.aggr == AGGR_CHANNEL || opt.aggr == AGGR_INSTANCE) && (status = check_channels(&session, opt.aggr)) != 0)
		goto out;
	status = 1;
	if (opt.aggr == AGGR_CPU && (opt.metrics || run.nr_lua_metrics)) {
		fprintf(stderr, "memscope stat: -m computes metrics for the system, each node (--per-node) "
			"or each socket (--per-socket), not per CPU\n");
		status = EXIT_USAGE;
		goto out;
	}
	if (per_thread) {
		struct source *bpf = session_bpf_source(&session);

		if (!bpf) {
			fprintf(stderr, "memscope stat: --per-thread needs eBPF series (-e proc.faults,...): "
				"perf counts of a process are not kept per thread\n");
			status = EXIT_USAGE;
			goto out;
		}
		if (stat_threads_init(&threads, bpf, &session.sampler.table, &err) < 0) {
			fprintf(stderr, "memscope stat: %s\n", err.text);
			goto out;
		}
		run.threads = &threads;
	}
	if (aggregation_init(&run.aggr, &session.sampler.table, opt.aggr) < 0 ||
	    /* With -m, a metric's raw inputs stay hidden unless -e named them. */
	    stat_table_init(&run.table, &run.aggr,
			    opt.metrics || run.nr_lua_metrics ? (const char *const *)shown : NULL, nr_shown,
			    session.plan, session.engine, run.lua, run.lua_metrics, run.nr_lua_metrics) < 0 ||
	    frame_init(&run.total_frame, session.sampler.table.nr) < 0)
		goto oom;
	cells = (size_t)(run.aggr.nr_rows * run.aggr.nr_columns);
	run.interval_cells = calloc(cells, sizeof(struct aggr_cell));
	run.total_cells = calloc(cells, sizeof(struct aggr_cell));
	if (!run.interval_cells || !run.total_cells)
		goto oom;
	aggregation_clear(&run.aggr, run.total_cells);
	session_describe_target(&opt, title, sizeof(title));
	run.output.out = stdout;
	run.output.title = title;
	run.output.header_every = terminal_rows();
	run.print_intervals = opt.interval_ms > 0;
	/* Replayed frames carry their own times, from 0. */
	run.start_ns = opt.replay_path || opt.input_path ? 0 : monotonic_ns();
	if (lua_cli_start(run.lua, &session, &opt, title, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}

	if (session_run(&session, &opt, on_frame, &run, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}
	if (run.threads) {
		if (stat_threads_fill(run.threads, true) < 0) {
			fprintf(stderr, "memscope stat: cannot read the per-thread eBPF maps\n");
			goto out;
		}
		stat_output_totals(&run.output, (double)run.total_frame.interval_ns / 1e9, &run.threads->table);
	} else {
		fill_table(&run, run.total_cells, &run.total_frame);
		stat_output_totals(&run.output, (double)run.total_frame.interval_ns / 1e9, &run.table);
	}
	/* The scripts' reports come after the totals. */
	lua_engine_end(run.lua);
	status = session_exit_code(&session);
	if (session.target.kind == TARGET_PIDS && session.sampler.end == SAMPLER_END_TARGET)
		fprintf(stderr, "memscope stat: the attached process%s exited\n",
			session.target.nr_pids > 1 ? "es have" : " has");
	goto out;
oom:
	fprintf(stderr, "memscope stat: out of memory\n");
out:
	session_close(&session);
	aggregation_free(&run.aggr);
	stat_table_free(&run.table);
	frame_free(&run.total_frame);
	free(run.interval_cells);
	free(run.total_cells);
	event_names_free(shown, nr_shown);
	stat_threads_free(&threads);
	lua_engine_free(run.lua);
	free(run.lua_metrics);
	session_options_free(&opt);
	return status;
}
