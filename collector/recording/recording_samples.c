#include "recording/recording_samples.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording/recording.h"
#include "util/number_format.h"
#include "util/array.h"

/* ---- Writing ---- */

/* Addresses and bit fields are hex strings: JSON integers stop at 2^63 (a
 * kernel address is above). */
static int put_hex(char *buf, size_t size, uint64_t v)
{
	return snprintf(buf, size, "\"%" PRIx64 "\"", v);
}

/* A JSON string, escaped by jansson (paths may hold any byte). */
static int put_string(char *buf, size_t size, const char *s)
{
	json_t *str = json_string(s);
	char *text = str ? json_dumps(str, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
	int n;

	if (!text)
		text = strdup("\"?\"");
	n = snprintf(buf, size, "%s", text ? text : "\"\"");
	free(text);
	json_decref(str);
	return n;
}

#define APPEND(...) do { \
	int n_ = snprintf(buf + len, size > len ? size - len : 0, __VA_ARGS__); \
	len += n_ > 0 ? (size_t)n_ : 0; \
} while (0)
#define APPEND_WITH(fn, ...) do { \
	int n_ = fn(buf + len, size > len ? size - len : 0, __VA_ARGS__); \
	len += n_ > 0 ? (size_t)n_ : 0; \
} while (0)

/* Samples come by the hundred thousand: their lines are written by hand, not
 * through printf. */
struct line_buf {
	char *p, *end;
};

static void put_char(struct line_buf *b, char c)
{
	if (b->p < b->end)
		*b->p++ = c;
}

static void put_text(struct line_buf *b, const char *s)
{
	while (*s)
		put_char(b, *s++);
}

static void put_dec(struct line_buf *b, uint64_t v)
{
	char digits[24];

	number_u64(digits, sizeof(digits), v);
	put_text(b, digits);
}

static void put_int(struct line_buf *b, int64_t v)
{
	if (v < 0) {
		put_char(b, '-');
		put_dec(b, (uint64_t)(-(v + 1)) + 1);
	} else {
		put_dec(b, (uint64_t)v);
	}
}

/* A hex string, quoted, without 0x. */
static void put_hex_string(struct line_buf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char digits[16];
	int n = 0;

	do {
		digits[n++] = hex[v & 0xf];
		v >>= 4;
	} while (v);
	put_char(b, '"');
	while (n)
		put_char(b, digits[--n]);
	put_char(b, '"');
}

static size_t format_sample(const struct event_sample *s, uint64_t t, char *buf, size_t size)
{
	struct line_buf b = { buf, buf + size };

	put_text(&b, "{\"s\":[");
	put_dec(&b, t);
	put_char(&b, ',');
	put_dec(&b, s->pid);
	put_char(&b, ',');
	put_dec(&b, s->tid);
	put_char(&b, ',');
	put_int(&b, s->cpu);
	put_char(&b, ',');
	put_int(&b, s->event);
	put_char(&b, ',');
	put_hex_string(&b, s->ip);
	put_char(&b, ',');
	put_hex_string(&b, s->addr);
	put_char(&b, ',');
	put_int(&b, s->node);
	put_text(&b, ",\"");
	put_text(&b, sample_node_from_name(s->node_from));
	put_text(&b, "\",");
	put_hex_string(&b, s->data_src);
	put_char(&b, ',');
	put_hex_string(&b, s->phys_addr);
	put_char(&b, ',');
	put_dec(&b, s->weight);
	put_char(&b, ',');
	put_dec(&b, s->period);
	put_char(&b, ',');
	put_char(&b, s->user ? '1' : '0');
	put_char(&b, ']');
	if (s->nr_callchain) {
		put_text(&b, ",\"c\":[");
		for (int i = 0; i < s->nr_callchain; i++) {
			if (i)
				put_char(&b, ',');
			put_hex_string(&b, s->callchain[i]);
		}
		put_char(&b, ']');
	}
	if (s->raw_size) {
		static const char hex[] = "0123456789abcdef";

		put_text(&b, ",\"r\":\"");
		for (uint32_t i = 0; i < s->raw_size; i++) {
			put_char(&b, hex[s->raw[i] >> 4]);
			put_char(&b, hex[s->raw[i] & 0xf]);
		}
		put_char(&b, '"');
	}
	put_char(&b, '}');
	/* Full: one past the end, so the caller sees the line did not fit. */
	return b.p < b.end ? (size_t)(b.p - buf) : size;
}

