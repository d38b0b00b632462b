/* memscope record: frames to a self-describing recording file (format:
 * docs/recording-format.md), steered while it runs through the control
 * socket (memscope ctl: label, phase, pause, resume, interval, record FILE,
 * status). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "ctl/ctl.h"
#include "ctl/ctl_fifo.h"
#include "metrics/metrics.h"
#include "recording/recording.h"
#include "recording/recording_host.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"

enum { OPT_COMPRESS = 0x2000, OPT_NO_CTL, OPT_FIFO };

/* perf record samples until stopped; memscope record's frames come every second by default. */
#define DEFAULT_INTERVAL_MS 1000

struct record_run {
	struct session *session;
	struct recording_writer_options wopt;
	struct recording_writer *writer;
	struct ctl_server ctl;
	struct ctl_fifo fifo;        /* --fifo: the same commands, one per line */
	const char *fifo_path;
	char path[PATH_MAX];
	char target[512];
	bool paused;
	bool failed;                 /* a write failed: the run stops */
	struct ms_error err;
	struct lua_engine *lua;      /* --lua scripts on the frames as they are recorded, or NULL */
	int *lua_metrics;            /* -m names the scripts define: their inputs are recorded */
	int nr_lua_metrics;
};

static void record_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope record [-o FILE] [--compress] [-I MS] [-e EVENTS] [-m METRICS]\n"
		"                       [-a | -p PID[,PID...] | [--] CMD [ARGS...]] [--no-ctl] [--fifo PATH]\n\n%s"
		"  -o, --output FILE   the recording (default: " RECORDING_DEFAULT_FILE "; an existing one is kept\n"
		"                      as FILE.old); a name ending in .zst is compressed\n"
		"  -z, --compress      compress with zstd whatever the name\n"
		"      --no-ctl        no control socket (memscope ctl cannot reach this run)\n"
		"      --fifo PATH     also take the commands one per line from a FIFO (created 0600),\n"
		"                      as NUMAscope's control FIFO: echo 'label phase 2' > PATH\n"
		"%s"
		"Frames come every -I MS (default %d ms). While it runs, 'memscope ctl' adds labels,\n"
		"pauses, resumes, changes the interval or starts a new file.\n",
		session_options_help, lua_cli_help, DEFAULT_INTERVAL_MS);
}

static int parse_options(int argc, char **argv, struct session_options *opt, struct record_run *run,
			 bool *use_ctl, struct lua_cli *lua)
{
	static const struct option longopts[] = {
		SESSION_LONG_OPTIONS,
		LUA_CLI_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "compress", no_argument, NULL, 'z' },
		{ "no-ctl", no_argument, NULL, OPT_NO_CTL },
		{ "fifo", required_argument, NULL, OPT_FIFO },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, shared;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+" SESSION_SHORT_OPTIONS "o:zh", longopts, NULL)) != -1) {
		shared = measure_option(opt, lua, c, optarg);
		if (shared < 0)
			return -1;
		if (shared)
			continue;
		switch (c) {
		case 'o':
			if (!optarg[0] || strlen(optarg) >= sizeof(run->path)) {
				fprintf(stderr, "memscope record: -o needs a file name\n");
				return -1;
			}
			snprintf(run->path, sizeof(run->path), "%s", optarg);
			break;
		case 'z':
			run->wopt.compress = true;
			break;
		case OPT_NO_CTL:
			*use_ctl = false;
			break;
		case OPT_FIFO:
			run->fifo_path = optarg;
			break;
		case 'h':
			record_usage(stdout);
			exit(0);
		default:
			record_usage(stderr);
			return -1;
		}
	}
	if (session_options_finish(opt, argc, argv) < 0)
		return -1;
	if (opt->input_path) {
		fprintf(stderr, "memscope record: --input replays a recording; it is one already (to compress "
			"it: zstd FILE; memscope reads FILE.zst as it is)\n");
		return -1;
	}
	if (opt->aggr != AGGR_TOTAL) {
		fprintf(stderr, "memscope record: --per-* chooses how stat shows totals; a recording keeps "
			"every series as counted (report it with memscope stat --input FILE --per-node)\n");
		return -1;
	}
	return 0;
}

/* ---- The metric plan, for the header's "catalog" member ---- */

