/* memscope live: a web page with live charts of what a session measures,
 * recordings replayed into it, and /metrics for Prometheus - the HTTP sink
 * of the pipeline (sinks/http/http_sink.h), steered from the page through
 * the run's control socket as memscope ctl steers record. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/measure_options.h"
#include "cli/measure_run.h"
#include "config.h"
#include "ctl/ctl.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"
#include "pipeline/session_control.h"
#include "pipeline/session_recording.h"
#include "recording/recording_host.h"
#include "sinks/http/http_sink.h"
#include "sinks/http/http_stream.h"
#include "sinks/recording_sink.h"
#include "util/report.h"

enum {
	OPT_LISTEN = CLI_LONG_ONLY + 0x40, OPT_REMOTE, OPT_TOKEN_FILE, OPT_NO_UI, OPT_HISTORY, OPT_NO_CTL, OPT_EXIT_AT_END,
	OPT_MAX_CONNECTIONS, OPT_READ_TOKEN_FILE,
};

#define LIVE_DEFAULT_INTERVAL_MS 500
#define LIVE_NO_UI_HISTORY_BYTES (4u << 20)
#define LIVE_NO_UI_ENDED_MAX 4096
/* Without -e or -m: what a page about the memory system shows first, where
 * this host can count it (the rest is listed on the page with the reason). */
#define LIVE_DEFAULT_METRICS \
	"mem.read_bw,mem.write_bw,mem.remote_ratio,llc.miss_rate,kernel.faults,kernel.cpu_migrations," \
	"kernel.pages_migrated,numa.hit,numa.miss,numa.local_alloc_ratio,numa.used_bytes,numa.free_bytes," \
	"tier.promoted_pages,tier.demoted_pages"
#define LIVE_DEFAULT_EVENTS SESSION_DEFAULT_EVENTS ",proc.faults,proc.pages_alloc"

struct live_run {
	struct http_sink_options http;
	bool ui;
	bool use_ctl;
	bool exit_at_end;
	const char *record_path;       /* -o: also record */
	struct ctl_server ctl;
	struct recording_writer_options wopt;
	struct measure_sinks sinks;    /* --influx FILE ... */
	struct sink http_sink, recording;
};

/* The struct live's option rows write to (cli_parse_into's dest). */
enum { LIVE_TO_RUN };

static const struct cli_option live_http_options[] = {
	{ OPT_LISTEN, "listen", "ADDR:PORT", "where the page and /metrics are served (default " HTTP_LISTEN_DEFAULT ";\n"
	  ":0 takes any free port)", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_STRING(LIVE_TO_RUN, struct live_run, http.server.listen) },
	{ OPT_REMOTE, "remote", NULL, "allow an address other than loopback; every request then needs\nthe token",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(LIVE_TO_RUN, struct live_run, http.server.allow_remote) },
	{ OPT_TOKEN_FILE, "token-file", "FILE", "the token, from a file only its owner can read (default: a new\n"
	  "one, printed in the URL; one from a file is never printed)", CLI_COMPLETE_FILE, NULL, 0,
	  CLI_TO_STRING(LIVE_TO_RUN, struct live_run, http.server.token_file) },
	{ OPT_READ_TOKEN_FILE, "read-token-file", "FILE", "a second token, from a file as --token-file, that reads\n"
	  "(/metrics, the page, the stream) but never controls the run:\nthe one to give Prometheus",
	  CLI_COMPLETE_FILE, NULL, 0, CLI_TO_STRING(LIVE_TO_RUN, struct live_run, http.server.read_token_file) },
	{ OPT_NO_UI, "no-ui", NULL, "no page: /metrics for Prometheus (and the stream) only", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_CLEAR(LIVE_TO_RUN, struct live_run, ui) },
	{ OPT_HISTORY, "history", "MB", "stream history kept for pages that connect late or reconnect\n"
	  "(default 64 MB; 4 MB with --no-ui)", CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_MAX_CONNECTIONS, "max-connections", "N", "connections served at once (1-100000)", CLI_COMPLETE_NONE,
	  NULL, 0 },
	{ 'o', "output", "FILE", "also record to FILE (labels typed in the page go into it)", CLI_COMPLETE_FILE,
	  NULL, 0, CLI_TO_STRING(LIVE_TO_RUN, struct live_run, record_path) },
	{ OPT_NO_CTL, "no-ctl", NULL, "no control socket: neither the page nor memscope ctl steers the run",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_CLEAR(LIVE_TO_RUN, struct live_run, use_ctl) },
	{ OPT_EXIT_AT_END, "exit-at-end", NULL, "exit when the run ends (the command exits, the input is read);\n"
	  "by default the page stays until Ctrl-C", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_BOOL(LIVE_TO_RUN, struct live_run, exit_at_end) },
	{ 0 },
};