static size_t format_map(const struct map_event *m, uint64_t t, char *buf, size_t size)
{
	size_t len = 0;
	char id[2 * sizeof(m->build_id) + 1];

	APPEND("{\"map\":[%" PRIu64 ",%u,%u,", t, m->pid, m->tid);
	APPEND_WITH(put_hex, m->start);
	APPEND(",");
	APPEND_WITH(put_hex, m->len);
	APPEND(",");
	APPEND_WITH(put_hex, m->pgoff);
	APPEND(",%u,%u,", m->prot, m->flags);
	APPEND_WITH(put_string, m->path);
	APPEND("]");
	if (m->build_id_size) {
		for (int i = 0; i < m->build_id_size; i++)
			sprintf(id + 2 * i, "%02x", m->build_id[i]);
		APPEND(",\"b\":\"%s\"", id);
	}
	APPEND("}");
	return len;
}

static size_t format_task(const struct task_event *te, uint64_t t, char *buf, size_t size)
{
	size_t len = 0;

	if (te->kind == TASK_COMM) {
		APPEND("{\"comm\":[%" PRIu64 ",%u,%u,", t, te->pid, te->tid);
		APPEND_WITH(put_string, te->comm);
		APPEND("]%s}", te->exec ? ",\"exec\":true" : "");
	} else {
		APPEND("{\"%s\":[%" PRIu64 ",%u,%u,%u,%u]}", te->kind == TASK_FORK ? "fork" : "exit", t, te->pid,
		       te->ppid, te->tid, te->ptid);
	}
	return len;
}

static const char *const lost_names[] = {
	[LOST_RING_FULL] = "ring-full",
	[LOST_BY_KERNEL] = "kernel",
	[LOST_THROTTLED] = "throttled",
	[LOST_UNDELIVERED] = "undelivered",
	[LOST_BEHIND] = "behind",
};

int recording_writer_sample_item(struct recording_writer *w, const struct sample_item *item, struct ms_error *err)
{
	char buf[8192];
	size_t len = 0, size = sizeof(buf);
	uint64_t origin = recording_writer_origin(w);
	/* Mappings read before the start keep time 0. */
	uint64_t t = item->time_ns > origin ? item->time_ns - origin : 0;

	switch (item->kind) {
	case SAMPLE_ITEM_SAMPLE:
		len = format_sample(item->sample, t, buf, size);
		break;
	case SAMPLE_ITEM_MAP:
		len = format_map(item->map, t, buf, size);
		break;
	case SAMPLE_ITEM_TASK:
		len = format_task(item->task, t, buf, size);
		break;
	case SAMPLE_ITEM_LOST:
		APPEND("{\"lost\":[%" PRIu64 ",%d,%" PRIu64 "],\"why\":\"%s\"}", t, item->event, item->lost,
		       lost_names[item->lost_kind]);
		break;
	case SAMPLE_ITEM_ALLOC:
		if (item->alloc->free)
			APPEND("{\"free\":[%" PRIu64 ",%u,%u,\"%" PRIx64 "\"]}", t, item->alloc->pid, item->alloc->tid,
			       item->alloc->addr);
		else
			APPEND("{\"alloc\":[%" PRIu64 ",%u,%u,\"%" PRIx64 "\",%" PRIu64 ",\"%" PRIx64 "\"]}", t,
			       item->alloc->pid, item->alloc->tid, item->alloc->addr, item->alloc->size,
			       item->alloc->caller);
		break;
	case SAMPLE_ITEM_DAMON_REGION: {
		const struct damon_region_event *d = item->damon;
		const char *sep = "";

		APPEND("{\"damon\":[%" PRIu64 ",\"%" PRIx64 "\",\"%" PRIx64 "\",%u,%u,%u,%u],\"nodes\":[", t, d->start,
		       d->end, d->nr_accesses, d->age, d->samples, d->nr_regions);
		for (int n = 0; n < 64; n++)
			if (d->nodes >> n & 1) {
				APPEND("%s%d", sep, n);
				sep = ",";
			}
		APPEND("]");
		if (d->pid)
			APPEND(",\"pid\":%u", d->pid);
		if (d->placed)
			APPEND(",\"placed\":true");
		APPEND("}");
		break;
	}
	case SAMPLE_ITEM_MAPS_UNREADABLE:
		APPEND("{\"maps_unreadable\":%u,\"why\":", item->pid);
		APPEND_WITH(put_string, item->why ? item->why : "");
		APPEND("}");
		break;
	}
	if (len >= size) {
		ms_error_set(err, "internal error: a sample record is longer than %zu bytes", size);
		return -1;
	}
	return recording_writer_append(w, buf, len, item->kind == SAMPLE_ITEM_SAMPLE, err);
}

