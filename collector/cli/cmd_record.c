/* memscope record: frames to a self-describing recording file (format:
 * docs/recording-format.md), steered while it runs through the control
 * socket (memscope ctl: label, phase, pause, resume, interval, record FILE,
 * status). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/measure_options.h"
#include "cli/exit_status.h"
#include "cli/measure_run.h"
#include "ctl/ctl.h"
#include "ctl/ctl_fifo.h"
#include "catalog/resolver.h"
#include "metrics/metrics.h"
#include "sinks/top/top_model.h"
#include "recording/recording.h"
#include "recording/recording_host.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"
#include "pipeline/session_control.h"
#include "sinks/lua_sink.h"
#include "sinks/recording_sink.h"
#include "sources/sample_source.h"
#include "util/report.h"

enum { OPT_NO_CTL = CLI_LONG_ONLY, OPT_FIFO, OPT_SAMPLE, OPT_MMAP_PAGES, OPT_NO_CALLCHAIN, OPT_ALLOC,
       OPT_ALLOC_MIN, OPT_PER_THREAD };

/* perf record samples until stopped; memscope record's frames come every second by default. */
#define DEFAULT_INTERVAL_MS 1000

struct record_run {
	struct recording_writer_options wopt;
	struct ctl_server ctl;
	struct ctl_fifo fifo;        /* --fifo: the same commands, one per line */
	const char *fifo_path;
	char path[PATH_MAX];
	struct lua_engine *lua;      /* --lua scripts on the frames as they are recorded, or NULL */
	int *lua_metrics;            /* -m names the scripts define: their inputs are recorded */
	int nr_lua_metrics;
	struct measure_sinks sinks;  /* --influx FILE ... */
	struct sink recording, lua_sink;
};

/* The structs record's option rows write to (cli_parse_into's dest). */
enum { RECORD_TO_RUN, RECORD_TO_SESSION };