static const struct cli_group live_groups[] = {
	{ "What to count", measure_count_options },
	{ NULL, measure_damon_options },
	{ "Where", measure_target_options },
	{ NULL, measure_file_options },
	{ "When", measure_interval_options },
	{ "The page", live_http_options },
	{ "Other outputs", measure_sink_options },
	{ NULL, NULL },
};

static const struct cli_refusal live_refused[] = {
	{ "per-*", "chooses how stat shows totals; the page shows every scope (system, node, socket, channel) "
	  "and /metrics every series" },
	{ NULL, NULL },
};

const struct cli_command live_command = {
	.name = "live",
	.summary = "web page with live charts, recordings in the browser, /metrics for Prometheus",
	.usage = "[OPTIONS] [-a | -p PIDS | [--] CMD [ARGS...] | --input FILE | --replay FILE]",
	.groups = live_groups,
	.epilog = "Frames come every -I MS (default 500 ms) and reach the page in batches about every 400 ms.\n"
		  "Without -e or -m the page shows the memory-system metrics this host can count, page faults,\n"
		  "context switches and migrations, and per-process faults. Options end at CMD.\n",
	.operands = CLI_COMPLETE_COMMAND,
	.options_first = true,
	.refused = live_refused,
};

struct live_args {
	struct session_options *opt;
	struct live_run *run;
	struct lua_cli *lua;
};

static int live_option(void *ctx, int key, const char *arg)
{
	struct live_args *a = ctx;
	struct live_run *run = a->run;
	int shared = measure_cli_option(a->opt, a->lua, key, arg);
	char *end;
	long v;

	if (shared <= 0)
		return shared;
	if ((shared = measure_sink_option(&run->sinks, "live", key, arg)) <= 0)
		return shared;
	switch (key) {
	case OPT_HISTORY:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 65536) {
			ms_warn("--history %s: needs megabytes, 1-65536 (e.g. --history 64)", arg);
			return -1;
		}
		run->http.history_bytes = (size_t)v << 20;
		return 0;
	case OPT_MAX_CONNECTIONS:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 100000) {
			ms_warn("--max-connections %s: needs a number, 1-100000", arg);
			return -1;
		}
		run->http.server.max_connections = (unsigned)v;
		return 0;
	default:
		return -1;
	}
}

/* 0, 1 after --help, -1 on a usage error. */
static int parse_options(int argc, char **argv, struct session_options *opt, struct live_run *run,
			 struct lua_cli *lua)
{
	struct live_args a = { opt, run, lua };
	void *const dest[] = { [LIVE_TO_RUN] = run };
	int status, first = cli_parse_into(&live_command, argc, argv, live_option, &a, dest, &status);

	if (first < 0)
		return status ? -1 : 1;
	/* Without -e or -m: what the page shows first (before the shared
	 * defaults fill in stat's events). */
	if (!opt->events.nr && !opt->metrics.nr && !opt->input_path && !opt->replay_path) {
		if (session_option(opt, 'e', LIVE_DEFAULT_EVENTS) < 0 || session_option(opt, 'm', LIVE_DEFAULT_METRICS) < 0)
			return -1;
		opt->metrics_if_available = true;
		opt->bpf_optional = true;
	}
	/* The page's process table and /metrics' pid labels: the processes
	 * of the run have series of their own, as top's do. */
	opt->per_process = true;
	if (session_options_finish(opt, argv + first) < 0)
		return -1;
	if (run->record_path && (opt->input_path || opt->replay_path)) {
		ms_warn("-o records what is counted here; with --%s there is nothing to "
			"record (the file is the record)", opt->input_path ? "input" : "replay");
		return -1;
	}
	return 0;
}

