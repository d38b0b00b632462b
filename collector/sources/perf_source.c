/* The perf source (perf_source.h): perf events through libperf. What is where:
 * - Events to groups: cgroups, CPU and thread maps (cpu_map_of,
 *   target_thread_map), group_open with its bisection of a group that fails.
 * - Reading: leader fds and one read() per group (find_leader_fds,
 *   group_prepare_reads), the series each group adds (add_series), the
 *   tracepoint counts (tp_open, tp_sample).
 * - Source operations: perf_open, enable/disable, pause/resume, perf_sample
 *   (a frame's deltas), perf_close, perf_notes; perf_source_init.
 * - The registry kind: every name no other kind claims is a perf event. */
#include "sources/perf_source.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events/event.h"
#include "host/cgroup.h"
#include "host/host.h"
#include "events/perf_errors.h"
#include "sampler/target.h"
#include "metrics/metrics.h"
#include "sources/perf_group_attrs.h"
#include "sources/registry.h"
#include "sources/sample_source.h"
#include "sources/tracepoint_counts.h"
#include "sampler/sampler.h"

/* The largest group on a hardware PMU whose counter count we do not know:
 * a group larger than the PMU's counters would never be scheduled at all. */
#define HW_GROUP_MAX 4
/* Software-context events never compete for counters. */
#define SW_GROUP_MAX 64

struct perf_group {
	struct perf_evlist *evlist;
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	int nr_events;
	int *events;            /* indexes into options.events */
	int nr_cpus, nr_threads;
	bool per_cpu_series;    /* one series per CPU (else CPUs are summed) */
	bool per_thread_series; /* one series per thread of the map (stat --per-thread) */
	struct perf_thread_map *alive; /* --per-thread -a, opening again: the threads still there */
	int *leader_fd;         /* [cpu * nr_threads + thread] */
	uint64_t *leader_id;    /* same layout: the kernel's id of each leader */
	int fd_floor;           /* lowest free descriptor before the group was opened */
	uint64_t *prev;         /* [(cpu * nr_threads + thread) * (2 + nr_events)]: ena, run, values */
	int series_base;        /* offset of this group's first series within the source */
	size_t read_size;
	/* A task counted per CPU: its event on one CPU runs only while the task is
	 * there, so running < enabled there is not multiplexing. Such groups are
	 * scaled over all CPUs together (see perf_sample), with this scratch:
	 * [cpu * (2 + nr_events)]: enabled, running, values deltas of one thread. */
	bool task_per_cpu;
	uint64_t *scratch;
	/* A group counted in one cgroup (stat -G) is opened without libperf,
	 * whose opens take no flags: fds[cpu * nr_events + member]. */
	int *cgroup_fds;
};

struct perf_source {
	struct perf_source_options opt;
	struct perf_group *groups;
	int nr_groups;
	int *skipped_series;    /* series of events that could not be opened: always invalid */
	int nr_skipped;
	char **skipped_reason;
	uint64_t *read_buf;     /* one group read, sized for the largest group */
	struct event *owned_events; /* parsed by the registry kind (perf_kind_create), else NULL */
	int nr_owned_events;
	bool user_only;         /* perf_event_paranoid >= 2 without privileges: exclude the kernel, as perf does */
	/* System-wide tracepoints counted by eBPF (sources/tracepoint_counts.h):
	 * tp_event[slot] is the event, its series are per CPU from tp_series_base. */
	struct tp_counts *tp;
	int nr_tp;
	int *tp_event;
	int tp_series_base;
	int nr_tp_cpus;
	int *tp_cpu;            /* [row]: the CPU of each series row */
	uint64_t *tp_prev;      /* [slot * nr_tp_cpus + row]: count at the last read */
	uint64_t tp_last_ns;
	/* stat -G: per event, the cgroup it counts in (name and directory
	 * descriptor), or NULL and -1. */
	char **cgroup_name;
	int *cgroup_fd;
	/* Events counted by a sampling source's own events (perf_source_count_from):
	 * borrowed_event[k] is the event, its one series is borrowed_series_base + k. */
	const struct source *sampling;
	int nr_borrowed;
	int *borrowed_event;
	int borrowed_series_base;
	uint64_t *borrowed_prev;    /* [k]: count at the last read */
	uint64_t *borrowed_paused;  /* [k]: counted while paused (ctl disable), not ours */
	uint64_t *borrowed_pause_at;/* [k]: count when paused */
	bool paused;
	uint64_t borrowed_last_ns;
};

static int cgroup_of(const struct perf_source *ps, const struct event *ev)
{
	return ps->cgroup_fd ? ps->cgroup_fd[ev - ps->opt.events] : -1;
}

static const char *cgroup_name_of(const struct perf_source *ps, const struct event *ev)
{
	return ps->cgroup_name ? ps->cgroup_name[ev - ps->opt.events] : NULL;
}

static bool is_system_wide(const struct perf_source *ps, const struct event *ev)
{
	return ev->system_wide_only || ps->opt.target->system_wide;
}

static bool is_software_context(const struct event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE || ev->attr.type == PERF_TYPE_TRACEPOINT;
}

/* Events share a group when they are on the same PMU and opened on the same CPUs. */
static bool same_group(const struct perf_source *ps, const struct event *a, const struct event *b)
{
	/* A metric plan groups its events so they are counted in the same time slices. */
	if (a->group_hint != b->group_hint || cgroup_of(ps, a) != cgroup_of(ps, b))
		return false;
	if (is_software_context(a) && is_software_context(b))
		return is_system_wide(ps, a) == is_system_wide(ps, b);
	if (strcmp(a->pmu_name, b->pmu_name) != 0 || a->cpus.nr != b->cpus.nr)
		return false;
	return a->cpus.nr == 0 || !memcmp(a->cpus.cpus, b->cpus.cpus, sizeof(int) * (size_t)a->cpus.nr);
}

static struct perf_cpu_map *cpu_map_of(const struct cpulist *list)
{
	char text[4096];

	cpulist_format(list, text, sizeof(text));
	return perf_cpu_map__new(text);
}

static struct perf_cpu_map *online_cpu_map(const struct topology *topo)
{
	struct cpulist list = { NULL, topo->nr_cpus };
	struct perf_cpu_map *map;

	list.cpus = malloc(sizeof(int) * (size_t)(topo->nr_cpus ? topo->nr_cpus : 1));
	if (!list.cpus)
		return NULL;
	for (int i = 0; i < topo->nr_cpus; i++)
		list.cpus[i] = topo->cpus[i].cpu;
	map = cpu_map_of(&list);
	free(list.cpus);
	return map;
}