static json_t *plan_json(const struct metric_plan *plan)
{
	json_t *cat = json_object(), *metrics = json_array();

	for (int m = 0; m < plan->nr_metrics; m++) {
		const struct plan_metric *pm = &plan->metrics[m];
		json_t *o = json_object(), *events = json_array();

		json_object_set_new(o, "name", json_string(plan->cat->metrics[pm->metric].name));
		json_object_set_new(o, "requested", json_boolean(pm->requested));
		for (int s = 0; s < pm->nr_slot_inputs; s++) {
			const struct plan_input *in = &plan->inputs[pm->slot_inputs[2 * s + 1]];

			for (int e = 0; e < in->nr_events; e++) {
				const struct plan_event *pe = &plan->events[in->events[e]];

				json_array_append_new(events, json_pack("{s:s, s:s}", "series", pe->text,
									"instance", pe->instance));
			}
		}
		json_object_set_new(o, "events", events);
		json_array_append_new(metrics, o);
	}
	json_object_set_new(cat, "metrics", metrics);
	return cat;
}

/* ---- Frames ---- */

static int on_frame(const struct frame *frame, bool last, void *ctx)
{
	struct record_run *run = ctx;

	if (run->failed || !run->writer)
		return 1;
	/* Paused: frames are read (so the next one covers one interval only)
	 * but not written; the gap stays visible in the file. */
	if (run->paused)
		return 0;
	if (last && frame->interval_ns == 0)
		return 0;
	lua_cli_frame(run->lua, run->session, frame);
	if (recording_writer_frame(run->writer, frame, &run->err) < 0) {
		run->failed = true;
		return 1;
	}
	return 0;
}

/* ---- Control requests ---- */

static double seconds_now(const struct record_run *run)
{
	uint64_t now = monotonic_ns();

	return now > run->wopt.time_origin_ns ? (double)(now - run->wopt.time_origin_ns) / 1e9 : 0.0;
}

static int open_writer(struct record_run *run, const char *path, struct ms_error *err)
{
	run->wopt.path = path;
	if (!run->session->sources[0].replay)
		run->wopt.time_origin_ns = monotonic_ns();
	return recording_writer_open(&run->writer, &run->wopt, &run->session->sampler.table, err);
}

static void ctl_rotate(struct record_run *run, const char *path, char *reply, size_t size)
{
	struct recording_writer *old = run->writer;
	char old_path[PATH_MAX], new_path[PATH_MAX];
	unsigned long long old_frames = recording_writer_frames(old);
	struct ms_error err = { "" };
	uint64_t origin = run->wopt.time_origin_ns;

	if (!path[0] || strlen(path) >= sizeof(new_path)) {
		snprintf(reply, size, "error: record needs a file name");
		return;
	}
	snprintf(old_path, sizeof(old_path), "%s", recording_writer_path(old));
	snprintf(new_path, sizeof(new_path), "%s", path);
	if (!strcmp(old_path, new_path)) {
		snprintf(reply, size, "error: already recording to %s", path);
		return;
	}
	if (open_writer(run, new_path, &err) < 0) {
		run->writer = old;
		run->wopt.time_origin_ns = origin;
		snprintf(reply, size, "error: %s (still recording to %s)", err.text, old_path);
		return;
	}
	snprintf(run->path, sizeof(run->path), "%s", new_path);
	if (run->paused)
		recording_writer_control(run->writer, monotonic_ns(), "pause", 0, &err);
	if (recording_writer_close(old, "continued in another file", &err) < 0)
		snprintf(reply, size, "error: recording to %s now, but closing %s failed: %s", new_path,
			 old_path, err.text);
	else
		snprintf(reply, size, "ok: recording to %s; %s closed with %llu frames", new_path, old_path,
			 old_frames);
}

static void ctl_interval(struct record_run *run, const char *arg, char *reply, size_t size)
{
	char *end;
	long ms;
	struct ms_error err = { "" };

	errno = 0;
	ms = strtol(arg, &end, 10);
	if (errno || end == arg || *end || ms < SESSION_MIN_INTERVAL_MS || ms > SESSION_MAX_INTERVAL_MS) {
		snprintf(reply, size, "error: interval '%s': give milliseconds between %d and %ld", arg,
			 SESSION_MIN_INTERVAL_MS, SESSION_MAX_INTERVAL_MS);
		return;
	}
	if (sampler_set_interval(&run->session->sampler, (uint64_t)ms * 1000000ull, &err) < 0 ||
	    recording_writer_control(run->writer, monotonic_ns(), "interval", (uint64_t)ms * 1000000ull,
				     &err) < 0) {
		snprintf(reply, size, "error: %s", err.text);
		return;
	}
	run->wopt.interval_ns = (uint64_t)ms * 1000000ull;
	snprintf(reply, size, "ok: interval %ld ms from %.3f s", ms, seconds_now(run));
}

