/* Shared by bpf/tpcount.bpf.c and the perf source that loads it. */
#ifndef MEMSCOPE_TPCOUNT_BPF_H
#define MEMSCOPE_TPCOUNT_BPF_H

/* Tracepoints counted at once (programs tpcount_000 .. tpcount_077, octal). */
#define TPCOUNT_SLOTS 64

#endif