static struct perf_thread_map *target_thread_map(const struct target *target, struct ms_error *err)
{
	pid_t *all = NULL;
	int nr_all = 0;
	struct perf_thread_map *map;

	const pid_t *pids = target->nr_attach ? target->attach : target->pids;
	int nr_pids = target->nr_attach ? target->nr_attach : target->nr_pids;

	if (target->kind == TARGET_COMMAND && !target->nr_attach)
		return perf_thread_map__new_array(1, target->pids);
	if (target->threads_only)
		return perf_thread_map__new_array(nr_pids, (pid_t *)pids);
	/* -p: every current thread of each process; threads they create later
	 * inherit the counters. */
	for (int p = 0; p < nr_pids; p++) {
		pid_t *tids, *grown;
		int nr;

		if (target_list_threads(pids[p], &tids, &nr, err) < 0) {
			free(all);
			return NULL;
		}
		grown = realloc(all, sizeof(pid_t) * (size_t)(nr_all + nr));
		if (!grown) {
			free(tids);
			free(all);
			ms_error_set(err, "out of memory");
			return NULL;
		}
		all = grown;
		memcpy(all + nr_all, tids, sizeof(pid_t) * (size_t)nr);
		nr_all += nr;
		free(tids);
	}
	map = perf_thread_map__new_array(nr_all, all);
	free(all);
	return map;
}

/* Every thread on the system, for --per-thread -a: each process's threads
 * as /proc lists them now (one that ends meanwhile is left out). */
static struct perf_thread_map *all_threads_map(struct ms_error *err)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	pid_t *all = NULL;
	int nr_all = 0;
	struct perf_thread_map *map;

	if (!proc) {
		ms_error_set(err, "--per-thread -a: cannot list /proc: %s", strerror(errno));
		return NULL;
	}
	while ((d = readdir(proc))) {
		pid_t *tids, *grown;
		char *end;
		long pid = strtol(d->d_name, &end, 10);
		int nr;
		struct ms_error gone;

		if (*end || pid <= 0 || target_list_threads((pid_t)pid, &tids, &nr, &gone) < 0)
			continue;
		if (nr == 0) {
			free(tids);
			continue;
		}
		grown = realloc(all, sizeof(pid_t) * (size_t)(nr_all + nr));
		if (!grown) {
			free(tids);
			break;
		}
		all = grown;
		memcpy(all + nr_all, tids, sizeof(pid_t) * (size_t)nr);
		nr_all += nr;
		free(tids);
	}
	closedir(proc);
	map = nr_all ? perf_thread_map__new_array(nr_all, all) : NULL;
	free(all);
	if (!map)
		ms_error_set(err, "--per-thread -a: out of memory for the threads' list");
	return map;
}

/* Series rows of a group for each of its events: threads, CPUs or one. */
static int group_rows(const struct perf_group *g)
{
	return g->per_thread_series ? g->nr_threads : g->per_cpu_series ? g->nr_cpus : 1;
}

static int group_row(const struct perf_group *g, int c, int t)
{
	return g->per_thread_series ? t : g->per_cpu_series ? c : 0;
}

static void group_close(struct perf_group *g)
{
	if (g->evlist) {
		perf_evlist__close(g->evlist);
		perf_evlist__delete(g->evlist); /* deletes its evsels too */
	}
	for (int k = 0; g->cgroup_fds && k < g->nr_cpus * g->nr_events; k++)
		if (g->cgroup_fds[k] >= 0)
			close(g->cgroup_fds[k]);
	free(g->cgroup_fds);
	perf_cpu_map__put(g->cpus);
	perf_thread_map__put(g->threads);
	free(g->events);
	free(g->leader_fd);
	free(g->leader_id);
	free(g->prev);
	free(g->scratch);
	memset(g, 0, sizeof(*g));
}

static void attr_for_member(const struct perf_source *ps, const struct event *ev, bool leader,
			    struct perf_event_attr *attr)
{
	const struct perf_open_mode mode = {
		.system_wide = is_system_wide(ps, ev),
		.user_only = ps->user_only,
		.enable_on_exec = ps->opt.target->kind == TARGET_COMMAND && !ps->opt.target->nr_attach &&
				  !ps->opt.start_disabled,
	};

	perf_member_attr(ev, leader, &mode, attr);
}

/* The lowest descriptor number not in use: every descriptor opened after
 * this call is at or above it. */
static int lowest_free_fd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? 0 : fd;
}

/* A group counted in a cgroup: on every CPU, the leader opened with the
 * cgroup's directory descriptor in place of a pid, its members in its group. */
static int group_open_cgroup(struct perf_source *ps, struct perf_group *g, int cgroup_fd)
{
	const struct event *first = &ps->opt.events[g->events[0]];

	g->cpus = first->cpus.nr ? cpu_map_of(&first->cpus) : online_cpu_map(&ps->opt.host->topo);
	g->threads = perf_thread_map__new_dummy();
	g->per_cpu_series = true;
	if (!g->cpus || !g->threads)
		return -ENOMEM;
	g->nr_cpus = perf_cpu_map__nr(g->cpus);
	g->nr_threads = 1;
	g->cgroup_fds = malloc(sizeof(int) * (size_t)g->nr_cpus * (size_t)g->nr_events);
	if (!g->cgroup_fds)
		return -ENOMEM;
	for (int k = 0; k < g->nr_cpus * g->nr_events; k++)
		g->cgroup_fds[k] = -1;
	for (int c = 0; c < g->nr_cpus; c++) {
		int *fds = g->cgroup_fds + c * g->nr_events;

		for (int i = 0; i < g->nr_events; i++) {
			struct perf_event_attr attr;

			attr_for_member(ps, &ps->opt.events[g->events[i]], i == 0, &attr);
			fds[i] = (int)syscall(SYS_perf_event_open, &attr, cgroup_fd, perf_cpu_map__cpu(g->cpus, c).cpu,
					      i ? fds[0] : -1, PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
			if (fds[i] < 0)
				return -errno;
		}
	}
	return 0;
}

/* Build and open one group's evlist. Returns 0, or a negative errno. */
static int group_open_once(struct perf_source *ps, struct perf_group *g, struct ms_error *err);

/* Is the thread still running code (not ended, not a zombie waiting to be
 * reaped, whose counters cannot be opened)? From /proc/TID/stat's state. */
static bool thread_alive(pid_t tid)
{
	char path[64], line[512];
	const char *paren;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (paren = strrchr(line, ')')) && paren[1] == ' ')
		alive = paren[2] != 'Z' && paren[2] != 'X' && paren[2] != 'x';
	fclose(f);
	return alive;
}