static const struct cli_option record_interval_options[] = {
	{ 'I', "interval", "MS", "a frame every MS milliseconds (default 1000, at least 1)", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

static const struct cli_option record_replay_options[] = {
	{ SESSION_OPT_REPLAY, "replay", "FILE", "record the counter values of FILE (docs/replay-format.md)\n"
	  "instead of this machine's", CLI_COMPLETE_FILE, NULL, 0 },
	{ 0 },
};

static const struct cli_option record_options[] = {
	{ 'o', "output", "FILE", "the recording (default: " RECORDING_DEFAULT_FILE "; an existing one is kept\n"
	  "as FILE.old); a name ending in .zst is compressed", CLI_COMPLETE_FILE, NULL, 0 },
	{ 'z', "compress", NULL, "compress with zstd whatever the name", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(RECORD_TO_RUN, struct record_run, wopt.compress) },
	{ OPT_NO_CTL, "no-ctl", NULL, "no control socket (memscope ctl cannot reach this run)", CLI_COMPLETE_NONE,
	  NULL, 0 },
	{ OPT_FIFO, "fifo", "PATH", "also take the commands one per line from a FIFO (made 0600 unless it\n"
	  "exists), as NUMAscope's control FIFO: echo 'label phase 2' > PATH", CLI_COMPLETE_FILE, NULL, 0,
	  CLI_TO_STRING(RECORD_TO_RUN, struct record_run, fifo_path) },
	{ OPT_PER_THREAD, "per-thread", NULL, "also record each thread's own proc.* series, with its name\n"
	  "(memscope stat --input FILE --per-thread)", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(RECORD_TO_SESSION, struct session_options, per_thread) },
	{ 0 },
};

static const struct cli_option record_sample_options[] = {
	{ OPT_SAMPLE, "sample", "EVENT", "also record samples with code and data addresses: mem (this host's\n"
	  "memory sampling event: memscope list --explain sample.mem),\n"
	  "page-faults, or a PMU event; repeatable. Report: memscope report --sort", CLI_COMPLETE_EVENTS, NULL, 0 },
	{ 'c', "count", "N", "one sample every N events (page faults: every one by default)", CLI_COMPLETE_NONE,
	  NULL, 0 },
	{ 'F', "freq", "HZ", "samples per second (hardware events: 4000 by default)", CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_MMAP_PAGES, "mmap-pages", "N", "data pages of each CPU's sample ring buffer (power of two, default 128)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_NO_CALLCHAIN, "no-callchain", NULL, "no call chains (smaller samples)", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(RECORD_TO_SESSION, struct session_options, sampling.no_callchain) },
	{ OPT_ALLOC, "alloc", NULL, "also record heap allocations (uprobes on malloc, calloc, realloc,\n"
	  "free...) so report names heap data by its allocating line", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(RECORD_TO_SESSION, struct session_options, sampling.alloc) },
	{ OPT_ALLOC_MIN, "alloc-min", "BYTES", "smallest allocation --alloc records (default 4096)", CLI_COMPLETE_NONE,
	  NULL, 0 },
	{ 0 },
};

static const struct cli_group record_groups[] = {
	{ "What to count", measure_count_options },
	{ NULL, measure_damon_options },
	{ NULL, measure_lua_options },
	{ "Where", measure_target_options },
	{ NULL, record_replay_options },
	{ "When", record_interval_options },
	{ "The recording", record_options },
	{ "Samples", record_sample_options },
	{ "Other outputs", measure_sink_options },
	{ NULL, NULL },
};

static const struct cli_refusal record_refused[] = {
	{ "input", "replays a recording; it is one already (to compress it: zstd FILE; memscope reads FILE.zst "
	  "as it is)" },
	{ "per-*", "chooses how stat shows totals; a recording keeps every series as counted (report it with "
	  "memscope stat --input FILE --per-node)" },
	{ NULL, NULL },
};

#define RECORD_NEEDS_SAMPLE "-c, -F, --mmap-pages, --no-callchain and --alloc say how to sample: add --sample EVENT " \
	"(for example --sample mem)"

/* Combinations record refuses, in the order they are checked; --help lists them. */
static const struct cli_rule record_rules[] = {
	{ CLI_NEEDS, 'c', { OPT_SAMPLE }, RECORD_NEEDS_SAMPLE },
	{ CLI_NEEDS, 'F', { OPT_SAMPLE }, RECORD_NEEDS_SAMPLE },
	{ CLI_NEEDS, OPT_MMAP_PAGES, { OPT_SAMPLE }, RECORD_NEEDS_SAMPLE },
	{ CLI_NEEDS, OPT_NO_CALLCHAIN, { OPT_SAMPLE }, RECORD_NEEDS_SAMPLE },
	{ CLI_NEEDS, OPT_ALLOC, { OPT_SAMPLE }, RECORD_NEEDS_SAMPLE },
	{ CLI_NEEDS, OPT_ALLOC_MIN, { OPT_SAMPLE }, RECORD_NEEDS_SAMPLE },
	{ CLI_EXCLUDES, 'c', { 'F' }, "-c (a period) and -F (a frequency) exclude each other: give one" },
	{ 0 },
};

const struct cli_command record_command = {
	.name = "record",
	.summary = "record frames to a file, for stat --input and reports",
	.usage = "[OPTIONS] [-a | -p PIDS | [--] CMD [ARGS...]]",
	.groups = record_groups,
	.rules = record_rules,
	.epilog = "While it runs, memscope ctl adds labels, pauses, resumes, changes the interval or starts\n"
		  "a new file. -a without -e or -m records what top shows, each process with its own series:\n"
		  "memscope top --input FILE replays it. Options end at CMD: what follows is the command's own.\n",
	.operands = CLI_COMPLETE_COMMAND,
	.options_first = true,
	.refused = record_refused,
};

static int append_sample(struct session_options *opt, const char *spec)
{
	size_t old = opt->samples ? strlen(opt->samples) : 0;
	char *grown = realloc(opt->samples, old + strlen(spec) + 2);

	if (!grown)
		return -1;
	if (old)
		grown[old++] = ',';
	strcpy(grown + old, spec);
	opt->samples = grown;
	return 0;
}

/* -c N, -F HZ, --mmap-pages N: positive integers (pages: a power of two). */
static int sample_number(int c, const char *arg, struct sample_options *so)
{
	const char *what = c == 'c' ? "-c" : c == 'F' ? "-F" : "--mmap-pages";
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v == 0 || arg[0] == '-') {
		ms_warn("%s '%s': expected a positive integer", what, arg);
		return -1;
	}
	if (c == 'c') {
		so->period = v;
	} else if (c == 'F') {
		so->freq = v;
	} else {
		if (v > 65536 || (v & (v - 1))) {
			ms_warn("--mmap-pages '%s': expected a power of two up to 65536",
				arg);
			return -1;
		}
		so->mmap_pages = (int)v;
	}
	return 0;
}

struct record_args {
	struct session_options *opt;
	struct record_run *run;
	bool *use_ctl;
	struct lua_cli *lua;
};

static int record_option(void *ctx, int key, const char *arg)
{
	struct record_args *a = ctx;
	int shared = measure_cli_option(a->opt, a->lua, key, arg);

	if (shared <= 0)
		return shared;
	if ((shared = measure_sink_option(&a->run->sinks, "record", key, arg)) <= 0)
		return shared;
	switch (key) {
	case 'o':
		if (!arg[0] || strlen(arg) >= sizeof(a->run->path)) {
			ms_warn("-o needs a file name");
			return -1;
		}
		snprintf(a->run->path, sizeof(a->run->path), "%s", arg);
		return 0;
	case OPT_NO_CTL:
		*a->use_ctl = false;
		return 0;
	case OPT_SAMPLE:
		if (!arg[0] || append_sample(a->opt, arg) < 0) {
			ms_warn("--sample needs an event: mem, page-faults or a PMU "
				"event (memscope list --explain sample.mem)");
			return -1;
		}
		return 0;
	case 'c':
	case 'F':
	case OPT_MMAP_PAGES:
		return sample_number(key, arg, &a->opt->sampling);
	case OPT_ALLOC_MIN: {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || v == 0 || arg[0] == '-') {
			ms_warn("--alloc-min '%s': expected a positive number of bytes",
				arg);
			return -1;
		}
		a->opt->sampling.alloc_min = v;
		a->opt->sampling.alloc = true;
		return 0;
	}
	default:
		return -1;
	}
}

/* 0, 1 after --help, -1 on a usage error. */
static int parse_options(int argc, char **argv, struct session_options *opt, struct record_run *run,
			 bool *use_ctl, struct lua_cli *lua)
{
	struct record_args a = { opt, run, use_ctl, lua };
	void *const dest[] = { [RECORD_TO_RUN] = run, [RECORD_TO_SESSION] = opt };
	int status, first = cli_parse_into(&record_command, argc, argv, record_option, &a, dest, &status);

	if (first < 0)
		return status ? -1 : 1;
	/* -a alone records what top shows: its events and metrics (those this
	 * host has) and a series per process, so top --input replays it. */
	if (opt->system_wide && !opt->events.nr && !opt->metrics.nr && !opt->replay_path && !opt->input_path) {
		char metrics[512];

		top_node_metric_list(metrics, sizeof(metrics));
		if (session_option(opt, 'e', SESSION_DEFAULT_EVENTS "," TOP_PROCESS_EVENTS) < 0 ||
		    session_option(opt, 'm', metrics) < 0)
			return -1;
		opt->metrics_if_available = true;
		opt->bpf_optional = true;
	}
	/* Processes of the run have series of their own in the file (proc.*). */
	opt->per_process = true;
	if (session_options_finish(opt, argv + first) < 0)
		return -1;
	return 0;
}

/* ---- The sampling events, for the header's "sampling" member ---- */

/* The header's "sampling" member: what each sampling event was opened as. */
static json_t *sampling_json(const struct session *session)
{
	json_t *events = json_array(), *cpu = NULL;
	struct cpu_identity id;

	for (int i = 0; i < session->nr_sources; i++)
		for (int e = 0; e < sample_source_nr_events(&session->sources[i]); e++) {
			const struct sample_event_info *info = sample_source_event(&session->sources[i], e);
			json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:b, s:b, s:i}", "event", info->name, "pmu",
					      info->pmu, "decode", info->decode, "sample_type",
					      (json_int_t)info->sample_type, "phys_addr", info->phys_addr, "callchain",
					      info->callchain, "precise", info->precise);

			json_object_set_new(o, info->period ? "period" : "freq",
					    json_integer((json_int_t)(info->period ? info->period : info->freq)));
			json_array_append_new(events, o);
		}
	if (!json_array_size(events)) {
		const char *why = session_name_why(session, SAMPLE_NAME_PREFIX);

		/* Asked for but not started: the file says why, for report. */
		if (why)
			return json_pack("{s:o, s:s}", "events", events, "unavailable", why);
		json_decref(events);
		return NULL;
	}
	/* Some decode tables depend on the CPU model (errata, encodings per part). */
	if (cpu_identity_read(&session->host.roots, &id) == 0 && id.known)
		cpu = json_pack("{s:s, s:i, s:i, s:i, s:i}", "vendor", id.vendor, "family", id.family, "model", id.model,
				"implementer", id.implementer, "part", id.part);
	return cpu ? json_pack("{s:o, s:o}", "events", events, "cpu", cpu) : json_pack("{s:o}", "events", events);
}

