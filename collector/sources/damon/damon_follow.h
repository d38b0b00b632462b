/* A command's children as targets of memscope's vaddr kdamond. The source
 * looks for new children of its targets (proc/PID/task/TID/children) and
 * for targets that ended, at most once per aggregation interval (1 s at
 * least), and hands a changed list to a worker thread that writes it to
 * DAMON's sysfs files and commits it (damon_admin_set_targets): the kernel
 * applies a commit after an aggregation, so the write can take that long,
 * and the sampler must not wait for it. */
#ifndef MEMSCOPE_DAMON_FOLLOW_H
#define MEMSCOPE_DAMON_FOLLOW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/damon_admin.h"
#include "util/error.h"

/* At most this many processes are targets at once (each has 10 to 1000
 * regions); more children are counted, not monitored. */
#define DAMON_FOLLOW_MAX_TARGETS 64

struct damon_follow {
	struct damon_admin *admin;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* Under lock: the list asked for, whether the worker has it, its answer. */
	pid_t asked[DAMON_FOLLOW_MAX_TARGETS];
	int nr_asked;
	bool pending, busy, quit, answered;
	int answer;                    /* 0 committed, -1 refused (answer_err) */
	struct ms_error answer_err;
};

/* Start the worker for admin's kdamond. 0, or -1 with err. */
int damon_follow_start(struct damon_follow *f, struct damon_admin *admin, struct ms_error *err);
/* Ask for these targets (copied); false while an earlier list is being
 * committed (ask again later). */
bool damon_follow_ask(struct damon_follow *f, const pid_t *pids, int nr);
/* The last list's fate: 1 committed (pids/nr: the list), -1 refused (err
 * says why; the kdamond keeps its targets), 0 nothing new. */
int damon_follow_answer(struct damon_follow *f, pid_t *pids, int *nr, struct ms_error *err);
/* Wait for a commit under way, end the worker. Safe on one never started. */
void damon_follow_stop(struct damon_follow *f);

/* Append the child processes of pid (of any of its threads) not already
 * among out[0..*nr) to out, up to cap. proc: "/proc" or a fixture's. The
 * number appended. */
int damon_children(const char *proc, pid_t pid, pid_t *out, int *nr, int cap);
/* Does pid still have an address space to monitor (exists, not a zombie)? */
bool damon_process_alive(const char *proc, pid_t pid);

#endif