/* The threads of map that are still there, or NULL. */
static struct perf_thread_map *threads_alive(struct perf_thread_map *map)
{
	int nr = perf_thread_map__nr(map), kept = 0;
	pid_t *tids = malloc(sizeof(pid_t) * (size_t)(nr + 1));
	struct perf_thread_map *alive;

	if (!tids)
		return NULL;
	for (int i = 0; i < nr; i++) {
		pid_t tid = perf_thread_map__pid(map, i);

		if (thread_alive(tid))
			tids[kept++] = tid;
	}
	alive = kept ? perf_thread_map__new_array(kept, tids) : NULL;
	free(tids);
	return alive;
}

/* --per-thread -a lists every thread, and one may end before its counter is
 * opened: the threads that ended are left out of the list and the group is
 * opened again, as perf's --per-thread -a does (each try drops those gone). */
static int group_open(struct perf_source *ps, struct perf_group *g, struct ms_error *err)
{
	int ret = group_open_once(ps, g, err);

	for (int retry = 0; ret == -ESRCH && g->per_thread_series && g->threads && retry < 100 &&
	     (ps->opt.target->kind == TARGET_SYSTEM || ps->opt.target->system_wide); retry++) {
		g->alive = threads_alive(g->threads);
		/* What group_open_once made; the group's events stay. */
		if (g->evlist) {
			perf_evlist__close(g->evlist);
			perf_evlist__delete(g->evlist);
		}
		perf_cpu_map__put(g->cpus);
		perf_thread_map__put(g->threads);
		g->evlist = NULL;
		g->cpus = NULL;
		g->threads = NULL;
		if (!g->alive)
			break;
		ret = group_open_once(ps, g, err);
	}
	return ret;
}

static int group_open_once(struct perf_source *ps, struct perf_group *g, struct ms_error *err)
{
	const struct event *first = &ps->opt.events[g->events[0]];
	struct perf_evsel *evsel;
	int ret;

	if (cgroup_of(ps, first) >= 0)
		return group_open_cgroup(ps, g, cgroup_of(ps, first));
	if (ps->opt.per_thread && !first->system_wide_only) {
		/* perf's --per-thread: each thread's counters on every CPU (cpu -1). */
		g->cpus = perf_cpu_map__dummy_new();
		if (g->alive) {
			g->threads = g->alive;
			g->alive = NULL;
		} else {
			g->threads = ps->opt.target->kind == TARGET_SYSTEM || ps->opt.target->system_wide ?
				     all_threads_map(err) : target_thread_map(ps->opt.target, err);
		}
		g->per_thread_series = true;
		if (!g->threads)
			return -ESRCH;
	} else if (is_system_wide(ps, first)) {
		g->cpus = first->cpus.nr ? cpu_map_of(&first->cpus) : online_cpu_map(&ps->opt.host->topo);
		g->threads = perf_thread_map__new_dummy();
		g->per_cpu_series = true;
	} else {
		g->cpus = ps->opt.task_per_cpu ? online_cpu_map(&ps->opt.host->topo) : perf_cpu_map__dummy_new();
		g->threads = target_thread_map(ps->opt.target, err);
		g->per_cpu_series = ps->opt.task_per_cpu;
		g->task_per_cpu = ps->opt.task_per_cpu;
		if (!g->threads)
			return -ESRCH;
	}
	if (!g->cpus || !g->threads)
		return -ENOMEM;
	g->evlist = perf_evlist__new();
	if (!g->evlist)
		return -ENOMEM;
	for (int i = 0; i < g->nr_events; i++) {
		struct perf_event_attr attr;

		attr_for_member(ps, &ps->opt.events[g->events[i]], i == 0, &attr);
		evsel = perf_evsel__new(&attr);
		if (!evsel)
			return -ENOMEM;
		perf_evlist__add(g->evlist, evsel);
	}
	perf_evlist__set_leader(g->evlist);
	perf_evlist__set_maps(g->evlist, g->cpus, g->threads);
	g->fd_floor = lowest_free_fd();
	ret = perf_evlist__open(g->evlist);
	if (ret < 0)
		return ret;
	g->nr_cpus = perf_cpu_map__nr(g->cpus);
	g->nr_threads = perf_thread_map__nr(g->threads);
	return 0;
}

struct leader_slot {
	uint64_t id;
	int *fd;
};

static int compare_slot(const void *a, const void *b)
{
	const struct leader_slot *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* libperf has no public accessor for an event's file descriptor, and its group
 * read allocates and returns the leader's value only. So each leader's fd is
 * found once, here, by the kernel's event id: the hot path then reads every
 * member of a group with one read() on that fd. The group's descriptors were
 * opened at or above g->fd_floor, so only those are asked for their id (the
 * ioctl number '$' belongs to perf alone), and only until every leader is
 * found: a few thousand ioctls at 512 threads, not a readlink of every
 * descriptor of the process. */
static int find_leader_fds(struct perf_group *g, struct ms_error *err)
{
	int slots = g->nr_cpus * g->nr_threads, found = 0;
	/* Every fd the group opened, plus room for descriptors other code
	 * opened in between. */
	int limit = g->fd_floor + slots * g->nr_events * 2 + 256;
	struct leader_slot *index = malloc(sizeof(*index) * (size_t)slots);

	if (!index) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int k = 0; k < slots; k++) {
		index[k] = (struct leader_slot){ g->leader_id[k], &g->leader_fd[k] };
		g->leader_fd[k] = -1;
	}
	qsort(index, (size_t)slots, sizeof(*index), compare_slot);
	for (int fd = g->fd_floor; fd < limit && found < slots; fd++) {
		struct leader_slot key, *hit;

		if (ioctl(fd, PERF_EVENT_IOC_ID, &key.id) < 0)
			continue;
		hit = bsearch(&key, index, (size_t)slots, sizeof(*index), compare_slot);
		if (hit && *hit->fd < 0) {
			*hit->fd = fd;
			found++;
		}
	}
	free(index);
	if (found < slots) {
		ms_error_set(err, "internal error: %d perf group leaders not found by id", slots - found);
		return -1;
	}
	return 0;
}

