/* memscope top: a live view of NUMA nodes and processes, full screen or as
 * batch text. The sampler drives the updates; the terminal (keys and resizes)
 * is one more descriptor it waits on, so keys act between two frames.
 * With --input, the frames of a recording (memscope record -a) instead, at
 * their recorded pace on the full screen, as fast as they are read in batch. */
#include <poll.h>
#include <errno.h>
#include <getopt.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "ctl/ctl.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"
#include "pipeline/session_recording.h"
#include "sinks/top/top_model.h"
#include "sinks/top/top_view.h"

#define TOP_DEFAULT_INTERVAL_MS 1000
#define TOP_MIN_INTERVAL_MS 10
/* How often top asks whether a `memscope record` is running. */
#define RECORDING_CHECK_NS (2ull * 1000000000ull)

/* The intervals + and - step through. */
static const long interval_steps_ms[] = { 100, 250, 500, 1000, 2000, 5000, 10000 };
#define NR_STEPS ((int)(sizeof(interval_steps_ms) / sizeof(interval_steps_ms[0])))

struct top_run {
	struct top_model model;
	struct top_display display;
	struct top_view *view;       /* NULL: batch output */
	long max_updates;            /* -n; 0: until q or a signal */
	long updates;
	bool quit;
	uint64_t recording_checked_ns;
	char recording_socket[108];  /* control socket of the running recording, "" when none */
};

static void top_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope top [-I MS] [-p PID] [-b] [-n COUNT] [-s COLUMN] [--lua SCRIPT]...\n"
		"       memscope top --input FILE [-p PID] [-b] [-n COUNT] [-s COLUMN] [--lua SCRIPT]...\n\n"
		"  -I, --interval MS   refresh every MS milliseconds (default %d, at least 10)\n"
		"      --input FILE    replay a recording (memscope record -a) instead of measuring\n"
		"  -p, --pid PID       focus one process: its row and its threads\n"
		"  -b, --batch         plain text blocks for scripts instead of the full screen\n"
		"                      (also when stdout is not a terminal or TERM is dumb)\n"
		"  -n, --iterations N  stop after N updates\n"
		"  -s, --sort COLUMN   sort processes by PID, THR, FAULTS/s, ALLOC/s, REMOTE%%, CPU%%,\n"
		"                      OFFCPU%%, MIGR/s or COMMAND (default FAULTS/s)\n"
		"%s"
		"                      (their reports are printed when top ends)\n\n"
		"keys: s sort, p pause, + and - interval, l label, f filter, ? help, q quit\n",
		TOP_DEFAULT_INTERVAL_MS, lua_cli_help);
}

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
	fprintf(stderr, "memscope top: -s %s: no such column; columns: PID, THR, FAULTS, ALLOC, REMOTE, CPU, "
		"OFFCPU, MIGR, COMMAND\n", text);
	return -1;
}

static int parse_pid(const char *text, pid_t *pid, bool check_live)
{
	char *end, path[64];
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || end == text || *end || value <= 0 || value > 0x3fffffff) {
		fprintf(stderr, "memscope top: -p %s: not a process id (one PID, e.g. -p 1234)\n", text);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%ld", value);
	/* A recording's processes are not this host's: checked against it later. */
	if (check_live && access(path, F_OK) < 0) {
		fprintf(stderr, "memscope top: -p %s: no such process (ps -e lists the running ones)\n", text);
		return -1;
	}
	*pid = (pid_t)value;
	return 0;
}

static int parse_options(int argc, char **argv, struct session_options *opt, struct top_run *run,
			 struct top_options *topt, bool *batch, struct lua_cli *lua)
{
	static const struct option longopts[] = {
		LUA_CLI_LONG_OPTIONS,
		{ "interval", required_argument, NULL, 'I' },
		{ "pid", required_argument, NULL, 'p' },
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	const char *pid_text = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "I:p:bn:s:h", longopts, NULL)) != -1) {
		int taken = lua_cli_option(lua, c, optarg);

		if (taken < 0)
			return -1;
		if (taken)
			continue;
		switch (c) {
		case 'I':
			/* The shared parser checks the range. */
			if (session_option(opt, c, optarg) < 0)
				return -1;
			break;
		case 'p':
			pid_text = optarg;
			break;
		case 'i':
			topt->input_path = optarg;
			break;
		case 'b':
			*batch = true;
			break;
		case 'n':
			errno = 0;
			run->max_updates = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || run->max_updates <= 0) {
				fprintf(stderr, "memscope top: -n %s: needs a number of updates, e.g. -n 5\n", optarg);
				return -1;
			}
			break;
		case 's':
			if (parse_sort(optarg, &run->display.sort) < 0)
				return -1;
			break;
		case 'h':
			top_usage(stdout);
			exit(0);
		default:
			top_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "memscope top: unexpected argument '%s' (top watches the whole system; "
			"-p PID focuses one process)\n", argv[optind]);
		return -1;
	}
	if (pid_text && parse_pid(pid_text, &topt->focus_pid, !topt->input_path) < 0)
		return -1;
	if (topt->input_path && opt->interval_ms) {
		fprintf(stderr, "memscope top: --input replays the frames at the interval they were recorded "
			"with; -I does not apply\n");
		return -1;
	}
	if (!opt->interval_ms)
		opt->interval_ms = TOP_DEFAULT_INTERVAL_MS;
	if (opt->interval_ms < TOP_MIN_INTERVAL_MS) {
		/* A screen cannot show more; stat and record go down to 1 ms. */
		fprintf(stderr, "memscope top: -I %ld: top refreshes at most every %d ms (for faster "
			"intervals: memscope stat -I or memscope record -I)\n", opt->interval_ms, TOP_MIN_INTERVAL_MS);
		return -1;
	}
	topt->interval_ns = (uint64_t)opt->interval_ms * 1000000ull;
	return 0;
}

