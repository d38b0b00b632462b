/* The damon source: DAMON's view of memory as bytes per node and per
 * process. Two modes (--damon):
 *  - active: memscope starts its own kdamond through DAMON's sysfs interface
 *    (host/damon_admin.h): virtual addresses of the target processes (-p,
 *    -- CMD; one target each, series per process) or physical memory (-a,
 *    series per node), intervals from -I; it is stopped at the end, and by a
 *    watchdog or the next start when memscope is killed;
 *  - passive: another kdamond (the host's own, e.g. DAMON_RECLAIM or a
 *    sysfs-configured one) already monitors physical memory; memscope never
 *    writes to DAMON's sysfs files.
 * Either way the aggregations come from the damon:damon_aggregated
 * tracepoint through one perf event on the kdamond thread (raw samples in a
 * ring buffer read at each interval: no wake-up, no program). Each interval
 * shows the last complete aggregation. */
#include "sources/registry.h"
#include "util/report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "host/page_node.h"
#include "host/tracefs.h"
#include "host/damon_admin.h"
#include "host/damon_monitor.h"
#include "sampler/sample_item.h"
#include "sources/damon/damon_follow.h"
#include "sources/damon/damon_procs.h"
#include "sources/damon/damon_regions.h"
#include "sources/sample_source.h"

/* Regions of one aggregation kept to be recorded: DAMON's max_nr_regions
 * bounds an aggregation (1000 by default); an aggregation of more is
 * counted but not recorded region by region. */
#define DAMON_RECORD_MAX_REGIONS 10000

#define DAMON_RING_PAGES 128   /* 512 KiB: two aggregations of 1024 regions at 64 bytes a record, four times */

enum damon_quantity { Q_ACCESSED, Q_HOT, Q_COLD, Q_RATE, Q_UNPLACED, Q_AGGREGATIONS, Q_COUNT };

static const char *const quantity_names[Q_COUNT] = {
	"damon.accessed_bytes", "damon.hot_bytes", "damon.cold_bytes", "damon.access_rate_bytes",
	"damon.unplaced_bytes", "damon.aggregations",
};

struct damon_series {
	enum damon_quantity q;
	int slot;      /* node slot of the tally (-1: none) */
	int bucket;    /* Q_RATE */
	int target;    /* -1: the physical stream; TARGETS_SUM: every target's, added (the command's
			* or -p's total); TARGET_PID: the stream of the target that is process pid */
	pid_t pid;     /* TARGET_PID */
	int at;        /* its index in the series table */
};

#define TARGETS_SUM (-2)
#define TARGET_PID (-3)
#define TARGET_ENDED (-4)   /* TARGET_PID whose process is no target any more: retired */

/* A process given to the kdamond in another's place (the kernel matches
 * targets by index and keeps the index's regions) is shown from its third
 * aggregation on: its first two may still hold the other's regions. */
#define DAMON_SETTLE_AGGREGATIONS 2

/* The quantities given per process from physical regions. */
#define PROC_QUANTITIES 3
static const enum damon_quantity proc_quantity[PROC_QUANTITIES] = { Q_ACCESSED, Q_HOT, Q_COLD };

/* Active mode's intervals: the aggregation follows -I within these bounds
 * (1 s without -I), 20 samples an aggregation (an access rate in steps of
 * 5%), the regions' address ranges updated every aggregation (a command's
 * mappings change as it runs), 10 to 1000 regions (DAMON's defaults). */
#define DAMON_ACTIVE_DEFAULT_AGGR_US 1000000ull
#define DAMON_ACTIVE_MIN_AGGR_US 100000ull
#define DAMON_ACTIVE_MAX_AGGR_US 5000000ull
#define DAMON_ACTIVE_SAMPLES 20
#define DAMON_ACTIVE_MIN_REGIONS 10
#define DAMON_ACTIVE_MAX_REGIONS 1000

struct damon_source {
	const struct host *host;
	bool wanted[Q_COUNT];
	struct damon_monitor mon;
	struct damon_classes classes;
	struct damon_record_layout layout;
	struct phys_node_map map;
	struct damon_stream stream;
	struct damon_series *series;
	int nr_series;
	/* Mode and, in active mode, memscope's kdamond and its targets. */
	enum damon_mode mode;
	const struct target *target;
	long interval_ms;
	bool active, vaddr;
	bool per_process;              /* vaddr: a series per process besides the total (record, top, live) */
	char mode_why[512];            /* why this mode, for the notes */
	char reaped[512];              /* a dead memscope's kdamond stopped at the start */
	struct damon_admin admin;
	pid_t *target_pids;            /* vaddr: target i's process (the kernel's target index i) */
	int nr_targets;
	struct damon_stream *streams;  /* vaddr: one per target */
	uint32_t *settle;              /* vaddr: target i is shown once its stream has more aggregations */
	bool *ended;                   /* vaddr: target i's process has exited (not shown; dropped at the next commit) */
	int cap_targets;
	/* -- CMD: the command's children become targets (sources/damon/damon_follow.h). */
	bool follow;
	struct damon_follow follower;
	uint64_t next_follow_ns;
	pid_t seen[DAMON_FOLLOW_MAX_TARGETS];   /* children found at the last look, not yet targets */
	int nr_seen;
	uint64_t commits, refused;
	unsigned long untracked;       /* children left out: DAMON_FOLLOW_MAX_TARGETS at once */
	char refused_why[256];
	struct series_table *table;    /* series added and retired during the run (children, processes) */
	char comm0[16];                /* -- CMD: the command's name (the child has not exec'd yet) */
	uint64_t reported_aggregations;
	/* The regions of the aggregation being built, handed to the hub (a
	 * recording) when it is complete. */
	struct sample_hub *hub;
	struct damon_region_event *building;
	uint32_t nr_building;
	uint64_t unrecorded;           /* aggregations too large to record */
	const char *command_name;      /* the end says so on stderr, naming the command */
	/* Physical regions, per process (record, top, live): the largest
	 * processes' resident pages placed in the last aggregation's regions
	 * (damon_procs.h). */
	bool procs_on;
	char procs_off_why[256];       /* why not, for the notes */
	struct damon_procs procs;
	struct damon_phys_region *phys_building, *phys_done;
	uint32_t nr_phys_building;
	int nr_phys_done;
	uint64_t procs_aggregation;    /* the aggregation the processes were joined with */
	uint64_t phys_done_ns;         /* its time */
	int *proc_series;              /* [slot][quantity: accessed, hot, cold][node slot]: series index or -1 */
	bool hidden_said;
	int fd;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	size_t map_size;
	uint64_t ring_size;
	uint8_t scratch[65536];   /* a record that wraps around the ring's end */
};

