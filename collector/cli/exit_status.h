/* Exit codes, made here once from the kind of error (util/error.h): 2 for
 * a usage error (what was asked means nothing: the user fixes the command
 * line), 1 for every other failure. A measured command's own status is
 * passed on by the commands that run one (session_exit_code). */
#ifndef MEMSCOPE_EXIT_STATUS_H
#define MEMSCOPE_EXIT_STATUS_H

#include "util/error.h"

int cli_exit_code(const struct ms_error *err);
/* ms_report(err), then its exit code. */
int cli_fail(const struct ms_error *err);

#endif