/* The page: $MEMSCOPE_WEB_DIR, the build tree beside this program, or the
 * installed one. */
static const char *find_web_root(char *buf, size_t size)
{
	const char *env = getenv("MEMSCOPE_WEB_DIR");
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n;
	struct stat st;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(probe, sizeof(probe), "%s/contrib/web/lib/uPlot.iife.min.js", exe);
		if (stat(probe, &st) == 0) {
			snprintf(buf, size, "%s/contrib/web", exe);
			return buf;
		}
	}
	snprintf(probe, sizeof(probe), "%s/web/lib/uPlot.iife.min.js", MEMSCOPE_DATADIR);
	if (stat(probe, &st) == 0) {
		snprintf(buf, size, "%s/web", MEMSCOPE_DATADIR);
		return buf;
	}
	return NULL;
}

/* The page's control requests, through the run's own control socket: the
 * same path, checks and answers as memscope ctl. */
static int control_request(const char *line, char *reply, size_t size, void *ctx)
{
	struct live_run *run = ctx;
	struct ms_error err = { "" };

	if (ctl_request(run->ctl.path, line, reply, size, &err) < 0) {
		snprintf(reply, size, "%s", err.text);
		return -1;
	}
	return 0;
}

static void start_ctl(struct live_run *run)
{
	char path[sizeof(run->ctl.path)];
	struct ms_error err = { "" };

	if (ctl_socket_path(getpid(), path, sizeof(path), true, &err) < 0 ||
	    ctl_server_open(&run->ctl, path, &err) < 0) {
		ms_warn("note: no control socket (the page cannot pause or label this run): %s",
			err.text);
		return;
	}
	setenv(CTL_SOCKET_ENV, path, 1);
	run->http.control = control_request;
	run->http.control_ctx = run;
}

/* Where to look: the page's URL to open, or (--no-ui) where /metrics
 * answers. A token from a file is named by its file, never printed. */
static void announce(const struct live_run *run, const char *title, const char *url)
{
	const char *host = strstr(url, "://") + 3;
	bool every = !strncmp(host, "0.0.0.0:", 8) || !strncmp(host, "[::]:", 5);
	const char *where = every ? " (on every address of this machine)" : "";
	char token[PATH_MAX + 64] = "";

	if (run->http.server.token_file)
		snprintf(token, sizeof(token), "; the token is the one in %s", run->http.server.token_file);
	if (run->ui && run->http.server.web_root)
		ms_warn("charts of %s: open %s%s%s", title, url, where, token);
	else
		ms_warn("serving %s: /metrics and /api/stream at %s%s%s", title, url, where,
			token);
	if (run->http.server.read_token_file)
		ms_warn("the token in %s reads (/metrics, the page, the stream) but never "
			"controls", run->http.server.read_token_file);
}

/* The run ended by itself: keep serving until Ctrl-C (or SIGTERM). */
static void linger(const struct session *s, const char *url)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ms_warn("%s; still serving %s (Ctrl-C to stop)", session_end_reason(s), url);
	sigwait(&set, &sig);
}

/* The session is open: the page learns what cannot be counted here, a
 * recording joins when asked for, and the URL is said before sampling. */
