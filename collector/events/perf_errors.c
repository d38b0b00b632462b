#include "events/perf_errors.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events/event.h"
#include "host/host.h"
#include "host/sysfs.h"
#include "util/fd_limit.h"
#include "host/privileges.h"

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

/* A counted process that belongs to another user: the kernel lets perf
 * count a task only with ptrace read access to it (same user, or
 * CAP_SYS_PTRACE), whatever perf_event_paranoid says. Its uid, or -1. */
static long other_users_process(const pid_t *pids, int nr_pids, pid_t *which)
{
	char path[64];
	struct stat st;

	if (geteuid() == 0)
		return -1;
	for (int i = 0; i < nr_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%d", (int)pids[i]);
		if (stat(path, &st) == 0 && st.st_uid != geteuid()) {
			*which = pids[i];
			return (long)st.st_uid;
		}
	}
	return -1;
}

bool perf_open_error(const struct host *host, const struct event *ev, int errnum,
		     enum open_scope scope, const pid_t *pids, int nr_pids, long needed_fds, struct ms_error *err)
{
	int paranoid = perf_event_paranoid();
	pid_t other = 0;
	long owner;

	switch (errnum) {
	case EACCES:
	case EPERM:
		if (scope == OPEN_TASK && (owner = other_users_process(pids, nr_pids, &other)) >= 0) {
			ms_error_set(err, "no permission to count '%s' in process %d: it belongs to uid %ld, and the "
				     "kernel lets perf count another user's process only with ptrace access to it (not "
				     "a matter of perf_event_paranoid); fix: run memscope as the process's owner (uid %ld) or as root, or "
				     "grant CAP_SYS_PTRACE (" PRIVILEGES_SETCAP ")",
				     ev->name, (int)other, owner, owner);
			return false;
		}
		ms_error_set(err, "no permission to count '%s'%s: perf_event_paranoid is %d "
			     "(/proc/sys/kernel/perf_event_paranoid); fix: run as root, or grant "
			     "CAP_PERFMON (" PRIVILEGES_SETCAP "), "
			     "or lower the limit: sudo sysctl kernel.perf_event_paranoid=%d",
			     ev->name, scope == OPEN_SYSTEM_WIDE ? " system-wide" : "", paranoid,
			     ev->attr.type == PERF_TYPE_TRACEPOINT ? -1 :
			     scope == OPEN_SYSTEM_WIDE ? 0 : 1);
		return false;
	case EMFILE:
	case ENFILE: {
		char why[256];

		fd_limit_explain(errnum, needed_fds, why, sizeof(why));
		ms_error_set(err, "cannot open '%s': %s (this run needs about %ld counters: events x CPUs x threads; "
			     "or count fewer events or threads)", ev->name, why, needed_fds);
		return false;
	}
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
				     "without PMU passthrough?)",
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

bool perf_event_try_own(const struct host *host, struct perf_event_attr *attr, const char *what,
			struct ms_error *why)
{
	int fd;

	if (host->roots.is_fixture) {
		ms_error_set(why, "MEMSCOPE_SYSFS_ROOT=%s describes another machine: nothing on it can be "
			     "opened here", host->roots.sys);
		return false;
	}
	fd = (int)syscall(__NR_perf_event_open, attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (errno == ENOSYS || errno == ENOENT)
		ms_error_set(why, "this kernel has no perf events (CONFIG_PERF_EVENTS)");
	else if (errno == EACCES || errno == EPERM)
		ms_error_set(why, "perf_event_open refused to %s (kernel.perf_event_paranoid = %d): lower it, "
			     "or give memscope CAP_PERFMON", what, perf_event_paranoid());
	else
		ms_error_set(why, "perf_event_open: %s", strerror(errno));
	return false;
}
