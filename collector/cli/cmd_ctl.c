/* memscope ctl: steer a running memscope record through its control socket
 * and print its acknowledgement. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "ctl/ctl.h"
#include "util/report.h"

struct ctl_args {
	long pid;
	const char *socket;   /* --socket, or NULL: found from --pid */
};

static const struct cli_option ctl_options[] = {
	{ 'p', "pid", "PID", "the memscope to steer, when several run", CLI_COMPLETE_PID, NULL, 0 },
	{ 's', "socket", "PATH", "its socket (default: $" CTL_SOCKET_ENV ", else the one in\n"
	  "$XDG_RUNTIME_DIR/memscope, or /run/memscope for root)", CLI_COMPLETE_FILE, NULL, 0,
	  CLI_TO_STRING(0, struct ctl_args, socket) },
	{ 0 },
};

static const struct cli_group ctl_groups[] = {
	{ NULL, ctl_options },
	{ NULL, NULL },
};

const struct cli_command ctl_command = {
	.name = "ctl",
	.summary = "label, pause, resume or redirect a running memscope record",
	.usage = "[--pid PID | --socket PATH] COMMAND [ARGS...]",
	.groups = ctl_groups,
	.epilog = "commands (each is acknowledged with its result):\n"
		"  label TEXT            put a label into the recording now\n"
		"  phase begin|end NAME  mark where a phase of the program begins or ends\n"
		"  pause                 stop writing frames (the gap stays visible)\n"
		"  resume                write frames again\n"
		"  disable, enable       stop and start counting (perf's counters stopped in\n"
		"                        the kernel; stat --control's commands)\n"
		"  ping                  only the acknowledgement\n"
		"  interval MS           take a frame every MS milliseconds from now on\n"
		"  record FILE           continue in a new file (the current one is closed)\n"
		"  status                what is being recorded, where, how much\n",
	.operands = CLI_COMPLETE_WORDS,
	.operand_words = "label phase pause resume interval record status",
	.options_first = true,
};


static int ctl_option(void *ctx, int key, const char *arg)
{
	struct ctl_args *a = ctx;
	char *end;

	switch (key) {
	case 'p':
		a->pid = strtol(arg, &end, 10);
		if (a->pid <= 0 || *end || end == arg) {
			ms_warn("--pid %s: not a process id", arg);
			return -1;
		}
		return 0;
	default:
		return -1;
	}
}

/* A file name is resolved here, where the user typed it, not in the
 * recorder's working directory. */
static int absolute_path(const char *name, char *buf, size_t size)
{
	char cwd[PATH_MAX];

	if (name[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return (size_t)snprintf(buf, size, "%s", name) < size ? 0 : -1;
	return (size_t)snprintf(buf, size, "%s/%s", cwd, name) < size ? 0 : -1;
}

int cmd_ctl(int argc, char **argv)
{
	struct ctl_args a = { 0, NULL };
	void *const dest[] = { &a };
	char request[CTL_MAX_MESSAGE + 1], reply[CTL_MAX_MESSAGE + 1], path[PATH_MAX] = "";
	struct ms_error err = { "" };
	size_t len = 0;
	int status, first = cli_parse_into(&ctl_command, argc, argv, ctl_option, &a, dest, &status);
	long pid;

	if (first < 0)
		return status;
	pid = a.pid;
	if (a.socket)
		snprintf(path, sizeof(path), "%s", a.socket);
	if (first >= argc) {
		ms_warn("say what to do: label TEXT, phase begin|end NAME, pause, resume, "
			"interval MS, record FILE or status");
		cli_print_usage(&ctl_command, stderr);
		return EXIT_USAGE;
	}
	for (int i = first; i < argc; i++) {
		char arg[PATH_MAX];
		const char *word = argv[i];

		if (i == first + 1 && !strcmp(argv[first], "record")) {
			if (absolute_path(argv[i], arg, sizeof(arg)) < 0) {
				ms_warn("%s: path too long", argv[i]);
				return EXIT_USAGE;
			}
			word = arg;
		}
		if (len + strlen(word) + 2 > CTL_MAX_MESSAGE) {
			ms_warn("the request is longer than %d bytes", CTL_MAX_MESSAGE);
			return EXIT_USAGE;
		}
		len += (size_t)snprintf(request + len, sizeof(request) - len, "%s%s", i > first ? " " : "", word);
	}
	if (!path[0] && ctl_find_socket((pid_t)pid, path, sizeof(path), &err) < 0) {
		ms_report(&err);
		return 1;
	}
	if (ctl_request(path, request, reply, sizeof(reply), &err) < 0) {
		ms_report(&err);
		return 1;
	}
	if (!strncmp(reply, "ok", 2)) {
		printf("%s\n", reply);
		return 0;
	}
	ms_warn("%s", reply);
	return 1;
}
