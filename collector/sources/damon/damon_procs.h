/* Per-process hot and cold bytes from a physical-address kdamond: at each
 * aggregation the largest processes by resident memory have their resident
 * pages' frames read from /proc/PID/pagemap and joined with the
 * aggregation's regions (damon_pages.h).
 *
 * Bounded: at most DAMON_PROCS_MAX processes and DAMON_PROCS_PAGE_BUDGET
 * pagemap entries (8 bytes each) an aggregation. A process is chosen only
 * when its whole address space (statm's size) fits in what is left of the
 * budget, so a process is either read whole or not at all: its bytes are
 * never a part shown as the whole.
 *
 * Root only: pagemap gives frame numbers only to CAP_SYS_ADMIN (0 to
 * others); then every process is unknown, never zero.
 *
 * Each process's files are opened once, by descriptor, under its /proc/PID
 * directory descriptor (itself opened under /proc's without following
 * links), and kept: a pid reused by another process cannot redirect them
 * (they read as empty once the process is gone, and it is dropped). */
#ifndef MEMSCOPE_DAMON_PROCS_H
#define MEMSCOPE_DAMON_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/damon/damon_pages.h"
#include "util/error.h"

#define DAMON_PROCS_MAX 32
#define DAMON_PROCS_PAGE_BUDGET (1u << 20)   /* entries: 8 MiB of pagemap, 4 GiB of address space at 4 KiB pages */
#define DAMON_PROCS_CHUNK 4096               /* entries per pagemap read */
#define DAMON_PROCS_VRUNS 65536              /* virtual runs recorded per aggregation, all processes */

enum damon_proc_state { DAMON_PROC_FREE, DAMON_PROC_NEW, DAMON_PROC_LIVE, DAMON_PROC_LEAVING };

struct damon_proc {
	enum damon_proc_state state;
	pid_t pid;
	char comm[16];
	int maps_fd, pagemap_fd;
	struct damon_tally tally;   /* bytes per node of the last join */
	bool measured;              /* the last join read every one of its pages */
	bool chosen;                /* picked by the scan in progress */
	uint64_t joins, entries, ns;   /* its cost over the run */
};

struct damon_procs {
	int proc_fd;                        /* /proc, opened as a directory */
	int nr_nodes;
	struct damon_proc procs[DAMON_PROCS_MAX];
	struct damon_proc_candidate { pid_t pid; uint64_t resident, size; } *cands;
	int nr_cands, cap_cands;
	uint64_t *entries;                  /* DAMON_PROCS_CHUNK */
	char *maps_buf;
	uint64_t page_size;
	bool hidden;                        /* frame numbers hidden: nothing per process is known */
	/* Only these processes (a command's or -p's), not the largest; nr_only 0: the largest. */
	const pid_t *only;
	int nr_only;
	/* Optional: each process read whole hands over its virtual runs (the
	 * recording's placed regions); runs past DAMON_PROCS_VRUNS are left out
	 * and the process's runs of that aggregation not handed over. */
	void (*emit)(void *ctx, const struct damon_proc *pr, const struct damon_vrun *runs, int nr);
	void *emit_ctx;
	struct damon_vrun *vruns;
	int vruns_left;                     /* of DAMON_PROCS_VRUNS, in the join in progress */
	uint64_t vruns_overflow;            /* aggregations of a process not handed over */
	/* Cost, over the run. */
	uint64_t joins, entries_read, ns_spent, max_ns;
	/* The process that cost the most entries a join, over the run (by the
	 * last slot it held): its mean cost. */
	pid_t big_pid;
	char big_comm[16];
	uint64_t big_entries, big_ns;   /* per join */
};

int damon_procs_init(struct damon_procs *p, const char *proc_root, int nr_nodes, const int *node_ids,
		     struct ms_error *err);
/* One aggregation's regions: choose the processes, read their pages, join.
 * Slots that leave the set are DAMON_PROC_LEAVING (the caller retires their
 * series, then calls damon_procs_release); new ones are DAMON_PROC_NEW (the
 * caller adds their series and marks them DAMON_PROC_LIVE). */
void damon_procs_update(struct damon_procs *p, const struct damon_phys_region *regions, int nr,
			const struct phys_node_map *map, const struct damon_classes *classes);
void damon_procs_release(struct damon_procs *p, int slot);
void damon_procs_free(struct damon_procs *p);

#endif