/* ---- Reading ---- */

struct line_ctx {
	const char *path;
	int line;
	struct ms_error *err;
};

static int fail(const struct line_ctx *c, const char *what, const char *expected)
{
	ms_error_set(c->err, "%s:%d: %s: expected %s", c->path, c->line, what, expected);
	return -1;
}

static int array_of(const struct line_ctx *c, const json_t *rec, const char *key, size_t n, json_t **out)
{
	json_t *a = json_object_get(rec, key);
	char what[64];

	snprintf(what, sizeof(what), "\"%s\" record", key);
	if (!json_is_array(a) || json_array_size(a) != n) {
		char expected[64];

		snprintf(expected, sizeof(expected), "an array of %zu values", n);
		return fail(c, what, expected);
	}
	*out = a;
	return 0;
}

static int get_int(const struct line_ctx *c, const json_t *a, size_t i, const char *name, int64_t lo, int64_t hi,
		   int64_t *out)
{
	json_t *v = json_array_get(a, i);

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		char expected[96];

		snprintf(expected, sizeof(expected), "an integer from %" PRId64 " to %" PRId64, lo, hi);
		return fail(c, name, expected);
	}
	*out = json_integer_value(v);
	return 0;
}

static int hex_value(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || strlen(s) > 16)
		return -1;
	*out = strtoull(s, &end, 16);
	return *end ? -1 : 0;
}

static int get_hex(const struct line_ctx *c, const json_t *v, const char *name, uint64_t *out)
{
	if (!json_is_string(v) || hex_value(json_string_value(v), out) < 0)
		return fail(c, name, "a hexadecimal string of at most 16 digits");
	return 0;
}

static int read_sample(const struct line_ctx *c, const json_t *rec, struct sample_item_storage *st,
		       struct sample_item *item)
{
	struct event_sample *s = &st->sample;
	json_t *a, *chain = json_object_get(rec, "c"), *raw = json_object_get(rec, "r");
	int64_t v[6];
	int from;

	if (array_of(c, rec, "s", 14, &a) < 0)
		return -1;
	memset(s, 0, offsetof(struct event_sample, callchain));
	s->raw_size = 0;
	if (get_int(c, a, 0, "sample time", 0, INT64_MAX, &v[0]) < 0 ||
	    get_int(c, a, 1, "sample pid", 0, UINT32_MAX, &v[1]) < 0 ||
	    get_int(c, a, 2, "sample tid", 0, UINT32_MAX, &v[2]) < 0 ||
	    get_int(c, a, 3, "sample cpu", -1, INT32_MAX, &v[3]) < 0 ||
	    get_int(c, a, 4, "sample event", -1, 65535, &v[4]) < 0 ||
	    get_hex(c, json_array_get(a, 5), "sample ip", &s->ip) < 0 ||
	    get_hex(c, json_array_get(a, 6), "sample address", &s->addr) < 0 ||
	    get_int(c, a, 7, "sample node", -1, 65535, &v[5]) < 0 ||
	    get_hex(c, json_array_get(a, 9), "sample data source", &s->data_src) < 0 ||
	    get_hex(c, json_array_get(a, 10), "sample physical address", &s->phys_addr) < 0)
		return -1;
	s->time_ns = (uint64_t)v[0];
	s->pid = (uint32_t)v[1];
	s->tid = (uint32_t)v[2];
	s->cpu = (int32_t)v[3];
	s->event = (int)v[4];
	s->node = (int)v[5];
	if (!json_is_string(json_array_get(a, 8)) ||
	    (from = sample_node_from_parse(json_string_value(json_array_get(a, 8)))) < 0)
		return fail(c, "sample node source", "\"page\", \"phys\" or a reason such as \"exited\"");
	s->node_from = (enum sample_node_from)from;
	if (get_int(c, a, 11, "sample weight", 0, INT64_MAX, &v[0]) < 0 ||
	    get_int(c, a, 12, "sample period", 0, INT64_MAX, &v[1]) < 0 ||
	    get_int(c, a, 13, "sample user flag", 0, 1, &v[2]) < 0)
		return -1;
	s->weight = (uint64_t)v[0];
	s->period = (uint64_t)v[1];
	s->user = v[2] == 1;
	if (chain) {
		if (!json_is_array(chain) || json_array_size(chain) > SAMPLE_CALLCHAIN_MAX)
			return fail(c, "sample call chain \"c\"", "an array of at most 32 addresses");
		for (size_t i = 0; i < json_array_size(chain); i++)
			if (get_hex(c, json_array_get(chain, i), "call chain address", &s->callchain[i]) < 0)
				return -1;
		s->nr_callchain = (int)json_array_size(chain);
	}
	if (raw) {
		const char *hex = json_string_value(raw);
		size_t n = hex ? strlen(hex) : 1;

		if (!hex || n % 2 || n / 2 > SAMPLE_RAW_MAX)
			return fail(c, "sample raw data \"r\"", "a hexadecimal string of at most 128 bytes");
		for (size_t i = 0; i < n / 2; i++) {
			unsigned byte;

			if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
				return fail(c, "sample raw data \"r\"", "hexadecimal digits");
			s->raw[i] = (uint8_t)byte;
		}
		s->raw_size = (uint32_t)(n / 2);
	}
	item->kind = SAMPLE_ITEM_SAMPLE;
	item->time_ns = s->time_ns;
	item->sample = s;
	return 1;
}

