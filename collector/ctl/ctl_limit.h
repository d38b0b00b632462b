/* How much control input memscope takes: a running memscope must keep
 * sampling on time whatever arrives on its socket or FIFO (`yes 'label x' >
 * FIFO` used to stall it for seconds and write 15 MB a second of labels).
 *
 * Two bounds: per wakeup, a server handles at most a budget of input and
 * returns to the sampler (the rest waits for the next wakeup); over time,
 * commands pass a token bucket (CTL_RATE a second, bursts of CTL_BURST).
 * Commands beyond it are dropped and counted, never silently: the socket
 * answers each one with an error, the FIFO reports on stderr (at most once
 * a second, and a total at the end). */
#ifndef MEMSCOPE_CTL_LIMIT_H
#define MEMSCOPE_CTL_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define CTL_RATE 1000            /* commands a second, sustained */
#define CTL_BURST 1000           /* commands at once */

struct ctl_limit {
	double tokens;
	uint64_t last_ns;            /* when tokens were last added; 0: never */
	unsigned long dropped;       /* commands refused by the rate, in all */
	unsigned long reported;      /* dropped as of the last report */
	uint64_t reported_ns;
};

/* May one more command run now? false: drop it (counted in dropped). */
bool ctl_limit_take(struct ctl_limit *l);
/* Time to report drops again (some new ones, and a second since the last
 * report)? Marks them reported. */
bool ctl_limit_report_due(struct ctl_limit *l);

#endif
