/* memscope doctor: what stands between this machine and its counters, each
 * finding with the exact fix. Checks permissions (perf_event_paranoid,
 * capabilities), which PMU drivers exist against the ones this CPU should
 * have (from the catalog), a virtualised PMU, BTF and tracefs for the eBPF
 * probes, DAMON for the damon series, the open-file limit and the NMI
 * watchdog holding a counter. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "host/host.h"
#include "host/privileges.h"
#include "catalog/resolver.h"
#include "host/sysfs.h"
#include "host/tracefs.h"
#include "host/damon_admin.h"
#include "host/damon_monitor.h"
#include "util/report.h"

struct doctor {
	int problems;
	int warnings;
};

static void ok(const char *fmt, const char *a)
{
	printf("  ok    ");
	printf(fmt, a);
	printf("\n");
}

static void finding(struct doctor *d, bool problem, const char *what, const char *fix)
{
	printf("  %s  %s\n        fix: %s\n", problem ? "FAIL" : "warn", what, fix);
	if (problem)
		d->problems++;
	else
		d->warnings++;
}


static void check_permissions(struct doctor *d, const struct host *host)
{
	char path[4200], text[64];
	long long paranoid = 2;
	struct privileges priv;
	bool perfmon, admin, bpf;

	/* A fixture tree is another machine: this process's rights say nothing about it. */
	if (host->roots.is_fixture) {
		sysfs_join(path, sizeof(path), host->roots.proc, "sys/kernel/perf_event_paranoid");
		if (sysfs_read_int(path, &paranoid) == 0)
			printf("  info  perf_event_paranoid = %lld on that machine (%s)\n", paranoid, path);
		printf("  info  the machine is the tree at %s: this process's capabilities and limits are not "
		       "checked against it\n", host->roots.sys);
		return;
	}
	privileges_read(&priv);
	perfmon = priv.perfmon;
	bpf = priv.bpf;
	admin = priv.sys_admin;
	snprintf(path, sizeof(path), "/proc/sys/kernel/perf_event_paranoid");
	if (sysfs_read_int(path, &paranoid) == 0) {
		snprintf(text, sizeof(text), "%lld", paranoid);
		if (paranoid > 0 && !perfmon && !admin)
			finding(d, true, "kernel.perf_event_paranoid is above 0 and memscope has neither CAP_PERFMON nor "
				"CAP_SYS_ADMIN: system-wide and uncore counters will be refused (EACCES)",
				"sudo sysctl -w kernel.perf_event_paranoid=0, or: " PRIVILEGES_SETCAP);
		else
			printf("  ok    perf_event_paranoid = %s%s\n", text,
			       perfmon || admin ? " (overridden by CAP_PERFMON/CAP_SYS_ADMIN)" : "");
	} else {
		finding(d, true, "cannot read /proc/sys/kernel/perf_event_paranoid: the kernel has no perf events",
			"use a kernel built with CONFIG_PERF_EVENTS=y");
	}
	if (!bpf && !admin)
		finding(d, false, "no CAP_BPF: the eBPF probes (page faults, placement, scheduling) cannot load",
			"run as root, or: " PRIVILEGES_SETCAP);
	else
		ok("capabilities allow perf and BPF%s", "");
}

static bool is_core_role(const struct catalog_role *role)
{
	return role->match && (strcmp(role->match, "^cpu$") == 0 || strncmp(role->match, "^armv8_", 7) == 0);
}

