#include "events/sample_record.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static const char *const node_from_names[NODE_FROM_COUNT][2] = {
	[NODE_UNKNOWN] = { "unknown", "its node was not looked up" },
	[NODE_FROM_PHYS] = { "phys", "the node of its physical address" },
	[NODE_FROM_PAGE] = { "page", "the node of its page (move_pages)" },
	[NODE_UNKNOWN_NO_ADDRESS] = { "no-address", "the sample has no data address" },
	[NODE_UNKNOWN_NO_PHYS] = { "no-phys", "the hardware gave no physical address" },
	[NODE_UNKNOWN_EXITED] = { "exited", "the process exited before its page's node was read" },
	[NODE_UNKNOWN_UNMAPPED] = { "unmapped", "the page was unmapped before its node was read" },
	[NODE_UNKNOWN_NOT_PRESENT] = { "not-present", "the page was not present when its node was read" },
	[NODE_UNKNOWN_NOT_ALLOWED] = { "not-allowed", "move_pages may not read the process's pages" },
	[NODE_FROM_NUMA_MAPS] = { "numa-maps", "the node of all of its mapping's pages (/proc/PID/numa_maps)" },
};

const char *sample_node_from_name(enum sample_node_from from)
{
	return from < NODE_FROM_COUNT ? node_from_names[from][0] : "unknown";
}

const char *sample_node_from_text(enum sample_node_from from)
{
	return from < NODE_FROM_COUNT ? node_from_names[from][1] : node_from_names[NODE_UNKNOWN][1];
}

int sample_node_from_parse(const char *name)
{
	for (int i = 0; i < NODE_FROM_COUNT; i++)
		if (!strcmp(node_from_names[i][0], name))
			return i;
	return -1;
}

