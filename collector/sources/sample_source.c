/* The sample source (sample_source.h): sampled memory accesses with their
 * data addresses and nodes. What is where:
 * - Delivering samples to the pipeline; the nodes of sampled data (from the
 *   physical address, or numa_maps for those that have none yet).
 * - Reading the rings (drained on readiness and on a timer).
 * - Opening the sampling events the catalog chose.
 * - Source operations (open, enable, sample, close).
 * - The registry kind. */
#include "sources/sample_source.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "events/event.h"
#include "events/perf_errors.h"
#include "events/sample_record.h"
#include "host/host.h"
#include "host/page_node.h"
#include "sampler/sampler.h"
#include "sources/alloc_probes.h"
#include "sources/proc_maps.h"

/* The data source the kernel gives every sample of a software event
 * (its PERF_MEM_NA: not available at every level). */
#define SOFTWARE_DATA_SRC                                                                                  \
	(PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) |         \
	 PERF_MEM_S(TLB, NA) | PERF_MEM_S(LVLNUM, NA))
/* Samples a ring holds back until their page's node is known: a page-fault
 * sample is taken before the kernel has mapped the page. */
#define PENDING_MAX 1024
/* Rounds a sample waits for its page before its node is given up. */
#define PENDING_TRIES 3
/* Page-fault samples and --alloc events are read this often (and when half
 * a ring is written): the pages' nodes are asked after each read, while the
 * process most likely still has them, and nothing wakes memscope from the
 * process's fault path or allocator. */
#define READ_INTERVAL_NS 5000000

struct sample_event {
	struct event ev;
	struct sample_event_info info;
	bool page_faults;           /* a software event with fault addresses: nodes come from move_pages,
				     * asked after the batch from the sampler's thread */
	uint64_t delivered, lost;   /* totals so far */
	uint64_t throttled;         /* throttle records */
	int *fds;                   /* its fds, to read its count at the end */
	int nr_fds;
	uint64_t delivered_seen, lost_seen; /* at the last frame */
	uint64_t *ids;              /* the kernel's id of each of its fds */
	int nr_ids;
};

struct ring {
	int fd;                     /* the fd whose buffer this is; others write here via SET_OUTPUT */
	int cpu;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	uint64_t size;              /* data bytes, a power of two */
	size_t map_size;
	uint8_t *scratch;           /* a record that wraps around the end is copied here */
};

struct pending {
	struct event_sample sample;
	int tries;
	bool resolved;
	bool asked;                 /* asked about in this round */
	bool numa_maps;             /* not present after every try: numa_maps is asked */
};

struct sample_source {
	const struct host *host;
	const struct target *target;
	struct sample_options opt;
	struct sample_hub *hub;
	struct sample_event *events;
	int nr_events;
	int *fds;
	int nr_fds, cap_fds;
	struct ring *rings;
	int nr_rings;
	struct sample_layout layout;
	struct phys_node_map phys;
	struct pending *pending;
	int nr_pending;
	/* Scratch for parsing and querying. */
	struct event_sample *parsed;
	struct map_event *map;
	struct task_event task;
	uint64_t *query_addrs;
	int *query_nodes;
	bool enabled;
	bool user_only;
	FILE *notes_out;            /* where notes found while running go */
	const char *command_name;
	bool maps_noted;
	char notes[4][512];
	int nr_notes;
	int series_base;
	int read_timer_fd;          /* reads page-fault samples and --alloc events every READ_INTERVAL_NS,
				     * or -1 */
	struct alloc_probes *allocs;  /* --alloc, when the probes attached */
	struct alloc_event alloc;
};

static const struct source_ops sample_source_ops;

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static void add_note(struct sample_source *ss, const char *text)
{
	for (int i = 0; i < ss->nr_notes; i++)
		if (!strcmp(ss->notes[i], text))
			return;
	if (ss->nr_notes < 4)
		snprintf(ss->notes[ss->nr_notes++], sizeof(ss->notes[0]), "%s", text);
}

/* ---- Delivering ---- */

static void deliver(struct sample_source *ss, const struct sample_item *item)
{
	if (ss->hub && ss->hub->deliver)
		ss->hub->deliver(item, ss->hub->ctx);
}

static int event_of_id(const struct sample_source *ss, uint64_t id)
{
	/* One event: its samples carry no id (open_events leaves it out). */
	if (ss->nr_events == 1)
		return 0;
	for (int e = 0; e < ss->nr_events; e++)
		for (int i = 0; i < ss->events[e].nr_ids; i++)
			if (ss->events[e].ids[i] == id)
				return e;
	return -1;
}

static void deliver_sample(struct sample_source *ss, struct event_sample *s)
{
	struct sample_item item = { .kind = SAMPLE_ITEM_SAMPLE, .time_ns = s->time_ns, .sample = s };

	if (s->event >= 0)
		ss->events[s->event].delivered++;
	deliver(ss, &item);
}

/* ---- Nodes of the sampled data ---- */

static void settle(struct pending *p, int node, enum sample_node_from from)
{
	p->sample.node = node;
	p->sample.node_from = from;
	p->resolved = true;
}

/* Pages still not present after every try (under NUMA balancing a page is
 * protected whenever the balancer samples it): their mapping's node, when
 * /proc/PID/numa_maps puts all of its pages on one node. */
