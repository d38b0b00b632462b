/* The one place messages are said: on standard error, each naming the
 * command ("memscope stat: ..."), set once when the command starts. Errors
 * go through ms_report (the text of a struct ms_error), everything else
 * (notes, warnings, usage refusals said where they are found) through
 * ms_warn. Exit codes are not made here: cli/exit_status.h. */
#ifndef MEMSCOPE_REPORT_H
#define MEMSCOPE_REPORT_H

#include "util/error.h"

/* The command messages name ("stat"); NULL or never set: "memscope: ...". */
void ms_report_command(const char *name);
const char *ms_report_command_name(void);
/* "memscope NAME: TEXT\n". */
void ms_report(const struct ms_error *err);
/* "memscope NAME: " and the formatted text, then a newline. */
__attribute__((format(printf, 1, 2)))
void ms_warn(const char *fmt, ...);

#endif
