/* memscope: how programs use the memory system of this machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_vendor.h"
#include "cli/commands.h"
#include "cli/measure_options.h"
#include "cli/validation_store.h"
#include "config.h"
#include "lua/lua_engine.h"
#include "sources/plugin_loader.h"
#include "util/report.h"
#include "util/suggest.h"

struct global_args {
	char **plugin_specs;
	int nr_plugins;
};

static int global_option(void *ctx, int key, const char *arg)
{
	struct global_args *a = ctx;

	switch (key) {
	case MEMSCOPE_OPT_PLUGIN:
		a->plugin_specs[a->nr_plugins++] = (char *)arg;
		return 0;
	case MEMSCOPE_OPT_VERSION:
		printf("memscope %s\n", MEMSCOPE_VERSION);
		return CLI_DONE;
	default:
		return -1;
	}
}

static void unknown_command(const char *name)
{
	struct suggestions sug;
	char hint[512];

	suggestions_init(&sug, name);
	for (int i = 0; i < cli_nr_entries; i++)
		suggestions_offer(&sug, cli_entries[i].spec->name);
	suggestions_format(&sug, hint, sizeof(hint));
	ms_warn("unknown command '%s'%s", name, hint);
	cli_commands_help(stderr);
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
			ms_warn("plugin %s: %s; going on without it", p->path, p->why);
		else if (p->catalog_why[0])
			ms_warn("plugin %s: its catalog family was not accepted: %s; its metrics are "
				"not available (its series are)", p->path, p->catalog_why);
	}
}

static int run(int argc, char **argv)
{
	for (int i = 0; i < cli_nr_entries; i++)
		if (!strcmp(argv[0], cli_entries[i].spec->name)) {
			/* Every message from here names the command. */
			ms_report_command(cli_entries[i].spec->name);
			return cli_entries[i].run(argc, argv);
		}
	unknown_command(argv[0]);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct global_args a = { calloc((size_t)argc + 1, sizeof(char *)), 0 };
	int status, first;

	if (!a.plugin_specs) {
		ms_warn("out of memory");
		return 1;
	}
	/* The sink registry's options, in the command tables before they are read. */
	measure_options_init();
	/* Lua reports read what `memscope validate` stored (memscope.validated). */
	lua_engine_set_validation_reader(validation_measured);
	/* Which maker's kernels create a PMU, and libpfm4's names for PMUs, are the catalog's. */
	pmu_vendors_set_loader(catalog_pmu_vendors);
	/* "memscope help" is --help, as in git and perf. */
	if (argc == 2 && !strcmp(argv[1], "help"))
		argv[1] = "--help";
	first = cli_parse(&memscope_command, argc, argv, global_option, &a, &status);
	if (first < 0)
		goto out;
	status = EXIT_USAGE;
	if (first >= argc) {
		cli_print_usage(&memscope_command, stderr);
		cli_commands_help(stderr);
		goto out;
	}
	if (plugins_load(plugins_process(), a.plugin_specs, a.nr_plugins, source_registry_process()) < 0) {
		ms_warn("out of memory while loading plugins");
		status = 1;
		goto out;
	}
	report_plugins(plugins_process(), argc - first, argv + first);
	status = run(argc - first, argv + first);
	plugins_unload(plugins_process());
out:
	free(a.plugin_specs);
	return status;
}