static void numa_maps_fallback(struct sample_source *ss, uint32_t pid, int from)
{
	int n = 0, k = 0;

	for (int j = from; j < ss->nr_pending; j++)
		if (ss->pending[j].numa_maps && !ss->pending[j].resolved && ss->pending[j].sample.pid == pid)
			ss->query_addrs[n++] = ss->pending[j].sample.addr;
	if (!n)
		return;
	if (page_nodes_from_numa_maps(ss->host->roots.proc, (pid_t)pid, (unsigned long)n, ss->query_addrs,
				      ss->query_nodes) < 0)
		for (int j = 0; j < n; j++)
			ss->query_nodes[j] = -1;
	for (int j = from; j < ss->nr_pending; j++) {
		struct pending *q = &ss->pending[j];

		if (!q->numa_maps || q->resolved || q->sample.pid != pid)
			continue;
		if (ss->query_nodes[k] >= 0)
			settle(q, ss->query_nodes[k], NODE_FROM_NUMA_MAPS);
		else
			settle(q, -1, NODE_UNKNOWN_NOT_PRESENT);
		k++;
	}
}

/* Ask the kernel for the node of every pending page, one move_pages call per
 * process; then hand over, in order, every sample whose node is settled. A
 * page not there yet (the fault is still being handled) is asked again next
 * time, a few times at most. final: last chance, nothing waits. */
static void resolve_pending(struct sample_source *ss, bool final)
{
	int done = 0;

	for (int i = 0; i < ss->nr_pending; i++)
		ss->pending[i].asked = false;
	for (int i = 0; i < ss->nr_pending; i++) {
		struct pending *p = &ss->pending[i];
		uint32_t pid = p->sample.pid;
		int n = 0, ret;

		if (p->resolved || p->asked)
			continue;
		for (int j = i; j < ss->nr_pending; j++)
			if (!ss->pending[j].resolved && ss->pending[j].sample.pid == pid)
				ss->query_addrs[n++] = ss->pending[j].sample.addr;
		ret = page_nodes_of_process((pid_t)pid, (unsigned long)n, ss->query_addrs, ss->query_nodes);
		n = 0;
		for (int j = i; j < ss->nr_pending; j++) {
			struct pending *q = &ss->pending[j];
			int node;

			if (q->resolved || q->sample.pid != pid)
				continue;
			q->asked = true;
			node = ss->query_nodes[n++];
			q->tries++;
			/* Reaped (ESRCH), or a zombie whose memory is gone (EINVAL). */
			if (ret == -ESRCH || ret == -EINVAL)
				settle(q, -1, NODE_UNKNOWN_EXITED);
			else if (ret < 0)
				settle(q, -1, NODE_UNKNOWN_NOT_ALLOWED);
			else if (node >= 0)
				settle(q, node, NODE_FROM_PAGE);
			else if (node == -EFAULT)
				settle(q, -1, NODE_UNKNOWN_UNMAPPED);
			else if (final || q->tries >= PENDING_TRIES)
				q->numa_maps = true;   /* asked of numa_maps below */
		}
		numa_maps_fallback(ss, pid, i);
	}
	/* Hand over the settled prefix; a sample still waiting holds back the
	 * ones after it, so they stay in order. */
	while (done < ss->nr_pending && ss->pending[done].resolved)
		deliver_sample(ss, &ss->pending[done++].sample);
	memmove(ss->pending, ss->pending + done, sizeof(*ss->pending) * (size_t)(ss->nr_pending - done));
	ss->nr_pending -= done;
}

static void take_sample(struct sample_source *ss, const struct event_sample *s)
{
	struct pending *p;
	bool faults;
	int node;

	if (ss->nr_pending == PENDING_MAX)
		resolve_pending(ss, true);
	p = &ss->pending[ss->nr_pending++];
	p->sample = *s;
	p->sample.event = event_of_id(ss, s->id);
	p->tries = 0;
	p->resolved = false;
	p->numa_maps = false;
	faults = p->sample.event >= 0 && ss->events[p->sample.event].page_faults;
	/* A fault's sample is taken before the fault is handled: its physical
	 * address, when there is one, is the page being replaced (copy on
	 * write, the zero page), not the page the process gets. */
	if (!faults && s->phys_addr && (node = phys_node_map_node(&ss->phys, s->phys_addr)) >= 0)
		settle(p, node, NODE_FROM_PHYS);
	else if (!s->addr)
		settle(p, -1, NODE_UNKNOWN_NO_ADDRESS);
	else if (!faults)
		settle(p, -1, NODE_UNKNOWN_NO_PHYS);
}

/* ---- Reading the rings ---- */

/* The fields open_events did not ask the kernel for, as the kernel would
 * have written them: the ring's CPU (every event of a ring is that CPU's),
 * the fixed period, and a software event's data source ("not available"). */
static void fill_left_out(const struct sample_source *ss, const struct ring *r, struct event_sample *s)
{
	uint64_t t = ss->layout.sample_type;
	int e = event_of_id(ss, s->id);

	if (!(t & PERF_SAMPLE_CPU))
		s->cpu = r->cpu;
	if (!(t & PERF_SAMPLE_PERIOD) && e >= 0)
		s->period = ss->events[e].info.period;
	if (!(t & PERF_SAMPLE_DATA_SRC))
		s->data_src = SOFTWARE_DATA_SRC;
}