static void check_pmus(struct doctor *d, const struct host *host)
{
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct ms_error err;
	bool hw_pmu = false, vm = host->cpu.hypervisor;
	int expected = 0;

	for (int i = 0; i < host->pmus.nr; i++) {
		const char *n = host->pmus.pmus[i].name;

		hw_pmu |= strcmp(n, "cpu") == 0 || strcmp(n, "cpu_core") == 0 || strncmp(n, "armv8_", 6) == 0;
	}
	if (!hw_pmu && vm)
		finding(d, true, "a virtual machine without a virtualised PMU (cpuinfo has the 'hypervisor' flag and "
			"there is no 'cpu' or 'armv8_*' PMU): no hardware counters at all; uncore PMUs (memory "
			"controllers, caches, links) are never virtualised, so no driver can add them here; the kernel "
			"and eBPF metrics work",
			"run on bare metal for memory-controller counters; for core events enable the guest PMU (KVM: "
			"-cpu host,pmu=on; VMware: virtualize CPU performance counters)");
	else if (!hw_pmu)
		finding(d, true, "no hardware PMU (no 'cpu' or 'armv8_*' in bus/event_source/devices): only software "
			"events, tracepoints and kernel statistics work",
			"use a kernel built with CONFIG_PERF_EVENTS and the CPU's PMU driver (x86: built in; Arm: "
			"CONFIG_ARM_PMUV3 and the PMU node in the device tree or ACPI)");
	else
		ok("hardware PMU present%s", "");
	if (catalog_load_default(&cat, &err) || resolve(host, cat, &res, &err)) {
		finding(d, true, err.text, "fix the catalog file named above, or set MEMSCOPE_CATALOG_DIR");
		catalog_free(cat);
		return;
	}
	printf("  info  CPU: %s%s\n", res->cpu.text, vm ? " (virtual machine)" : "");
	for (int f = 0; f < res->nr_families; f++) {
		const struct resolved_family *rf = &res->families[f];
		const struct catalog_family *fam = rf->family;

		if (fam->nr_cpus == 0 || !res->cpu.known || !catalog_cpu_matches(fam, &res->cpu))
			continue;
		expected++;
		for (int r = 0; r < fam->nr_roles; r++) {
			const struct catalog_role *role = &fam->roles[r];
			const char *module = role->driver;   /* the catalog's driver: key */
			char what[768], fix[256];

			if (rf->roles[r].nr_inst > 0) {
				printf("  ok    %s: %d %s PMU instance%s\n", fam->name, rf->roles[r].nr_inst,
				       role->name, rf->roles[r].nr_inst == 1 ? "" : "s");
				continue;
			}
			/* In a VM the absence is the VM's, reported once above. */
			if (vm) {
				printf("  info  %s: no %s PMU, as in any virtual machine\n", fam->name, role->name);
				continue;
			}
			if (is_core_role(role) && !hw_pmu)
				continue;
			snprintf(what, sizeof(what), "%s: this CPU should have %s PMUs (%s) but %s", fam->name, role->name,
				 role->description ? role->description : "", rf->roles[r].why);
			if (module)
				snprintf(fix, sizeof(fix), "sudo modprobe %s (or a kernel with that driver built in)", module);
			else
				snprintf(fix, sizeof(fix), "update the kernel to one whose driver knows this CPU");
			finding(d, false, what, fix);
		}
	}
	if (expected == 0)
		printf("  info  no catalog family matches this CPU (%s): only the Linux kernel and eBPF metrics apply; "
		       "docs/catalog.md says how to add one\n", res->cpu.text);
	resolution_free(res);
	catalog_free(cat);
}

/* The damon series read a running physical-address kdamond (passive mode)
 * or start memscope's own (active mode). */
static void check_damon(struct doctor *d, const struct host *host)
{
	struct damon_monitor mon;
	enum damon_absent reason;
	struct ms_error err;
	char who[256], stale[512];

	if (damon_admin_stale(NULL, stale, sizeof(stale))) {
		finding(d, false, stale,
			"the next memscope run with a damon series (--damon auto or active) stops and removes it");
		return;
	}
	if (damon_monitor_find(&host->roots, &mon, &reason, &err) == 0) {
		damon_monitor_describe(&mon, who, sizeof(who));
		if (strcmp(mon.ops, "paddr") == 0)
			printf("  ok    DAMON: %s runs: the damon series read it passively (never changed)\n", who);
		else
			finding(d, false, "DAMON: the running kdamond monitors virtual addresses, which have no node",
				"the damon series need a physical-address (paddr) kdamond");
		return;
	}
	switch (reason) {
	case DAMON_NO_KERNEL_SUPPORT:
		finding(d, false, err.text,
			"boot a kernel with CONFIG_DAMON_SYSFS and CONFIG_DAMON_PADDR (Debian 12: linux-image-6.12 from "
			"bookworm)");
		break;
	case DAMON_NO_SYSFS:
		finding(d, false, err.text, "sudo mount -t sysfs sysfs /sys");
		break;
	case DAMON_NOT_ALLOWED:
		finding(d, false, err.text, "run memscope as root for the damon series");
		break;
	case DAMON_NONE_RUNNING:
		if (mon.nr_kdamonds == 0 && geteuid() == 0) {
			printf("  ok    DAMON: no kdamond runs: the damon series start memscope's own (active mode; "
			       "--damon passive would have none to read)\n");
			break;
		}
		finding(d, false, err.text,
			"start a physical-address kdamond (DAMON_RECLAIM: echo Y > "
			"/sys/module/damon_reclaim/parameters/enabled, or one of your own through "
			"/sys/kernel/mm/damon/admin)");
		break;
	case DAMON_BAD_STATE:
		finding(d, false, err.text, "check the kdamond's files under /sys/kernel/mm/damon/admin/kdamonds");
		break;
	}
}

