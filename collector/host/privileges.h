/* The effective capabilities that decide what perf and eBPF allow this
 * process (root has them all). One place, for the doctor, the resolver and
 * the probe loader. */
#ifndef MEMSCOPE_PRIVILEGES_H
#define MEMSCOPE_PRIVILEGES_H

#include <stdbool.h>

struct privileges {
	bool known;        /* false when the capabilities could not be read */
	bool sys_admin;
	bool perfmon;
	bool bpf;
};

/* The one way memscope suggests to grant what it uses without root:
 * CAP_PERFMON (counters, system-wide and uncore), CAP_BPF (the eBPF probes),
 * CAP_SYS_PTRACE (counting other users' processes). */
#define PRIVILEGES_SETCAP "sudo setcap cap_perfmon,cap_bpf,cap_sys_ptrace+ep $(command -v memscope)"

void privileges_read(struct privileges *p);
/* Loading tracing BPF programs: CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON. */
bool privileges_allow_bpf(const struct privileges *p);

#endif
