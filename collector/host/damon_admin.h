/* memscope's own kdamond (the damon source's active mode), through DAMON's
 * sysfs interface (kernel/mm/damon/admin/kdamonds). Writing nr_kdamonds
 * rebuilds every kdamond directory (their settings are lost) and is refused
 * while any kdamond runs, so memscope starts one only when nr_kdamonds is 0,
 * and restores exactly that (state off, nr_kdamonds 0) at the end.
 *
 * When memscope dies without its end (SIGKILL, a crash), two things stop the
 * kdamond it left:
 *  - a watchdog process, forked once the kdamond runs, that does nothing but
 *    wait on a pipe: when memscope is gone the pipe reads end-of-file and the
 *    watchdog turns the kdamond off and sets nr_kdamonds back to 0;
 *  - a marker file, /run/memscope/damon-kdamond (root's, 0600), naming
 *    memscope's pid, the watchdog's and the kdamond's: when both processes
 *    are gone (killed together), the next active start removes that
 *    kdamond, and only when its pid is still the one the marker names.
 * Every file is opened without following links (O_NOFOLLOW on each path
 * component, from directory descriptors) and checked to be what it must be
 * (fstat) before it is read or written. */
#ifndef MEMSCOPE_DAMON_ADMIN_H
#define MEMSCOPE_DAMON_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "host/page_node.h"
#include "host/sysfs.h"
#include "util/error.h"

#define DAMON_ADMIN_RUN_DIR "/run/memscope"
#define DAMON_ADMIN_MARKER "damon-kdamond"

struct damon_admin_setup {
	const char *ops;                      /* "vaddr" or "paddr" */
	const pid_t *pids;                    /* vaddr: one target each */
	int nr_pids;
	const struct phys_range *ranges;      /* paddr: the regions to monitor */
	int nr_ranges;
	uint64_t sample_us, aggr_us, update_us;
	unsigned long min_regions, max_regions;
	const char *run_dir;                  /* where the marker goes; NULL: DAMON_ADMIN_RUN_DIR */
};

struct damon_admin {
	int kdamonds;          /* kernel/mm/damon/admin/kdamonds, -1 when closed */
	int index;             /* the kdamond memscope added (0) */
	pid_t kdamond_pid;
	pid_t watchdog;        /* 0: none */
	int watchdog_pipe;     /* its write end, -1 when none */
	bool marker;           /* the marker file was written */
	const char *run_dir;
};

/* Start the kdamond. 0, or -1 with err saying why (busy, not root, a
 * configuration the kernel refused) and the interface left as it was. */
int damon_admin_start(const struct sysfs_roots *roots, const struct damon_admin_setup *setup, struct damon_admin *a,
		      struct ms_error *err);
/* Turn it off and restore nr_kdamonds; the watchdog ends too. Safe to call
 * twice, and on an admin never started (after damon_admin_init). */
void damon_admin_stop(struct damon_admin *a);
void damon_admin_init(struct damon_admin *a);

/* A running vaddr kdamond's targets become pids (a command's children come
 * and go): nr_targets, each pid_target (writing nr_targets rebuilds every
 * target directory, so all are written), then "commit" to its state file,
 * which the kernel applies to the running kdamond. Target i keeps its
 * regions when its pid changes (the kernel matches targets by index): the
 * caller treats a moved pid's first aggregations as another process's. 0,
 * or -1 with err naming the file (a pid that exited before the commit:
 * EINVAL; the kdamond keeps its old targets). */
int damon_admin_set_targets(struct damon_admin *a, const pid_t *pids, int nr, struct ms_error *err);

/* A kdamond a dead memscope left (its marker, both processes gone): turned
 * off, nr_kdamonds back to 0, the marker removed; a sentence for the user in
 * said. run_dir NULL: DAMON_ADMIN_RUN_DIR. 1 when one was removed, 0 when there was nothing to do (or the
 * marker's memscope still runs), -1 with said the reason it was left. */
int damon_admin_reap(const struct sysfs_roots *roots, const char *run_dir, char *said, size_t size);

/* Is there a marker of a memscope that died with its watchdog (what
 * damon_admin_reap would remove)? 1 with said naming it, else 0. Changes
 * nothing (doctor). */
int damon_admin_stale(const char *run_dir, char *said, size_t size);

#endif