static void handle_record(struct sample_source *ss, const struct ring *r, const struct perf_event_header *hdr)
{
	struct ring_record rec = { .sample = ss->parsed, .map = ss->map, .task = &ss->task };
	struct sample_item item = { .event = -1 };

	if (ring_record_parse(&ss->layout, hdr, &rec) < 0)
		return;
	item.time_ns = rec.time_ns;
	switch (rec.kind) {
	case RING_SAMPLE:
		fill_left_out(ss, r, rec.sample);
		take_sample(ss, rec.sample);
		return;
	case RING_MMAP:
		item.kind = SAMPLE_ITEM_MAP;
		item.map = rec.map;
		break;
	case RING_TASK:
		item.kind = SAMPLE_ITEM_TASK;
		item.task = rec.task;
		break;
	case RING_LOST:
	case RING_LOST_SAMPLES:
	case RING_THROTTLE:
		item.kind = SAMPLE_ITEM_LOST;
		item.lost_kind = rec.kind == RING_LOST ? LOST_RING_FULL
				 : rec.kind == RING_LOST_SAMPLES ? LOST_BY_KERNEL : LOST_THROTTLED;
		item.event = event_of_id(ss, rec.id);
		item.lost = rec.kind == RING_THROTTLE ? 0 : rec.lost;
		if (item.event >= 0) {
			ss->events[item.event].lost += item.lost;
			ss->events[item.event].throttled += rec.kind == RING_THROTTLE;
		}
		break;
	default:
		return;
	}
	deliver(ss, &item);
}

