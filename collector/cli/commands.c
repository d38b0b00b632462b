#include "cli/commands.h"
#include "util/array.h"

#include <stddef.h>
#include <stdio.h>

static const struct cli_option global_options[] = {
	{ MEMSCOPE_OPT_PLUGIN, "plugin", "PLUGIN", "load a source plugin: PLUGIN is PATH.so[:KEY=VAL,...] (repeatable;\n"
	  "docs/plugins.md); memscope list --plugins shows every plugin found", CLI_COMPLETE_FILE, NULL, 0 },
	{ MEMSCOPE_OPT_VERSION, "version", NULL, "print memscope's version and exit", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

static const struct cli_group global_groups[] = {
	{ NULL, global_options },
	{ NULL, NULL },
};

void cli_commands_help(FILE *out)
{
	fprintf(out, "\ncommands:\n");
	for (int i = 0; i < cli_nr_entries; i++)
		fprintf(out, "  %-11s %s\n", cli_entries[i].spec->name, cli_entries[i].spec->summary);
}

const struct cli_command memscope_command = {
	.name = NULL,
	.summary = "memscope: how programs use the memory system of this machine",
	.usage = "[OPTIONS] COMMAND [COMMAND OPTIONS]",
	.groups = global_groups,
	.epilog = "memscope COMMAND --help shows a command's options; man memscope-COMMAND explains them.\n",
	.operands = CLI_COMPLETE_WORDS,
	.options_first = true,
	.more_help = cli_commands_help,
};

const struct cli_entry cli_entries[] = {
	{ &stat_command, cmd_stat },
	{ &list_command, cmd_list },
	{ &top_command, cmd_top },
	{ &live_command, cmd_live },
	{ &record_command, cmd_record },
	{ &ctl_command, cmd_ctl },
	{ &doctor_command, cmd_doctor },
	{ &report_command, cmd_report },
	{ &validate_command, cmd_validate },
	{ &bench_command, cmd_bench },
	{ &completion_command, cmd_completion },
};

const int cli_nr_entries = (int)(ARRAY_SIZE(cli_entries));

const struct cli_program *cli_program(void)
{
	static const struct cli_command *commands[ARRAY_SIZE(cli_entries)];
	static struct cli_program program;

	if (!program.global) {
		for (int i = 0; i < cli_nr_entries; i++)
			commands[i] = cli_entries[i].spec;
		program = (struct cli_program){ &memscope_command, commands, cli_nr_entries };
	}
	return &program;
}
