#include "sources/bpf/bpf_probes.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf/memscope_bpf.h"
/* The skeleton embeds the BPF object as one long string literal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "bpf/memscope.skel.h"
#pragma GCC diagnostic pop
#include "host/privileges.h"
#include "host/sysfs.h"
#include "host/tracefs.h"
#include "util/fd_limit.h"


#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

struct probe_desc {
	const char *key;       /* name in attach overrides */
	const char *subsys;
	const char *name;
	bool tp_btf;           /* else a tracefs tracepoint */
	const char *feeds;     /* what is lost without it */
};

static const struct probe_desc probe_descs[BPF_PROBE_NR] = {
	[BPF_PROBE_FAULT_USER] = { "page_fault_user", "exceptions", "page_fault_user", true,
				   "user-mode page faults (proc.faults, proc.faults_user, proc.faults_read/write)" },
	[BPF_PROBE_FAULT_KERNEL] = { "page_fault_kernel", "exceptions", "page_fault_kernel", true,
				     "kernel-mode page faults (proc.faults, proc.faults_kernel)" },
	[BPF_PROBE_PAGE_ALLOC] = { "mm_page_alloc", "kmem", "mm_page_alloc", false,
				   "page allocations per node (proc.pages_alloc)" },
	[BPF_PROBE_SCHED_SWITCH] = { "sched_switch", "sched", "sched_switch", true,
				     "on/off-CPU time and context switches (proc.oncpu_ns, proc.offcpu_ns, "
				     "proc.switches_*)" },
	[BPF_PROBE_MIGRATE_TASK] = { "sched_migrate_task", "sched", "sched_migrate_task", true,
				     "CPU migrations (proc.migrations, proc.migrations_cross_node)" },
	[BPF_PROBE_MOVE_NUMA] = { "sched_move_numa", "sched", "sched_move_numa", true,
				  "NUMA balancing task moves (proc.numa_task_moves)" },
	[BPF_PROBE_SWAP_NUMA] = { "sched_swap_numa", "sched", "sched_swap_numa", true,
				  "NUMA balancing task swaps (proc.numa_task_swaps)" },
	[BPF_PROBE_MIGRATE_PAGES] = { "mm_migrate_pages", "migrate", "mm_migrate_pages", true,
				      "page migrations (proc.pages_migrated, proc.pages_migrate_failed, _by_reason)" },
	[BPF_PROBE_FORK] = { "sched_process_fork", "sched", "sched_process_fork", true,
			     "following the target's children" },
	[BPF_PROBE_EXIT] = { "sched_process_exit", "sched", "sched_process_exit", true,
			     "freeing the task table of exited threads (without it the table fills and later threads "
			     "count without a process)" },
	[BPF_PROBE_EXEC] = { "sched_process_exec", "sched", "sched_process_exec", true,
			     "process names after exec (the name at first sight is kept)" },
	[BPF_PROBE_RENAME] = { "task_rename", "task", "task_rename", true,
			       "thread names set after first sight (prctl PR_SET_NAME)" },
};

const char *bpf_probe_tracepoint(enum bpf_probe probe)
{
	static const char *const names[BPF_PROBE_NR] = {
		[BPF_PROBE_FAULT_USER] = "exceptions:page_fault_user",
		[BPF_PROBE_FAULT_KERNEL] = "exceptions:page_fault_kernel",
		[BPF_PROBE_PAGE_ALLOC] = "kmem:mm_page_alloc",
		[BPF_PROBE_SCHED_SWITCH] = "sched:sched_switch",
		[BPF_PROBE_MIGRATE_TASK] = "sched:sched_migrate_task",
		[BPF_PROBE_MOVE_NUMA] = "sched:sched_move_numa",
		[BPF_PROBE_SWAP_NUMA] = "sched:sched_swap_numa",
		[BPF_PROBE_MIGRATE_PAGES] = "migrate:mm_migrate_pages",
		[BPF_PROBE_FORK] = "sched:sched_process_fork",
		[BPF_PROBE_EXIT] = "sched:sched_process_exit",
		[BPF_PROBE_EXEC] = "sched:sched_process_exec",
		[BPF_PROBE_RENAME] = "task:task_rename",
	};
	return (unsigned)probe < BPF_PROBE_NR ? names[probe] : "?";
}

