/* What is measured: the whole system (-a), existing processes (-p), or a
 * command memscope starts (-- CMD). */
#ifndef MEMSCOPE_TARGET_H
#define MEMSCOPE_TARGET_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "util/error.h"

enum target_kind { TARGET_SYSTEM, TARGET_PIDS, TARGET_COMMAND };

struct target {
	enum target_kind kind;
	bool system_wide;       /* count every CPU (-a), also while a command runs */
	pid_t *pids;            /* TARGET_PIDS: the processes; TARGET_COMMAND: the child */
	int nr_pids;
	char **argv;            /* TARGET_COMMAND */
	/* TARGET_COMMAND with -p (perf's -p PID -- CMD): the processes whose
	 * counters count while the command runs, instead of the command's. */
	pid_t *attach;
	int nr_attach;
	bool threads_only;      /* the pids are threads, counted alone (stat -t TID), not their processes */
	int exec_gate_fd;       /* TARGET_COMMAND: write end; closing it lets the child exec */
	int exec_report_fd;     /* TARGET_COMMAND: read end; carries errno if exec failed */
	int child_status;       /* TARGET_COMMAND: wait status once it has exited */
	struct rusage child_rusage; /* ... and its resource use (wait4), perf's "seconds user/sys" */
	bool child_exited;
	bool exec_failed;       /* TARGET_COMMAND: exec refused; child_status holds 127 or 126 */
};

/* Parse "PID[,PID...]"; each must exist now. */
int target_parse_pids(struct target *target, const char *text, struct ms_error *err);

/* Fork argv[0] but hold it before exec until target_start_command(), so
 * counters can be attached to it first (they are enabled on exec). */
int target_prepare_command(struct target *target, char **argv, struct ms_error *err);
/* Let the prepared child exec. */
int target_start_command(struct target *target, struct ms_error *err);

/* Every thread id of pid now, from /proc/PID/task. Caller frees *tids. */
int target_list_threads(pid_t pid, pid_t **tids, int *nr, struct ms_error *err);

/* Exit code memscope should return for a finished command (128+sig if killed). */
int target_exit_code(const struct target *target);
void target_free(struct target *target);

#endif