/* ---- The metric plan, for the header's "catalog" member ---- */

static json_t *plan_json(const struct metric_plan *plan)
{
	json_t *cat = json_object(), *metrics = json_array();

	for (int m = 0; m < plan->nr_metrics; m++) {
		const struct plan_metric *pm = &plan->metrics[m];
		json_t *o = json_object(), *events = json_array();

		json_object_set_new(o, "name", json_string(metric_plan_catalog_metric(plan, m)->name));
		json_object_set_new(o, "requested", json_boolean(pm->requested));
		for (const struct plan_metric *part = pm; part; part = part == pm ? pm->add : NULL)
			for (int s = 0; s < part->nr_slot_inputs; s++) {
				const struct plan_input *in = &plan->inputs[part->slot_inputs[2 * s + 1]];

				for (int e = 0; e < in->nr_events; e++) {
					const struct plan_event *pe = &plan->events[in->events[e]];

					/* group: the perf group it is counted in (null when perf does not count it) */
					json_array_append_new(events, json_pack("{s:s, s:s, s:o}", "series", pe->text,
										"instance", pe->instance, "group",
										pe->group >= 0 ? json_integer(pe->group)
											       : json_null()));
				}
			}
		json_object_set_new(o, "events", events);
		json_array_append_new(metrics, o);
	}
	json_object_set_new(cat, "metrics", metrics);
	return cat;
}

