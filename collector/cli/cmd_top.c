/* memscope top: a live view of NUMA nodes and processes, full screen or as
 * batch text. The command builds a system-wide session and adds the top sink
 * (and the --lua scripts' sink, whose metrics are columns); the terminal is
 * one more descriptor the sampler waits on, and what is typed goes to the
 * top sink's thread as events. With --input, the frames of a recording
 * (memscope record -a) instead, at their recorded pace on the full screen,
 * as fast as they are read in batch. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/measure_options.h"
#include "cli/measure_run.h"
#include "util/report.h"
#include "ctl/ctl.h"
#include "catalog/resolver.h"
#include "metrics/metrics.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"
#include "pipeline/session_recording.h"
#include "recording/recording_host.h"
#include "sinks/lua_sink.h"
#include "sinks/top/top_model.h"
#include "sinks/top/top_sink.h"
#include "sinks/top/top_view.h"

#define TOP_DEFAULT_INTERVAL_MS 1000
enum { TOP_OPT_INPUT = CLI_LONG_ONLY, TOP_OPT_PER_TIER };

/* What top measures: the per-process numbers, as series per process (and,
 * for the focused process, per thread): faults, scheduling, migrations, page
 * allocations; and the node columns' metrics this host has. */
#define TOP_EVENTS TOP_PROCESS_EVENTS ",proc.cpu,proc.state"

struct top_run {
	struct session session;
	/* A replay on the full screen: the signals that end it, blocked and read
	 * by the top sink (the sampler watches none while reading a file). */
	int signal_fd;
	sigset_t old_mask;
	struct top_view *view;       /* the full screen until the top sink has it, or NULL: batch output */
	struct top_view *terminal;   /* the full screen's input, read by the sampler (the sink owns it) */
	char recording_socket[108];  /* control socket of the running recording, "" when none */
	char *notes;                 /* what the sources said while starting */
	char source_names[64];
	char hostname[64];           /* a recording's */
	char cpu_model[128];
	char col_why[TOP_NODE_NR_COLS][600]; /* --input: why a node column's metric is not in the recording */
	char tiers[256];
	/* For the steps of measure_run. */
	struct session_options *opt;
	struct top_sink_options *topt;
	struct lua_engine *lua;
	int *lua_metrics, nr_lua_metrics;
	bool batch;
	struct sink top_sink, lua_sink;
};

struct top_args {
	struct session_options *opt;
	struct top_sink_options *topt;
	bool batch;
	struct lua_cli *lua;
	const char *pid_text;
};

/* The structs top's option rows write to (cli_parse_into's dest). */
enum { TOP_TO_ARGS, TOP_TO_SESSION, TOP_TO_SINK };

static const struct cli_option top_options[] = {
	{ 'I', "interval", "MS", "refresh every MS milliseconds (default 1000, at least 10)", CLI_COMPLETE_NONE, NULL, 0 },
	{ TOP_OPT_INPUT, "input", "FILE", "replay a recording (memscope record -a) instead of measuring",
	  CLI_COMPLETE_FILE, NULL, 0, CLI_TO_STRING(TOP_TO_SESSION, struct session_options, input_path) },
	{ 'p', "pid", "PID", "focus one process: its row and its threads", CLI_COMPLETE_PID, NULL, 0,
	  CLI_TO_STRING(TOP_TO_ARGS, struct top_args, pid_text) },
	{ TOP_OPT_PER_TIER, "per-tier", NULL, "a node-panel row per memory tier (the sum of its nodes)\n"
	  "instead of per node; the key t switches", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(TOP_TO_SINK, struct top_sink_options, display.per_tier) },
	{ 'b', "batch", NULL, "plain text blocks for scripts instead of the full screen\n"
	  "(also when stdout is not a terminal or TERM is dumb)", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(TOP_TO_ARGS, struct top_args, batch) },
	{ 'n', "iterations", "N", "stop after N updates", CLI_COMPLETE_NONE, NULL, 0 },
	{ 's', "sort", "COLUMN", "sort processes by PID, THR, FAULTS/s, ALLOC/s, REMOTE%, CPU%,\n"
	  "OFFCPU%, MIGR/s or COMMAND (default FAULTS/s)", CLI_COMPLETE_WORDS,
	  "PID THR FAULTS ALLOC REMOTE CPU OFFCPU MIGR COMMAND", 0 },
	{ 0 },
};

