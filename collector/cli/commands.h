/* The memscope subcommands. Each takes argv after the command name and
 * returns the process exit code: 0 ok, 1 runtime failure, 2 usage error (or,
 * for stat -- CMD, the command's own exit status). */
#ifndef MEMSCOPE_COMMANDS_H
#define MEMSCOPE_COMMANDS_H

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

#endif