static int live_opened(struct measure_run *m, struct ms_error *err)
{
	struct live_run *run = m->ctx;
	struct session *session = m->session;
	const struct session_options *opt = m->opt;

	/* Metrics asked for (or shown by default) that this host cannot count:
	 * the page lists them with the reason. */
	const char **names = calloc((size_t)session->nr_unmeasured + 1, sizeof(char *));
	const char **whys = calloc((size_t)session->nr_unmeasured + 1, sizeof(char *));
	int status = names && whys ? 0 : -1;

	for (int i = 0; !status && i < session->nr_unmeasured; i++) {
		names[i] = session->unmeasured[i].name;
		whys[i] = session->unmeasured[i].why;
	}
	if (!status)
		status = http_sink_set_na(&run->http_sink, names, whys, session->nr_unmeasured);
	free(names);
	free(whys);
	if (status < 0) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (opt->input_path && http_sink_serve_recording(&run->http_sink, session_recording_fd(session), err) < 0)
		return -1;
	/* A recording from the start (-o), or one the page starts and stops
	 * (record FILE, record stop) on a live run. */
	if (run->record_path || (!opt->input_path && !opt->replay_path)) {
		run->wopt.path = run->record_path;
		run->wopt.host = &session->host;
		run->wopt.target = session->title;
		run->wopt.system_wide = !session_task_target(session);
		run->wopt.interval_ns = (uint64_t)opt->interval_ms * 1000000ull;
		if (session->plan && !(run->wopt.host_files = recording_host_snapshot(&session->host.roots))) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		if (recording_sink_init_stoppable(&run->recording, &run->wopt, err) < 0 ||
		    measure_run_add(m, &run->recording, NULL, err) < 0)
			return -1;
	}
	/* The server (handed to the run) is added after these. */
	if (run->ctl.fd >= 0 && session_control_attach(session, &run->ctl, NULL, err) < 0)
		return -1;
	announce(run, session->title, http_sink_url(&run->http_sink));
	fflush(stderr);
	return 0;
}

static int live_ended(struct measure_run *m)
{
	struct live_run *run = m->ctx;
	const struct session *session = m->session;

	if (session_end(session) != SAMPLER_END_SIGNAL && !run->exit_at_end)
		linger(session, http_sink_url(&run->http_sink));
	return session_end(session) == SAMPLER_END_SIGNAL ? 0 : session_exit_code(session);
}

int cmd_live(int argc, char **argv)
{
	struct session_options opt;
	struct session session;
	struct live_run run;
	struct lua_cli lua_cli = { .nr_scripts = 0 };
	struct ms_error err = { "" };
	struct measure_run m = { .session = &session, .opt = &opt, .chosen = &run.sinks, .ctx = &run,
				 .opened = live_opened, .ended = live_ended };
	char web[PATH_MAX];
	bool usage = false;
	int status;

	memset(&run, 0, sizeof(run));
	memset(&session, 0, sizeof(session));
	run.ctl.fd = -1;
	run.ui = true;
	run.use_ctl = true;
	session_options_init(&opt, "live");
	status = parse_options(argc, argv, &opt, &run, &lua_cli);
	if (status) {
		session_options_free(&opt);
		return status < 0 ? EXIT_USAGE : 0;
	}
	if (lua_cli.nr_scripts) {
		ms_warn("--lua scripts run in stat, top, record and report; the page shows "
			"catalog metrics and events (-m, -e)");
		session_options_free(&opt);
		return EXIT_USAGE;
	}
	/* A recording keeps its own interval (an -I adds its frames up). */
	if (!opt.interval_ms && !opt.input_path)
		opt.interval_ms = LIVE_DEFAULT_INTERVAL_MS;
	/* Without a page the history serves only a stream reader that reconnects:
	 * a few minutes of batches, not the hours a page draws when it opens late;
	 * and fewer exited processes are kept one by one for /api/totals (the
	 * rest are added up into its "others"), so an exporter left running for
	 * weeks stays small. */
	if (!run.ui && !run.http.history_bytes)
		run.http.history_bytes = LIVE_NO_UI_HISTORY_BYTES;
	if (!run.ui)
		run.http.ended_max = LIVE_NO_UI_ENDED_MAX;
	if (run.ui) {
		run.http.server.web_root = find_web_root(web, sizeof(web));
		if (!run.http.server.web_root)
			ms_warn("note: the page is not installed (build it: npm ci in contrib/web, "
				"then ninja; or set MEMSCOPE_WEB_DIR): /metrics and /api/stream still answer");
	}
	if (run.use_ctl && !opt.replay_path && !opt.input_path)
		start_ctl(&run);
	/* The server first: a usage error (an address, a token file) before any
	 * command starts, and the URL printed before sampling. */
	if (http_sink_init(&run.http_sink, &run.http, &usage, &err) < 0) {
		ms_report(&err);
		status = usage ? EXIT_USAGE : 1;
	} else {
		measure_run_hand(&m, &run.http_sink);
		status = measure_run(&m);
	}
	ctl_server_close(&run.ctl);
	json_decref(run.wopt.host_files);
	session_options_free(&opt);
	return status;
}