/* Move steps along interval_steps_ms (+ longer, - shorter). */
static void change_interval(struct top_run *run, int steps)
{
	long now = (long)run->display.interval_ms, next;
	struct ms_error err = { "" };
	int at = 0;

	/* The step nearest the current interval (which -I may have set anywhere). */
	for (int i = 0; i < NR_STEPS; i++)
		if (labs(interval_steps_ms[i] - now) < labs(interval_steps_ms[at] - now))
			at = i;
	/* Off the ladder: reaching the nearest step is the first step. */
	if (steps > 0 && interval_steps_ms[at] > now)
		steps--;
	if (steps < 0 && interval_steps_ms[at] < now)
		steps++;
	at += steps;
	at = at < 0 ? 0 : at >= NR_STEPS ? NR_STEPS - 1 : at;
	next = interval_steps_ms[at];
	if (next == now) {
		snprintf(run->display.notice, sizeof(run->display.notice), "interval stays %ld ms (range %ld-%ld ms)",
			 now, interval_steps_ms[0], interval_steps_ms[NR_STEPS - 1]);
		return;
	}
	if (sampler_set_interval(&run->model.session.sampler, (uint64_t)next * 1000000ull, &err) < 0) {
		snprintf(run->display.notice, sizeof(run->display.notice), "%s", err.text);
		return;
	}
	run->display.interval_ms = (uint64_t)next;
	snprintf(run->display.notice, sizeof(run->display.notice), "interval %ld ms", next);
}

/* Is a `memscope record` running for this user? Its control socket says
 * where it records ("ok: recording TARGET to PATH: N frames, ..., pid P"). */
static void check_recording(struct top_run *run)
{
	char reply[CTL_MAX_MESSAGE], path[512] = "";
	struct ms_error err = { "" };
	const char *to, *pid;
	int pid_value = 0;

	run->recording_checked_ns = monotonic_ns();
	run->recording_socket[0] = '\0';
	snprintf(run->display.recording, sizeof(run->display.recording), "off");
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
	snprintf(run->display.recording, sizeof(run->display.recording), "on file=%s pid=%d",
		 path[0] ? path : "?", pid_value);
}

static void add_label(struct top_run *run, const char *text)
{
	char request[CTL_MAX_MESSAGE], reply[CTL_MAX_MESSAGE];
	struct ms_error err = { "" };

	check_recording(run);
	if (!run->recording_socket[0]) {
		/* Shown with its time, so it can be matched with what was on screen. */
		snprintf(run->display.notice, sizeof(run->display.notice),
			 "label \"%s\" at %.1f s (not stored: no recording is running)", text, run->model.elapsed_s);
		return;
	}
	snprintf(request, sizeof(request), "label %s", text);
	if (ctl_request(run->recording_socket, request, reply, sizeof(reply), &err) < 0)
		snprintf(run->display.notice, sizeof(run->display.notice), "label not stored: %s", err.text);
	else
		snprintf(run->display.notice, sizeof(run->display.notice), "%s", reply);
}

static void handle_requests(struct top_run *run, int requests, int interval_steps)
{
	if (requests & TOP_REQ_QUIT) {
		run->quit = true;
		return;
	}
	if (requests & TOP_REQ_INTERVAL)
		change_interval(run, interval_steps);
	if (requests & TOP_REQ_LABEL)
		add_label(run, top_view_label(run->view));
	if (requests != TOP_REQ_NONE)
		top_view_draw(run->view, &run->model, &run->display);
}

static int on_terminal(struct sampler *s, int fd, void *ctx)
{
	struct top_run *run = ctx;
	int steps, requests = top_view_input(run->view, &run->model, &run->display, &steps);

	handle_requests(run, requests, steps);
	return run->quit; /* q ends the run now */
}