static int group_prepare_reads(struct perf_group *g, struct ms_error *err)
{
	struct perf_evsel *leader = g->evlist ? perf_evlist__next(g->evlist, NULL) : NULL;
	int slots = g->nr_cpus * g->nr_threads;

	g->leader_fd = malloc(sizeof(int) * (size_t)slots);
	g->leader_id = calloc((size_t)slots, sizeof(uint64_t));
	g->prev = calloc((size_t)slots * (size_t)(2 + g->nr_events), sizeof(uint64_t));
	g->scratch = calloc((size_t)g->nr_cpus * (size_t)(2 + g->nr_events), sizeof(uint64_t));
	if (!g->leader_fd || !g->leader_id || !g->prev || !g->scratch) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	/* nr, time_enabled, time_running, then value and id per member. */
	g->read_size = sizeof(uint64_t) * (3 + 2 * (size_t)g->nr_events);
	if (g->cgroup_fds) {
		for (int c = 0; c < g->nr_cpus; c++)
			g->leader_fd[c] = g->cgroup_fds[c * g->nr_events];
		return 0;
	}
	for (int c = 0; c < g->nr_cpus; c++) {
		for (int t = 0; t < g->nr_threads; t++) {
			struct perf_counts_values counts;

			memset(&counts, 0, sizeof(counts));
			g->leader_fd[c * g->nr_threads + t] = -1;
			/* Setup time only: libperf's group read gives the leader's id. */
			if (perf_evsel__read(leader, c, t, &counts) < 0) {
				ms_error_set(err, "cannot read a new perf group: %s", strerror(errno));
				return -1;
			}
			g->leader_id[c * g->nr_threads + t] = counts.id;
		}
	}
	return find_leader_fds(g, err);
}

/* A thread's process (Tgid) and name, from /proc; the tid itself and no
 * name when it has ended. */
static int thread_process(pid_t tid, char *comm, size_t size)
{
	char path[64], line[256];
	FILE *f;
	int tgid = tid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tgid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(comm, size, "%s", line + 6);
		} else if (sscanf(line, "Tgid: %d", &tgid) == 1) {
			break;
		}
	}
	fclose(f);
	return tgid;
}

static int add_series(struct perf_source *ps, struct perf_group *g, struct series_table *table)
{
	const struct topology *topo = &ps->opt.host->topo;

	g->series_base = table->nr;
	for (int i = 0; i < g->nr_events; i++) {
		const struct event *ev = &ps->opt.events[g->events[i]];
		int rows = group_rows(g);

		for (int c = 0; c < rows; c++) {
			struct series_labels labels;

			series_labels_init(&labels);
			if (g->per_thread_series) {
				labels.tid = perf_thread_map__pid(g->threads, c);
				labels.pid = thread_process(labels.tid, labels.comm, sizeof(labels.comm));
			} else if (g->per_cpu_series) {
				const struct cpu_place *place;

				labels.cpu = perf_cpu_map__cpu(g->cpus, c).cpu;
				place = topology_cpu(topo, labels.cpu);
				if (place) {
					labels.node = place->node;
					labels.socket = place->socket;
				}
				/* A CXL device's bytes are its memory's node's, read through a CPU of another. */
				if (ev->memory_node != -1)
					labels.node = ev->memory_node >= 0 ? ev->memory_node : LABEL_NONE;
			}
			if (ev->system_wide_only)
				snprintf(labels.instance, sizeof(labels.instance), "%s", ev->pmu_name);
			labels.whole_system = ev->system_wide_only;
			labels.cgroup = (char *)cgroup_name_of(ps, ev);
			if (series_table_add(table, ev->name, ev->unit, ev->scale, SERIES_COUNTER, &labels) < 0)
				return -1;
		}
	}
	return 0;
}

static int note_skipped(struct perf_source *ps, const struct event *ev, struct series_table *table,
			const struct ms_error *why)
{
	int *series = realloc(ps->skipped_series, sizeof(int) * (size_t)(ps->nr_skipped + 1));
	char **reasons = realloc(ps->skipped_reason, sizeof(char *) * (size_t)(ps->nr_skipped + 1));
	struct series_labels labels;
	int index;

	if (series)
		ps->skipped_series = series;
	if (reasons)
		ps->skipped_reason = reasons;
	if (!series || !reasons)
		return -1;
	series_labels_init(&labels);
	labels.cgroup = (char *)cgroup_name_of(ps, ev);
	index = series_table_add(table, ev->name, ev->unit, ev->scale, SERIES_COUNTER, &labels);
	if (index < 0)
		return -1;
	ps->skipped_series[ps->nr_skipped] = index;
	ps->skipped_reason[ps->nr_skipped] = strdup(why->text);
	table->series[index].unavailable = strdup(why->text);
	ps->nr_skipped++;
	return 0;
}

static long fds_needed(const struct perf_source *ps)
{
	long per_event = ps->opt.host->topo.nr_cpus;

	return per_event * ps->opt.nr_events * (ps->opt.target->kind == TARGET_PIDS ? 8 : 1);
}

/* Tracepoints counted on every CPU go to eBPF counters when they can:
 * reading them then interrupts no other CPU (sources/tracepoint_counts.h).
 * MEMSCOPE_PERF_TRACEPOINTS=1 keeps them on perf (to compare the two). */
static bool tp_candidate(const struct perf_source *ps, const struct event *ev)
{
	const char *force = getenv("MEMSCOPE_PERF_TRACEPOINTS");

	/* eBPF counts every task: a tracepoint counted in a cgroup stays on perf. */
	return ev->attr.type == PERF_TYPE_TRACEPOINT && is_system_wide(ps, ev) && !ev->cpus.nr &&
	       cgroup_of(ps, ev) < 0 &&
	       ev->group_hint < 0 && !(force && force[0] == '1');
}