static int read_map(const struct line_ctx *c, const json_t *rec, struct sample_item_storage *st,
		    struct sample_item *item)
{
	struct map_event *m = &st->map;
	json_t *a, *id = json_object_get(rec, "b");
	int64_t v[5];

	if (array_of(c, rec, "map", 9, &a) < 0)
		return -1;
	memset(m, 0, sizeof(*m));
	if (get_int(c, a, 0, "map time", 0, INT64_MAX, &v[0]) < 0 ||
	    get_int(c, a, 1, "map pid", 0, UINT32_MAX, &v[1]) < 0 ||
	    get_int(c, a, 2, "map tid", 0, UINT32_MAX, &v[2]) < 0 ||
	    get_hex(c, json_array_get(a, 3), "map start", &m->start) < 0 ||
	    get_hex(c, json_array_get(a, 4), "map length", &m->len) < 0 ||
	    get_hex(c, json_array_get(a, 5), "map offset", &m->pgoff) < 0 ||
	    get_int(c, a, 6, "map protection", 0, UINT32_MAX, &v[3]) < 0 ||
	    get_int(c, a, 7, "map flags", 0, UINT32_MAX, &v[4]) < 0)
		return -1;
	if (!json_is_string(json_array_get(a, 8)))
		return fail(c, "map path", "a string");
	m->time_ns = (uint64_t)v[0];
	m->pid = (uint32_t)v[1];
	m->tid = (uint32_t)v[2];
	m->prot = (uint32_t)v[3];
	m->flags = (uint32_t)v[4];
	m->executable = (m->prot & 4) != 0;
	snprintf(m->path, sizeof(m->path), "%s", json_string_value(json_array_get(a, 8)));
	if (id) {
		const char *hex = json_string_value(id);
		size_t n = hex ? strlen(hex) : 1;

		if (!hex || n % 2 || n / 2 > sizeof(m->build_id))
			return fail(c, "map build-id \"b\"", "a hexadecimal string of at most 20 bytes");
		for (size_t i = 0; i < n / 2; i++) {
			unsigned byte;

			if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
				return fail(c, "map build-id \"b\"", "hexadecimal digits");
			m->build_id[i] = (uint8_t)byte;
		}
		m->build_id_size = (uint8_t)(n / 2);
	}
	item->kind = SAMPLE_ITEM_MAP;
	item->time_ns = m->time_ns;
	item->map = m;
	return 1;
}

static int read_task(const struct line_ctx *c, const json_t *rec, const char *key, struct sample_item_storage *st,
		     struct sample_item *item)
{
	struct task_event *te = &st->task;
	json_t *a;
	int64_t v[5];
	bool comm = !strcmp(key, "comm");