static struct bpf_program *probe_program(struct memscope_bpf *skel, enum bpf_probe probe)
{
	switch (probe) {
	case BPF_PROBE_FAULT_USER: return skel->progs.on_page_fault_user;
	case BPF_PROBE_FAULT_KERNEL: return skel->progs.on_page_fault_kernel;
	case BPF_PROBE_PAGE_ALLOC: return skel->progs.on_mm_page_alloc;
	case BPF_PROBE_SCHED_SWITCH: return skel->progs.on_sched_switch;
	case BPF_PROBE_MIGRATE_TASK: return skel->progs.on_sched_migrate_task;
	case BPF_PROBE_MOVE_NUMA: return skel->progs.on_sched_move_numa;
	case BPF_PROBE_SWAP_NUMA: return skel->progs.on_sched_swap_numa;
	case BPF_PROBE_MIGRATE_PAGES: return skel->progs.on_mm_migrate_pages;
	case BPF_PROBE_FORK: return skel->progs.on_sched_process_fork;
	case BPF_PROBE_EXIT: return skel->progs.on_sched_process_exit;
	case BPF_PROBE_EXEC: return skel->progs.on_sched_process_exec;
	case BPF_PROBE_RENAME: return skel->progs.on_task_rename;
	case BPF_PROBE_NR: break;
	}
	return NULL;
}

/* Where each probe attaches this time: its own tracepoint or an override. */
struct attach_point {
	char subsys[64];
	char name[128];
};

static int parse_overrides(const char *text, struct attach_point *points, struct ms_error *err)
{
	char copy[1024];
	char *save = NULL;

	if (!text || !*text)
		return 0;
	snprintf(copy, sizeof(copy), "%s", text);
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *colon;
		int found = -1;

		if (!eq || !(colon = strchr(eq + 1, ':'))) {
			ms_error_set(err, "bpf attach override \"%s\": expected PROBE=SUBSYS:NAME", item);
			return -1;
		}
		*eq = '\0';
		*colon = '\0';
		for (int p = 0; p < BPF_PROBE_NR; p++)
			if (!strcmp(item, probe_descs[p].key))
				found = p;
		if (found < 0) {
			ms_error_set(err, "bpf attach override: no probe named \"%s\" (probes: page_fault_user, "
				     "page_fault_kernel, mm_page_alloc, sched_switch, sched_migrate_task, ...)", item);
			return -1;
		}
		snprintf(points[found].subsys, sizeof(points[found].subsys), "%s", eq + 1);
		snprintf(points[found].name, sizeof(points[found].name), "%s", colon + 1);
	}
	return 0;
}

/* libbpf's own messages: warnings only, unless MEMSCOPE_BPF_DEBUG is set. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !getenv("MEMSCOPE_BPF_DEBUG"))
		return 0;
	if (level == LIBBPF_INFO && !getenv("MEMSCOPE_BPF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The first, unchecked load: a failure is explained by the checked retry,
 * which prints libbpf's messages then. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!getenv("MEMSCOPE_BPF_DEBUG"))
		return 0;
	(void)level;
	return vfprintf(stderr, fmt, args);
}


static const char still_works[] =
	"the proc.* series are unavailable; the other sources (perf events, procfs) keep running";

static int check_permissions(struct ms_error *err)
{
	struct privileges priv;
	bool bpf, perfmon;
	char missing[64] = "";

	privileges_read(&priv);
	if (!priv.known) {
		ms_error_set(err, "eBPF probes: cannot read this process's capabilities (%s); %s", strerror(errno),
			     still_works);
		return -1;
	}
	if (privileges_allow_bpf(&priv))
		return 0;
	bpf = priv.bpf;
	perfmon = priv.perfmon;
	snprintf(missing, sizeof(missing), "%s%s%s", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	ms_error_set(err, "eBPF probes need root, or CAP_BPF and CAP_PERFMON: this process lacks %s; %s. "
		     "Fix: run as root, or grant them: " PRIVILEGES_SETCAP,
		     missing, still_works);
	return -1;
}

static bool tracepoint_exists(const struct btf *vmlinux, const struct attach_point *point, bool tp_btf,
			      const char *tracefs)
{
	char path[4096 + 256];

	if (tp_btf) {
		if (!vmlinux)
			return true;   /* unchecked: the load finds out */
		snprintf(path, sizeof(path), "btf_trace_%s", point->name);
		return btf__find_by_name_kind(vmlinux, path, BTF_KIND_TYPEDEF) >= 0;
	}
	if (!tracefs)
		return false;
	if (snprintf(path, sizeof(path), "%s/events/%s/%s", tracefs, point->subsys, point->name) >= (int)sizeof(path))
		return false;
	return sysfs_exists(path);
}

