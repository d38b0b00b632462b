/* memscope completion: shell completion scripts made from the option
 * tables, and the names they complete (events, metrics, scripts, PMUs). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/catalog_groups.h"
#include "cli/commands.h"
#include "events/bpf_series.h"
#include "events/event_names.h"
#include "host/host.h"
#include "lua/lua_engine.h"
#include "util/report.h"

enum { COMPLETION_LIST = CLI_LONG_ONLY, COMPLETION_OPTIONS };

struct completion_args {
	const char *list;
	bool options;
};

static const struct cli_option completion_options[] = {
	{ COMPLETION_LIST, "list", "KIND",
	  "print the names a shell completes, one a line: events, metrics, scripts, pmus or commands",
	  CLI_COMPLETE_WORDS, "events metrics scripts pmus commands", 0,
	  CLI_TO_STRING(0, struct completion_args, list) },
	{ COMPLETION_OPTIONS, "options", NULL,
	  "print every option of every command, one a line: COMMAND -SHORT --LONG ARGUMENT\n"
	  "(- where there is none)", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(0, struct completion_args, options) },
	{ 0 },
};

static const struct cli_group completion_groups[] = {
	{ NULL, completion_options },
	{ NULL, NULL },
};

const struct cli_command completion_command = {
	.name = "completion",
	.summary = "bash and zsh completion scripts, made from the option tables",
	.usage = "bash | zsh\n--list KIND\n--options",
	.groups = completion_groups,
	.epilog = "Installed with memscope; to try one without installing:  source <(memscope completion bash)\n",
	.operands = CLI_COMPLETE_WORDS,
	.operand_words = "bash zsh",
};

/* Every option has a destination: nothing reaches a function. */
static int completion_option(void *ctx, int key, const char *arg)
{
	(void)ctx, (void)key, (void)arg;
	return -1;
}

static int list_events(void)
{
	struct host host;
	struct ms_error err = { "" };
	const struct generic_event *g;
	const char *const *bpf = bpf_series_names();

	for (int i = 0; (g = generic_event_at(i)); i++)
		printf("%s\n", g->name);
	for (int i = 0; bpf && bpf[i]; i++)
		printf("%s\n", bpf[i]);
	if (host_load(&host, &err) < 0)
		return 0;   /* completion offers what it can */
	for (int p = 0; p < host.pmus.nr; p++)
		for (int a = 0; a < host.pmus.pmus[p].nr_aliases; a++)
			printf("%s/%s/\n", host.pmus.pmus[p].name, host.pmus.pmus[p].aliases[a].name);
	host_free(&host);
	return 0;
}

static int list_pmus(void)
{
	struct host host;
	struct ms_error err = { "" };

	if (host_load(&host, &err) < 0)
		return 0;
	for (int p = 0; p < host.pmus.nr; p++)
		printf("%s\n", host.pmus.pmus[p].name);
	host_free(&host);
	return 0;
}

static int list_metrics(void)
{
	struct catalog *cat;
	struct ms_error err = { "" };
	const char **groups;
	int nr_groups;

	if (catalog_load_default(&cat, &err) < 0)
		return 0;
	for (int i = 0; i < cat->nr_metrics; i++)
		printf("%s\n", cat->metrics[i].name);
	/* -m and -M take the metric groups too (stat -M TopdownL1). */
	if (catalog_group_names(cat, &groups, &nr_groups) == 0) {
		for (int g = 0; g < nr_groups; g++)
			printf("%s\n", groups[g]);
		free(groups);
	}
	catalog_free(cat);
	return 0;
}

static int list_scripts(void)
{
	char dirs[4][PATH_MAX];
	int nr = lua_script_dirs(dirs, 4);

	for (int d = 0; d < nr; d++) {
		char **names;
		int n = lua_script_names(dirs[d], &names);

		for (int i = 0; i < n; i++) {
			printf("%s\n", names[i]);
			free(names[i]);
		}
		free(names);
	}
	return 0;
}

int cmd_completion(int argc, char **argv)
{
	struct completion_args a = { NULL, false };
	void *const dest[] = { &a };
	int status, first = cli_parse_into(&completion_command, argc, argv, completion_option, &a, dest, &status);

	if (first < 0)
		return status;
	if (a.options) {
		cli_print_option_list(cli_program(), stdout);
		return 0;
	}
	if (a.list) {
		if (!strcmp(a.list, "events"))
			return list_events();
		if (!strcmp(a.list, "metrics"))
			return list_metrics();
		if (!strcmp(a.list, "scripts"))
			return list_scripts();
		if (!strcmp(a.list, "pmus"))
			return list_pmus();
		if (!strcmp(a.list, "commands")) {
			for (int i = 0; i < cli_nr_entries; i++)
				printf("%s\n", cli_entries[i].spec->name);
			return 0;
		}
		ms_warn("--list %s: names of events, metrics, scripts, pmus or commands",
			a.list);
		return EXIT_USAGE;
	}
	if (first + 1 != argc || cli_print_completion(cli_program(), argv[first], stdout) < 0) {
		ms_warn("say which shell: memscope completion bash, or zsh");
		return EXIT_USAGE;
	}
	return 0;
}