static int quantity_of(const char *name)
{
	for (int q = 0; q < Q_COUNT; q++)
		if (!strcmp(name, quantity_names[q]))
			return q;
	return -1;
}

/* The name of process pid for its series' comm label. */
static void comm_of(const struct damon_source *ds, pid_t pid, char *buf, size_t size)
{
	char path[4200], text[64];

	if (ds->target && ds->target->kind == TARGET_COMMAND && ds->target->nr_pids > 0 &&
	    pid == ds->target->pids[0] && ds->comm0[0]) {
		snprintf(buf, size, "%s", ds->comm0);
		return;
	}
	snprintf(path, sizeof(path), "%s/%d/comm", ds->host->roots.proc, (int)pid);
	if (sysfs_read_str(path, text, sizeof(text)) < 0)
		text[0] = '\0';
	snprintf(buf, size, "%s", text);
}

/* live: a process that became a target during the run (series_table_add_live). */
static int add_series(struct damon_source *ds, struct series_table *table, enum damon_quantity q, int slot,
		      int bucket, int target, pid_t pid, bool live, struct ms_error *err)
{
	struct series_labels labels;
	struct damon_series *s = realloc(ds->series, sizeof(*s) * (size_t)(ds->nr_series + 1));
	int at;

	if (!s)
		goto oom;
	ds->series = s;
	series_labels_init(&labels);
	if (target == TARGETS_SUM) {
		/* no label: the sum of the target processes */
	} else if (target == TARGET_PID) {
		labels.pid = (int)pid;
		comm_of(ds, pid, labels.comm, sizeof(labels.comm));
	} else if (slot >= 0) {
		labels.node = ds->stream.latest.node_ids[slot];
	}
	snprintf(labels.instance, sizeof(labels.instance), "%s", q == Q_RATE ? damon_rate_bucket_name(bucket) : "damon");
	at = (live ? series_table_add_live : series_table_add)(table, quantity_names[q], q == Q_AGGREGATIONS ? "" : "B",
							       1.0, q == Q_AGGREGATIONS ? SERIES_COUNTER : SERIES_GAUGE,
							       &labels);
	if (at < 0)
		goto oom;
	ds->series[ds->nr_series++] = (struct damon_series){ .q = q, .slot = slot, .bucket = bucket, .target = target,
							      .pid = pid, .at = at };
	return 0;
oom:
	ms_error_set(err, "damon source: out of memory");
	return -1;
}

