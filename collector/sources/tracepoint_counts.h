/* System-wide tracepoint counts taken by eBPF (bpf/tpcount.bpf.c) for the
 * perf source: each CPU counts its own hits in its entry of a memory-mapped
 * array, and user space reads every CPU's counts from memory. Reading a perf
 * counter of another CPU makes the kernel interrupt that CPU and wait for
 * it; this does not, nor does it make a system call.
 *
 * Counts are those of a perf tracepoint event (the same tracepoint, every
 * hit); a hit of the same tracepoint nested in an interrupt that arrives
 * while this CPU runs that tracepoint's program is not counted by the kernel,
 * and tp_counts_missed() says how many were lost that way. */
#ifndef MEMSCOPE_TRACEPOINT_COUNTS_H
#define MEMSCOPE_TRACEPOINT_COUNTS_H

#include <stdbool.h>
#include <stdint.h>

struct tp_counts;

/* Count each of names[] ("subsys:event"); attached[i] says which are counted
 * (slot = the index among the attached ones, in order). NULL when eBPF
 * counting is not available here at all (no privileges, no BPF): count them
 * with perf then. */
struct tp_counts *tp_counts_open(const char *const *names, int nr, bool *attached);
/* Take every CPU's counts now (loads from the mapped array); 0. */
int tp_counts_read(struct tp_counts *t);
/* The count of slot on cpu at the last read (0 for a CPU it does not know). */
uint64_t tp_counts_get(const struct tp_counts *t, int slot, int cpu);
/* Hits lost to nesting so far, all slots together. */
uint64_t tp_counts_missed(const struct tp_counts *t);
void tp_counts_close(struct tp_counts *t);

#endif