static void drain_ring(struct sample_source *ss, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail;

	while (tail < head) {
		uint64_t at = tail & (r->size - 1);
		const struct perf_event_header *hdr = (const void *)(r->data + at);
		struct perf_event_header h;

		if (r->size - at < sizeof(h)) {
			memcpy(&h, r->data + at, (size_t)(r->size - at));
			memcpy((uint8_t *)&h + (r->size - at), r->data, sizeof(h) - (size_t)(r->size - at));
		} else {
			memcpy(&h, hdr, sizeof(h));
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* out of step: what is left cannot be read */
		if (at + h.size > r->size) {
			uint64_t first = r->size - at;

			memcpy(r->scratch, r->data + at, (size_t)first);
			memcpy(r->scratch + first, r->data, (size_t)(h.size - first));
			hdr = (const void *)r->scratch;
		}
		handle_record(ss, r, hdr);
		tail += h.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct sample_source *ss, bool final)
{
	if (ss->allocs)
		alloc_probes_drain(ss->allocs);
	for (int i = 0; i < ss->nr_rings; i++)
		drain_ring(ss, &ss->rings[i]);
	resolve_pending(ss, final);
}

static void deliver_alloc(const struct alloc_event *e, uint64_t time_ns, void *ctx)
{
	struct sample_source *ss = ctx;
	struct sample_item item = { .kind = SAMPLE_ITEM_ALLOC, .time_ns = time_ns, .alloc = &ss->alloc,
				    .event = -1 };

	ss->alloc = *e;
	deliver(ss, &item);
}

static int on_allocs_ready(struct sampler *s, int fd, void *ctx)
{
	struct sample_source *ss = ctx;

	(void)s;
	(void)fd;
	alloc_probes_drain(ss->allocs);
	return 0;
}

static int on_ring_ready(struct sampler *s, int fd, void *ctx)
{
	struct sample_source *ss = ctx;

	(void)s;
	(void)fd;
	/* Allocations first: a sample in a new block needs the block. */
	if (ss->allocs)
		alloc_probes_drain(ss->allocs);
	/* Every CPU's ring, not only the one that woke us: a process that
	 * moved to another CPU after it mapped its binary has its MMAP2 records
	 * in the first CPU's ring, below that ring's wake-up mark, and its
	 * samples must not reach the sinks before the mappings they need.
	 * (Samples wait in pending until resolve_pending; mappings go at once.) */
	for (int i = 0; i < ss->nr_rings; i++)
		drain_ring(ss, &ss->rings[i]);
	resolve_pending(ss, false);
	return 0;
}

static bool rings_have_data(const struct sample_source *ss)
{
	for (int i = 0; i < ss->nr_rings; i++)
		if (__atomic_load_n(&ss->rings[i].page->data_head, __ATOMIC_ACQUIRE) != ss->rings[i].page->data_tail)
			return true;
	return false;
}

static int on_read_timer(struct sampler *s, int fd, void *ctx)
{
	struct sample_source *ss = ctx;
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return 0;
	if (ss->allocs || rings_have_data(ss) || ss->nr_pending)
		on_ring_ready(s, fd, ctx);
	return 0;
}

/* ---- Opening ---- */

static int add_fd(struct sample_source *ss, int fd)
{
	if (ss->nr_fds == ss->cap_fds) {
		int cap = ss->cap_fds ? ss->cap_fds * 2 : 16;
		int *grown = realloc(ss->fds, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		ss->fds = grown;
		ss->cap_fds = cap;
	}
	ss->fds[ss->nr_fds++] = fd;
	return 0;
}

static bool pmu_is(const struct event *ev, const char *prefix)
{
	return ev->pmu_name && !strncmp(ev->pmu_name, prefix, strlen(prefix));
}

/* "cpu/mem-loads,ldlat=30/P": perf's precise modifiers (p, pp, ppp, P) are
 * taken off before the event is parsed. */
static void split_precise(const char *spec, char *text, size_t size, int *precise)
{
	size_t len;

	snprintf(text, size, "%s", spec);
	len = strlen(text);
	*precise = 0;
	while (len && (text[len - 1] == 'p' || text[len - 1] == 'P') && strchr(text, '/') &&
	       strrchr(text, '/') < text + len - 1) {
		*precise = text[len - 1] == 'P' ? 3 : *precise + 1;
		text[--len] = '\0';
	}
	if (len && text[len - 1] == ':')
		text[--len] = '\0';
}

static void setup_attr(struct sample_source *ss, struct sample_event *se, bool first, bool phys)
{
	struct perf_event_attr *a = &se->ev.attr;
	bool task = ss->target->kind != TARGET_SYSTEM && !ss->target->system_wide;
	bool hardware = a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT;

	a->size = sizeof(*a);
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC;
	if (!ss->opt.no_callchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (phys)
		a->sample_type |= PERF_SAMPLE_PHYS_ADDR;
	if (hardware)
		a->sample_type |= PERF_SAMPLE_WEIGHT;
	/* AMD IBS: the op registers themselves, decoded by memscope's table
	 * (catalog/sampling/amd-ibs-op.yaml) whatever the kernel decodes. */
	if (pmu_is(&se->ev, "ibs_op"))
		a->sample_type |= PERF_SAMPLE_RAW;
	a->sample_max_stack = SAMPLE_CALLCHAIN_MAX;
	a->exclude_callchain_kernel = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	a->inherit = task;
	a->enable_on_exec = ss->target->kind == TARGET_COMMAND && task;
	if (ss->opt.period) {
		a->freq = 0;
		a->sample_period = ss->opt.period;
	} else if (ss->opt.freq || hardware) {
		a->freq = 1;
		a->sample_freq = ss->opt.freq ? ss->opt.freq : SAMPLE_DEFAULT_FREQ;
	} else {
		a->freq = 0;
		a->sample_period = 1; /* every page fault */
	}
	/* Woken when half the ring is written (page-fault rings are also read
	 * on a timer, sample_watch): a wake-up per few samples would cost the
	 * process an interrupt and a context switch on its CPU each time. */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((size_t)ss->opt.mmap_pages * (size_t)sysconf(_SC_PAGESIZE) / 2);
	/* Side-band records once per ring: on the first event only. */
	if (first) {
		a->mmap = a->mmap2 = a->mmap_data = 1;
		a->comm = a->comm_exec = 1;
		a->task = 1;
		a->build_id = 1;
	}
	if (ss->user_only)
		a->exclude_kernel = a->exclude_hv = 1;
	se->info.sample_type = a->sample_type;
	se->info.period = a->freq ? 0 : a->sample_period;
	se->info.freq = a->freq ? a->sample_freq : 0;
	se->info.phys_addr = phys;
	se->info.callchain = !ss->opt.no_callchain;
	se->info.precise = a->precise_ip;
}

/* Every field a sample carries is written in the sampled process's context
 * (the fault path, for page faults): leave out what memscope knows without
 * it (fill_left_out). The CPU is the ring's; the event's id is needed only
 * to tell several events apart; a fixed period is the period; a software
 * event's data source is always "not available". Every event of a ring
 * keeps one sample_type, so a field goes only when no event needs it. */
static void leave_out_known_fields(struct sample_source *ss)
{
	uint64_t drop = PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC;

	if (ss->nr_events > 1)
		drop &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	else
		drop |= PERF_SAMPLE_IDENTIFIER;
	for (int e = 0; e < ss->nr_events; e++) {
		const struct perf_event_attr *a = &ss->events[e].ev.attr;

		if (a->freq)
			drop &= ~(uint64_t)PERF_SAMPLE_PERIOD;
		if (a->type != PERF_TYPE_SOFTWARE)
			drop &= ~(uint64_t)PERF_SAMPLE_DATA_SRC;
	}
	for (int e = 0; e < ss->nr_events; e++) {
		ss->events[e].ev.attr.sample_type &= ~drop;
		ss->events[e].info.sample_type = ss->events[e].ev.attr.sample_type;
	}
}

/* Open ev on one (task, cpu); when the kernel refuses an optional part, try
 * without it (build-ids in MMAP2: kernels before 5.12; physical addresses:
 * without CAP_PERFMON or CAP_SYS_ADMIN; precise levels the PMU lacks). */
static int open_one(struct sample_source *ss, struct sample_event *se, pid_t pid, int cpu)
{
	struct perf_event_attr *a = &se->ev.attr;

	for (;;) {
		int fd = perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd >= 0)
			return fd;
		if (errno == EINVAL && a->build_id) {
			a->build_id = 0;
			continue;
		}
		if ((errno == EACCES || errno == EPERM) && (a->sample_type & PERF_SAMPLE_PHYS_ADDR)) {
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_PHYS_ADDR;
			se->info.phys_addr = false;
			se->info.sample_type = a->sample_type;
			add_note(ss, "no physical addresses (they need CAP_PERFMON or CAP_SYS_ADMIN): nodes of "
				     "hardware samples are not known");
			continue;
		}
		if ((errno == EACCES || errno == EPERM) && !a->exclude_kernel) {
			a->exclude_kernel = a->exclude_hv = 1;
			ss->user_only = true;
			add_note(ss, "sampling user space only (perf_event_paranoid >= 2 without CAP_PERFMON)");
			continue;
		}
		if ((errno == EOPNOTSUPP || errno == EINVAL) && a->precise_ip > 0) {
			a->precise_ip--;
			se->info.precise = a->precise_ip;
			continue;
		}
		return -errno;
	}
}

static int map_ring(struct sample_source *ss, int fd, int cpu, struct ms_error *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page * (size_t)(ss->opt.mmap_pages + 1);
	struct ring *r = &ss->rings[ss->nr_rings];
	void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED) {
		ms_error_set(err, "cannot map the sample ring buffer of CPU %d (%zu KiB): %s%s", cpu, size >> 10,
			     strerror(errno),
			     errno == EPERM ? "; raise /proc/sys/kernel/perf_event_mlock_kb or use fewer --mmap-pages"
					    : "");
		return -1;
	}
	r->fd = fd;
	r->cpu = cpu;
	r->page = base;
	r->data = (uint8_t *)base + page;
	r->size = (uint64_t)ss->opt.mmap_pages * page;
	r->map_size = size;
	r->scratch = malloc(65536); /* a record's size is a u16 */
	if (!r->scratch) {
		munmap(base, size);
		ms_error_set(err, "out of memory");
		return -1;
	}
	ss->nr_rings++;
	return 0;
}

static int note_id(struct sample_event *se, int fd)
{
	uint64_t id, *grown;
	int *fds;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -1;
	if (!(grown = realloc(se->ids, sizeof(*grown) * (size_t)(se->nr_ids + 1))))
		return -1;
	se->ids = grown;
	se->ids[se->nr_ids++] = id;
	if (!(fds = realloc(se->fds, sizeof(*fds) * (size_t)(se->nr_fds + 1))))
		return -1;
	se->fds = fds;
	se->fds[se->nr_fds++] = fd;
	return 0;
}

/* Samples the kernel counted but that neither arrived nor were reported
 * lost: a ring still full when sampling stopped holds its loss count until
 * the next write, which never comes. The event's own count says how many
 * samples there were (period mode: one per `period` events). */
static void account_undelivered(struct sample_source *ss)
{
	for (int e = 0; e < ss->nr_events; e++) {
		struct sample_event *se = &ss->events[e];
		uint64_t count = 0, expected;

		if (!se->info.period || se->throttled)
			continue; /* frequency mode and throttling: no count to compare */
		for (int i = 0; i < se->nr_fds; i++) {
			uint64_t v;

			if (read(se->fds[i], &v, sizeof(v)) == sizeof(v))
				count += v;
		}
		expected = count / se->info.period;
		if (expected > se->delivered + se->lost) {
			struct sample_item item = { .kind = SAMPLE_ITEM_LOST, .time_ns = 0, .event = e,
						    .lost_kind = LOST_UNDELIVERED };

			item.lost = expected - se->delivered - se->lost;
			se->lost += item.lost;
			deliver(ss, &item);
		}
	}
}

/* The tasks to open each event on: -1 for system-wide, the command, or every
 * thread of the -p processes (threads they make later inherit). */
static int target_tasks(const struct target *t, pid_t **tasks, int *nr, struct ms_error *err)
{
	*tasks = NULL;
	*nr = 0;
	if (t->kind == TARGET_SYSTEM || t->system_wide || t->kind == TARGET_COMMAND) {
		*tasks = malloc(sizeof(pid_t));
		if (!*tasks) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		(*tasks)[0] = t->kind == TARGET_COMMAND && !t->system_wide ? t->pids[0] : -1;
		*nr = 1;
		return 0;
	}
	for (int p = 0; p < t->nr_pids; p++) {
		pid_t *tids, *grown;
		int n;

		if (target_list_threads(t->pids[p], &tids, &n, err) < 0) {
			free(*tasks);
			return -1;
		}
		grown = realloc(*tasks, sizeof(pid_t) * (size_t)(*nr + n));
		if (!grown) {
			free(tids);
			free(*tasks);
			ms_error_set(err, "out of memory");
			return -1;
		}
		*tasks = grown;
		memcpy(*tasks + *nr, tids, sizeof(pid_t) * (size_t)n);
		*nr += n;
		free(tids);
	}
	return 0;
}

static int open_events(struct sample_source *ss, struct ms_error *err)
{
	const struct topology *topo = &ss->host->topo;
	pid_t *tasks;
	int nr_tasks;
	bool phys = false;

	/* Physical addresses only for events that are not page faults: for
	 * those the kernel walks the page tables in the process's fault path
	 * for an address that does not give the faulting page's node. */
	for (int e = 0; e < ss->nr_events; e++)
		phys |= !ss->events[e].page_faults;
	if (target_tasks(ss->target, &tasks, &nr_tasks, err) < 0)
		return -1;
	ss->rings = calloc((size_t)topo->nr_cpus, sizeof(*ss->rings));
	if (!ss->rings) {
		free(tasks);
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int e = 0; e < ss->nr_events; e++)
		setup_attr(ss, &ss->events[e], e == 0, phys);
	leave_out_known_fields(ss);
	for (int c = 0; c < topo->nr_cpus; c++) {
		int cpu = topo->cpus[c].cpu, ring_fd = -1;

		for (int e = 0; e < ss->nr_events; e++) {
			struct sample_event *se = &ss->events[e];

			for (int t = 0; t < nr_tasks; t++) {
				int fd = open_one(ss, se, tasks[t], cpu);

				if (fd == -ESRCH)
					continue; /* a thread that has exited since it was listed */
				if (fd < 0) {
					perf_open_error(ss->host, &se->ev, -fd,
							tasks[t] < 0 ? OPEN_SYSTEM_WIDE : OPEN_TASK, &tasks[t],
							tasks[t] < 0 ? 0 : 1, 0, err);
					ms_error_prefix(err, "sampling %s", se->info.name);
					free(tasks);
					return -1;
				}
				if (add_fd(ss, fd) < 0 || note_id(se, fd) < 0) {
					close(fd);
					ms_error_set(err, "cannot set up sampling: %s", strerror(errno));
					free(tasks);
					return -1;
				}
				if (ring_fd < 0) {
					ring_fd = fd;
					if (map_ring(ss, fd, cpu, err) < 0) {
						free(tasks);
						return -1;
					}
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) < 0) {
					ms_error_set(err, "cannot share CPU %d's sample ring buffer: %s", cpu,
						     strerror(errno));
					free(tasks);
					return -1;
				}
			}
		}
	}
	free(tasks);
	/* Every event of the rings shares the first event's sample_type. */
	ss->layout.sample_type = ss->events[0].ev.attr.sample_type;
	ss->layout.sample_id_all = true;
	for (int e = 1; e < ss->nr_events; e++)
		if (ss->events[e].ev.attr.sample_type != ss->layout.sample_type) {
			ms_error_set(err, "sampling %s and %s together: the kernel gave them different sample "
				     "fields; sample them in separate runs", ss->events[0].info.name,
				     ss->events[e].info.name);
			return -1;
		}
	return 0;
}

/* ---- Source operations ---- */

static int sample_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct sample_source *ss = src->priv;
	struct series_labels labels;

	series_labels_init(&labels);
	src->first = table->nr;
	for (int e = 0; e < ss->nr_events; e++) {
		char name[600];

		snprintf(name, sizeof(name), "%s%s", SAMPLE_NAME_PREFIX, ss->events[e].info.name);
		if (series_table_add(table, name, "samples", 1.0, SERIES_COUNTER, &labels) < 0)
			goto oom;
		snprintf(name, sizeof(name), "sample.lost:%s", ss->events[e].info.name);
		if (series_table_add(table, name, "samples", 1.0, SERIES_COUNTER, &labels) < 0)
			goto oom;
	}
	src->count = table->nr - src->first;
	return 0;
oom:
	ms_error_set(err, "out of memory");
	return -1;
}