/* Number of arguments of a tp_btf tracepoint, from its btf_trace_ typedef. */
static int tracepoint_nr_args(const struct btf *vmlinux, const char *name)
{
	char type_name[160];
	const struct btf_type *t;
	int id;

	snprintf(type_name, sizeof(type_name), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vmlinux, type_name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type); /* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(vmlinux, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) - 1 /* the leading void *__data */ : -1;
}

static void warn(struct bpf_probes *probes, const char *fmt, ...)
{
	size_t used = strlen(probes->warnings);
	va_list args;

	if (used >= sizeof(probes->warnings) - 1)
		return;
	va_start(args, fmt);
	vsnprintf(probes->warnings + used, sizeof(probes->warnings) - used, fmt, args);
	va_end(args);
	used = strlen(probes->warnings);
	if (used < sizeof(probes->warnings) - 1)
		strcat(probes->warnings, "\n");
}

static void configure(struct memscope_bpf *skel, const struct bpf_probe_config *cfg, bool switch_state_arg)
{
	int tasks = cfg->max_tasks > 0 ? cfg->max_tasks : 4096;
	int procs = cfg->max_processes > 0 ? cfg->max_processes : 1024;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	skel->rodata->filter_tgids = cfg->filter_tgids;
	skel->rodata->emit_events = cfg->event_ring_bytes > 0;
	skel->rodata->switch_has_prev_state = switch_state_arg;
	if (cfg->pfn_table) {
		int nr = cfg->pfn_table->nr;

		for (int i = 0; i < nr; i++) {
			skel->rodata->pfn_ranges[i].start_pfn = cfg->pfn_table->ranges[i].start_pfn;
			skel->rodata->pfn_ranges[i].end_pfn = cfg->pfn_table->ranges[i].end_pfn;
			skel->rodata->pfn_ranges[i].node = (__u32)cfg->pfn_table->ranges[i].node;
		}
		skel->rodata->nr_pfn_ranges = (__u32)nr;
	}
	for (int cpu = 0; cpu < cfg->nr_cpu_node && cpu < MS_BPF_MAX_CPUS; cpu++)
		skel->rodata->cpu_node[cpu] = cfg->cpu_node[cpu];
	skel->rodata->nr_cpu_nodes = (__u32)(cfg->nr_cpu_node < MS_BPF_MAX_CPUS ? cfg->nr_cpu_node : MS_BPF_MAX_CPUS);
	for (int n = 0; n < MS_BPF_MAX_NODES; n++)
		skel->rodata->node_index[n] = n < cfg->nr_node_index ? cfg->node_index[n] : -1;
	skel->rodata->nr_slots = (__u32)tasks;
	skel->rodata->exit_ring_bytes = (__u32)(cfg->exit_ring_bytes ? cfg->exit_ring_bytes : page);

	/* Right-sized, and nothing preallocated per CPU: the task table is one
	 * array (slot 0 included), the rest grows as it is used. */
	bpf_map__set_max_entries(skel->maps.slots, (__u32)tasks);
	bpf_map__set_max_entries(skel->maps.free_slots, (__u32)tasks);
	bpf_map__set_max_entries(skel->maps.exits, (__u32)(cfg->exit_ring_bytes ? cfg->exit_ring_bytes : page));
	bpf_map__set_max_entries(skel->maps.targets, (__u32)(cfg->filter_tgids ? procs : 1));
	bpf_map__set_max_entries(skel->maps.events, (__u32)(cfg->event_ring_bytes ? cfg->event_ring_bytes : page));
}