	if (array_of(c, rec, key, comm ? 4 : 5, &a) < 0)
		return -1;
	memset(te, 0, sizeof(*te));
	if (get_int(c, a, 0, "task time", 0, INT64_MAX, &v[0]) < 0 ||
	    get_int(c, a, 1, "task pid", 0, UINT32_MAX, &v[1]) < 0)
		return -1;
	te->time_ns = (uint64_t)v[0];
	te->pid = (uint32_t)v[1];
	if (comm) {
		if (get_int(c, a, 2, "task tid", 0, UINT32_MAX, &v[2]) < 0)
			return -1;
		if (!json_is_string(json_array_get(a, 3)))
			return fail(c, "comm name", "a string");
		te->kind = TASK_COMM;
		te->tid = (uint32_t)v[2];
		snprintf(te->comm, sizeof(te->comm), "%s", json_string_value(json_array_get(a, 3)));
		te->exec = json_is_true(json_object_get(rec, "exec"));
	} else {
		if (get_int(c, a, 2, "task parent pid", 0, UINT32_MAX, &v[2]) < 0 ||
		    get_int(c, a, 3, "task tid", 0, UINT32_MAX, &v[3]) < 0 ||
		    get_int(c, a, 4, "task parent tid", 0, UINT32_MAX, &v[4]) < 0)
			return -1;
		te->kind = !strcmp(key, "fork") ? TASK_FORK : TASK_EXIT;
		te->ppid = (uint32_t)v[2];
		te->tid = (uint32_t)v[3];
		te->ptid = (uint32_t)v[4];
	}
	item->kind = SAMPLE_ITEM_TASK;
	item->time_ns = te->time_ns;
	item->task = te;
	return 1;
}

static int read_lost(const struct line_ctx *c, const json_t *rec, struct sample_item *item)
{
	const char *why = json_string_value(json_object_get(rec, "why"));
	json_t *a;
	int64_t v[3];
	int kind = -1;

	if (array_of(c, rec, "lost", 3, &a) < 0 || get_int(c, a, 0, "lost time", 0, INT64_MAX, &v[0]) < 0 ||
	    get_int(c, a, 1, "lost event", -1, 65535, &v[1]) < 0 ||
	    get_int(c, a, 2, "lost count", 0, INT64_MAX, &v[2]) < 0)
		return -1;
	for (int i = 0; why && i < (int)(ARRAY_SIZE(lost_names)); i++)
		if (!strcmp(why, lost_names[i]))
			kind = i;
	if (kind < 0)
		return fail(c, "lost \"why\"", "\"ring-full\", \"kernel\", \"throttled\", \"undelivered\" or \"behind\"");
	item->kind = SAMPLE_ITEM_LOST;
	item->time_ns = (uint64_t)v[0];
	item->event = (int)v[1];
	item->lost = (uint64_t)v[2];
	item->lost_kind = (enum sample_lost_kind)kind;
	return 1;
}

static int read_alloc(const struct line_ctx *c, const json_t *rec, bool is_free, struct sample_item_storage *st,
		      struct sample_item *item)
{
	struct alloc_event *ae = &st->alloc;
	json_t *a;
	int64_t v;

	memset(ae, 0, sizeof(*ae));
	if (array_of(c, rec, is_free ? "free" : "alloc", is_free ? 4 : 6, &a) < 0)
		return -1;
	if (get_int(c, a, 0, "t", 0, INT64_MAX, &v) < 0)
		return -1;
	item->time_ns = (uint64_t)v;
	if (get_int(c, a, 1, "pid", 0, UINT32_MAX, &v) < 0)
		return -1;
	ae->pid = (uint32_t)v;
	if (get_int(c, a, 2, "tid", 0, UINT32_MAX, &v) < 0)
		return -1;
	ae->tid = (uint32_t)v;
	if (get_hex(c, json_array_get(a, 3), "address", &ae->addr) < 0)
		return -1;
	if (!is_free) {
		if (get_int(c, a, 4, "size", 0, INT64_MAX, &v) < 0 ||
		    get_hex(c, json_array_get(a, 5), "caller", &ae->caller) < 0)
			return -1;
		ae->size = (uint64_t)v;
	}
	ae->free = is_free;
	item->kind = SAMPLE_ITEM_ALLOC;
	item->alloc = ae;
	return 1;
}

/* {"damon":[t,start,end,nr_accesses,age,samples,nr_regions],"nodes":[...]}, and
 * "pid":P for a virtual region of process P (version 4), with "placed":true
 * when its pages were placed in physical regions (version 5). */