bool sample_layout_supported(uint64_t sample_type)
{
	/* WEIGHT and WEIGHT_STRUCT are one u64 in the same place: never both. */
	if ((sample_type & PERF_SAMPLE_WEIGHT) && (sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
		return false;
	return (sample_type & ~(uint64_t)SAMPLE_TYPE_KNOWN) == 0;
}

/* A cursor over one record's bytes: every read is bounds-checked. */
struct cursor {
	const uint8_t *p, *end;
	bool short_read;
};

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->short_read = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void take_u32_pair(struct cursor *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = take_u64(c);

	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

static void take_bytes(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n) {
		c->short_read = true;
		c->p = c->end;
		return;
	}
	memcpy(out, c->p, n);
	c->p += n;
}

/* A NUL-terminated string padded to 8 bytes; the rest of the record follows. */
static void take_string(struct cursor *c, char *out, size_t size)
{
	size_t len = strnlen((const char *)c->p, (size_t)(c->end - c->p));

	if (len == (size_t)(c->end - c->p)) {
		c->short_read = true;
		out[0] = '\0';
		c->p = c->end;
		return;
	}
	snprintf(out, size, "%s", (const char *)c->p);
	c->p += (len + 1 + 7) & ~(size_t)7;
	if (c->p > c->end)
		c->p = c->end;
}

/* The sample_id fields at the end of a non-sample record (sample_id_all). */
static void take_sample_id(const struct sample_layout *l, struct cursor *c, struct ring_record *out)
{
	uint64_t t = l->sample_type;
	uint32_t pid, tid, cpu, res;

	if (!l->sample_id_all)
		return;
	if (t & PERF_SAMPLE_TID)
		take_u32_pair(c, &pid, &tid);
	if (t & PERF_SAMPLE_TIME)
		out->time_ns = take_u64(c);
	if (t & PERF_SAMPLE_ID)
		out->id = take_u64(c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(c);
	if (t & PERF_SAMPLE_CPU) {
		take_u32_pair(c, &cpu, &res);
		out->cpu = (int32_t)cpu;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		out->id = take_u64(c);
}

static void parse_callchain(struct cursor *c, struct event_sample *s)
{
	uint64_t nr = take_u64(c);
	bool user = false;

	s->nr_callchain = 0;
	for (uint64_t i = 0; i < nr && !c->short_read; i++) {
		uint64_t ip = take_u64(c);

		/* Markers say whose frames follow; only user frames are kept. */
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			user = ip == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!user || s->nr_callchain == SAMPLE_CALLCHAIN_MAX)
			continue;
		s->callchain[s->nr_callchain++] = ip;
	}
}

static int parse_sample(const struct sample_layout *l, struct cursor *c, uint16_t misc, struct ring_record *out)
{
	struct event_sample *s = out->sample;
	uint64_t t = l->sample_type;
	struct event_sample scratch;
	uint32_t cpu, res;

	if (!s)
		s = &scratch;
	memset(s, 0, offsetof(struct event_sample, callchain));
	s->raw_size = 0;
	s->event = -1;
	s->node = -1;
	s->node_from = NODE_UNKNOWN;
	s->cpu = -1;
	s->user = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = take_u64(c);
	if (t & PERF_SAMPLE_IP)
		s->ip = take_u64(c);
	if (t & PERF_SAMPLE_TID)
		take_u32_pair(c, &s->pid, &s->tid);
	if (t & PERF_SAMPLE_TIME)
		s->time_ns = take_u64(c);
	if (t & PERF_SAMPLE_ADDR)
		s->addr = take_u64(c);
	if (t & PERF_SAMPLE_ID)
		s->id = take_u64(c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(c);
	if (t & PERF_SAMPLE_CPU) {
		take_u32_pair(c, &cpu, &res);
		s->cpu = (int32_t)cpu;
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take_u64(c);
	if (t & PERF_SAMPLE_CALLCHAIN)
		parse_callchain(c, s);
	if (t & PERF_SAMPLE_RAW) {
		uint32_t size = 0;

		/* u32 size, then the data; the pair is padded to 8 bytes. */
		take_bytes(c, &size, sizeof(size));
		if (!c->short_read && (size_t)(c->end - c->p) < size)
			c->short_read = true;
		if (!c->short_read) {
			s->raw_size = size < SAMPLE_RAW_MAX ? size : SAMPLE_RAW_MAX;
			memcpy(s->raw, c->p, s->raw_size);
			c->p += size;
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = take_u64(c);

		/* WEIGHT_STRUCT: var1_dw (the latency) in the low 32 bits. */
		s->weight = (t & PERF_SAMPLE_WEIGHT_STRUCT) ? (w & 0xffffffffu) : w;
	}
	if (t & PERF_SAMPLE_DATA_SRC)
		s->data_src = take_u64(c);
	if (t & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = take_u64(c);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = take_u64(c);
	out->time_ns = s->time_ns;
	out->id = s->id;
	out->cpu = s->cpu;
	return c->short_read ? -1 : 0;
}

static int parse_mmap(const struct sample_layout *l, struct cursor *c, uint16_t misc, bool mmap2,
		      struct ring_record *out)
{
	struct map_event *m = out->map;
	struct map_event scratch;

	if (!m)
		m = &scratch;
	memset(m, 0, offsetof(struct map_event, path));
	take_u32_pair(c, &m->pid, &m->tid);
	m->start = take_u64(c);
	m->len = take_u64(c);
	m->pgoff = take_u64(c);
	if (mmap2) {
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			uint8_t head[4];

			/* u8 build_id_size, u8 reserved[3], u8 build_id[20] */
			take_bytes(c, head, sizeof(head));
			take_bytes(c, m->build_id, sizeof(m->build_id));
			m->build_id_size = head[0] <= sizeof(m->build_id) ? head[0] : 0;
		} else {
			take_u32_pair(c, &m->maj, &m->min);
			m->ino = take_u64(c);
			take_u64(c); /* ino_generation */
		}
		take_u32_pair(c, &m->prot, &m->flags);
		m->executable = (m->prot & PROT_EXEC) != 0;
	} else {
		m->executable = !(misc & PERF_RECORD_MISC_MMAP_DATA);
		m->prot = PROT_READ | (m->executable ? PROT_EXEC : PROT_WRITE);
	}
	take_string(c, m->path, sizeof(m->path));
	take_sample_id(l, c, out);
	m->time_ns = out->time_ns;
	return c->short_read ? -1 : 0;
}

static int parse_task(const struct sample_layout *l, struct cursor *c, enum task_event_kind kind, uint16_t misc,
		      struct ring_record *out)
{
	struct task_event *te = out->task;
	struct task_event scratch;

	if (!te)
		te = &scratch;
	memset(te, 0, sizeof(*te));
	te->kind = kind;
	if (kind == TASK_COMM) {
		take_u32_pair(c, &te->pid, &te->tid);
		take_string(c, te->comm, sizeof(te->comm));
		te->exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
	} else {
		/* u32 pid, ppid, tid, ptid; u64 time */
		take_u32_pair(c, &te->pid, &te->ppid);
		take_u32_pair(c, &te->tid, &te->ptid);
		te->time_ns = take_u64(c);
	}
	take_sample_id(l, c, out);
	if (kind == TASK_COMM)
		te->time_ns = out->time_ns;
	else
		out->time_ns = te->time_ns;
	return c->short_read ? -1 : 0;
}

int ring_record_parse(const struct sample_layout *layout, const struct perf_event_header *hdr,
		      struct ring_record *out)
{
	struct cursor c = { (const uint8_t *)(hdr + 1), (const uint8_t *)hdr + hdr->size, false };

	out->time_ns = 0;
	out->id = 0;
	out->cpu = -1;
	out->lost = 0;
	if (hdr->size < sizeof(*hdr))
		return -1;
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		out->kind = RING_SAMPLE;
		return parse_sample(layout, &c, hdr->misc, out);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		out->kind = RING_MMAP;
		return parse_mmap(layout, &c, hdr->misc, hdr->type == PERF_RECORD_MMAP2, out);
	case PERF_RECORD_COMM:
		out->kind = RING_TASK;
		return parse_task(layout, &c, TASK_COMM, hdr->misc, out);
	case PERF_RECORD_FORK:
		out->kind = RING_TASK;
		return parse_task(layout, &c, TASK_FORK, hdr->misc, out);
	case PERF_RECORD_EXIT:
		out->kind = RING_TASK;
		return parse_task(layout, &c, TASK_EXIT, hdr->misc, out);
	case PERF_RECORD_LOST:
		/* u64 id, u64 lost */
		out->kind = RING_LOST;
		out->id = take_u64(&c);
		out->lost = take_u64(&c);
		take_sample_id(layout, &c, out);
		return c.short_read ? -1 : 0;
	case PERF_RECORD_LOST_SAMPLES:
		out->kind = RING_LOST_SAMPLES;
		out->lost = take_u64(&c);
		take_sample_id(layout, &c, out);
		return c.short_read ? -1 : 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		/* u64 time, u64 id, u64 stream_id */
		out->kind = hdr->type == PERF_RECORD_THROTTLE ? RING_THROTTLE : RING_UNTHROTTLE;
		out->time_ns = take_u64(&c);
		out->id = take_u64(&c);
		return c.short_read ? -1 : 0;
	default:
		out->kind = RING_OTHER;
		return 0;
	}
}