static const struct cli_option top_lua_options[] = {
	{ LUA_CLI_OPT_LUA, "lua", "SCRIPT", "a Lua script whose metrics are node columns; its report is\n"
	  "printed when top ends (built-in name or path; repeatable)", CLI_COMPLETE_SCRIPT, NULL, 0 },
	{ LUA_CLI_OPT_UNSAFE, "lua-unsafe", NULL, "give scripts io, os and package (sandboxed otherwise)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

static const struct cli_group top_groups[] = {
	{ NULL, top_options },
	{ NULL, measure_damon_options },
	{ NULL, top_lua_options },
	{ NULL, NULL },
};

static const struct cli_rule top_rules[] = {
	{ CLI_EXCLUDES, TOP_OPT_INPUT, { 'I' },
	  "--input replays the frames at the interval they were recorded with; -I does not apply" },
	{ 0 },
};

const struct cli_command top_command = {
	.name = "top",
	.summary = "live full-screen view of NUMA nodes and processes",
	.usage = "[-I MS | --input FILE] [-p PID] [--per-tier] [-b] [-n N] [-s COLUMN] [--lua SCRIPT]...",
	.groups = top_groups,
	.rules = top_rules,
	.epilog = "keys: s sort, p pause, + and - interval, l label, f filter, t tiers, ? help, q quit\n",
};

static int parse_sort(const char *text, enum top_proc_col *col)
{
	for (int c = 0; c < TOP_PROC_NR_COLS; c++) {
		const char *name = top_proc_col_name(c);
		size_t len = strcspn(name, "/%");

		/* "FAULTS/s", "faults" and "cpu%" all name a column. */
		if (strcasecmp(text, name) == 0 || (strlen(text) == len && strncasecmp(text, name, len) == 0)) {
			*col = (enum top_proc_col)c;
			return 0;
		}
	}
	ms_warn("-s %s: no such column; columns: PID, THR, FAULTS, ALLOC, REMOTE, CPU, "
		"OFFCPU, MIGR, HOT_B, COLD_B, COMMAND", text);
	return -1;
}

static int parse_pid(const char *text, pid_t *pid, bool check_live)
{
	char *end, path[64];
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || end == text || *end || value <= 0 || value > 0x3fffffff) {
		ms_warn("-p %s: not a process id (one PID, e.g. -p 1234)", text);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%ld", value);
	/* A recording's processes are not this host's: checked against it later. */
	if (check_live && access(path, F_OK) < 0) {
		ms_warn("-p %s: no such process (ps -e lists the running ones)", text);
		return -1;
	}
	*pid = (pid_t)value;
	return 0;
}

static int top_option(void *ctx, int key, const char *arg)
{
	struct top_args *a = ctx;
	char *end;

	switch (key) {
	case LUA_CLI_OPT_LUA:
	case LUA_CLI_OPT_UNSAFE:
		return lua_cli_option(a->lua, key, arg) < 0 ? -1 : 0;
	case 'I':
	case SESSION_OPT_DAMON_HOT:
	case SESSION_OPT_DAMON_COLD_AGE:
	case SESSION_OPT_DAMON_MODE:
		/* The shared parser checks the range. */
		return session_option(a->opt, key, arg) < 0 ? -1 : 0;
	case 'n':
		errno = 0;
		a->topt->max_updates = strtol(arg, &end, 10);
		if (errno || end == arg || *end || a->topt->max_updates <= 0) {
			ms_warn("-n %s: needs a number of updates, e.g. -n 5", arg);
			return -1;
		}
		return 0;
	case 's':
		return parse_sort(arg, &a->topt->display.sort);
	default:
		return -1;
	}
}

/* 0, 1 after --help, -1 on a usage error. */
static int parse_options(int argc, char **argv, struct session_options *opt, struct top_sink_options *topt,
			 bool *batch, struct lua_cli *lua)
{
	struct top_args a = { opt, topt, false, lua, NULL };
	void *const dest[] = { [TOP_TO_ARGS] = &a, [TOP_TO_SESSION] = opt, [TOP_TO_SINK] = topt };
	int status, first = cli_parse_into(&top_command, argc, argv, top_option, &a, dest, &status);
	const char *pid_text;

	if (first < 0)
		return status ? -1 : 1;
	*batch = a.batch;
	pid_text = a.pid_text;
	if (first < argc) {
		ms_warn("unexpected argument '%s' (top watches the whole system; "
			"-p PID focuses one process)", argv[first]);
		return -1;
	}
	if (pid_text && parse_pid(pid_text, &topt->inputs.focus_pid, !opt->input_path) < 0)
		return -1;
	/* A recording keeps its own interval (an -I would add its frames up). */
	if (!opt->interval_ms && !opt->input_path)
		opt->interval_ms = TOP_DEFAULT_INTERVAL_MS;
	if (opt->input_path) {
		topt->inputs.interval_ns = (uint64_t)TOP_DEFAULT_INTERVAL_MS * 1000000ull;
		topt->display.interval_ms = TOP_DEFAULT_INTERVAL_MS;
		topt->inputs.replay = true;
		return 0;
	}
	if (opt->interval_ms < TOP_MIN_INTERVAL_MS) {
		/* A screen cannot show more; stat and record go down to 1 ms. */
		ms_warn("-I %ld: top refreshes at most every %d ms (for faster "
			"intervals: memscope stat -I or memscope record -I)", opt->interval_ms, TOP_MIN_INTERVAL_MS);
		return -1;
	}
	topt->inputs.interval_ns = (uint64_t)opt->interval_ms * 1000000ull;
	topt->display.interval_ms = (uint64_t)opt->interval_ms;
	topt->inputs.replay = opt->input_path != NULL;
	return 0;
}

/* Is a `memscope record` running for this user? Its control socket says
 * where it records ("ok: recording TARGET to PATH: N frames, ..., pid P").
 * On the top sink's thread. */
static void check_recording(void *ctx, char *recording, size_t size)
{
	struct top_run *run = ctx;
	char reply[CTL_MAX_MESSAGE], path[512] = "";
	struct ms_error err = { "" };
	const char *to, *pid;
	int pid_value = 0;

	run->recording_socket[0] = '\0';
	snprintf(recording, size, "off");
	if (ctl_find_socket(0, run->recording_socket, sizeof(run->recording_socket), &err) < 0 ||
	    ctl_request(run->recording_socket, "status", reply, sizeof(reply), &err) < 0 ||
	    strncmp(reply, "ok: recording ", 14) != 0) {
		run->recording_socket[0] = '\0';
		return;
	}
	to = strstr(reply, " to ");
	pid = strstr(reply, "pid ");
	if (to)
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(to + 4, ":"), to + 4);
	if (pid)
		pid_value = atoi(pid + 4);
	snprintf(recording, size, "on file=%s pid=%d", path[0] ? path : "?", pid_value);
}

/* A label typed in top goes to the running recording. On the top sink's thread. */
static void add_label(void *ctx, const char *text, double elapsed_s, char *notice, size_t size)
{
	struct top_run *run = ctx;
	char request[CTL_MAX_MESSAGE], reply[CTL_MAX_MESSAGE];
	struct ms_error err = { "" };

	if (!run->recording_socket[0]) {
		/* Shown with its time, so it can be matched with what was on screen. */
		snprintf(notice, size, "label \"%s\" at %.1f s (not stored: no recording is running)", text, elapsed_s);
		return;
	}
	snprintf(request, sizeof(request), "label %s", text);
	if (ctl_request(run->recording_socket, request, reply, sizeof(reply), &err) < 0)
		snprintf(notice, size, "label not stored: %s", err.text);
	else
		snprintf(notice, size, "%s", reply);
}

/* The terminal is readable: on the sampling thread, read what was typed (and
 * whether it was resized) and hand it to the top sink; nothing is drawn here. */
static int on_terminal(struct sampler *s, int fd, void *ctx)
{
	struct top_run *run = ctx;
	struct sink_event ev = { .kind = SINK_EVENT_KEYS };
	bool resized;

	(void)s;
	(void)fd;
	ev.length = top_view_read_input(run->terminal, ev.text, sizeof(ev.text), &resized);
	if (resized)
		session_event(&run->session, &(struct sink_event){ .kind = SINK_EVENT_RESIZE });
	if (ev.length)
		session_event(&run->session, &ev);
	return 0;
}

/* A replay on the full screen ends on SIGINT, SIGTERM or SIGHUP as on q:
 * they wait in a signalfd the top sink reads between frames. */
static int block_signals(struct top_run *run, struct ms_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &run->old_mask) < 0) {
		ms_error_set(err, "cannot block signals: %s", strerror(errno));
		return -1;
	}
	run->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (run->signal_fd < 0) {
		ms_error_set(err, "signalfd: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &run->old_mask, NULL);
		return -1;
	}
	return 0;
}