/* A recording on the full screen: each frame stays up for its recorded
 * interval, and keys work meanwhile. Non-zero: q was pressed. */
static int replay_pace(struct top_run *run, uint64_t interval_ns)
{
	uint64_t until = monotonic_ns() + interval_ns;

	for (;;) {
		uint64_t now = monotonic_ns();
		struct pollfd pfd = { .fd = top_view_input_fd(run->view), .events = POLLIN };

		if (now >= until && !run->display.paused)
			return 0;
		/* Paused: the screen stays until p again (or q). */
		if (poll(&pfd, 1, run->display.paused ? 250 : (int)((until - now) / 1000000 + 1)) > 0) {
			int steps, requests = top_view_input(run->view, &run->model, &run->display, &steps);

			handle_requests(run, requests & ~TOP_REQ_INTERVAL, steps);
			if (run->quit)
				return 1;
		}
	}
}

static int on_frame(const struct frame *frame, bool last, void *ctx)
{
	struct top_run *run = ctx;

	/* The final frame only closes the run; it is usually a partial interval.
	 * A recording's last frame is what it recorded last: shown. */
	if (run->quit || (last && (!run->model.replay || frame->interval_ns == 0)))
		return 1;
	if (run->view && run->model.replay && run->updates && replay_pace(run, frame->interval_ns))
		return 1;
	if (!run->model.replay && frame->time_ns - run->recording_checked_ns >= RECORDING_CHECK_NS)
		check_recording(run);
	top_model_compute(&run->model, frame);
	lua_engine_frame(run->model.lua, frame, run->model.values, 1);
	if (run->view) {
		/* Paused: the screen keeps the values it shows; frames go on. */
		if (!run->display.paused) {
			top_model_update(&run->model, frame);
			top_view_draw(run->view, &run->model, &run->display);
		}
	} else {
		top_model_update(&run->model, frame);
		top_batch_print(stdout, &run->model, &run->display);
	}
	if (run->max_updates && ++run->updates >= run->max_updates)
		return 1;
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct session_options opt;
	struct top_options topt = { 0 };
	struct top_run run;
	struct ms_error err = { "" };
	char why[256];
	bool batch = false;
	int status = 1;
	struct lua_cli lua = { .nr_scripts = 0 };
	char *lua_report = NULL;
	size_t lua_report_len = 0;

	memset(&run, 0, sizeof(run));
	session_options_init(&opt, "top");
	run.display.sort = TOP_PROC_FAULTS;
	if (parse_options(argc, argv, &opt, &run, &topt, &batch, &lua) < 0) {
		session_options_free(&opt);
		return EXIT_USAGE;
	}
	if (lua.nr_scripts) {
		/* Script output would tear the full screen: it is kept and printed
		 * when top ends. */
		lua.out = open_memstream(&lua_report, &lua_report_len);
		if (!lua.out) {
			fprintf(stderr, "memscope top: out of memory\n");
			session_options_free(&opt);
			return 1;
		}
		topt.lua = &lua;
	}
	run.display.interval_ms = (uint64_t)opt.interval_ms;
	if (topt.input_path)
		snprintf(run.display.recording, sizeof(run.display.recording), "replay of %s", topt.input_path);
	else
		check_recording(&run);
	if (top_model_open(&run.model, &topt, &err) < 0) {
		fprintf(stderr, "memscope top: %s\n", err.text);
		goto out;
	}
	if (run.model.replay)
		run.display.interval_ms = session_recording_header(&run.model.session)->interval_ns / 1000000ull;
	if (!batch) {
		run.view = top_view_open(why, sizeof(why));
		if (!run.view)
			fprintf(stderr, "memscope top: %s: batch output instead of the full screen\n", why);
	}
	if (run.view) {
		if (sampler_watch_add(&run.model.session.sampler, top_view_input_fd(run.view), on_terminal, &run,
				      &err) < 0) {
			top_view_close(run.view);
			run.view = NULL;
			fprintf(stderr, "memscope top: %s\n", err.text);
			goto out;
		}
		top_view_draw(run.view, &run.model, &run.display);
	}
	if (sampler_run(&run.model.session.sampler, &run.model.session.target, topt.interval_ns, on_frame, &run, &err) < 0) {
		top_view_close(run.view);
		run.view = NULL;
		fprintf(stderr, "memscope top: %s\n", err.text);
		goto out;
	}
	lua_engine_end(run.model.lua);
	status = 0;
out:
	top_view_close(run.view);
	top_model_close(&run.model);
	if (lua.out) {
		fclose(lua.out);
		if (lua_report)
			fputs(lua_report, stdout);
		free(lua_report);
	}
	session_options_free(&opt);
	return status;
}
