/* "Too many open files" with its cause and fix: which limit (this
 * process's RLIMIT_NOFILE, or the system's file table), its value, and the
 * command that raises it. One wording for every place that opens fds
 * (perf counters, eBPF maps, programs and links, the sampling loop). */
#ifndef MEMSCOPE_FD_LIMIT_H
#define MEMSCOPE_FD_LIMIT_H

#include <stdbool.h>
#include <stddef.h>

/* Is errnum EMFILE or ENFILE? */
bool fd_limit_hit(int errnum);
/* The sentence for EMFILE/ENFILE (errnum, positive); `needed` is how many
 * descriptors the run needs, or 0 when unknown. */
void fd_limit_explain(int errnum, long needed, char *buf, size_t size);

/* How many more descriptors this process could open now, counted up to
 * `upto` (by duplicating one and closing the copies). Libraries that probe
 * features before they fail (libbpf) may report another errno than EMFILE
 * when they run out: this tells that case apart. */
int fd_limit_free(int upto);

#endif