/* The screen is gone: signals that came after the last frame was up end
 * nothing more (the run is over); they are taken, then unblocked. */
static void unblock_signals(struct top_run *run)
{
	struct signalfd_siginfo si;

	if (run->signal_fd < 0)
		return;
	while (read(run->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	sigprocmask(SIG_SETMASK, &run->old_mask, NULL);
	close(run->signal_fd);
	run->signal_fd = -1;
}

/* The node columns' metrics (a recording says itself which it holds), and
 * every metric the --lua scripts define (so that lua_cli_take_metrics()
 * measures their inputs and hands back their indices). */
static int want_metrics(struct session_options *opt, struct lua_engine *lua, int **lua_metrics, int *nr)
{
	for (int c = 0; !opt->input_path && c < TOP_NODE_NR_COLS; c++)
		if (top_node_col_metric(c) && session_option(opt, 'm', top_node_col_metric(c)) < 0)
			return -1;
	for (int i = 0; lua && i < lua_engine_nr_metrics(lua); i++)
		if (session_option(opt, 'm', lua_engine_metric_name(lua, i)) < 0)
			return -1;
	return lua_cli_take_metrics(lua, opt, lua_metrics, nr);
}

/* "perf procfs bpf": the session's kinds of sources, the one that takes
 * every name left first (the reverse of the order they claim names in). */
static void name_sources(struct top_run *run)
{
	const struct session *s = &run->session;
	size_t len = 0;

	for (int k = s->registry.nr - 1; k >= 0; k--)
		for (int i = 0; i < s->nr_sources; i++)
			if (s->sources[i].kind == s->registry.kinds[k]) {
				len += (size_t)snprintf(run->source_names + len, sizeof(run->source_names) - len, "%s%s",
							len ? " " : "", s->registry.kinds[k]->name);
				break;
			}
}

/* A column's metric missing from a recording: the recorded machine could not
 * measure it (the resolver's reason, on that machine's PMUs), or it could and
 * the recording left it out. */
static const char *recorded_col_why(const struct session *s, const char *metric, char *buf, size_t size)
{
	const struct resolution *res = s->resolution;
	int idx = res ? catalog_metric_index(res->cat, metric) : -1;

	if (idx >= 0 && !res->metrics[idx].available)
		snprintf(buf, size, "%s: %s (on the recorded machine)", metric, res->metrics[idx].why);
	else if (idx >= 0)
		snprintf(buf, size, "not in the recording, though its machine could measure it (memscope record -a "
			 "records what top shows)");
	else
		snprintf(buf, size, "not in the recording (memscope record -a records what top shows)");
	return buf;
}

/* The recording machine's tiers, from the sysfs and procfs files it kept
 * (recorded with -m); "" when it kept none. */
static void recorded_tiers(const struct recording_header *h, char *buf, size_t size)
{
	struct host host;
	struct ms_error err = { "" };
	struct recorded_host_tree tree;

	buf[0] = '\0';
	if (!h->host_files || recording_host_load(h->host_files, &host, &tree, &err) < 0) {
		if (h->host_files)
			recording_host_remove(&tree);
		return;
	}
	top_describe_tiers(buf, size, &host.roots, &host.topo);
	host_free(&host);
	recording_host_remove(&tree);
}

/* The session is open: what the model reads besides the frames, the
 * screen, then the top sink and the scripts'. */
static int top_opened(struct measure_run *m, struct ms_error *err)
{
	struct top_run *run = m->ctx;
	struct session_options *opt = run->opt;
	struct top_sink_options *topt = run->topt;
	char why[256];

	if (opt->notes)
		fclose(opt->notes);
	opt->notes = NULL;
	/* Tier rows come from the metric engine's tier scopes. */
	if (topt->display.per_tier &&
	    (!run->session.engine || metric_engine_nr_scopes(run->session.engine, SCOPE_TIER) == 0)) {
		ms_warn("--per-tier: %s no memory tiers (%s%sdevices/virtual/memory_tiering/"
			"memory_tierN/nodelist: Linux 6.1 or later, with the nodes of each tier online); without "
			"--per-tier top shows a row per node",
			opt->input_path ? "the recorded machine's kernel listed" : "the kernel lists",
			opt->input_path ? "" : run->session.host.roots.sys, opt->input_path ? "" : "/");
		return 1;
	}
	/* The per-process series' source (the eBPF probes), when it did not start. */
	topt->inputs.bpf_why = session_name_why(&run->session, "proc.faults");
	for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
		const char *metric = top_node_col_metric(c);

		topt->inputs.node_col_why[c] = metric ? session_metric_why(&run->session, metric) : NULL;
		if (opt->input_path && metric && (!run->session.plan || metric_plan_find(run->session.plan, metric) < 0))
			topt->inputs.node_col_why[c] = recorded_col_why(&run->session, metric, run->col_why[c],
									sizeof(run->col_why[c]));
	}
	if (opt->input_path) {
		const struct recording_header *h = session_recording_header(&run->session);

		/* The recording machine, as recorded. */
		snprintf(run->hostname, sizeof(run->hostname), "%s", h->hostname[0] ? h->hostname : "recorded host");
		snprintf(run->source_names, sizeof(run->source_names), "recording");
		snprintf(run->cpu_model, sizeof(run->cpu_model), "%s",
			 run->session.resolution && run->session.resolution->cpu.known ? run->session.resolution->cpu.text
											: "CPU not recorded");
		topt->inputs.hostname = run->hostname;
		topt->inputs.cpu_model = run->cpu_model;
		recorded_tiers(h, run->tiers, sizeof(run->tiers));
		topt->inputs.tiers = run->tiers;
		topt->display.interval_ms = h->interval_ns / 1000000ull;
		snprintf(topt->display.recording, sizeof(topt->display.recording), "replay of %s", opt->input_path);
	} else {
		name_sources(run);
		topt->check_recording = check_recording;
		topt->add_label = add_label;
	}
	topt->inputs.source_names = run->source_names;
	topt->inputs.notes = run->notes;
	topt->inputs.lua = run->lua;
	topt->inputs.lua_metrics = run->lua_metrics;
	topt->inputs.nr_lua_metrics = run->nr_lua_metrics;
	topt->ctx = run;
	if (!run->batch) {
		run->view = top_view_open(why, sizeof(why));
		if (!run->view)
			ms_warn("%s: batch output instead of the full screen", why);
	}
	topt->view = run->view;
	if (run->view && opt->input_path && block_signals(run, err) < 0)
		return -1;
	topt->signal_fd = run->signal_fd;
	/* top draws on the scripts' thread, after them: their metrics are its
	 * columns. It ends first: the screen goes, then the reports. */
	if (top_sink_init(&run->top_sink, topt, err) < 0)
		return -1;
	run->terminal = run->view;
	run->view = NULL;     /* the sink's now */
	if (measure_run_add(m, &run->top_sink, run->lua ? &run->lua_sink : NULL, err) < 0 ||
	    (run->lua && (lua_sink_init(&run->lua_sink, run->lua, err) < 0 ||
			  measure_run_add(m, &run->lua_sink, NULL, err) < 0)) ||
	    /* A recording's frames come as fast as top takes them: the top sink
	     * paces them and reads the keys itself. */
	    (run->terminal && !opt->input_path &&
	     session_watch_add(&run->session, top_view_input_fd(run->terminal), on_terminal, run, err) < 0))
		return -1;
	return 0;
}

static int top_ended(struct measure_run *m)
{
	(void)m;
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct session_options opt;
	struct top_sink_options topt = { .display = { .sort = TOP_PROC_FAULTS } };
	struct top_run run;
	struct ms_error err = { "" };
	bool batch = false;
	int status = 1, *lua_metrics = NULL, nr_lua_metrics = 0;
	struct lua_cli lua_cli = { .nr_scripts = 0 };
	struct lua_engine *lua = NULL;
	char *lua_report = NULL;
	size_t lua_report_len = 0, notes_len = 0;
	struct measure_run m = { .session = &run.session, .opt = &opt, .ctx = &run, .opened = top_opened,
				 .ended = top_ended, .close_before_error = true, .open_failure_status = 1 };

	memset(&run, 0, sizeof(run));
	run.signal_fd = -1;
	topt.signal_fd = -1;
	session_options_init(&opt, "top");
	status = parse_options(argc, argv, &opt, &topt, &batch, &lua_cli);
	if (status) {
		session_options_free(&opt);
		return status < 0 ? EXIT_USAGE : 0;
	}
	status = 1;
	if (lua_cli.nr_scripts) {
		/* Script output would tear the full screen: it is kept and printed
		 * when top ends. */
		lua_cli.out = open_memstream(&lua_report, &lua_report_len);
		if (!lua_cli.out)
			goto oom;
	}
	if (!opt.input_path && session_option(&opt, 'e', TOP_EVENTS) < 0)
		goto oom;
	if (lua_cli_open(&lua_cli, &opt, LUA_OUTPUT_TEXT, &lua, &err) < 0) {
		ms_report(&err);   /* top ends with 1 whatever the kind */
		goto out;
	}
	if (want_metrics(&opt, lua, &lua_metrics, &nr_lua_metrics) < 0)
		goto oom;
	opt.system_wide = !opt.input_path;
	/* Show what this host has, and why not for the rest, in the display:
	 * the notes go into the help screen, not under the full screen. */
	opt.metrics_if_available = true;
	opt.bpf_optional = true;
	opt.per_process = true;
	opt.thread_pid = topt.inputs.focus_pid;
	opt.notes = open_memstream(&run.notes, &notes_len);
	run.opt = &opt;
	run.topt = &topt;
	run.lua = lua;
	run.lua_metrics = lua_metrics;
	run.nr_lua_metrics = nr_lua_metrics;
	run.batch = batch;
	status = measure_run(&m);
	if (opt.notes)
		fclose(opt.notes);   /* the session did not open */
	opt.notes = NULL;
	goto out;
oom:
	ms_warn("out of memory");
out:
	top_view_close(run.view);
	unblock_signals(&run);
	lua_engine_free(lua);
	free(lua_metrics);
	free(run.notes);
	if (lua_cli.out) {
		fclose(lua_cli.out);
		if (lua_report)
			fputs(lua_report, stdout);
		free(lua_report);
	}
	session_options_free(&opt);
	return status;
}