static int tp_open(struct perf_source *ps, bool *placed, struct series_table *table)
{
	const struct perf_source_options *opt = &ps->opt;
	const struct topology *topo = &opt->host->topo;
	const char **names = calloc((size_t)opt->nr_events, sizeof(char *));
	int *index = calloc((size_t)opt->nr_events, sizeof(int));
	bool *attached = calloc((size_t)opt->nr_events, sizeof(bool));
	int nr = 0, ret = -1;

	if (!names || !index || !attached)
		goto out;
	for (int i = 0; i < opt->nr_events; i++) {
		if (tp_candidate(ps, &opt->events[i])) {
			index[nr] = i;
			names[nr++] = opt->events[i].name;
		}
	}
	ret = 0;
	if (!nr || !(ps->tp = tp_counts_open(names, nr, attached)))
		goto out;
	ps->tp_event = malloc(sizeof(int) * (size_t)nr);
	ps->tp_cpu = malloc(sizeof(int) * (size_t)(topo->nr_cpus ? topo->nr_cpus : 1));
	ps->tp_prev = calloc((size_t)nr * (size_t)(topo->nr_cpus ? topo->nr_cpus : 1), sizeof(uint64_t));
	if (!ps->tp_event || !ps->tp_cpu || !ps->tp_prev) {
		ret = -1;
		goto out;
	}
	ps->nr_tp_cpus = topo->nr_cpus;
	for (int c = 0; c < topo->nr_cpus; c++)
		ps->tp_cpu[c] = topo->cpus[c].cpu;
	ps->tp_series_base = table->nr;
	for (int k = 0; k < nr; k++) {
		const struct event *ev = &opt->events[index[k]];

		if (!attached[k])
			continue;
		placed[index[k]] = true;
		ps->tp_event[ps->nr_tp++] = index[k];
		for (int c = 0; c < topo->nr_cpus; c++) {
			struct series_labels labels;

			series_labels_init(&labels);
			labels.cpu = topo->cpus[c].cpu;
			labels.node = topo->cpus[c].node;
			labels.socket = topo->cpus[c].socket;
			if (series_table_add(table, ev->name, ev->unit, ev->scale, SERIES_COUNTER, &labels) < 0) {
				ret = -1;
				goto out;
			}
		}
	}
out:
	free(names);
	free(index);
	free(attached);
	return ret;
}

/* Counts since the last read into the frame: one map lookup for all CPUs. */
static void tp_sample(struct perf_source *ps, struct frame *frame, uint64_t now)
{
	struct sample *base = frame->samples + ps->tp_series_base;
	uint64_t span = now - ps->tp_last_ns;
	bool ok = tp_counts_read(ps->tp) == 0;

	for (int k = 0; k < ps->nr_tp; k++) {
		for (int c = 0; c < ps->nr_tp_cpus; c++) {
			struct sample *smp = &base[k * ps->nr_tp_cpus + c];
			uint64_t *prev = &ps->tp_prev[k * ps->nr_tp_cpus + c];
			uint64_t count = tp_counts_get(ps->tp, k, ps->tp_cpu[c]);

			smp->valid = ok;
			if (!ok)
				continue;
			smp->value = count - *prev;
			smp->enabled_ns = smp->running_ns = span;
			*prev = count;
		}
	}
	ps->tp_last_ns = now;
}

/* An event a sampling event of the same target counts: a task's own counter
 * (one series: not per CPU, per thread or per cgroup, not a metric's group
 * member) of what the sampling event counts. */
static bool borrow_candidate(const struct perf_source *ps, const struct event *ev)
{
	return ps->sampling && !is_system_wide(ps, ev) && cgroup_of(ps, ev) < 0 && !ps->opt.per_thread &&
	       !ps->opt.task_per_cpu && !ps->opt.start_disabled && ev->group_hint < 0 && !ev->cpus.nr &&
	       sample_source_samples(ps->sampling, &ev->attr);
}

static int borrow_open(struct perf_source *ps, bool *placed, struct series_table *table)
{
	const struct perf_source_options *opt = &ps->opt;

	ps->borrowed_series_base = table->nr;
	for (int i = 0; i < opt->nr_events; i++) {
		const struct event *ev = &opt->events[i];
		struct series_labels labels;

		if (!borrow_candidate(ps, ev))
			continue;
		if (!ps->borrowed_event) {
			ps->borrowed_event = calloc((size_t)opt->nr_events, sizeof(int));
			ps->borrowed_prev = calloc((size_t)opt->nr_events, sizeof(uint64_t));
			ps->borrowed_paused = calloc((size_t)opt->nr_events, sizeof(uint64_t));
			ps->borrowed_pause_at = calloc((size_t)opt->nr_events, sizeof(uint64_t));
			if (!ps->borrowed_event || !ps->borrowed_prev || !ps->borrowed_paused || !ps->borrowed_pause_at)
				return -1;
		}
		series_labels_init(&labels);
		if (series_table_add(table, ev->name, ev->unit, ev->scale, SERIES_COUNTER, &labels) < 0)
			return -1;
		placed[i] = true;
		ps->borrowed_event[ps->nr_borrowed++] = i;
	}
	return 0;
}

/* The sampling event's count as the counter this event would have been
 * opened as (the same exclusions), or false. */
static bool borrowed_count(const struct perf_source *ps, int k, uint64_t *count)
{
	struct perf_event_attr attr;

	attr_for_member(ps, &ps->opt.events[ps->borrowed_event[k]], true, &attr);
	return sample_source_count_of(ps->sampling, &attr, count) == 0;
}

static void borrowed_sample(struct perf_source *ps, struct frame *frame, uint64_t now)
{
	struct sample *base = frame->samples + ps->borrowed_series_base;
	uint64_t span = now - ps->borrowed_last_ns;

	for (int k = 0; k < ps->nr_borrowed; k++) {
		uint64_t count;

		base[k].valid = borrowed_count(ps, k, &count);
		if (!base[k].valid)
			continue;
		if (ps->paused)
			count = ps->borrowed_pause_at[k];
		count -= ps->borrowed_paused[k];
		base[k].value = count - ps->borrowed_prev[k];
		base[k].enabled_ns = base[k].running_ns = span;
		ps->borrowed_prev[k] = count;
	}
	ps->borrowed_last_ns = now;
}

/* Paused (ctl disable): what the sampling event counts until resumed is not
 * this counter's. */
static void borrowed_switch(struct perf_source *ps, bool on)
{
	for (int k = 0; k < ps->nr_borrowed; k++) {
		uint64_t count;

		if (!borrowed_count(ps, k, &count))
			continue;
		if (!on && !ps->paused)
			ps->borrowed_pause_at[k] = count;
		else if (on && ps->paused)
			ps->borrowed_paused[k] += count - ps->borrowed_pause_at[k];
	}
	ps->paused = !on;
}

static const struct source_ops perf_source_ops;

void perf_source_count_from(struct source *src, const struct source *sampling)
{
	if (src->ops == &perf_source_ops)
		((struct perf_source *)src->priv)->sampling = sampling;
}

