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

void privileges_read(struct privileges *p);
/* Loading tracing BPF programs: CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON. */
bool privileges_allow_bpf(const struct privileges *p);

#endif
