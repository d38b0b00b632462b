/* memscope: how programs use the memory system of this machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "config.h"
#include "sources/plugin_loader.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "stat", cmd_stat, "count events and metrics for a command, processes or the system" },
	{ "list", cmd_list, "what this host can measure: PMUs, events, metrics, plugins" },
	{ "top", cmd_top, "live full-screen view of NUMA nodes and processes" },
	{ "live", cmd_live, "web page with live charts, recordings in the browser, /metrics for Prometheus" },
	{ "record", cmd_record, "record frames to a file, for stat --input and reports" },
	{ "ctl", cmd_ctl, "label, pause, resume or redirect a running memscope record" },
	{ "doctor", cmd_doctor, "permissions, PMUs, BTF, limits: what is missing and the fix" },
	{ "report", cmd_report, "Lua reports over a recording (remote_ratio.lua, faults.lua, ...)" },
	{ "validate", cmd_validate, "check this machine's metrics against workloads of known traffic" },
	{ "bench", cmd_bench, "memory benchmarks: bw, lat, par, ctx, stream, numa-triad, c2c (with plots)" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: memscope [--plugin PATH.so[:KEY=VAL,...]]... COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n  --plugin PATH.so[:KEY=VAL,...]  load a source plugin (repeatable; docs/plugins.md);\n"
		     "                                  memscope list --plugins shows every plugin found\n"
		     "\nmemscope COMMAND --help shows a command's options.\n");
}

/* The global options before the command: --plugin SPEC, --plugin=SPEC. */
static int take_plugin_options(int argc, char **argv, char **specs, int *nr)
{
	int i = 1;

	while (i < argc) {
		if (!strcmp(argv[i], "--plugin")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "memscope: --plugin needs the plugin's path: --plugin PATH.so[:KEY=VAL,...]\n");
				return -1;
			}
			specs[(*nr)++] = argv[i + 1];
			i += 2;
		} else if (!strncmp(argv[i], "--plugin=", 9)) {
			specs[(*nr)++] = argv[i] + 9;
			i++;
		} else {
			break;
		}
	}
	return i;
}

/* Plugins that did not load are said once, here, unless the command is
 * the one that lists them; memscope goes on without them. */
static void report_plugins(const struct plugin_set *set, int argc, char **argv)
{
	bool listing = argc > 0 && !strcmp(argv[0], "list");

	for (int i = 1; listing && i < argc; i++)
		if (!strcmp(argv[i], "--plugins"))
			return;
	for (int i = 0; i < set->nr; i++) {
		const struct loaded_plugin *p = set->plugins[i];

		if (!p->loaded)
			fprintf(stderr, "memscope: plugin %s: %s; going on without it\n", p->path, p->why);
		else if (p->catalog_why[0])
			fprintf(stderr, "memscope: plugin %s: its catalog family was not accepted: %s; its metrics are "
				"not available (its series are)\n", p->path, p->catalog_why);
	}
}

static int run(int argc, char **argv)
{
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") || !strcmp(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[0], "--version")) {
		printf("memscope %s\n", MEMSCOPE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[0], commands[i].name))
			return commands[i].run(argc, argv);
	fprintf(stderr, "memscope: unknown command '%s'\n\n", argv[0]);
	usage(stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	char **specs = calloc((size_t)argc + 1, sizeof(char *));
	int nr_specs = 0, first, status;

	if (!specs) {
		fprintf(stderr, "memscope: out of memory\n");
		return 1;
	}
	first = take_plugin_options(argc, argv, specs, &nr_specs);
	if (first < 0) {
		free(specs);
		return EXIT_USAGE;
	}
	if (plugins_load(plugins_process(), specs, nr_specs, source_registry_process()) < 0) {
		fprintf(stderr, "memscope: out of memory while loading plugins\n");
		free(specs);
		return 1;
	}
	free(specs);
	report_plugins(plugins_process(), argc - first, argv + first);
	status = run(argc - first, argv + first);
	plugins_unload(plugins_process());
	return status;
}