/* ---- The command ---- */

static void start_ctl(struct record_run *run)
{
	char path[sizeof(run->ctl.path)];
	struct ms_error err = { "" };

	/* Before the command is started, so it inherits where to send markers. */
	if (ctl_socket_path(getpid(), path, sizeof(path), true, &err) < 0 ||
	    ctl_server_open(&run->ctl, path, &err) < 0) {
		ms_warn("note: no control socket (memscope ctl will not reach this "
			"run): %s", err.text);
		return;
	}
	setenv(CTL_SOCKET_ENV, path, 1);
}

/* The session is open: what goes into the file's header, then the file
 * (its "wrote N frames" comes before the scripts' reports), the scripts, the
 * control. */
static int record_opened(struct measure_run *m, struct ms_error *err)
{
	struct record_run *run = m->ctx;
	struct session *session = m->session;

	run->wopt.path = run->path;
	run->wopt.host = &session->host;
	run->wopt.target = session->title;
	run->wopt.system_wide = !session_task_target(session);
	run->wopt.interval_ns = (uint64_t)m->opt->interval_ms * 1000000ull;
	/* With metrics, the PMUs and topology they were resolved on go into the
	 * file too, so they can be recomputed on any machine. */
	if (session->plan && (!(run->wopt.catalog = plan_json(session->plan)) ||
			      !(run->wopt.host_files = recording_host_snapshot(&session->host.roots)))) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	run->wopt.sampling = sampling_json(session);
	/* --damon-hot, for report's hot share of each data object. */
	if (run->wopt.sampling && m->opt->damon_hot_pct)
		json_object_set_new(run->wopt.sampling, "damon_hot_pct", json_integer((json_int_t)m->opt->damon_hot_pct));
	if (recording_sink_init(&run->recording, &run->wopt, err) < 0 ||
	    measure_run_add(m, &run->recording, NULL, err) < 0 ||
	    (run->lua && (lua_sink_init(&run->lua_sink, run->lua, err) < 0 ||
			  measure_run_add(m, &run->lua_sink, NULL, err) < 0)) ||
	    ((run->ctl.fd >= 0 || run->fifo.fd >= 0) && session_control_attach(session, &run->ctl, &run->fifo, err) < 0))
		return -1;
	/* Phases get frames of their own (memscope report --regions). */
	session_control_read_at_phases(session);
	return 0;
}