/* Split events into groups; try each group; when a group cannot open, find
 * the events that cannot (one by one) and go on without them. */
static int perf_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct perf_source *ps = src->priv;
	const struct perf_source_options *opt = &ps->opt;
	bool *placed = calloc((size_t)opt->nr_events, sizeof(bool));
	size_t max_read = 0;

	src->first = table->nr;
	ps->groups = calloc((size_t)opt->nr_events, sizeof(*ps->groups));
	if (!placed || !ps->groups) {
		free(placed);
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (borrow_open(ps, placed, table) < 0 || tp_open(ps, placed, table) < 0)
		goto oom;
	for (int i = 0; i < opt->nr_events; i++) {
		struct perf_group *g;
		int limit, ret;

		if (placed[i])
			continue;
		g = &ps->groups[ps->nr_groups];
		g->events = malloc(sizeof(int) * (size_t)opt->nr_events);
		if (!g->events)
			goto oom;
		limit = is_software_context(&opt->events[i]) ? SW_GROUP_MAX : HW_GROUP_MAX;
		for (int j = i; j < opt->nr_events && g->nr_events < limit; j++) {
			if (!placed[j] && same_group(ps, &opt->events[i], &opt->events[j])) {
				g->events[g->nr_events++] = j;
				placed[j] = true;
			}
		}
		perf_group_order(opt->events, g->events, g->nr_events);
		ret = group_open(ps, g, err);
		if ((ret == -EACCES || ret == -EPERM) && !ps->user_only &&
		    !is_system_wide(ps, &opt->events[i]) && perf_event_paranoid() >= 2) {
			/* Unprivileged users may count user space only: retry that way,
			 * and say so, rather than fail. */
			int *members = g->events, nr = g->nr_events;

			g->events = NULL;
			group_close(g);
			g->events = members;
			g->nr_events = nr;
			ps->user_only = true;
			ret = group_open(ps, g, err);
		}
		if (ret < 0 && g->nr_events > 1) {
			/* Find which members the kernel refuses, and retry without them. */
			int kept = 0;
			int *members = g->events;
			int nr = g->nr_events;

			g->events = NULL;
			group_close(g);
			for (int m = 0; m < nr; m++) {
				struct perf_group single = { 0 };
				int one_ret;

				single.events = &members[m];
				single.nr_events = 1;
				one_ret = group_open(ps, &single, err);
				single.events = NULL;
				group_close(&single);
				if (one_ret < 0) {
					struct ms_error why;

					if (!perf_open_error(opt->host, &opt->events[members[m]], -one_ret,
							     is_system_wide(ps, &opt->events[members[m]]) ?
							     OPEN_SYSTEM_WIDE : OPEN_TASK, ps->opt.target->pids,
							     ps->opt.target->nr_pids, fds_needed(ps), &why)) {
						*err = why;
						free(members);
						free(placed);
						return -1;
					}
					if (note_skipped(ps, &opt->events[members[m]], table, &why) < 0) {
						free(members);
						goto oom;
					}
				} else {
					members[kept++] = members[m];
				}
			}
			g->events = members;
			g->nr_events = kept;
			ret = kept ? group_open(ps, g, err) : 0;
			if (!kept) {
				group_close(g);
				continue;
			}
		}
		if (ret < 0) {
			struct ms_error why;

			if (!perf_open_error(opt->host, &opt->events[g->events[0]], -ret,
					     is_system_wide(ps, &opt->events[g->events[0]]) ?
					     OPEN_SYSTEM_WIDE : OPEN_TASK, ps->opt.target->pids,
							     ps->opt.target->nr_pids, fds_needed(ps), &why)) {
				*err = why;
				group_close(g);
				free(placed);
				return -1;
			}
			if (note_skipped(ps, &opt->events[g->events[0]], table, &why) < 0)
				goto oom;
			group_close(g);
			continue;
		}
		if (group_prepare_reads(g, err) < 0 || add_series(ps, g, table) < 0) {
			ps->nr_groups++;
			free(placed);
			return -1;
		}
		if (g->read_size > max_read)
			max_read = g->read_size;
		ps->nr_groups++;
	}
	free(placed);
	if (ps->nr_groups == 0 && ps->nr_tp == 0 && ps->nr_borrowed == 0) {
		ms_error_set(err, "none of the events can be counted here: %s",
			     ps->nr_skipped ? ps->skipped_reason[0] : "no events");
		return -1;
	}
	ps->read_buf = malloc(max_read ? max_read : sizeof(uint64_t));
	if (!ps->read_buf)
		goto oom_placed_freed;
	src->count = table->nr - src->first;
	return 0;
oom:
	free(placed);
oom_placed_freed:
	ms_error_set(err, "out of memory");
	return -1;
}