static int sample_watch(struct source *src, struct sampler *s, struct ms_error *err)
{
	struct sample_source *ss = src->priv;
	bool timed = ss->allocs != NULL;

	for (int i = 0; i < ss->nr_rings; i++)
		if (sampler_watch_add(s, ss->rings[i].fd, on_ring_ready, ss, err) < 0)
			return -1;
	if (ss->allocs && sampler_watch_add(s, alloc_probes_fd(ss->allocs), on_allocs_ready, ss, err) < 0)
		return -1;
	for (int e = 0; e < ss->nr_events; e++)
		timed |= ss->events[e].page_faults;
	if (timed) {
		struct itimerspec every = { .it_interval = { 0, READ_INTERVAL_NS }, .it_value = { 0, READ_INTERVAL_NS } };

		ss->read_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (ss->read_timer_fd < 0 || timerfd_settime(ss->read_timer_fd, 0, &every, NULL) < 0) {
			ms_error_set(err, "cannot set the timer that reads samples: %s", strerror(errno));
			return -1;
		}
		return sampler_watch_add(s, ss->read_timer_fd, on_read_timer, ss, err);
	}
	return 0;
}

static void snapshot_map(const struct map_event *m, void *ctx)
{
	struct sample_source *ss = ctx;
	struct sample_item item = { .kind = SAMPLE_ITEM_MAP, .map = m, .event = -1 };

	deliver(ss, &item);
}