static void check_kernel_features(struct doctor *d, const struct host *host)
{
	char path[4200];
	unsigned mode, owner;
	long long watchdog = 0;
	struct rlimit lim;
	long needed = 0;

	sysfs_join(path, sizeof(path), host->roots.sys, "kernel/btf/vmlinux");
	if (sysfs_exists(path))
		ok("BTF present (%s)", path);
	else
		finding(d, false, "no kernel BTF: the CO-RE eBPF probes cannot load",
			"use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	sysfs_join(path, sizeof(path), host->roots.sys, "kernel/tracing/events");
	if (sysfs_exists(path)) {
		ok("tracefs mounted%s", "");
	} else if (tracefs_closed(host->roots.sys, path, sizeof(path), &mode, &owner)) {
		/* Mounted, only not for this user: mounting it again is not the fix. */
		char what[4400], fix[4400];

		snprintf(what, sizeof(what), "tracefs is mounted at %s but closed to this user (uid %u): mode %04o, "
			 "owned by uid %u; tracepoint events cannot be named", path, (unsigned)geteuid(), mode, owner);
		snprintf(fix, sizeof(fix), "run as root, or open it to others: sudo mount -o remount,mode=755 %s "
			 "(or gid=GROUP for one group)", path);
		finding(d, false, what, fix);
	} else {
		finding(d, false, "tracefs is not mounted: tracepoint events cannot be named",
			"sudo mount -t tracefs nodev /sys/kernel/tracing");
	}
	check_damon(d, host);
	if (host->roots.is_fixture)
		return;
	/* one fd per event per CPU: 16 events on every CPU is a modest session */
	needed = 16L * (host->topo.nr_cpus > 0 ? host->topo.nr_cpus : 1) + 64;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
		if ((long)lim.rlim_cur < needed) {
			char what[256], fix[128];

			snprintf(what, sizeof(what), "open-file limit %ld is below the ~%ld descriptors 16 events on %d "
				 "CPUs need", (long)lim.rlim_cur, needed, host->topo.nr_cpus);
			snprintf(fix, sizeof(fix), "ulimit -n %ld (hard limit %ld)", needed * 4,
				 (long)lim.rlim_max);
			finding(d, false, what, fix);
		} else {
			printf("  ok    open-file limit %ld (>= %ld needed for 16 events on %d CPUs)\n",
			       (long)lim.rlim_cur, needed, host->topo.nr_cpus);
		}
	}
	snprintf(path, sizeof(path), "/proc/sys/kernel/nmi_watchdog");
	if (sysfs_read_int(path, &watchdog) == 0 && watchdog > 0)
		finding(d, false, "the NMI watchdog holds one hardware counter on every CPU: one counter fewer for "
			"memscope, more multiplexing",
			"sudo sysctl -w kernel.nmi_watchdog=0 (re-enable with =1)");
	else
		ok("NMI watchdog off or absent%s", "");
}

static const struct cli_group doctor_groups[] = {
	{ NULL, NULL },
};

const struct cli_command doctor_command = {
	.name = "doctor",
	.summary = "permissions, PMUs, BTF, limits: what is missing and the fix",
	.usage = "",
	.groups = doctor_groups,
	.epilog = "Exits 1 when a problem was found, 0 when there are only warnings or nothing.\n",
};

static int no_options(void *ctx, int key, const char *arg)
{
	(void)ctx;
	(void)key;
	(void)arg;
	return 0;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { 0, 0 };
	struct host host;
	struct ms_error err;
	int status, first = cli_parse(&doctor_command, argc, argv, no_options, NULL, &status);

	if (first < 0)
		return status;
	if (first < argc) {
		ms_warn("unexpected argument '%s' (doctor checks this machine, or the tree "
			"MEMSCOPE_SYSFS_ROOT names)", argv[first]);
		return EXIT_USAGE;
	}
	if (host_load(&host, &err)) {
		ms_report(&err);
		return 1;
	}
	printf("memscope doctor%s\n\nPermissions\n", host.roots.is_fixture ? " (fixture machine)" : "");
	check_permissions(&d, &host);
	printf("\nPerformance monitoring units\n");
	check_pmus(&d, &host);
	printf("\nKernel features and limits\n");
	check_kernel_features(&d, &host);
	printf("\n%d problem%s, %d warning%s\n", d.problems, d.problems == 1 ? "" : "s", d.warnings,
	       d.warnings == 1 ? "" : "s");
	host_free(&host);
	return d.problems ? 1 : 0;
}
