/* Which processes have series of their own in /metrics.
 *
 * A machine runs thousands of processes over a day; a series for each would
 * grow Prometheus without bound. So at most PROM_PROCESSES processes have
 * them at a time, and the rest (and every process that has ended) are added
 * up in one `pid="other"` series, so that summing a family still gives the
 * total. The rule: a free place goes to the process with the most
 * proc.faults in the latest frame (the most of any per-process counter when
 * the run counts no proc.faults) - when the whole machine is measured, among
 * those that have run for PROM_PROCESS_MIN_AGE_NS, so that the short-lived
 * processes of a busy machine (compilers, shells) stay in "other" instead of
 * each making series of its own; a process keeps its place until it ends or
 * has counted nothing for PROM_PROCESS_IDLE_NS. A process's series counts
 * from the frame it got its place in (what came before is in "other"; a new
 * process is placed in its first busy frame, so counts whole), so no series
 * of a family ever goes down: rate() and increase() hold. */
#ifndef MEMSCOPE_PROM_PROCESSES_H
#define MEMSCOPE_PROM_PROCESSES_H

#include <stdbool.h>
#include <stdint.h>

#define PROM_PROCESSES 20
#define PROM_PROCESS_IDLE_NS 60000000000ull
#define PROM_PROCESS_MIN_AGE_NS 10000000000ull

/* One process in the latest frame: its pid and how busy it was. */
struct prom_activity {
	int pid;
	double busy;
	uint64_t since_ns;            /* frame time it was first seen */
};

struct prom_processes {
	struct {
		int pid;                  /* 0: free */
		uint64_t active_ns;       /* frame time it last counted something */
	} place[PROM_PROCESSES];
};

/* The latest frame (at now_ns) had the processes in acts (each pid once):
 * free the places of processes not among them or idle too long, then give
 * free places to the busiest of the others that have run for min_age_ns.
 * acts is reordered. */
void prom_processes_update(struct prom_processes *p, struct prom_activity *acts, int nr, uint64_t now_ns,
			   uint64_t min_age_ns);
bool prom_processes_has(const struct prom_processes *p, int pid);

#endif
