#include "events/bpf_series.h"

#include <string.h>

/* In the order `memscope list --events` shows them; the eBPF source
 * (sources/bpf_source.c) says how each is counted. */
static const char *const names[] = {
	"proc.faults",
	"proc.faults_user",
	"proc.faults_kernel",
	"proc.faults_read",
	"proc.faults_write",
	"proc.oncpu_ns",
	"proc.offcpu_ns",
	"proc.switches",
	"proc.switches_voluntary",
	"proc.switches_involuntary",
	"proc.migrations",
	"proc.migrations_cross_node",
	"proc.numa_task_moves",
	"proc.numa_task_swaps",
	"proc.pages_migrated",
	"proc.pages_migrate_failed",
	"proc.pages_migrate_failed_by_reason",
	"proc.pages_alloc",
	"proc.pages_alloc_unplaced",
	"proc.processes",
	"proc.threads",
	"proc.cpu",
	"proc.state",
	"proc.bpf_drops",
	NULL,
};

bool bpf_series_name_known(const char *name)
{
	for (int i = 0; name && names[i]; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

const char *const *bpf_series_names(void)
{
	return names;
}
