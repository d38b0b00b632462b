#include "sampler/sample_batch.h"

#include <stdlib.h>
#include <string.h>

/* Each item: this header, then its body. */
struct item_head {
	uint8_t kind;
	uint8_t lost_kind;
	uint16_t pad;
	int32_t event;
	uint32_t len;              /* of the body */
	uint32_t pid;
	uint64_t time_ns;
	uint64_t lost;
};

struct sample_batch *sample_batch_new(size_t cap)
{
	struct sample_batch *b = malloc(sizeof(*b) + cap);

	if (!b)
		return NULL;
	atomic_init(&b->refs, 1);
	b->nr_items = b->nr_samples = 0;
	b->len = 0;
	b->cap = cap;
	return b;
}

void sample_batch_ref(struct sample_batch *b)
{
	atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void sample_batch_unref(struct sample_batch *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		free(b);
}

static uint64_t relative(uint64_t t, uint64_t origin)
{
	if (!origin || !t)
		return t;
	return t > origin ? t - origin : 0;
}

int sample_batch_append(struct sample_batch *b, const struct sample_item *item, uint64_t origin_ns)
{
	struct item_head h = { .kind = (uint8_t)item->kind, .lost_kind = (uint8_t)item->lost_kind,
			       .event = item->event, .pid = item->pid, .time_ns = relative(item->time_ns, origin_ns),
			       .lost = item->lost };
	size_t fixed = 0, tail = 0;
	const void *body = NULL, *extra = NULL;
	uint8_t *at;

	switch (item->kind) {
	case SAMPLE_ITEM_SAMPLE:
		/* The fixed part, the call chain it has, its raw bytes. */
		body = item->sample;
		fixed = offsetof(struct event_sample, callchain) + sizeof(uint64_t) * (size_t)item->sample->nr_callchain;
		extra = item->sample->raw;
		tail = item->sample->raw_size;
		break;
	case SAMPLE_ITEM_MAP:
		body = item->map;
		fixed = offsetof(struct map_event, path);
		extra = item->map->path;
		tail = strlen(item->map->path) + 1;
		break;
	case SAMPLE_ITEM_TASK:
		body = item->task;
		fixed = sizeof(*item->task);
		break;
	case SAMPLE_ITEM_ALLOC:
		body = item->alloc;
		fixed = sizeof(*item->alloc);
		break;
	case SAMPLE_ITEM_DAMON_REGION:
		body = item->damon;
		fixed = sizeof(*item->damon);
		break;
	case SAMPLE_ITEM_LOST:
		break;
	case SAMPLE_ITEM_MAPS_UNREADABLE:
		extra = item->why ? item->why : "";
		tail = strlen(extra) + 1;
		break;
	}
	h.len = (uint32_t)(fixed + tail);
	if (b->len + sizeof(h) + h.len > b->cap)
		return -1;
	at = b->data + b->len;
	memcpy(at, &h, sizeof(h));
	if (fixed)
		memcpy(at + sizeof(h), body, fixed);
	if (tail)
		memcpy(at + sizeof(h) + fixed, extra, tail);
	/* Times inside the body, relative like the item's. */
	if (item->kind == SAMPLE_ITEM_SAMPLE) {
		uint64_t t = relative(item->sample->time_ns, origin_ns);

		memcpy(at + sizeof(h) + offsetof(struct event_sample, time_ns), &t, sizeof(t));
	} else if (item->kind == SAMPLE_ITEM_MAP) {
		uint64_t t = relative(item->map->time_ns, origin_ns);

		memcpy(at + sizeof(h) + offsetof(struct map_event, time_ns), &t, sizeof(t));
	} else if (item->kind == SAMPLE_ITEM_TASK) {
		uint64_t t = relative(item->task->time_ns, origin_ns);

		memcpy(at + sizeof(h) + offsetof(struct task_event, time_ns), &t, sizeof(t));
	}
	/* Items stay 8-byte aligned. */
	b->len += (sizeof(h) + h.len + 7) & ~(size_t)7;
	if (b->len > b->cap)
		b->len = b->cap;
	b->nr_items++;
	b->nr_samples += item->kind == SAMPLE_ITEM_SAMPLE;
	return 0;
}

bool sample_batch_next(const struct sample_batch *b, size_t *at, struct sample_item_storage *st,
		       struct sample_item *item)
{
	struct item_head h;
	const uint8_t *body;

	if (*at + sizeof(h) > b->len)
		return false;
	memcpy(&h, b->data + *at, sizeof(h));
	body = b->data + *at + sizeof(h);
	*at += (sizeof(h) + h.len + 7) & ~(size_t)7;
	memset(item, 0, sizeof(*item));
	item->kind = (enum sample_item_kind)h.kind;
	item->lost_kind = (enum sample_lost_kind)h.lost_kind;
	item->event = h.event;
	item->pid = h.pid;
	item->time_ns = h.time_ns;
	item->lost = h.lost;
	switch (item->kind) {
	case SAMPLE_ITEM_SAMPLE: {
		size_t fixed;

		memcpy(&st->sample, body, offsetof(struct event_sample, callchain));
		fixed = offsetof(struct event_sample, callchain) + sizeof(uint64_t) * (size_t)st->sample.nr_callchain;
		memcpy(st->sample.callchain, body + offsetof(struct event_sample, callchain),
		       sizeof(uint64_t) * (size_t)st->sample.nr_callchain);
		memcpy(st->sample.raw, body + fixed, st->sample.raw_size);
		item->sample = &st->sample;
		break;
	}
	case SAMPLE_ITEM_MAP:
		memcpy(&st->map, body, offsetof(struct map_event, path));
		memcpy(st->map.path, body + offsetof(struct map_event, path),
		       h.len - offsetof(struct map_event, path));
		item->map = &st->map;
		break;
	case SAMPLE_ITEM_TASK:
		memcpy(&st->task, body, sizeof(st->task));
		item->task = &st->task;
		break;
	case SAMPLE_ITEM_ALLOC:
		memcpy(&st->alloc, body, sizeof(st->alloc));
		item->alloc = &st->alloc;
		break;
	case SAMPLE_ITEM_DAMON_REGION:
		memcpy(&st->damon, body, sizeof(st->damon));
		item->damon = &st->damon;
		break;
	case SAMPLE_ITEM_LOST:
		break;
	case SAMPLE_ITEM_MAPS_UNREADABLE:
		memcpy(st->why, body, h.len < sizeof(st->why) ? h.len : sizeof(st->why));
		st->why[sizeof(st->why) - 1] = '\0';
		item->why = st->why;
		break;
	}
	return true;
}