static int record_ended(struct measure_run *m)
{
	struct record_run *run = m->ctx;

	if (recording_sink_error(&run->recording))
		return 1;
	/* Stopped by SIGINT/SIGTERM: the recording is complete, which is what was
	 * asked for; the command's status (killed by memscope) says nothing. */
	return session_end(m->session) == SAMPLER_END_SIGNAL ? 0 : session_exit_code(m->session);
}

int cmd_record(int argc, char **argv)
{
	struct session_options opt;
	struct session session;
	struct record_run run;
	struct ms_error err = { "" };
	bool use_ctl = true;
	struct lua_cli lua_cli = { .nr_scripts = 0 };
	struct measure_run m = { .session = &session, .opt = &opt, .chosen = &run.sinks, .ctx = &run,
				 .opened = record_opened, .ended = record_ended, .exec_status = true };
	int status;

	memset(&run, 0, sizeof(run));
	memset(&session, 0, sizeof(session));
	run.ctl.fd = -1;
	ctl_fifo_init(&run.fifo);
	snprintf(run.path, sizeof(run.path), "%s", RECORDING_DEFAULT_FILE);
	session_options_init(&opt, "record");
	status = parse_options(argc, argv, &opt, &run, &use_ctl, &lua_cli);
	if (status) {
		session_options_free(&opt);
		return status < 0 ? EXIT_USAGE : 0;
	}
	if (lua_cli_open(&lua_cli, &opt, LUA_OUTPUT_TEXT, &run.lua, &err) < 0) {
		session_options_free(&opt);
		return cli_fail(&err);
	}
	/* A metric a script defines is recorded as its inputs; a report with the
	 * same script computes it again. */
	if (lua_cli_take_metrics(run.lua, &opt, &run.lua_metrics, &run.nr_lua_metrics) < 0) {
		ms_warn("out of memory");
		lua_engine_free(run.lua);
		session_options_free(&opt);
		return 1;
	}
	if (!opt.interval_ms)
		opt.interval_ms = DEFAULT_INTERVAL_MS;
	if (use_ctl && !opt.replay_path)
		start_ctl(&run);
	/* Asked for by name: a FIFO that cannot be used is an error, not a note. */
	if (run.fifo_path && ctl_fifo_open(&run.fifo, run.fifo_path, &err) < 0) {
		ms_report(&err);
		status = 1;
	} else {
		status = measure_run(&m);
	}
	ctl_server_close(&run.ctl);
	ctl_fifo_close(&run.fifo);
	lua_engine_free(run.lua);
	free(run.lua_metrics);
	json_decref(run.wopt.catalog);
	json_decref(run.wopt.host_files);
	json_decref(run.wopt.sampling);
	session_options_free(&opt);
	return status;
}