/* The task table in this process's memory: read without a system call. */
static int map_task_table(struct bpf_probes *probes, struct ms_error *err)
{
	size_t bytes = bpf_map__value_size(probes->skel->maps.slots) * bpf_map__max_entries(probes->skel->maps.slots);
	void *at;

	probes->nr_slots = (int)bpf_map__max_entries(probes->skel->maps.slots);
	bytes = (bytes + (size_t)sysconf(_SC_PAGESIZE) - 1) / (size_t)sysconf(_SC_PAGESIZE) * (size_t)sysconf(_SC_PAGESIZE);
	at = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(probes->skel->maps.slots), 0);
	if (at == MAP_FAILED) {
		ms_error_set(err, "eBPF probes: cannot map the task table (%s); %s", strerror(errno), still_works);
		return -1;
	}
	probes->slots = at;
	probes->slots_bytes = bytes;
	/* Slot 0 takes what no other slot could: live for the whole run. */
	probes->slots[0].state = MS_SLOT_LIVE;
	probes->next_slot = &probes->skel->data->next_slot;
	probes->overflow_head = &probes->skel->bss->overflow_head;
	probes->processes_delta = &probes->skel->bss->processes_delta;
	return 0;
}

/* Descriptors loading takes: maps, programs, BTF, libbpf's feature probes. */
#define BPF_FDS_NEEDED 24

/* sched_switch passes prev_state as a 4th argument since Linux 5.18 (commit
 * fa2c3254d7cf, "sched/tracing: Don't re-read p->state when emitting
 * sched_switch event"): the first load's guess, from the release. A wrong
 * guess either fails the load (the checked retry reads the BTF) or reads
 * prev->__state instead, which the older kernels pass no better. */
static bool switch_state_arg_likely(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 5 || (major == 5 && minor >= 18);
}

/* The wanted probes whose tracepoints this kernel has; without vmlinux the
 * tp_btf ones are left to the load to find. */
static unsigned available_probes(struct bpf_probes *probes, const struct btf *vmlinux,
				 const struct attach_point *points, unsigned wanted, const char *tracefs)
{
	for (int p = 0; p < BPF_PROBE_NR; p++) {
		if (!(wanted & BPF_PROBE_BIT(p)))
			continue;
		if (!tracepoint_exists(vmlinux, &points[p], probe_descs[p].tp_btf, tracefs)) {
			warn(probes, "eBPF probe left out: this kernel has no tracepoint %s:%s%s; lost: %s; "
			     "the other probes run", points[p].subsys, points[p].name,
			     probe_descs[p].tp_btf ? " in its BTF" : "", probe_descs[p].feeds);
			wanted &= ~BPF_PROBE_BIT(p);
		}
	}
	return wanted;
}

/* Opens the embedded object and loads the wanted programs: 0, the load's
 * negative errno, or 1 when the object did not open (err says why). */
static int load_probes(struct bpf_probes *probes, const struct bpf_probe_config *cfg,
		       const struct attach_point *points, unsigned wanted, bool switch_state_arg, struct ms_error *err)
{
	/* LIBBPF_OPTS without its GNU statement expression (clang -Wpedantic). */
	struct bpf_object_open_opts opts = { .sz = sizeof(opts), .btf_custom_path = cfg->btf_path };
	int target_rc = 0, rc;

	probes->skel = memscope_bpf__open_opts(&opts);
	if (!probes->skel) {
		ms_error_set(err, "eBPF probes: opening the embedded BPF object failed (%s)", strerror(errno));
		return 1;
	}
	configure(probes->skel, cfg, switch_state_arg);
	for (int p = 0; p < BPF_PROBE_NR; p++) {
		struct bpf_program *prog = probe_program(probes->skel, p);

		bpf_program__set_autoload(prog, (wanted & BPF_PROBE_BIT(p)) != 0);
		/* An override libbpf finds no BTF id for fails here, not at load;
		 * the load still runs, as only it frees the BTF libbpf read. */
		if ((wanted & BPF_PROBE_BIT(p)) && probe_descs[p].tp_btf && strcmp(points[p].name, probe_descs[p].name) &&
		    (rc = bpf_program__set_attach_target(prog, 0, points[p].name)) != 0) {
			target_rc = rc < 0 ? rc : -EINVAL;
			bpf_program__set_autoload(prog, false);
		}
	}
	rc = memscope_bpf__load(probes->skel);
	return target_rc ? target_rc : rc;
}