static void ctl_handle(const char *command, const char *arg, char *reply, size_t size, void *ctx)
{
	struct record_run *run = ctx;
	struct ms_error err = { "" };
	int ret = 0;

	if (!run->writer || run->failed) {
		snprintf(reply, size, "error: the recording has stopped%s%s", run->failed ? ": " : "",
			 run->failed ? run->err.text : "");
		return;
	}
	if (!strcmp(command, "label")) {
		if (!arg[0]) {
			snprintf(reply, size, "error: label needs a text: label TEXT");
			return;
		}
		ret = recording_writer_label(run->writer, monotonic_ns(), arg, NULL, &err);
		if (!ret)
			snprintf(reply, size, "ok: label '%s' at %.3f s in %s", arg, seconds_now(run), run->path);
	} else if (!strcmp(command, "phase")) {
		const char *name = strchr(arg, ' ');

		if (!name || (strncmp(arg, "begin ", 6) && strncmp(arg, "end ", 4)) || !name[1]) {
			snprintf(reply, size, "error: phase begin NAME, or phase end NAME");
			return;
		}
		ret = recording_writer_label(run->writer, monotonic_ns(), name + 1, arg[0] == 'b' ? "begin" : "end",
					     &err);
		if (!ret)
			snprintf(reply, size, "ok: phase '%s' %s at %.3f s", name + 1, arg[0] == 'b' ? "begins" : "ends",
				 seconds_now(run));
	} else if (!strcmp(command, "pause") || !strcmp(command, "resume")) {
		bool pause = command[0] == 'p';

		if (run->paused == pause) {
			snprintf(reply, size, "ok: already %s", pause ? "paused" : "running");
			return;
		}
		ret = recording_writer_control(run->writer, monotonic_ns(), command, 0, &err);
		if (!ret) {
			run->paused = pause;
			snprintf(reply, size, pause ? "ok: paused at %.3f s: no frames are written until resume"
						    : "ok: resumed at %.3f s", seconds_now(run));
		}
	} else if (!strcmp(command, "interval")) {
		ctl_interval(run, arg, reply, size);
		return;
	} else if (!strcmp(command, "record")) {
		ctl_rotate(run, arg, reply, size);
		return;
	} else if (!strcmp(command, "status")) {
		snprintf(reply, size, "ok: recording %s to %s: %llu frames, %llu bytes%s, interval %llu ms, %s, "
			 "pid %d", run->target, run->path, (unsigned long long)recording_writer_frames(run->writer),
			 (unsigned long long)recording_writer_bytes(run->writer),
			 recording_writer_compressed(run->writer) ? " (zstd)" : "",
			 (unsigned long long)(run->wopt.interval_ns / 1000000ull),
			 run->paused ? "paused" : "running", (int)getpid());
		return;
	} else {
		snprintf(reply, size, "error: unknown command '%s'; the commands are label TEXT, phase begin|end "
			 "NAME, pause, resume, interval MS, record FILE, status", command);
		return;
	}
	if (ret < 0) {
		run->failed = true;
		run->err = err;
		snprintf(reply, size, "error: %s", err.text);
	}
}

/* The socket or the FIFO is readable. */
static int on_ctl_ready(struct sampler *s, int fd, void *ctx)
{
	struct record_run *run = ctx;

	if (fd == run->ctl.fd)
		ctl_server_serve(&run->ctl, ctl_handle, run);
	else
		ctl_fifo_serve(&run->fifo, "record", ctl_handle, run);
	return 0;
}

/* ---- The command ---- */

static void start_ctl(struct record_run *run)
{
	char path[sizeof(run->ctl.path)];
	struct ms_error err = { "" };

	/* Before the command is started, so it inherits where to send markers. */
	if (ctl_socket_path(getpid(), path, sizeof(path), true, &err) < 0 ||
	    ctl_server_open(&run->ctl, path, &err) < 0) {
		fprintf(stderr, "memscope record: note: no control socket (memscope ctl will not reach this "
			"run): %s\n", err.text);
		return;
	}
	setenv(CTL_SOCKET_ENV, path, 1);
}

static const char *end_reason(const struct session *s, char *buf, size_t size)
{
	switch (s->sampler.end) {
	case SAMPLER_END_SIGNAL:
		snprintf(buf, size, "%s", s->sampler.end_signal == SIGINT ? "SIGINT"
			 : s->sampler.end_signal == SIGTERM ? "SIGTERM" : "SIGHUP");
		return buf;
	case SAMPLER_END_SOURCE:
		return "stopped";
	default:
		return s->target.kind == TARGET_COMMAND ? "the command exited"
		       : s->sources[0].replay ? "end of the replayed input" : "the processes exited";
	}
}