/* The mappings and name a process had before sampling started. */
static void snapshot_process(struct sample_source *ss, pid_t pid)
{
	char path[4200], comm[64] = "";
	struct sample_item item = { .kind = SAMPLE_ITEM_TASK, .task = &ss->task, .event = -1 };
	int ret;

	snprintf(path, sizeof(path), "%s/%d/comm", ss->host->roots.proc, (int)pid);
	if (sysfs_read_str(path, comm, sizeof(comm)) == 0) {
		memset(&ss->task, 0, sizeof(ss->task));
		ss->task.kind = TASK_COMM;
		ss->task.pid = ss->task.tid = (uint32_t)pid;
		snprintf(ss->task.comm, sizeof(ss->task.comm), "%s", comm);
		deliver(ss, &item);
	}
	ret = proc_maps_read(ss->host->roots.proc, pid, snapshot_map, ss);
	if (ret < 0 && ret != -ENOENT && ret != -ESRCH) {
		struct sample_item bad = { .kind = SAMPLE_ITEM_MAPS_UNREADABLE, .pid = (uint32_t)pid, .event = -1 };
		char why[300];

		snprintf(why, sizeof(why), "/proc/%d/maps is unreadable (%s)%s", (int)pid, strerror(-ret),
			 ret == -EACCES || ret == -EPERM ? ": another user's process, or one that is not dumpable"
							  : "");
		bad.why = why;
		deliver(ss, &bad);
		/* Found as the run starts, after the notes of open were printed. */
		if (!ss->maps_noted && ss->notes_out)
			fprintf(ss->notes_out, "memscope %s: note: %s (and maybe others): the data objects of such "
				"processes are reported as unknown\n", ss->command_name, why);
		ss->maps_noted = true;
	}
}

static void snapshot_targets(struct sample_source *ss)
{
	if (ss->target->kind == TARGET_COMMAND && !ss->target->system_wide)
		return; /* every mapping comes after exec, as MMAP2 records */
	if (ss->target->kind == TARGET_PIDS && !ss->target->system_wide) {
		for (int p = 0; p < ss->target->nr_pids; p++)
			snapshot_process(ss, ss->target->pids[p]);
		return;
	}
	{
		DIR *d = opendir(ss->host->roots.proc);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);

			if (end != de->d_name && !*end && pid > 0 && pid != getpid())
				snapshot_process(ss, (pid_t)pid);
		}
		if (d)
			closedir(d);
	}
}

