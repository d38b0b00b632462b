/* memscope ctl: steer a running memscope record through its control socket
 * and print its acknowledgement. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "ctl/ctl.h"

static void ctl_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope ctl [--pid PID | --socket PATH] COMMAND [ARGS...]\n\n"
		"commands (each is acknowledged with its result):\n"
		"  label TEXT            put a label into the recording now\n"
		"  phase begin|end NAME  mark where a phase of the program begins or ends\n"
		"  pause                 stop writing frames (the gap stays visible)\n"
		"  resume                write frames again\n"
		"  interval MS           take a frame every MS milliseconds from now on\n"
		"  record FILE           continue in a new file (the current one is closed)\n"
		"  status                what is being recorded, where, how much\n\n"
		"  -p, --pid PID         the memscope to steer, when several run\n"
		"  -s, --socket PATH     its socket (default: $" CTL_SOCKET_ENV ", else the one in\n"
		"                        $XDG_RUNTIME_DIR/memscope, or /run/memscope for root)\n");
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
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char path[PATH_MAX] = "", request[CTL_MAX_MESSAGE + 1], reply[CTL_MAX_MESSAGE + 1];
	struct ms_error err = { "" };
	size_t len = 0;
	long pid = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = strtol(optarg, NULL, 10);
			if (pid <= 0) {
				fprintf(stderr, "memscope ctl: --pid %s: not a process id\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 's':
			snprintf(path, sizeof(path), "%s", optarg);
			break;
		case 'h':
			ctl_usage(stdout);
			return 0;
		default:
			ctl_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		ctl_usage(stderr);
		return EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		char arg[PATH_MAX];
		const char *word = argv[i];

		if (i == optind + 1 && !strcmp(argv[optind], "record")) {
			if (absolute_path(argv[i], arg, sizeof(arg)) < 0) {
				fprintf(stderr, "memscope ctl: %s: path too long\n", argv[i]);
				return EXIT_USAGE;
			}
			word = arg;
		}
		if (len + strlen(word) + 2 > CTL_MAX_MESSAGE) {
			fprintf(stderr, "memscope ctl: the request is longer than %d bytes\n", CTL_MAX_MESSAGE);
			return EXIT_USAGE;
		}
		len += (size_t)snprintf(request + len, sizeof(request) - len, "%s%s", i > optind ? " " : "", word);
	}
	if (!path[0] && ctl_find_socket((pid_t)pid, path, sizeof(path), &err) < 0) {
		fprintf(stderr, "memscope ctl: %s\n", err.text);
		return 1;
	}
	if (ctl_request(path, request, reply, sizeof(reply), &err) < 0) {
		fprintf(stderr, "memscope ctl: %s\n", err.text);
		return 1;
	}
	if (!strncmp(reply, "ok", 2)) {
		printf("%s\n", reply);
		return 0;
	}
	fprintf(stderr, "memscope ctl: %s\n", reply);
	return 1;
}