/* Start or stop a group: its leaders' ioctl. */
static void group_switch(struct perf_group *g, bool on)
{
	if (g->evlist) {
		if (on)
			perf_evsel__enable(perf_evlist__next(g->evlist, NULL));
		else
			perf_evsel__disable(perf_evlist__next(g->evlist, NULL));
		return;
	}
	for (int c = 0; c < g->nr_cpus; c++)
		ioctl(g->leader_fd[c], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static int perf_enable(struct source *src, struct ms_error *err)
{
	struct perf_source *ps = src->priv;

	(void)err;
	ps->borrowed_last_ns = monotonic_ns();
	if (ps->tp) {
		ps->tp_last_ns = monotonic_ns();
		if (tp_counts_read(ps->tp) == 0)
			for (int k = 0; k < ps->nr_tp; k++)
				for (int c = 0; c < ps->nr_tp_cpus; c++)
					ps->tp_prev[k * ps->nr_tp_cpus + c] = tp_counts_get(ps->tp, k, ps->tp_cpu[c]);
	}
	/* A command's counters start at its exec (enable_on_exec); the rest now.
	 * Members are opened enabled and count while their leader does, so one
	 * ioctl per leader descriptor starts a whole group. */
	for (int i = 0; !ps->opt.start_disabled && i < ps->nr_groups; i++) {
		const struct event *first = &ps->opt.events[ps->groups[i].events[0]];

		if (ps->opt.target->kind != TARGET_COMMAND || ps->opt.target->nr_attach || is_system_wide(ps, first))
			group_switch(&ps->groups[i], true);
	}
	return 0;
}

static int perf_disable(struct source *src)
{
	struct perf_source *ps = src->priv;

	/* Stopping the leader stops its group. */
	for (int i = 0; i < ps->nr_groups; i++)
		group_switch(&ps->groups[i], false);
	return 0;
}

/* stat --control disable/enable: the kernel stops the counters (their
 * enabled and running times stop too). An inherited counter of a child
 * follows its parent's. */
static void perf_pause(struct source *src)
{
	perf_disable(src);
	borrowed_switch(src->priv, false);
}

static void perf_resume(struct source *src)
{
	struct perf_source *ps = src->priv;

	borrowed_switch(ps, true);
	for (int i = 0; i < ps->nr_groups; i++)
		group_switch(&ps->groups[i], true);
}

/* One read() of a group on (cpu, thread): deltas since the last read into
 * delta[0] = enabled, delta[1] = running, delta[2..] = values. False if the
 * read failed (the counter is gone). */
static bool read_group_deltas(struct perf_group *g, int c, int t, uint64_t *buf, uint64_t *delta)
{
	int slot = c * g->nr_threads + t;
	uint64_t *prev = g->prev + (size_t)slot * (size_t)(2 + g->nr_events);
	ssize_t n = read(g->leader_fd[slot], buf, g->read_size);

	if (n != (ssize_t)g->read_size || buf[0] != (uint64_t)g->nr_events)
		return false;
	delta[0] = buf[1] - prev[0];
	delta[1] = buf[2] - prev[1];
	prev[0] = buf[1];
	prev[1] = buf[2];
	for (int e = 0; e < g->nr_events; e++) {
		delta[2 + e] = buf[3 + 2 * e] - prev[2 + e];
		prev[2 + e] = buf[3 + 2 * e];
	}
	return true;
}

static void add_deltas(struct perf_group *g, struct sample *base, int rows, int row,
		       const uint64_t *delta, uint64_t enabled)
{
	for (int e = 0; e < g->nr_events; e++) {
		struct sample *smp = &base[e * rows + row];

		smp->value += delta[2 + e];
		smp->enabled_ns += enabled;
		smp->running_ns += delta[1];
	}
}

static void mark_invalid(struct perf_group *g, struct sample *base, int rows, int row)
{
	for (int e = 0; e < g->nr_events; e++)
		base[e * rows + row].valid = false;
}

/* Hot path: one read() per group and (CPU, thread); deltas into the frame. */
static int perf_sample(struct source *src, struct frame *frame)
{
	struct perf_source *ps = src->priv;
	struct sample *out = frame->samples + src->first;

	for (int i = 0; i < src->count; i++) {
		out[i].value = out[i].enabled_ns = out[i].running_ns = 0;
		out[i].valid = true;
	}
	for (int s = 0; s < ps->nr_skipped; s++)
		frame->samples[ps->skipped_series[s]].valid = false;
	if (ps->tp)
		tp_sample(ps, frame, monotonic_ns());
	if (ps->nr_borrowed)
		borrowed_sample(ps, frame, monotonic_ns());

	for (int gi = 0; gi < ps->nr_groups; gi++) {
		struct perf_group *g = &ps->groups[gi];
		int rows = group_rows(g);
		struct sample *base = frame->samples + g->series_base;
		size_t stride = (size_t)(2 + g->nr_events);

		for (int t = 0; t < g->nr_threads; t++) {
			uint64_t enabled = 0, running = 0;

			for (int c = 0; c < g->nr_cpus; c++) {
				uint64_t *delta = g->scratch + (size_t)c * stride;

				if (!read_group_deltas(g, c, t, ps->read_buf, delta)) {
					mark_invalid(g, base, rows, group_row(g, c, t));
					delta[0] = delta[1] = 0;
					for (int e = 0; e < g->nr_events; e++)
						delta[2 + e] = 0;
					continue;
				}
				if (!g->task_per_cpu)
					add_deltas(g, base, rows, group_row(g, c, t), delta, delta[0]);
				running += delta[1];
				if (delta[0] > enabled)
					enabled = delta[0];
			}
			if (!g->task_per_cpu)
				continue;
			/* The thread's time on all CPUs together is its enabled time: give
			 * each CPU a share of it in proportion to its running time, so that
			 * only real multiplexing (sum running < enabled) scales values. */
			for (int c = 0; c < g->nr_cpus; c++) {
				uint64_t *delta = g->scratch + (size_t)c * stride;
				uint64_t share = running ? (uint64_t)((double)delta[1] * (double)enabled /
								      (double)running + 0.5) : 0;

				add_deltas(g, base, rows, c, delta, share < delta[1] ? delta[1] : share);
			}
		}
	}
	return 0;
}

static void perf_close(struct source *src)
{
	struct perf_source *ps = src->priv;

	if (!ps)
		return;
	for (int i = 0; i < ps->nr_groups; i++)
		group_close(&ps->groups[i]);
	for (int i = 0; i < ps->nr_skipped; i++)
		free(ps->skipped_reason[i]);
	free(ps->skipped_reason);
	free(ps->skipped_series);
	free(ps->groups);
	free(ps->read_buf);
	tp_counts_close(ps->tp);
	free(ps->borrowed_event);
	free(ps->borrowed_prev);
	free(ps->borrowed_paused);
	free(ps->borrowed_pause_at);
	free(ps->tp_event);
	free(ps->tp_cpu);
	free(ps->tp_prev);
	for (int i = 0; ps->cgroup_fd && i < ps->opt.nr_events; i++) {
		if (ps->cgroup_fd[i] >= 0)
			close(ps->cgroup_fd[i]);
		free(ps->cgroup_name[i]);
	}
	free(ps->cgroup_fd);
	free(ps->cgroup_name);
	event_list_free(ps->owned_events, ps->nr_owned_events);
	free(ps);
	src->priv = NULL;
}

static void perf_notes(struct source *src, FILE *out, const char *command_name)
{
	const struct perf_source *ps = src->priv;

	if (ps->user_only)
		fprintf(out, "memscope %s: note: counting user space only (perf_event_paranoid is 2 "
			"and memscope has no CAP_PERFMON); for kernel time too: sudo sysctl "
			"kernel.perf_event_paranoid=1\n", command_name);
	/* "The others are still counted" only where some are: a run with none
	 * ended before any note (perf_open's error). */
	for (int i = 0; i < ps->nr_skipped; i++)
		fprintf(out, "memscope %s: note: %s%s\n", command_name, ps->skipped_reason[i],
			ps->nr_groups || ps->nr_tp ? "; the other events are still counted" : "");
}

static const struct source_ops perf_source_ops = {
	.name = "perf",
	.open = perf_open,
	.enable = perf_enable,
	.disable = perf_disable,
	.pause = perf_pause,
	.resume = perf_resume,
	.sample = perf_sample,
	.close = perf_close,
	.notes = perf_notes,
};

static int libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0; /* memscope reports errors itself, with the fix */
}

int perf_source_init(struct source *src, const struct perf_source_options *opt, struct ms_error *err)
{
	struct perf_source *ps = calloc(1, sizeof(*ps));

	if (!ps) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	libperf_init(libperf_print);
	ps->opt = *opt;
	memset(src, 0, sizeof(*src));
	src->ops = &perf_source_ops;
	src->priv = ps;
	return 0;
}

/* ---- The registry kind: every name no other kind claims is a perf event ---- */

static bool perf_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	return name && name[0];
}

