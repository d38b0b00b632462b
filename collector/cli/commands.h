/* The memscope subcommands. Each takes argv after the command name and
 * returns the process exit code: 0 ok, 1 runtime failure, 2 usage error (or,
 * for stat -- CMD, the command's own exit status). Each has an option table
 * (cli/options.h) that its parser, --help and the completions are made of. */
#ifndef MEMSCOPE_COMMANDS_H
#define MEMSCOPE_COMMANDS_H

#include <stdio.h>

#include "cli/options.h"
#include "util/error.h"

int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_completion(int argc, char **argv);

/* The memscope-bench program (cmd_bench.c): $MEMSCOPE_BENCH, else next to
 * this program. 0 when PATH is executable; PATH says where it looked. */
int bench_program_find(char *path, size_t size);

extern const struct cli_command stat_command, list_command, doctor_command, record_command, ctl_command,
	report_command, top_command, live_command, bench_command, validate_command, completion_command;

struct cli_entry {
	const struct cli_command *spec;
	int (*run)(int argc, char **argv);
};

/* Every command, in the order memscope --help lists them. */
extern const struct cli_entry cli_entries[];
extern const int cli_nr_entries;
/* memscope's own options (before the command) and every command's. */
enum { MEMSCOPE_OPT_PLUGIN = CLI_LONG_ONLY, MEMSCOPE_OPT_VERSION };
extern const struct cli_command memscope_command;
const struct cli_program *cli_program(void);
/* "commands:" and one line per command. */
void cli_commands_help(FILE *out);

#endif