/* Write the end record and say what was written, as perf record does. */
static int finish(struct record_run *run, const struct session *session)
{
	unsigned long long frames = recording_writer_frames(run->writer);
	char reason[64];
	struct ms_error err = { "" };
	struct stat st;
	int ret = recording_writer_close(run->writer, end_reason(session, reason, sizeof(reason)), &err);

	run->writer = NULL;
	if (ret < 0) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		return -1;
	}
	fprintf(stderr, "memscope record: wrote %llu frames (%lld bytes) to %s\n", frames,
		stat(run->path, &st) == 0 ? (long long)st.st_size : -1LL, run->path);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct session_options opt;
	struct session session;
	struct record_run run;
	struct ms_error err = { "" };
	bool use_ctl = true;
	struct lua_cli lua_cli = { .nr_scripts = 0 };
	int status;

	memset(&run, 0, sizeof(run));
	memset(&session, 0, sizeof(session));
	run.ctl.fd = -1;
	run.fifo.fd = -1;
	run.session = &session;
	snprintf(run.path, sizeof(run.path), "%s", RECORDING_DEFAULT_FILE);
	session_options_init(&opt, "record");
	if (parse_options(argc, argv, &opt, &run, &use_ctl, &lua_cli) < 0) {
		session_options_free(&opt);
		return EXIT_USAGE;
	}
	status = lua_cli_open(&lua_cli, &opt, LUA_OUTPUT_TEXT, &run.lua, &err);
	if (status) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		session_options_free(&opt);
		return status;
	}
	/* A metric a script defines is recorded as its inputs; a report with the
	 * same script computes it again. */
	if (lua_cli_take_metrics(run.lua, &opt, &run.lua_metrics, &run.nr_lua_metrics) < 0) {
		fprintf(stderr, "memscope record: out of memory\n");
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
		fprintf(stderr, "memscope record: %s\n", err.text);
		status = 1;
		goto out;
	}
	status = session_open(&session, &opt, &err);
	if (status) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		goto out;
	}
	status = 1;
	session_describe_target(&opt, run.target, sizeof(run.target));
	run.wopt.host = &session.host;
	run.wopt.target = run.target;
	run.wopt.interval_ns = (uint64_t)opt.interval_ms * 1000000ull;
	/* With metrics, the PMUs and topology they were resolved on go into the
	 * file too, so they can be recomputed on any machine. */
	if (session.plan && (!(run.wopt.catalog = plan_json(session.plan)) ||
			     !(run.wopt.host_files = recording_host_snapshot(&session.host.roots)))) {
		fprintf(stderr, "memscope record: out of memory\n");
		goto out;
	}
	if (open_writer(&run, run.path, &err) < 0) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		goto out;
	}
	if (lua_cli_start(run.lua, &session, &opt, run.target, &err) < 0) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		goto out;
	}
	if ((run.ctl.fd >= 0 && sampler_watch_add(&session.sampler, run.ctl.fd, on_ctl_ready, &run, &err) < 0) ||
	    (run.fifo.fd >= 0 && sampler_watch_add(&session.sampler, run.fifo.fd, on_ctl_ready, &run, &err) < 0)) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		goto out;
	}
	if (session_run(&session, &opt, on_frame, &run, &err) < 0) {
		fprintf(stderr, "memscope record: %s\n", err.text);
		recording_writer_abandon(run.writer);
		run.writer = NULL;
		goto out;
	}
	if (run.failed) {
		fprintf(stderr, "memscope record: %s\n", run.err.text);
		recording_writer_abandon(run.writer);
		run.writer = NULL;
		goto out;
	}
	if (finish(&run, &session) < 0)
		goto out;
	/* Stopped by SIGINT/SIGTERM: the recording is complete, which is what was
	 * asked for; the command's status (killed by memscope) says nothing. */
	status = session.sampler.end == SAMPLER_END_SIGNAL ? 0 : session_exit_code(&session);
	lua_engine_end(run.lua);
out:
	ctl_server_close(&run.ctl);
	ctl_fifo_close(&run.fifo);
	recording_writer_abandon(run.writer);
	lua_engine_free(run.lua);
	free(run.lua_metrics);
	session_close(&session);
	json_decref(run.wopt.catalog);
	json_decref(run.wopt.host_files);
	session_options_free(&opt);
	return status;
}