static int read_damon(const struct line_ctx *c, const json_t *rec, struct sample_item_storage *st,
		      struct sample_item *item)
{
	struct damon_region_event *d = &st->damon;
	json_t *a, *nodes = json_object_get(rec, "nodes"), *pid = json_object_get(rec, "pid"), *n;
	json_t *placed = json_object_get(rec, "placed");
	int64_t v[5];
	size_t i;

	memset(d, 0, sizeof(*d));
	if (array_of(c, rec, "damon", 7, &a) < 0 || get_int(c, a, 0, "damon time", 0, INT64_MAX, &v[0]) < 0 ||
	    get_hex(c, json_array_get(a, 1), "damon start", &d->start) < 0 ||
	    get_hex(c, json_array_get(a, 2), "damon end", &d->end) < 0 ||
	    get_int(c, a, 3, "damon nr_accesses", 0, UINT32_MAX, &v[1]) < 0 ||
	    get_int(c, a, 4, "damon age", 0, UINT32_MAX, &v[2]) < 0 ||
	    get_int(c, a, 5, "damon samples", 1, UINT32_MAX, &v[3]) < 0 ||
	    get_int(c, a, 6, "damon nr_regions", 1, UINT32_MAX, &v[4]) < 0)
		return -1;
	if (d->end <= d->start)
		return fail(c, "damon end", "an address above the region's start");
	if (v[1] > v[3])
		return fail(c, "damon nr_accesses", "at most the aggregation's samples (the 6th value)");
	if (!json_is_array(nodes))
		return fail(c, "damon \"nodes\"", "an array of node ids");
	json_array_foreach(nodes, i, n) {
		if (!json_is_integer(n) || json_integer_value(n) < 0 || json_integer_value(n) > 63)
			return fail(c, "damon \"nodes\" entry", "a node id from 0 to 63");
		d->nodes |= 1ull << json_integer_value(n);
	}
	if (pid && (!json_is_integer(pid) || json_integer_value(pid) < 1 || json_integer_value(pid) > INT32_MAX))
		return fail(c, "damon \"pid\"", "a process id (a positive integer)");
	d->pid = pid ? (uint32_t)json_integer_value(pid) : 0;
	if (placed && (!json_is_true(placed) || !pid))
		return fail(c, "damon \"placed\"", "true, on a region with a \"pid\"");
	d->placed = placed != NULL;
	d->nr_accesses = (uint32_t)v[1];
	d->age = (uint32_t)v[2];
	d->samples = (uint32_t)v[3];
	d->nr_regions = (uint32_t)v[4];
	item->kind = SAMPLE_ITEM_DAMON_REGION;
	item->time_ns = (uint64_t)v[0];
	item->damon = d;
	return 1;
}

int recording_sample_item_read(const char *path, int line, const json_t *rec, struct sample_item_storage *st,
			       struct sample_item *item, struct ms_error *err)
{
	struct line_ctx c = { path, line, err };
	json_t *v;

	memset(item, 0, sizeof(*item));
	item->event = -1;
	if (json_object_get(rec, "s"))
		return read_sample(&c, rec, st, item);
	if (json_object_get(rec, "map"))
		return read_map(&c, rec, st, item);
	if (json_object_get(rec, "comm"))
		return read_task(&c, rec, "comm", st, item);
	if (json_object_get(rec, "fork"))
		return read_task(&c, rec, "fork", st, item);
	if (json_object_get(rec, "exit"))
		return read_task(&c, rec, "exit", st, item);
	if (json_object_get(rec, "lost"))
		return read_lost(&c, rec, item);
	if (json_object_get(rec, "alloc"))
		return read_alloc(&c, rec, false, st, item);
	if (json_object_get(rec, "free"))
		return read_alloc(&c, rec, true, st, item);
	if (json_object_get(rec, "damon"))
		return read_damon(&c, rec, st, item);
	if ((v = json_object_get(rec, "maps_unreadable"))) {
		const char *why = json_string_value(json_object_get(rec, "why"));

		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX || !why)
			return fail(&c, "\"maps_unreadable\" record", "a process id and a \"why\" text");
		snprintf(st->why, sizeof(st->why), "%s", why);
		item->kind = SAMPLE_ITEM_MAPS_UNREADABLE;
		item->pid = (uint32_t)json_integer_value(v);
		item->why = st->why;
		return 1;
	}
	return 0;
}
