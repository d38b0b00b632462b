#include "events/perf_errors.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "events/event.h"
#include "host/host.h"
#include "host/sysfs.h"

int perf_event_paranoid(void)
{
	long long value;

	if (sysfs_read_int("/proc/sys/kernel/perf_event_paranoid", &value) < 0)
		return 2;
	return (int)value;
}

/* Events counted by the CPU's own PMU (not software, not tracepoints, not an
 * uncore or other sysfs PMU): their absence usually means a virtual machine. */
static bool is_core_hardware(const struct event *ev)
{
	return ev->attr.type == PERF_TYPE_HARDWARE || ev->attr.type == PERF_TYPE_HW_CACHE ||
	       ev->attr.type == PERF_TYPE_RAW;
}

const struct pmu *host_core_pmu(const struct host *host)
{
	for (int i = 0; i < host->pmus.nr; i++) {
		const char *name = host->pmus.pmus[i].name;

		if (host->pmus.pmus[i].type == PERF_TYPE_RAW || !strcmp(name, "cpu") ||
		    !strncmp(name, "cpu_", 4) || !strncmp(name, "armv8_", 6) || !strncmp(name, "armv7_", 6))
			return &host->pmus.pmus[i];
	}
	return NULL;
}

bool perf_open_error(const struct host *host, const struct event *ev, int errnum,
		     enum open_scope scope, long needed_fds, struct ms_error *err)
{
	int paranoid = perf_event_paranoid();
	struct rlimit lim;

	switch (errnum) {
	case EACCES:
	case EPERM:
		ms_error_set(err, "no permission to count '%s'%s: perf_event_paranoid is %d "
			     "(/proc/sys/kernel/perf_event_paranoid); fix: run as root, or grant "
			     "CAP_PERFMON (sudo setcap cap_perfmon,cap_sys_ptrace+ep $(which memscope)), "
			     "or lower the limit: sudo sysctl kernel.perf_event_paranoid=%d",
			     ev->name, scope == OPEN_SYSTEM_WIDE ? " system-wide" : "", paranoid,
			     ev->attr.type == PERF_TYPE_TRACEPOINT ? -1 :
			     scope == OPEN_SYSTEM_WIDE ? 0 : 1);
		return false;
	case EMFILE:
	case ENFILE:
		getrlimit(RLIMIT_NOFILE, &lim);
		ms_error_set(err, "too many open files while opening '%s': this run needs about %ld "
			     "counters (events x CPUs x threads) and the open-file limit is %llu; "
			     "fix: ulimit -n %ld (or count fewer events/threads)",
			     ev->name, needed_fds, (unsigned long long)lim.rlim_cur,
			     needed_fds + 256 > (long)lim.rlim_cur ? needed_fds + 256 : (long)lim.rlim_cur * 2);
		return false;
	case ESRCH:
		ms_error_set(err, "cannot attach '%s': the process exited", ev->name);
		return false;
	case EBUSY:
		ms_error_set(err, "'%s': the PMU is busy (another perf user or the NMI watchdog holds "
			     "its counters); fix: stop the other user, or sudo sysctl kernel.nmi_watchdog=0",
			     ev->name);
		return true;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
	case EINVAL:
		if (is_core_hardware(ev) && !host_core_pmu(host)) {
			ms_error_set(err, "'%s' <not supported>: this kernel has no hardware PMU "
				     "(no cpu PMU in %s/bus/event_source/devices: a virtual machine "
				     "without PMU passthrough?); the other events are still counted",
				     ev->name, host->roots.sys);
			return true;
		}
		if (ev->system_wide_only && scope == OPEN_TASK) {
			ms_error_set(err, "'%s': %s is an uncore PMU and counts system-wide only",
				     ev->name, ev->pmu_name);
			return true;
		}
		ms_error_set(err, "'%s' <not supported>: the kernel refused it (%s) for PMU %s "
			     "(type %u, config 0x%llx, config1 0x%llx); check the encoding with "
			     "memscope list --events", ev->name, strerror(errnum),
			     ev->pmu_name ? ev->pmu_name : "?", ev->attr.type,
			     (unsigned long long)ev->attr.config, (unsigned long long)ev->attr.config1);
		return true;
	default:
		ms_error_set(err, "cannot open '%s': %s", ev->name, strerror(errnum));
		return true;
	}
}