int bpf_probes_open(struct bpf_probes *probes, const struct bpf_probe_config *cfg, struct ms_error *err)
{
	int free_fds;
	const char *btf_path = cfg->btf_path ? cfg->btf_path : KERNEL_BTF;
	struct attach_point points[BPF_PROBE_NR];
	char tracefs[4096];
	bool have_tracefs = false;
	unsigned wanted = cfg->wanted, usable = 0;
	struct btf *vmlinux = NULL;
	size_t warned;
	int rc;

	memset(probes, 0, sizeof(*probes));
	libbpf_set_print(libbpf_print);
	if (cfg->pfn_table && cfg->pfn_table->nr > MS_BPF_MAX_PFN_RANGES) {
		ms_error_set(err, "eBPF probes: the node pfn table has %d ranges, more than the %d the probe holds",
			     cfg->pfn_table->nr, MS_BPF_MAX_PFN_RANGES);
		return -1;
	}
	if (access(btf_path, R_OK) != 0) {
		ms_error_set(err, "eBPF probes unavailable: no kernel BTF at %s (%s); the probes are CO-RE programs "
			     "and need a kernel built with CONFIG_DEBUG_INFO_BTF=y; %s",
			     btf_path, strerror(errno), still_works);
		return -1;
	}
	if (check_permissions(err) < 0)
		goto fail;

	for (int p = 0; p < BPF_PROBE_NR; p++) {
		snprintf(points[p].subsys, sizeof(points[p].subsys), "%s", probe_descs[p].subsys);
		snprintf(points[p].name, sizeof(points[p].name), "%s", probe_descs[p].name);
	}
	if (parse_overrides(cfg->attach_override, points, err) < 0)
		goto fail;
	/* Following children, counting processes, freeing exited tasks, names. */
	wanted |= BPF_PROBE_BIT(BPF_PROBE_FORK) | BPF_PROBE_BIT(BPF_PROBE_EXIT) | BPF_PROBE_BIT(BPF_PROBE_EXEC) |
		  BPF_PROBE_BIT(BPF_PROBE_RENAME);
	if (wanted & BPF_PROBE_BIT(BPF_PROBE_PAGE_ALLOC)) {
		struct ms_error tracefs_err;

		/* The live kernel's tracefs, whatever sysfs root the host was read from. */
		have_tracefs = tracefs_dir("/sys", tracefs, sizeof(tracefs), &tracefs_err) == 0;
		if (!have_tracefs) {
			warn(probes, "eBPF probe kmem:mm_page_alloc left out: %s; lost: %s; the other probes run",
			     tracefs_err.text, probe_descs[BPF_PROBE_PAGE_ALLOC].feeds);
			wanted &= ~BPF_PROBE_BIT(BPF_PROBE_PAGE_ALLOC);
		}
	}

	/* Loaded first without reading the kernel's BTF here: libbpf reads all of
	 * it (5 MB) for the CO-RE relocations anyway, and a second read was a
	 * fifth of top's start-up. Only a failed load reads it here, to leave out
	 * the tracepoints this kernel lacks and take sched_switch's arguments as
	 * they are, and tries again; that retry's libbpf messages are the ones
	 * shown. Missing permissions and descriptors are no guess to correct. */
	warned = strlen(probes->warnings);
	free_fds = fd_limit_free(BPF_FDS_NEEDED);
	if (cfg->attach_override && *cfg->attach_override) {
		rc = -ENOENT;   /* moved tracepoints: checked before the load */
	} else {
		usable = available_probes(probes, NULL, points, wanted, have_tracefs ? tracefs : NULL);
		libbpf_set_print(libbpf_quiet);
		rc = load_probes(probes, cfg, points, usable, switch_state_arg_likely(), err);
		libbpf_set_print(libbpf_print);
		if (rc == 1)
			goto fail;
	}
	if (rc && rc != -EPERM && !fd_limit_hit(-rc) && free_fds >= BPF_FDS_NEEDED) {
		if (probes->skel)
			memscope_bpf__destroy(probes->skel);
		probes->skel = NULL;
		vmlinux = btf__parse(btf_path, NULL);
		if (!vmlinux) {
			ms_error_set(err, "eBPF probes unavailable: %s is not readable BTF (%s); %s", btf_path,
				     strerror(errno), still_works);
			goto fail;
		}
		probes->warnings[warned] = '\0';
		usable = available_probes(probes, vmlinux, points, wanted, have_tracefs ? tracefs : NULL);
		free_fds = fd_limit_free(BPF_FDS_NEEDED);
		rc = load_probes(probes, cfg, points, usable, tracepoint_nr_args(vmlinux, "sched_switch") >= 4, err);
		if (rc == 1)
			goto fail;
	}
	wanted = usable;
	if (rc) {
		char why[256];

		/* The capabilities were checked above: EPERM now means a lockdown or
		 * an LSM; EACCES and EINVAL are the verifier's refusal; running out
		 * of file descriptors (maps, programs) is the open-file limit. */
		if (rc == -EPERM)
			ms_error_set(err, "eBPF probes: the kernel refused to load them (%s) although this process has "
				     "the capabilities: kernel lockdown or a security module forbids BPF tracing; %s",
				     strerror(-rc), still_works);
		else if (fd_limit_hit(-rc) || free_fds < BPF_FDS_NEEDED) {
			/* libbpf probes kernel features first: out of descriptors
			 * there, it goes on and fails later with another errno. */
			fd_limit_explain(fd_limit_hit(-rc) ? -rc : EMFILE, 0, why, sizeof(why));
			ms_error_set(err, "eBPF probes: loading failed (%s): %s (they need about %d descriptors for their "
				     "maps and programs, %d were free); %s", strerror(-rc), why, BPF_FDS_NEEDED, free_fds,
				     still_works);
		} else if (rc == -EACCES || rc == -EINVAL)
			ms_error_set(err, "eBPF probes: loading failed (%s); the libbpf messages above say which "
				     "program the verifier refused and why; %s", strerror(-rc), still_works);
		else
			ms_error_set(err, "eBPF probes: loading failed (%s); the libbpf messages above say which step "
				     "failed; %s", strerror(-rc), still_works);
		goto fail;
	}
	if (cfg->filter_tgids) {
		__u8 one = 1;
		int fd = bpf_map__fd(probes->skel->maps.targets);

		for (int i = 0; i < cfg->nr_tgids; i++) {
			__u32 tgid = (__u32)cfg->tgids[i];

			if (bpf_map_update_elem(fd, &tgid, &one, BPF_ANY) < 0) {
				ms_error_set(err, "eBPF probes: adding pid %d to the target set failed (%s)",
					     cfg->tgids[i], strerror(errno));
				goto fail;
			}
		}
	}
	for (int p = 0; p < BPF_PROBE_NR; p++) {
		struct bpf_program *prog = probe_program(probes->skel, p);
		struct bpf_link *link;

		if (!(wanted & BPF_PROBE_BIT(p)))
			continue;
		link = probe_descs[p].tp_btf ? bpf_program__attach(prog)
					     : bpf_program__attach_tracepoint(prog, points[p].subsys, points[p].name);
		if (!link) {
			int e = errno;
			char why[256] = "";

			if (fd_limit_hit(e))
				fd_limit_explain(e, 0, why, sizeof(why));
			warn(probes, "eBPF probe on %s:%s failed to attach (%s); lost: %s; the other probes run",
			     points[p].subsys, points[p].name, why[0] ? why : strerror(e), probe_descs[p].feeds);
			continue;
		}
		/* The skeleton owns the links and destroys them with it. */
		switch (p) {
		case BPF_PROBE_FAULT_USER: probes->skel->links.on_page_fault_user = link; break;
		case BPF_PROBE_FAULT_KERNEL: probes->skel->links.on_page_fault_kernel = link; break;
		case BPF_PROBE_PAGE_ALLOC: probes->skel->links.on_mm_page_alloc = link; break;
		case BPF_PROBE_SCHED_SWITCH: probes->skel->links.on_sched_switch = link; break;
		case BPF_PROBE_MIGRATE_TASK: probes->skel->links.on_sched_migrate_task = link; break;
		case BPF_PROBE_MOVE_NUMA: probes->skel->links.on_sched_move_numa = link; break;
		case BPF_PROBE_SWAP_NUMA: probes->skel->links.on_sched_swap_numa = link; break;
		case BPF_PROBE_MIGRATE_PAGES: probes->skel->links.on_mm_migrate_pages = link; break;
		case BPF_PROBE_FORK: probes->skel->links.on_sched_process_fork = link; break;
		case BPF_PROBE_EXIT: probes->skel->links.on_sched_process_exit = link; break;
		case BPF_PROBE_EXEC: probes->skel->links.on_sched_process_exec = link; break;
		case BPF_PROBE_RENAME: probes->skel->links.on_task_rename = link; break;
		}
		probes->attached |= BPF_PROBE_BIT(p);
	}
	if (cfg->filter_tgids && !(probes->attached & BPF_PROBE_BIT(BPF_PROBE_FORK)))
		warn(probes, "eBPF: without sched:sched_process_fork, children of the target are not followed");
	/* The final switch away from a task frees its slot; else its exit does. */
	probes->skel->bss->switch_attached = (probes->attached & BPF_PROBE_BIT(BPF_PROBE_SCHED_SWITCH)) != 0;
	if (map_task_table(probes, err) < 0)
		goto fail;
	btf__free(vmlinux);
	return 0;
fail:
	btf__free(vmlinux);
	bpf_probes_close(probes);
	return -1;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL   /* include/uapi/linux/pidfd.h, 6.9+ */
#endif

int bpf_probes_seed_thread(struct bpf_probes *probes, pid_t tid, pid_t tgid, const char *comm, uint32_t run_state,
			   int cpu)
{
	int queue = bpf_map__fd(probes->skel->maps.free_slots), pidfd;
	struct ms_task_state ts = { 0 };
	struct ms_task_slot *s;
	__u32 slot;
	int ret = -1;

	pidfd = (int)syscall(SYS_pidfd_open, tid, tid == tgid ? 0 : PIDFD_THREAD);
	if (pidfd < 0)
		return -1;   /* gone, or a kernel without thread pidfds: it shows at its first event */
	if (bpf_map_lookup_and_delete_elem(queue, NULL, &slot) < 0) {
		slot = __atomic_fetch_add(&probes->skel->data->next_slot, 1, __ATOMIC_ACQ_REL);
		if (slot >= (__u32)probes->nr_slots) {
			close(pidfd);
			return -1;
		}
	}
	s = &probes->slots[slot];
	s->tid = (__u32)tid;
	s->tgid = (__u32)tgid;
	s->cpu = cpu;
	s->run_state = run_state;
	snprintf(s->comm, sizeof(s->comm), "%s", comm);
	__atomic_store_n(&s->state, MS_SLOT_LIVE, __ATOMIC_RELEASE);
	ts.slot1 = slot + 1;
	/* It had an event meanwhile: it has a slot of its own, give this one back. */
	if (bpf_map_update_elem(bpf_map__fd(probes->skel->maps.task_states), &pidfd, &ts, BPF_NOEXIST) == 0) {
		ret = 0;
	} else {
		s->gen++;
		__atomic_store_n(&s->state, MS_SLOT_FREE, __ATOMIC_RELEASE);
		bpf_map_update_elem(queue, NULL, &slot, BPF_ANY);
	}
	close(pidfd);
	return ret;
}

bool bpf_probes_running(const struct bpf_probes *probes, enum bpf_probe probe)
{
	return (probes->attached & BPF_PROBE_BIT(probe)) != 0;
}

int bpf_probes_free_slots_fd(const struct bpf_probes *probes)
{
	return bpf_map__fd(probes->skel->maps.free_slots);
}

int bpf_probes_exits_fd(const struct bpf_probes *probes)
{
	return bpf_map__fd(probes->skel->maps.exits);
}

int bpf_probes_overflow_fd(const struct bpf_probes *probes)
{
	return bpf_map__fd(probes->skel->maps.overflow);
}

int bpf_probes_targets_fd(const struct bpf_probes *probes)
{
	return bpf_map__fd(probes->skel->maps.targets);
}

int bpf_probes_drops_fd(const struct bpf_probes *probes)
{
	return bpf_map__fd(probes->skel->maps.drops);
}

int bpf_probes_events_fd(const struct bpf_probes *probes)
{
	return bpf_map__fd(probes->skel->maps.events);
}

void bpf_probes_count_from(struct bpf_probes *probes, uint64_t monotonic_ns)
{
	/* .bss is memory-mapped: the programs see the store at once. */
	probes->skel->bss->count_from_ns = monotonic_ns;
}

void bpf_probes_close(struct bpf_probes *probes)
{
	if (probes->slots)
		munmap(probes->slots, probes->slots_bytes);
	probes->slots = NULL;
	if (probes->skel)
		memscope_bpf__destroy(probes->skel);
	probes->skel = NULL;
	probes->attached = 0;
}