static int sample_enable(struct source *src, struct ms_error *err)
{
	struct sample_source *ss = src->priv;

	(void)err;
	/* A command's events start at its exec (enable_on_exec). */
	if (ss->target->kind != TARGET_COMMAND || ss->target->system_wide)
		for (int i = 0; i < ss->nr_fds; i++)
			ioctl(ss->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	ss->enabled = true;
	snapshot_targets(ss);
	return 0;
}

static int sample_disable(struct source *src)
{
	struct sample_source *ss = src->priv;

	for (int i = 0; i < ss->nr_fds; i++)
		ioctl(ss->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	drain_all(ss, true);
	account_undelivered(ss);
	ss->enabled = false;
	return 0;
}

static int sample_sample(struct source *src, struct frame *frame)
{
	struct sample_source *ss = src->priv;

	/* Samples up to this frame are handed over before it. */
	if (ss->enabled)
		drain_all(ss, false);
	for (int e = 0; e < ss->nr_events; e++) {
		struct sample_event *se = &ss->events[e];
		struct sample *taken = &frame->samples[src->first + 2 * e], *lost = taken + 1;

		*taken = (struct sample){ se->delivered - se->delivered_seen, frame->interval_ns, frame->interval_ns,
					  true };
		*lost = (struct sample){ se->lost - se->lost_seen, frame->interval_ns, frame->interval_ns, true };
		se->delivered_seen = se->delivered;
		se->lost_seen = se->lost;
	}
	return 0;
}

static void sample_close(struct source *src)
{
	struct sample_source *ss = src->priv;

	if (!ss)
		return;
	alloc_probes_close(ss->allocs);
	if (ss->read_timer_fd >= 0)
		close(ss->read_timer_fd);
	for (int i = 0; i < ss->nr_rings; i++) {
		munmap(ss->rings[i].page, ss->rings[i].map_size);
		free(ss->rings[i].scratch);
	}
	for (int i = 0; i < ss->nr_fds; i++)
		close(ss->fds[i]);
	for (int e = 0; e < ss->nr_events; e++) {
		event_free(&ss->events[e].ev);
		free(ss->events[e].ids);
		free(ss->events[e].fds);
		free((char *)ss->events[e].info.name);
	}
	free(ss->events);
	free(ss->rings);
	free(ss->fds);
	free(ss->pending);
	free(ss->parsed);
	free(ss->map);
	free(ss->query_addrs);
	free(ss->query_nodes);
	phys_node_map_free(&ss->phys);
	free(ss);
	src->priv = NULL;
}

static void sample_notes(struct source *src, FILE *out, const char *command_name)
{
	struct sample_source *ss = src->priv;

	for (int i = 0; i < ss->nr_notes; i++)
		fprintf(out, "memscope %s: note: %s\n", command_name, ss->notes[i]);
}

static const struct source_ops sample_source_ops = {
	.name = "sample",
	.open = sample_open,
	.enable = sample_enable,
	.disable = sample_disable,
	.sample = sample_sample,
	.close = sample_close,
	.notes = sample_notes,
	.watch = sample_watch,
};

static bool counts_the_same(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	return a->type == b->type && a->config == b->config && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv &&
	       a->exclude_idle == b->exclude_idle && a->exclude_host == b->exclude_host &&
	       a->exclude_guest == b->exclude_guest;
}

static const struct sample_event *sampling_of(const struct source *src, const struct perf_event_attr *attr)
{
	const struct sample_source *ss = src->ops == &sample_source_ops ? src->priv : NULL;

	/* A software event only: a hardware sampling event may be throttled,
	 * and a throttled event stops counting. */
	for (int e = 0; ss && e < ss->nr_events; e++)
		if (ss->events[e].ev.attr.type == PERF_TYPE_SOFTWARE && counts_the_same(&ss->events[e].ev.attr, attr))
			return &ss->events[e];
	return NULL;
}

bool sample_source_samples(const struct source *src, const struct perf_event_attr *attr)
{
	return sampling_of(src, attr) != NULL;
}

int sample_source_count_of(const struct source *src, const struct perf_event_attr *attr, uint64_t *count)
{
	const struct sample_event *se = sampling_of(src, attr);

	*count = 0;
	if (!se || !se->nr_fds)
		return -1;
	for (int i = 0; i < se->nr_fds; i++) {
		uint64_t v;

		if (read(se->fds[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		*count += v;
	}
	return 0;
}

int sample_source_nr_events(const struct source *src)
{
	const struct sample_source *ss = src->ops == &sample_source_ops ? src->priv : NULL;

	return ss ? ss->nr_events : 0;
}

const struct sample_event_info *sample_source_event(const struct source *src, int i)
{
	const struct sample_source *ss = src->priv;

	return &ss->events[i].info;
}

/* ---- The registry kind ---- */

static bool sample_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	return name && !strncmp(name, SAMPLE_NAME_PREFIX, strlen(SAMPLE_NAME_PREFIX));
}

static int sample_check(const struct source_kind *kind, const struct host *host, const char *name,
			struct ms_error *err)
{
	(void)kind;
	(void)host;
	if (!name[strlen(SAMPLE_NAME_PREFIX)]) {
		ms_error_set(err, "--sample needs an event: mem (the memory sampling event of this host), "
			     "page-faults, or a PMU event (memscope list --explain sample.mem)");
		return -1;
	}
	return 0;
}

/* How samples of an event are decoded (the tables of catalog/sampling). */
static const char *decode_of(const struct sample_event *se)
{
	if (se->page_faults)
		return "page-fault";
	if (pmu_is(&se->ev, "ibs_op"))
		return "amd-ibs-op";
	if (pmu_is(&se->ev, "arm_spe"))
		return "arm-spe";
	if (se->ev.attr.type == PERF_TYPE_SOFTWARE || se->ev.attr.type == PERF_TYPE_TRACEPOINT)
		return "";
	return "data-src";   /* the kernel's data source (Intel PEBS, and what it decodes for others) */
}

static int parse_events(struct sample_source *ss, const struct source_request *req, struct ms_error *err)
{
	ss->events = calloc((size_t)req->nr_names, sizeof(*ss->events));
	if (!ss->events) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int i = 0; i < req->nr_names; i++) {
		struct sample_event *se = &ss->events[ss->nr_events];
		const char *spec = req->names[i] + strlen(SAMPLE_NAME_PREFIX);
		char text[1024];
		int precise;

		split_precise(spec, text, sizeof(text), &precise);
		if (event_parse(req->host, text, &se->ev, err) < 0) {
			ms_error_prefix(err, "sampling event '%s' is not available on this host", spec);
			ms_error_append(err, "; counting goes on without samples (memscope list --explain sample.mem "
				      "says which sampling event this host has)");
			return -1;
		}
		if (se->ev.system_wide_only) {
			ms_error_set(err, "sampling event '%s': %s is an uncore PMU, which cannot sample instructions "
				     "and addresses; use a core event (memscope list --explain sample.mem)", spec,
				     se->ev.pmu_name);
			event_free(&se->ev);
			return -1;
		}
		se->ev.attr.precise_ip = (uint64_t)precise;
		se->info.name = strdup(spec);
		se->info.pmu = se->ev.pmu_name ? se->ev.pmu_name : "software";
		se->page_faults = se->ev.attr.type == PERF_TYPE_SOFTWARE &&
				  (se->ev.attr.config == PERF_COUNT_SW_PAGE_FAULTS ||
				   se->ev.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
				   se->ev.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
		se->info.decode = decode_of(se);
		ss->nr_events++;
		if (!se->info.name) {
			ms_error_set(err, "out of memory");
			return -1;
		}
	}
	return 0;
}

static int sample_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			 struct ms_error *err)
{
	struct sample_source *ss = calloc(1, sizeof(*ss));

	memset(src, 0, sizeof(*src));
	src->ops = &sample_source_ops;
	src->priv = ss;
	src->kind = kind;
	if (!ss) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	ss->host = req->host;
	ss->target = req->target;
	ss->read_timer_fd = -1;
	ss->notes_out = req->notes;
	ss->command_name = req->command_name ? req->command_name : "record";
	if (req->sampling)
		ss->opt = *req->sampling;
	ss->hub = ss->opt.hub;
	if (ss->opt.mmap_pages <= 0)
		ss->opt.mmap_pages = SAMPLE_DEFAULT_MMAP_PAGES;
	ss->pending = malloc(sizeof(*ss->pending) * PENDING_MAX);
	ss->parsed = malloc(sizeof(*ss->parsed));
	ss->map = malloc(sizeof(*ss->map));
	ss->query_addrs = malloc(sizeof(*ss->query_addrs) * PENDING_MAX);
	ss->query_nodes = malloc(sizeof(*ss->query_nodes) * PENDING_MAX);
	if (!ss->pending || !ss->parsed || !ss->map || !ss->query_addrs || !ss->query_nodes) {
		ms_error_set(err, "out of memory");
		goto fail;
	}
	if (phys_node_map_load(&ss->phys, &req->host->roots, err) < 0 || parse_events(ss, req, err) < 0 ||
	    open_events(ss, err) < 0)
		goto fail;
	if (ss->opt.alloc) {
		struct ms_error why = { "" };
		char note[sizeof(why.text) + 80];

		ss->allocs = alloc_probes_open(req->host->roots.proc, ss->target,
					       ss->opt.alloc_min ? ss->opt.alloc_min : SAMPLE_DEFAULT_ALLOC_MIN,
					       deliver_alloc, ss, &why);
		if (!ss->allocs) {
			snprintf(note, sizeof(note), "--alloc: %s; sampling goes on without allocation sites",
				 why.text);
			add_note(ss, note);
		}
	}
	return 0;
fail:
	sample_close(src);
	src->ops = NULL;
	return -1;
}

/* Present when this process may sample its own page faults with their
 * addresses, the fallback every kernel has: which hardware event samples
 * memory here, list --explain sample.mem says. */
static bool sample_present(const struct source_kind *kind, const struct host *host, struct ms_error *why)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
					.config = PERF_COUNT_SW_PAGE_FAULTS, .disabled = 1, .sample_period = 1,
					.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR,
					.exclude_kernel = 1, .exclude_hv = 1 };
	(void)kind;
	return perf_event_try_own(host, &attr, "sample even this process's own page faults", why);
}

const struct source_kind sample_source_kind = {
	.name = "sample",
	.description = "perf events in sampling mode: code and data addresses, data source, call chains "
		       "(record --sample)",
	.mode = SOURCE_LIVE,
	.claims = sample_claims,
	.present = sample_present,
	.check = sample_check,
	.create = sample_create,
	/* A sampling event the host lacks leaves the counters counting. */
	.optional = true,
};