static int read_format(struct damon_source *ds, struct ms_error *err, long long *id)
{
	char dir[4200], path[4400], text[4096];

	if (tracefs_dir(ds->host->roots.sys, dir, sizeof(dir), err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/events/damon/damon_aggregated/format", dir);
	if (sysfs_read_str(path, text, sizeof(text)) < 0) {
		ms_error_set(err, "%s: %s: this kernel has no damon:damon_aggregated tracepoint (CONFIG_DAMON)", path,
			     strerror(errno));
		return -1;
	}
	if (damon_record_layout_parse(&ds->layout, text) < 0) {
		ms_error_set(err, "%s: the fields target_id, nr_regions, start, end, nr_accesses and age are not all "
			     "there with the sizes memscope reads (unsigned long, unsigned int)", path);
		return -1;
	}
	*id = tracepoint_id(ds->host->roots.sys, "damon", "damon_aggregated", err);
	return *id < 0 ? -1 : 0;
}

static int open_event(struct damon_source *ds, long long id, struct ms_error *err)
{
	struct perf_event_attr attr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *base;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	/* The aggregation's time on the clock of the frames. */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.disabled = 1;
	/* On the kdamond thread only: the one that emits these records. */
	ds->fd = (int)syscall(__NR_perf_event_open, &attr, (pid_t)ds->mon.pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (ds->fd < 0) {
		ms_error_set(err, "cannot open damon:damon_aggregated on kdamond %d (pid %d): %s%s", ds->mon.index,
			     (int)ds->mon.pid, strerror(errno),
			     errno == EACCES || errno == EPERM ? ": reading kernel tracepoints needs root or CAP_PERFMON"
							       : "");
		return -1;
	}
	ds->map_size = page * (DAMON_RING_PAGES + 1);
	base = mmap(NULL, ds->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, ds->fd, 0);
	if (base == MAP_FAILED) {
		ms_error_set(err, "cannot map the damon ring buffer (%zu KiB): %s", ds->map_size >> 10, strerror(errno));
		return -1;
	}
	ds->page = base;
	ds->data = (uint8_t *)base + page;
	ds->ring_size = (uint64_t)DAMON_RING_PAGES * page;
	return 0;
}

/* Which mode, and why (for the notes): auto reads a running kdamond and
 * starts its own otherwise. 1: active, 0: passive, -1 with err. */
static int choose_mode(struct damon_source *ds, struct ms_error *err)
{
	struct ms_error why = { "" };
	enum damon_absent reason = 0;
	bool running, root = geteuid() == 0;

	/* A kdamond a killed memscope left would look like another's. */
	if (ds->mode != DAMON_MODE_PASSIVE && root)
		damon_admin_reap(&ds->host->roots, NULL, ds->reaped, sizeof(ds->reaped));
	running = damon_monitor_find(&ds->host->roots, &ds->mon, &reason, &why) == 0;
	if (!running && reason != DAMON_NONE_RUNNING) {
		ms_error_set(err, "%s", why.text);
		return -1;
	}
	if (ds->mode == DAMON_MODE_PASSIVE) {
		if (!running) {
			ms_error_set(err, "--damon passive: %s; --damon active (or auto) starts memscope's own", why.text);
			return -1;
		}
		snprintf(ds->mode_why, sizeof(ds->mode_why), "--damon passive");
		return 0;
	}
	if (running) {
		char who[256];

		damon_monitor_describe(&ds->mon, who, sizeof(who));
		if (ds->mode == DAMON_MODE_ACTIVE) {
			ms_error_set(err, "--damon active: %s runs, and DAMON's sysfs interface starts no kdamond while "
				     "one runs (EBUSY); --damon passive reads it instead", who);
			return -1;
		}
		snprintf(ds->mode_why, sizeof(ds->mode_why), "--damon auto: passive, since a kdamond runs and DAMON "
			 "starts no second one%s",
			 ds->target && !ds->target->system_wide && ds->target->kind != TARGET_SYSTEM
				 ? "; per node for the whole machine, not per process"
				 : "");
		return 0;
	}
	if (!root) {
		ms_error_set(err, "no kdamond runs to read, and starting memscope's own needs root (DAMON's sysfs files "
			     "are root's)");
		return -1;
	}
	snprintf(ds->mode_why, sizeof(ds->mode_why), "%s", ds->mode == DAMON_MODE_ACTIVE ? "--damon active" :
		 "--damon auto: active because no kdamond was running");
	return 1;
}

static int start_active(struct damon_source *ds, struct ms_error *err)
{
	struct damon_admin_setup setup = { .min_regions = DAMON_ACTIVE_MIN_REGIONS,
					   .max_regions = DAMON_ACTIVE_MAX_REGIONS };
	const struct target *t = ds->target;
	uint64_t aggr_us = ds->interval_ms > 0 ? (uint64_t)ds->interval_ms * 1000u : DAMON_ACTIVE_DEFAULT_AGGR_US;

	if (aggr_us < DAMON_ACTIVE_MIN_AGGR_US)
		aggr_us = DAMON_ACTIVE_MIN_AGGR_US;
	if (aggr_us > DAMON_ACTIVE_MAX_AGGR_US)
		aggr_us = DAMON_ACTIVE_MAX_AGGR_US;
	setup.aggr_us = aggr_us;
	setup.sample_us = aggr_us / DAMON_ACTIVE_SAMPLES;
	setup.update_us = aggr_us;
	ds->vaddr = t && !t->system_wide && t->kind != TARGET_SYSTEM;
	if (ds->vaddr) {
		const pid_t *pids = t->nr_attach > 0 ? t->attach : t->pids;
		int nr = t->nr_attach > 0 ? t->nr_attach : t->nr_pids;

		if (nr <= 0) {
			ms_error_set(err, "damon: no process to monitor");
			return -1;
		}
		/* A command's children join its targets as they start. */
		ds->follow = t->kind == TARGET_COMMAND && t->nr_attach <= 0 && nr < DAMON_FOLLOW_MAX_TARGETS;
		ds->cap_targets = ds->follow ? DAMON_FOLLOW_MAX_TARGETS : nr;
		if (!(ds->target_pids = calloc((size_t)ds->cap_targets, sizeof(*ds->target_pids)))) {
			ms_error_set(err, "damon source: out of memory");
			return -1;
		}
		memcpy(ds->target_pids, pids, (size_t)nr * sizeof(*pids));
		ds->nr_targets = nr;
		if (t->kind == TARGET_COMMAND && t->nr_attach <= 0 && t->argv && t->argv[0]) {
			const char *base = strrchr(t->argv[0], '/');

			snprintf(ds->comm0, sizeof(ds->comm0), "%s", base ? base + 1 : t->argv[0]);
		}
		setup.ops = "vaddr";
		setup.pids = ds->target_pids;
		setup.nr_pids = nr;
	} else {
		if (ds->map.nr == 0) {
			ms_error_set(err, "damon: sysfs has no memory-block ranges (devices/system/memory): memscope's "
				     "physical-address kdamond needs them as its regions");
			return -1;
		}
		setup.ops = "paddr";
		setup.ranges = ds->map.ranges;
		setup.nr_ranges = ds->map.nr;
	}
	if (damon_admin_start(&ds->host->roots, &setup, &ds->admin, err) < 0)
		return -1;
	ds->active = true;
	if (ds->follow && damon_follow_start(&ds->follower, &ds->admin, err) < 0)
		return -1;
	memset(&ds->mon, 0, sizeof(ds->mon));
	ds->mon.index = ds->admin.index;
	ds->mon.pid = ds->admin.kdamond_pid;
	snprintf(ds->mon.ops, sizeof(ds->mon.ops), "%s", setup.ops);
	ds->mon.sample_us = setup.sample_us;
	ds->mon.aggr_us = setup.aggr_us;
	ds->mon.update_us = setup.update_us;
	ds->mon.addr_unit = 1;
	ds->mon.nr_kdamonds = 1;
	return 0;
}

static int add_all_series(struct damon_source *ds, struct series_table *table, struct ms_error *err)
{
	for (int q = 0; q < Q_COUNT; q++) {
		if (!ds->wanted[q])
			continue;
		if (q == Q_AGGREGATIONS || (q == Q_UNPLACED && !ds->vaddr)) {
			if (add_series(ds, table, q, -1, 0, -1, 0, false, err) < 0)
				return -1;
			continue;
		}
		if (q == Q_UNPLACED)
			continue;   /* virtual addresses have no node to miss */
		if (ds->vaddr) {
			for (int b = 0; b < (q == Q_RATE ? DAMON_RATE_BUCKETS : 1); b++)
				if (add_series(ds, table, q, 0, b, TARGETS_SUM, 0, false, err) < 0)
					return -1;
			for (int target = 0; target < ds->nr_targets && ds->per_process; target++)
				for (int b = 0; b < (q == Q_RATE ? DAMON_RATE_BUCKETS : 1); b++)
					if (add_series(ds, table, q, 0, b, TARGET_PID, ds->target_pids[target], false,
						       err) < 0)
						return -1;
			continue;
		}
		for (int slot = 0; slot < ds->stream.latest.nr_nodes; slot++)
			for (int b = 0; b < (q == Q_RATE ? DAMON_RATE_BUCKETS : 1); b++)
				if (add_series(ds, table, q, slot, b, -1, 0, false, err) < 0)
					return -1;
	}
	return 0;
}

/* A process's virtual pages placed in the aggregation's regions, to the
 * recording as its regions ("placed"). */
static void emit_placed(void *ctx, const struct damon_proc *pr, const struct damon_vrun *runs, int nr)
{
	struct damon_source *ds = ctx;
	uint32_t samples = ds->classes.sample_us ? (uint32_t)(ds->classes.aggr_us / ds->classes.sample_us) : 1;

	for (int i = 0; i < nr && ds->hub->deliver; i++) {
		struct damon_region_event e = { .start = runs[i].start, .end = runs[i].end,
						.nr_accesses = runs[i].nr_accesses, .age = runs[i].age,
						.samples = samples ? samples : 1, .nr_regions = (uint32_t)nr,
						.nodes = runs[i].nodes, .pid = (uint32_t)pr->pid, .placed = true };
		struct sample_item item = { .kind = SAMPLE_ITEM_DAMON_REGION, .time_ns = ds->phys_done_ns,
					    .damon = &e, .event = -1 };

		if (e.nr_accesses > e.samples)
			e.nr_accesses = e.samples;
		ds->hub->deliver(&item, ds->hub->ctx);
	}
}

/* Per process from physical regions: root only (pagemap's frame numbers
 * need CAP_SYS_ADMIN; a process's pagemap needs ptrace access). */
static int procs_open(struct damon_source *ds, struct ms_error *err)
{
	size_t n = (size_t)DAMON_PROCS_MAX * PROC_QUANTITIES * (size_t)ds->stream.latest.nr_nodes;

	if (geteuid() != 0) {
		snprintf(ds->procs_off_why, sizeof(ds->procs_off_why), "per-process hot and cold bytes from physical "
			 "regions read /proc/PID/pagemap's page frames, which only root (CAP_SYS_ADMIN) is given");
		return 0;
	}
	if (damon_procs_init(&ds->procs, ds->host->roots.proc, ds->stream.latest.nr_nodes,
			     ds->stream.latest.node_ids, err) < 0)
		return -1;
	ds->procs_on = true;
	/* A command's or -p's processes; the whole machine: the largest. */
	if (ds->target && !ds->target->system_wide && ds->target->kind != TARGET_SYSTEM) {
		ds->procs.only = ds->target->nr_attach > 0 ? ds->target->attach : ds->target->pids;
		ds->procs.nr_only = ds->target->nr_attach > 0 ? ds->target->nr_attach : ds->target->nr_pids;
	}
	/* A recording of a command or -p keeps its processes' pages placed in
	 * the regions (report --sort obj's hot share); -a does not: the 32
	 * largest processes' runs came to 1.4 MB/s here (docs/damon.md). */
	if (ds->hub && ds->procs.nr_only > 0) {
		ds->procs.emit = emit_placed;
		ds->procs.emit_ctx = ds;
	}
	ds->phys_building = calloc(DAMON_RECORD_MAX_REGIONS, sizeof(*ds->phys_building));
	ds->phys_done = calloc(DAMON_RECORD_MAX_REGIONS, sizeof(*ds->phys_done));
	ds->proc_series = malloc(n * sizeof(int));
	if (!ds->phys_building || !ds->phys_done || !ds->proc_series) {
		ms_error_set(err, "damon source: out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		ds->proc_series[i] = -1;
	return 0;
}

static int damon_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct damon_source *ds = src->priv;
	long long id;
	int active;

	if (phys_node_map_load(&ds->map, &ds->host->roots, err) < 0)
		return -1;
	if ((active = choose_mode(ds, err)) < 0)
		return -1;
	if (!active && strcmp(ds->mon.ops, "paddr") != 0) {
		ms_error_set(err, "kdamond %d monitors with '%s': its regions are virtual addresses of its processes, "
			     "which have no node; memscope reads a physical-address (paddr) kdamond", ds->mon.index,
			     ds->mon.ops);
		return -1;
	}
	/* The tracepoint's format first: a kernel without it gets no kdamond. */
	if (read_format(ds, err, &id) < 0)
		return -1;
	if (active && start_active(ds, err) < 0)
		return -1;
	ds->classes.sample_us = ds->mon.sample_us;
	ds->classes.aggr_us = ds->mon.aggr_us;
	ds->classes.addr_unit = ds->mon.addr_unit;
	if (damon_stream_init(&ds->stream, ds->host->topo.nr_nodes, ds->host->topo.nodes) < 0)
		goto oom;
	if (ds->vaddr) {
		/* A process's virtual addresses: one tally slot, no node. */
		static const int no_node = -1;

		if (!(ds->streams = calloc((size_t)ds->cap_targets, sizeof(*ds->streams))) ||
		    !(ds->settle = calloc((size_t)ds->cap_targets, sizeof(*ds->settle))) ||
		    !(ds->ended = calloc((size_t)ds->cap_targets, sizeof(*ds->ended))))
			goto oom;
		for (int i = 0; i < ds->cap_targets; i++)
			if (damon_stream_init(&ds->streams[i], 1, &no_node) < 0)
				goto oom;
	}
	/* Recordings keep the regions: physical ones (the heat map's nodes),
	 * or each target process's virtual ones (report --sort obj's hot share). */
	if (ds->hub && !(ds->building = calloc(DAMON_RECORD_MAX_REGIONS, sizeof(*ds->building))))
		goto oom;
	if (!ds->vaddr && ds->per_process && (ds->wanted[Q_ACCESSED] || ds->wanted[Q_HOT] || ds->wanted[Q_COLD]) &&
	    procs_open(ds, err) < 0)
		return -1;
	if (open_event(ds, id, err) < 0)
		return -1;
	ds->table = table;
	src->first = table->nr;
	if (add_all_series(ds, table, err) < 0)
		return -1;
	src->count = table->nr - src->first;
	return 0;
oom:
	ms_error_set(err, "damon source: out of memory");
	return -1;
}

/* Keep region r of the aggregation being built on stream, to record it;
 * pid: a virtual region of that process (vaddr), 0: physical. */
static void keep_region(struct damon_source *ds, const struct damon_stream *stream, const struct damon_region *r,
			uint32_t pid)
{
	struct damon_region_event *e;
	uint64_t unit = ds->classes.addr_unit ? ds->classes.addr_unit : 1;
	/* Does r start another aggregation (damon_stream_add's rule)? A vaddr
	 * kdamond sends each target's regions in turn. */
	bool starts = !stream->seen || r->target_id != stream->target_id || r->nr_regions != stream->expect;

	if (starts)
		ds->nr_building = 0;
	if (!ds->building || ds->nr_building >= DAMON_RECORD_MAX_REGIONS)
		return;
	e = &ds->building[ds->nr_building++];
	e->start = r->start * unit;
	e->end = r->end * unit;
	e->nr_accesses = r->nr_accesses;
	e->age = r->age;
	e->samples = ds->classes.sample_us ? (uint32_t)(ds->classes.aggr_us / ds->classes.sample_us) : 1;
	if (e->samples == 0)
		e->samples = 1;
	e->nr_regions = r->nr_regions;
	e->pid = pid;
	e->nodes = pid ? 0 : damon_region_nodes(&ds->map, ds->stream.latest.nr_nodes, ds->stream.latest.node_ids,
						e->start, e->end);
}

/* Region r of the physical aggregation being built, kept in bytes for the
 * processes' join (damon_stream_add's rule starts another aggregation). */
static void keep_phys_region(struct damon_source *ds, const struct damon_region *r)
{
	uint64_t unit = ds->classes.addr_unit ? ds->classes.addr_unit : 1;
	const struct damon_stream *st = &ds->stream;

	if (!st->seen || r->target_id != st->target_id || r->nr_regions != st->expect)
		ds->nr_phys_building = 0;
	if (ds->nr_phys_building >= DAMON_RECORD_MAX_REGIONS)
		return;
	ds->phys_building[ds->nr_phys_building++] = (struct damon_phys_region){
		.start = r->start * unit, .end = r->end * unit, .nr_accesses = r->nr_accesses, .age = r->age };
}

/* A complete aggregation: its regions to the recording, all at its time. */
static void hand_over(struct damon_source *ds, uint32_t nr_regions, uint64_t time_ns)
{
	if (!ds->hub || !ds->hub->deliver)
		return;
	if (ds->nr_building != nr_regions) {
		ds->unrecorded++;
		return;
	}
	for (uint32_t i = 0; i < ds->nr_building; i++) {
		struct sample_item item = { .kind = SAMPLE_ITEM_DAMON_REGION, .time_ns = time_ns,
					    .damon = &ds->building[i], .event = -1 };

		ds->hub->deliver(&item, ds->hub->ctx);
	}
}

static void handle_record(struct damon_source *ds, const struct perf_event_header *hdr)
{
	struct damon_region r;
	uint64_t time_ns;
	uint32_t raw_size;
	const uint8_t *body = (const uint8_t *)(hdr + 1);

	if (hdr->type == PERF_RECORD_LOST) {
		damon_stream_lost(&ds->stream);
		for (int i = 0; i < ds->cap_targets && ds->streams; i++)
			damon_stream_lost(&ds->streams[i]);
		return;
	}
	if (hdr->type != PERF_RECORD_SAMPLE || hdr->size < sizeof(*hdr) + sizeof(time_ns) + sizeof(raw_size))
		return;
	memcpy(&time_ns, body, sizeof(time_ns));
	memcpy(&raw_size, body + sizeof(time_ns), sizeof(raw_size));
	if (raw_size > hdr->size - sizeof(*hdr) - sizeof(time_ns) - sizeof(raw_size))
		return;
	if (!damon_record_decode(&ds->layout, body + sizeof(time_ns) + sizeof(raw_size), raw_size, &r))
		return;
	if (ds->vaddr) {
		/* target_id is the target's index in memscope's context. */
		struct damon_stream *stream;

		if (r.target_id >= (uint64_t)ds->nr_targets)
			return;
		stream = &ds->streams[r.target_id];
		keep_region(ds, stream, &r, (uint32_t)ds->target_pids[r.target_id]);
		if (damon_stream_add(stream, &ds->map, &ds->classes, &r))
			hand_over(ds, r.nr_regions, time_ns);
		return;
	}
	keep_region(ds, &ds->stream, &r, 0);
	if (ds->procs_on)
		keep_phys_region(ds, &r);
	if (damon_stream_add(&ds->stream, &ds->map, &ds->classes, &r)) {
		hand_over(ds, r.nr_regions, time_ns);
		if (ds->procs_on) {
			/* The whole aggregation, for the processes' join. */
			struct damon_phys_region *done = ds->phys_done;

			ds->nr_phys_done = ds->nr_phys_building == r.nr_regions ? (int)r.nr_regions : 0;
			ds->phys_done_ns = time_ns;
			ds->phys_done = ds->phys_building;
			ds->phys_building = done;
			ds->nr_phys_building = 0;
		}
	}
}

static void drain(struct damon_source *ds)
{
	uint64_t head = __atomic_load_n(&ds->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ds->page->data_tail;

	while (tail < head) {
		uint64_t at = tail & (ds->ring_size - 1);
		const struct perf_event_header *hdr = (const void *)(ds->data + at);
		struct perf_event_header h;

		if (ds->ring_size - at < sizeof(h)) {
			memcpy(&h, ds->data + at, (size_t)(ds->ring_size - at));
			memcpy((uint8_t *)&h + (ds->ring_size - at), ds->data, sizeof(h) - (size_t)(ds->ring_size - at));
		} else {
			memcpy(&h, hdr, sizeof(h));
		}
		if (h.size < sizeof(h) || h.size > head - tail) {
			/* out of step: what is left cannot be read */
			struct perf_event_header lost = { .type = PERF_RECORD_LOST, .size = sizeof(lost) };

			handle_record(ds, &lost);
			tail = head;
			break;
		}
		if (at + h.size > ds->ring_size) {
			uint64_t first = ds->ring_size - at;

			memcpy(ds->scratch, ds->data + at, (size_t)first);
			memcpy(ds->scratch + first, ds->data, (size_t)(h.size - first));
			hdr = (const void *)ds->scratch;
		}
		handle_record(ds, hdr);
		tail += h.size;
	}
	__atomic_store_n(&ds->page->data_tail, tail, __ATOMIC_RELEASE);
}

static int damon_enable(struct source *src, struct ms_error *err)
{
	struct damon_source *ds = src->priv;

	if (ioctl(ds->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		ms_error_set(err, "cannot enable damon:damon_aggregated: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int damon_disable(struct source *src)
{
	struct damon_source *ds = src->priv;

	return ds->fd >= 0 ? ioctl(ds->fd, PERF_EVENT_IOC_DISABLE, 0) : 0;
}

static uint64_t tally_value(const struct damon_tally *t, const struct damon_series *s)
{
	switch (s->q) {
	case Q_ACCESSED: return t->accessed[s->slot];
	case Q_HOT: return t->hot[s->slot];
	case Q_COLD: return t->cold[s->slot];
	case Q_RATE: return t->rate[s->slot * DAMON_RATE_BUCKETS + s->bucket];
	case Q_UNPLACED: return t->unplaced;
	default: return 0;
	}
}

/* Complete aggregations so far: the physical stream's, or the most of any
 * target's (one aggregation covers every target). */
static uint64_t aggregations(const struct damon_source *ds)
{
	uint64_t n = ds->stream.aggregations;

	for (int i = 0; i < ds->nr_targets && ds->streams; i++)
		if (ds->streams[i].aggregations > n)
			n = ds->streams[i].aggregations;
	return n;
}

static int *proc_series_at(struct damon_source *ds, int slot, int q, int node_slot)
{
	return &ds->proc_series[((size_t)slot * PROC_QUANTITIES + (size_t)q) * (size_t)ds->stream.latest.nr_nodes +
				(size_t)node_slot];
}

/* A process enters the set: its series (pid, comm, node) start with this frame. */
static void add_proc_series(struct damon_source *ds, int slot)
{
	const struct damon_proc *pr = &ds->procs.procs[slot];

	for (int q = 0; q < PROC_QUANTITIES; q++) {
		if (!ds->wanted[proc_quantity[q]])
			continue;
		for (int n = 0; n < ds->stream.latest.nr_nodes; n++) {
			struct series_labels labels;

			series_labels_init(&labels);
			labels.pid = (int)pr->pid;
			labels.node = ds->stream.latest.node_ids[n];
			snprintf(labels.comm, sizeof(labels.comm), "%s", pr->comm);
			snprintf(labels.instance, sizeof(labels.instance), "damon");
			/* A full table leaves the process unknown: never a wrong value. */
			*proc_series_at(ds, slot, q, n) = series_table_add_live(ds->table, quantity_names[proc_quantity[q]],
										 "B", 1.0, SERIES_GAUGE, &labels);
		}
	}
}

static void retire_proc_series(struct damon_source *ds, int slot)
{
	for (int q = 0; q < PROC_QUANTITIES; q++)
		for (int n = 0; n < ds->stream.latest.nr_nodes; n++) {
			int *at = proc_series_at(ds, slot, q, n);

			if (*at >= 0)
				series_table_retire(ds->table, *at);
			*at = -1;
		}
}

/* At each new physical aggregation, the chosen processes' pages joined
 * with its regions; every interval, their last join's bytes. */
static void sample_procs(struct damon_source *ds, struct frame *frame, bool fresh)
{
	if (ds->stream.aggregations != ds->procs_aggregation && ds->nr_phys_done > 0) {
		ds->procs_aggregation = ds->stream.aggregations;
		damon_procs_update(&ds->procs, ds->phys_done, ds->nr_phys_done, &ds->map, &ds->classes);
		for (int i = 0; i < DAMON_PROCS_MAX; i++) {
			struct damon_proc *pr = &ds->procs.procs[i];

			if (pr->state == DAMON_PROC_LEAVING) {
				retire_proc_series(ds, i);
				damon_procs_release(&ds->procs, i);
			} else if (pr->state == DAMON_PROC_NEW) {
				add_proc_series(ds, i);
				pr->state = DAMON_PROC_LIVE;
			}
		}
		if (frame_fit(frame, ds->table->nr) < 0)
			return;
		if (ds->procs.hidden && !ds->hidden_said) {
			ms_warn("%s: damon: /proc/PID/pagemap gives no page frame numbers (they need CAP_SYS_ADMIN): "
				"per-process hot and cold bytes are unknown", ds->command_name);
			ds->hidden_said = true;
		}
	}
	for (int i = 0; i < DAMON_PROCS_MAX; i++) {
		const struct damon_proc *pr = &ds->procs.procs[i];

		if (pr->state != DAMON_PROC_LIVE)
			continue;
		for (int q = 0; q < PROC_QUANTITIES; q++)
			for (int n = 0; n < ds->stream.latest.nr_nodes; n++) {
				int at = *proc_series_at(ds, i, q, n);
				struct damon_series s = { .q = proc_quantity[q], .slot = n };
				struct sample *out;

				if (at < 0 || at >= frame->nr)
					continue;
				out = &frame->samples[at];
				out->valid = fresh && pr->measured;
				out->value = out->valid ? tally_value(&pr->tally, &s) : 0;
				out->enabled_ns = out->running_ns = frame->interval_ns;
			}
	}
}

static int slot_of(const struct damon_source *ds, pid_t pid)
{
	for (int i = 0; i < ds->nr_targets; i++)
		if (ds->target_pids[i] == pid)
			return i;
	return -1;
}

/* Is target i's latest aggregation one to show? */
static bool target_shown(struct damon_source *ds, int i, uint64_t now_ns)
{
	return !ds->ended[i] && damon_stream_fresh(&ds->streams[i], now_ns, ds->mon.aggr_us) &&
	       ds->streams[i].aggregations > ds->settle[i];
}

/* The kernel took the list pids: target i is pids[i] from now on. A pid new
 * at its index starts a new stream (and settles); the series of processes
 * no longer listed end with this frame, new ones start. */
static void take_targets(struct damon_source *ds, struct frame *frame, const pid_t *pids, int nr)
{
	static const int no_node = -1;
	pid_t old[DAMON_FOLLOW_MAX_TARGETS];
	int nr_old = ds->nr_targets;

	memcpy(old, ds->target_pids, sizeof(old[0]) * (size_t)nr_old);
	for (int i = 0; i < nr; i++) {
		if (i < nr_old && old[i] == pids[i] && !ds->ended[i])
			continue;
		damon_stream_free(&ds->streams[i]);
		if (damon_stream_init(&ds->streams[i], 1, &no_node) < 0)
			ds->ended[i] = true;   /* out of memory: not shown, never a wrong value */
		else
			ds->ended[i] = false;
		ds->settle[i] = i < nr_old ? DAMON_SETTLE_AGGREGATIONS : 0;
	}
	memcpy(ds->target_pids, pids, sizeof(pids[0]) * (size_t)nr);
	ds->nr_targets = nr;
	if (!ds->per_process)
		return;
	for (int k = 0; k < ds->nr_series; k++)
		if (ds->series[k].target == TARGET_PID && slot_of(ds, ds->series[k].pid) < 0) {
			series_table_retire(ds->table, ds->series[k].at);
			ds->series[k].target = TARGET_ENDED;
		}
	for (int i = 0; i < nr; i++) {
		bool has = i < nr_old && old[i] == pids[i];
		struct ms_error err = { "" };

		for (int j = 0; j < nr_old && !has; j++)
			has = old[j] == pids[i];
		for (int q = 0; q < Q_COUNT && !has; q++) {
			if (!ds->wanted[q] || q == Q_AGGREGATIONS || q == Q_UNPLACED)
				continue;
			for (int b = 0; b < (q == Q_RATE ? DAMON_RATE_BUCKETS : 1); b++) {
				int first_new = ds->nr_series;

				if (add_series(ds, ds->table, q, 0, b, TARGET_PID, pids[i], true, &err) < 0)
					continue;   /* a full table: the total still counts it */
				frame_fit(frame, ds->table->nr);
				frame->samples[ds->series[first_new].at].valid = false;
			}
		}
	}
}

/* -- CMD: at most once per aggregation interval (1 s at least), targets
 * whose process exited are no longer shown, the command's new children
 * are looked for, and a changed list goes to the kdamond. */
static void follow_children(struct damon_source *ds, struct frame *frame, uint64_t now_ns)
{
	pid_t pids[DAMON_FOLLOW_MAX_TARGETS];
	struct ms_error err = { "" };
	uint64_t period_ns = ds->mon.aggr_us * 1000 > 1000000000ull ? ds->mon.aggr_us * 1000 : 1000000000ull;
	int nr = 0, rc = damon_follow_answer(&ds->follower, pids, &nr, &err);
	bool changed;

	if (rc > 0) {
		ds->commits++;
		take_targets(ds, frame, pids, nr);
	} else if (rc < 0) {
		ds->refused++;
		snprintf(ds->refused_why, sizeof(ds->refused_why), "%s", err.text);
	}
	if (now_ns < ds->next_follow_ns)
		return;
	ds->next_follow_ns = now_ns + period_ns;
	nr = 0;
	for (int i = 0; i < ds->nr_targets; i++) {
		if (!ds->ended[i] && !damon_process_alive(ds->host->roots.proc, ds->target_pids[i]))
			ds->ended[i] = true;
		if (!ds->ended[i])
			pids[nr++] = ds->target_pids[i];
	}
	changed = nr != ds->nr_targets;
	{
		/* A child becomes a target at the second look that finds it:
		 * a 6.12 kernel stops the kdamond when a commit names a pid
		 * that has gone, so children that end within a second (which
		 * DAMON could not say much about) are never committed. */
		pid_t found[DAMON_FOLLOW_MAX_TARGETS];
		int nr_found = nr, listed = nr;

		memcpy(found, pids, sizeof(pids[0]) * (size_t)nr);
		for (int i = 0; i < listed; i++)
			damon_children(ds->host->roots.proc, pids[i], found, &nr_found, DAMON_FOLLOW_MAX_TARGETS);
		for (int i = listed; i < nr_found; i++) {
			bool again = false;

			for (int j = 0; j < ds->nr_seen && !again; j++)
				again = ds->seen[j] == found[i];
			if (again && damon_process_alive(ds->host->roots.proc, found[i])) {
				pids[nr++] = found[i];
				changed = true;
			}
		}
		if (nr_found == DAMON_FOLLOW_MAX_TARGETS)
			ds->untracked++;
		ds->nr_seen = nr_found - listed;
		memcpy(ds->seen, found + listed, sizeof(found[0]) * (size_t)ds->nr_seen);
	}
	/* Grandchildren are found once their parent is a target. None left:
	 * the kdamond ends by itself. */
	if (changed && nr > 0)
		damon_follow_ask(&ds->follower, pids, nr);
}

static int damon_sample(struct source *src, struct frame *frame)
{
	struct damon_source *ds = src->priv;
	struct timespec ts;
	uint64_t now_ns;
	bool fresh;

	drain(ds);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	fresh = damon_stream_fresh(&ds->stream, now_ns, ds->mon.aggr_us);
	for (int i = 0; i < ds->nr_series; i++) {
		const struct damon_series *s = &ds->series[i];
		struct sample *out = &frame->samples[s->at];
		bool shown = false;
		uint64_t v = 0;

		if (s->q == Q_AGGREGATIONS) {
			v = aggregations(ds) - ds->reported_aggregations;
		} else if (s->target == TARGETS_SUM) {
			/* The processes whose last aggregation is fresh (one that
			 * has exited adds nothing). */
			for (int k = 0; k < ds->nr_targets; k++)
				if (target_shown(ds, k, now_ns)) {
					v += tally_value(&ds->streams[k].latest, s);
					shown = true;
				}
		} else if (s->target == TARGET_PID) {
			int k = slot_of(ds, s->pid);

			shown = k >= 0 && target_shown(ds, k, now_ns);
			v = k >= 0 ? tally_value(&ds->streams[k].latest, s) : 0;
		} else if (s->target == TARGET_ENDED) {
			continue;
		} else {
			shown = fresh;
			v = tally_value(&ds->stream.latest, s);
		}
		/* Until the first aggregation is complete there is nothing to
		 * show, nor when the kdamond stopped sending them. */
		out->valid = s->q == Q_AGGREGATIONS || shown;
		out->value = out->valid ? v : 0;
		out->enabled_ns = out->running_ns = frame->interval_ns;
	}
	ds->reported_aggregations = aggregations(ds);
	if (ds->procs_on)
		sample_procs(ds, frame, fresh);
	if (ds->follow)
		follow_children(ds, frame, now_ns);
	return 0;
}

static void damon_notes(struct source *src, FILE *out, const char *command_name)
{
	struct damon_source *ds = src->priv;
	char who[256];

	if (ds->reaped[0])
		fprintf(out, "%s: damon: %s\n", command_name, ds->reaped);
	damon_monitor_describe(&ds->mon, who, sizeof(who));
	if (ds->active) {
		fprintf(out, "%s: damon: %s: memscope started %s for %s; it is stopped at the end (and by a watchdog "
			"process if memscope is killed)\n", command_name, ds->mode_why, who,
			ds->vaddr ? "the target processes' virtual memory (their total, and per process where shown)"
				  : "physical memory (series per node)");
		if (ds->follow)
			fprintf(out, "%s: damon: the command's children become targets as they start (looked for once an "
				"aggregation, at most %d processes at once)\n", command_name, DAMON_FOLLOW_MAX_TARGETS);
	} else {
		fprintf(out, "%s: damon: reading %s passively (damon:damon_aggregated; never changed): each interval shows "
			"its last complete aggregation (%s)\n", command_name, who, ds->mode_why);
	}
	if (ds->procs_off_why[0])
		fprintf(out, "%s: damon: %s\n", command_name, ds->procs_off_why);
	else if (ds->procs_on && ds->procs.nr_only)
		fprintf(out, "%s: damon: per process: the target processes' pages placed in the physical regions "
			"through /proc/PID/pagemap (docs/damon.md)\n", command_name);
	else if (ds->procs_on)
		fprintf(out, "%s: damon: per process: the %d largest processes by resident memory, their pages placed "
			"through /proc/PID/pagemap (docs/damon.md)\n", command_name, DAMON_PROCS_MAX);
	if (!ds->vaddr && ds->map.nr == 0 && ds->host->topo.nr_nodes > 1)
		fprintf(out, "%s: damon: no memory-block ranges in sysfs: bytes are not split by node "
			"(damon.unplaced_bytes)\n", command_name);
}

static void damon_close(struct source *src)
{
	struct damon_source *ds = src->priv;

	if (!ds)
		return;
	if (ds->procs_on && ds->procs.vruns_overflow)
		ms_warn("damon: %llu times a process's pages placed in the physical regions were not recorded: more than "
			"%d runs in one aggregation", (unsigned long long)ds->procs.vruns_overflow, DAMON_PROCS_VRUNS);
	if (ds->refused)
		ms_warn("damon: the kdamond refused %llu of memscope's target lists (%s); it kept the targets it had",
			(unsigned long long)ds->refused, ds->refused_why);
	if (ds->untracked)
		ms_warn("damon: the command had more than %d processes at once: %lu looks for children left some out",
			DAMON_FOLLOW_MAX_TARGETS, ds->untracked);
	if (ds->unrecorded)
		ms_warn("damon: %llu aggregations of more than %d regions were counted but not recorded "
			"region by region", (unsigned long long)ds->unrecorded,
			DAMON_RECORD_MAX_REGIONS);
	if (ds->page)
		munmap(ds->page, ds->map_size);
	if (ds->fd >= 0)
		close(ds->fd);
	/* No commit may come after the kdamond is off. */
	damon_follow_stop(&ds->follower);
	if (ds->procs_on && getenv("MEMSCOPE_DAMON_COST") && ds->procs.joins)
		ms_warn("damon: per-process join: %llu aggregations, %llu pagemap entries read, %.2f ms mean, %.2f ms "
			"max per aggregation; the largest, %s (pid %d): %llu entries, %.2f ms a join",
			(unsigned long long)ds->procs.joins, (unsigned long long)ds->procs.entries_read,
			(double)ds->procs.ns_spent / 1e6 / (double)ds->procs.joins, (double)ds->procs.max_ns / 1e6,
			ds->procs.big_comm, (int)ds->procs.big_pid, (unsigned long long)ds->procs.big_entries,
			(double)ds->procs.big_ns / 1e6);
	for (int i = 0; ds->procs_on && getenv("MEMSCOPE_DAMON_COST") && i < DAMON_PROCS_MAX; i++) {
		const struct damon_proc *pr = &ds->procs.procs[i];

		if (pr->state == DAMON_PROC_LIVE && pr->joins)
			ms_warn("damon: per-process join: %s (pid %d): %llu joins, %llu entries, %.2f ms a join", pr->comm,
				(int)pr->pid, (unsigned long long)pr->joins, (unsigned long long)(pr->entries / pr->joins),
				(double)pr->ns / 1e6 / (double)pr->joins);
	}
	if (ds->procs_on)
		damon_procs_free(&ds->procs);
	free(ds->phys_building);
	free(ds->phys_done);
	free(ds->proc_series);
	/* memscope's own kdamond off, nr_kdamonds back to 0. */
	damon_admin_stop(&ds->admin);
	phys_node_map_free(&ds->map);
	damon_stream_free(&ds->stream);
	for (int i = 0; i < ds->cap_targets && ds->streams; i++)
		damon_stream_free(&ds->streams[i]);
	free(ds->streams);
	free(ds->settle);
	free(ds->ended);
	free(ds->target_pids);
	free(ds->building);
	free(ds->series);
	free(ds);
	src->priv = NULL;
}

static const struct source_ops damon_ops = {
	.name = "damon",
	.open = damon_open,
	.enable = damon_enable,
	.disable = damon_disable,
	.sample = damon_sample,
	.close = damon_close,
	.notes = damon_notes,
};

/* ---- The registry kind: damon.* ---- */

static bool damon_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	return !strncmp(name, "damon.", 6);
}

static int damon_check(const struct source_kind *kind, const struct host *host, const char *name,
		       struct ms_error *err)
{
	(void)kind;
	(void)host;
	if (quantity_of(name) >= 0)
		return 0;
	ms_error_set(err, "'%s' is not a DAMON series: damon.accessed_bytes, damon.hot_bytes, damon.cold_bytes, "
		     "damon.access_rate_bytes, damon.unplaced_bytes or damon.aggregations", name);
	return -1;
}

static bool damon_present(const struct source_kind *kind, const struct host *host, struct ms_error *why)
{
	struct damon_monitor mon;
	enum damon_absent reason;
	char who[256];

	(void)kind;
	if (host->roots.is_fixture) {
		ms_error_set(why, "MEMSCOPE_SYSFS_ROOT=%s describes another machine: its kdamond cannot be read from here",
			     host->roots.sys);
		return false;
	}
	if (damon_monitor_find(&host->roots, &mon, &reason, why) < 0) {
		/* Active mode: memscope's own kdamond, when nothing else is
		 * configured (DAMON rebuilds every kdamond to add one). */
		if (reason == DAMON_NONE_RUNNING && mon.nr_kdamonds == 0 && geteuid() == 0) {
			ms_error_set(why, "active: no kdamond runs; memscope starts its own (vaddr for processes, paddr "
				     "for -a)");
			return true;
		}
		return false;
	}
	damon_monitor_describe(&mon, who, sizeof(who));
	if (strcmp(mon.ops, "paddr") != 0) {
		ms_error_set(why, "%s monitors virtual addresses, which have no node; passive mode reads a paddr kdamond",
			     who);
		return false;
	}
	ms_error_set(why, "passive: %s", who);
	return true;
}

static int damon_kind_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			     struct ms_error *err)
{
	struct damon_source *ds = calloc(1, sizeof(*ds));

	memset(src, 0, sizeof(*src));
	if (!ds) {
		ms_error_set(err, "damon source: out of memory");
		return -1;
	}
	ds->fd = -1;
	damon_admin_init(&ds->admin);
	ds->host = req->host;
	ds->target = req->target;
	ds->mode = req->damon_mode;
	ds->interval_ms = req->interval_ms;
	ds->per_process = req->per_process;
	ds->hub = req->sampling ? req->sampling->hub : NULL;
	ds->command_name = req->command_name ? req->command_name : "";
	ds->classes.hot_pct = req->damon_hot_pct ? req->damon_hot_pct : DAMON_DEFAULT_HOT_PCT;
	ds->classes.cold_age_us = req->damon_cold_age_us ? req->damon_cold_age_us : DAMON_DEFAULT_COLD_AGE_US;
	for (int i = 0; i < req->nr_names; i++) {
		int q = quantity_of(req->names[i]);

		if (q < 0) {
			free(ds);
			if (damon_check(kind, req->host, req->names[i], err) < 0)
				ms_error_mark(err, MS_ERR_USAGE);
			return -1;
		}
		ds->wanted[q] = true;
	}
	src->ops = &damon_ops;
	src->priv = ds;
	src->kind = kind;
	return 0;
}

const struct source_kind damon_source_kind = {
	.name = "damon",
	.description = "DAMON: bytes accessed, hot and cold per node or per process, from memscope's own kdamond or a "
		       "running one (damon:damon_aggregated)",
	.mode = SOURCE_LIVE,
	.claims = damon_claims,
	.present = damon_present,
	.check = damon_check,
	.create = damon_kind_create,
};
