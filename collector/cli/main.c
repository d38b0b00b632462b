/* memscope: how programs use the memory system of this machine. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "config.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "stat", cmd_stat, "count events and metrics for a command, processes or the system" },
	{ "list", cmd_list, "what this host can measure: PMUs, events, metrics" },
	{ "top", cmd_top, "live full-screen view of NUMA nodes and processes" },
	{ "record", cmd_record, "record frames to a file, for stat --input and reports" },
	{ "ctl", cmd_ctl, "label, pause, resume or redirect a running memscope record" },
	{ "doctor", cmd_doctor, "permissions, PMUs, BTF, limits: what is missing and the fix" },
	{ "report", cmd_report, "Lua reports over a recording (remote_ratio.lua, faults.lua, ...)" },
	{ "validate", cmd_validate, "check this machine's metrics against workloads of known traffic" },
	{ "bench", cmd_bench, "memory benchmarks: bw, lat, par, ctx, stream, numa-triad, c2c (with plots)" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: memscope COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nmemscope COMMAND --help shows a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("memscope %s\n", MEMSCOPE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "memscope: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