/* A plan event keeps its metric's group, so the metric's inputs are counted
 * in the same time slices. */
static const struct plan_event *planned(const struct metric_plan *plan, const char *name)
{
	for (int i = 0; plan && i < plan->nr_events; i++)
		if (!strcmp(plan->events[i].text, name))
			return &plan->events[i];
	return NULL;
}

/* The events of a request: with -G, each (event, cgroup) pair in order, then
 * the names no pair has. */
static int request_events(const struct source_request *req, const char ***names, const char ***cgroups)
{
	int total = req->nr_cgroups + req->nr_names, nr = 0;

	*names = calloc((size_t)total + 1, sizeof(char *));
	*cgroups = calloc((size_t)total + 1, sizeof(char *));
	if (!*names || !*cgroups)
		return -1;
	for (int i = 0; i < req->nr_cgroups; i++) {
		for (int n = 0; n < req->nr_names; n++) {
			if (!strcmp(req->names[n], req->cgroups[i].event)) {
				(*names)[nr] = req->names[n];
				(*cgroups)[nr++] = req->cgroups[i].cgroup;
				break;
			}
		}
	}
	for (int n = 0; n < req->nr_names; n++) {
		bool paired = false;

		for (int i = 0; i < req->nr_cgroups && !paired; i++)
			paired = !strcmp(req->names[n], req->cgroups[i].event);
		if (!paired)
			(*names)[nr++] = req->names[n];
	}
	return nr;
}

static int open_cgroups(struct perf_source *ps, const char **cgroups, int nr, struct ms_error *err)
{
	ps->cgroup_fd = malloc(sizeof(int) * (size_t)nr);
	ps->cgroup_name = calloc((size_t)nr, sizeof(char *));
	if (!ps->cgroup_fd || !ps->cgroup_name) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int i = 0; i < nr; i++)
		ps->cgroup_fd[i] = -1;
	for (int i = 0; i < nr; i++) {
		if (!cgroups[i] || !cgroups[i][0])
			continue;
		ps->cgroup_fd[i] = cgroup_open(cgroups[i], err);
		if (ps->cgroup_fd[i] < 0) {
			ms_error_mark(err, MS_ERR_USAGE);
			return -1;
		}
		if (!(ps->cgroup_name[i] = strdup(cgroups[i]))) {
			ms_error_set(err, "out of memory");
			return -1;
		}
	}
	return 0;
}

static int perf_kind_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			    struct ms_error *err)
{
	const char **names = NULL, **cgroups = NULL;
	int total = request_events(req, &names, &cgroups);
	struct event *events = total < 0 ? NULL : calloc((size_t)total + 1, sizeof(*events));
	struct perf_source_options popt = {
		.host = req->host,
		.target = req->target,
		.task_per_cpu = req->per_cpu,
		.start_disabled = req->start_disabled,
		.per_thread = req->per_thread,
	};
	int nr = 0, status;

	if (!events) {
		free(names);
		free(cgroups);
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (; nr < total; nr++) {
		const struct plan_event *pe = planned(req->plan, names[nr]);

		/* A plan event's second copy opens the same event under its own name. */
		if (event_parse(req->host, pe ? pe->open : names[nr], &events[nr], err) < 0) {
			event_list_free(events, nr);
			free(names);
			free(cgroups);
			if (!pe) {
				ms_error_mark(err, MS_ERR_USAGE); /* a name the user wrote */
				return -1;
			}
			ms_error_prefix(err, "catalog event for %s", pe->instance);
			return -1;
		}
		if (pe && pe->copy > 1) {
			char *name = strdup(names[nr]);

			if (!name) {
				event_list_free(events, nr + 1);
				free(names);
				free(cgroups);
				ms_error_set(err, "out of memory");
				return -1;
			}
			free(events[nr].name);
			events[nr].name = name;
		}
		events[nr].group_hint = pe ? pe->group : -1;
		events[nr].memory_node = pe ? pe->memory_node : -1;
	}
	free(names);
	popt.events = events;
	popt.nr_events = nr;
	if (perf_source_init(src, &popt, err) < 0) {
		free(cgroups);
		event_list_free(events, nr);
		return -1;
	}
	((struct perf_source *)src->priv)->owned_events = events;
	((struct perf_source *)src->priv)->nr_owned_events = nr;
	src->kind = kind;
	status = req->nr_cgroups ? open_cgroups(src->priv, cgroups, nr, err) : 0;
	free(cgroups);
	if (status) {
		perf_close(src);
		return status;
	}
	return 0;
}

static int perf_check(const struct source_kind *kind, const struct host *host, const char *name,
		      struct ms_error *err)
{
	struct event ev;
	int ret = event_parse(host, name, &ev, err);

	(void)kind;
	if (ret == 0)
		event_free(&ev);
	return ret;
}

/* Present when this process may count its own task clock: the smallest
 * thing perf_event_open does. What it may count beyond that (other
 * processes, the whole system, PMUs) each event's error says. */
static bool perf_present(const struct source_kind *kind, const struct host *host, struct ms_error *why)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
					.config = PERF_COUNT_SW_TASK_CLOCK, .disabled = 1,
					.exclude_kernel = 1, .exclude_hv = 1 };
	(void)kind;
	return perf_event_try_own(host, &attr, "count even this process's own task clock", why);
}

const struct source_kind perf_source_kind = {
	.name = "perf",
	.description = "perf_event counters: software, tracepoints, core and uncore PMUs (libperf, libpfm4)",
	.mode = SOURCE_LIVE,
	.claims = perf_claims,
	.present = perf_present,
	.check = perf_check,
	.create = perf_kind_create,
};
