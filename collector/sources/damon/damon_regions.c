#include "sources/damon/damon_regions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bucket_names[DAMON_RATE_BUCKETS] = { "0%", "1-24%", "25-49%", "50-74%", "75-100%" };

const char *damon_rate_bucket_name(int bucket)
{
	return bucket >= 0 && bucket < DAMON_RATE_BUCKETS ? bucket_names[bucket] : "?";
}

unsigned damon_access_pct(const struct damon_classes *c, uint32_t nr_accesses)
{
	uint64_t samples = c->sample_us ? c->aggr_us / c->sample_us : 0;
	uint64_t pct;

	if (!samples)
		return 0;
	pct = (uint64_t)nr_accesses * 100 / samples;
	return pct > 100 ? 100 : (unsigned)pct;
}

int damon_rate_bucket(unsigned pct)
{
	if (pct == 0)
		return 0;
	if (pct < 25)
		return 1;
	if (pct < 50)
		return 2;
	if (pct < 75)
		return 3;
	return 4;
}

int damon_tally_init(struct damon_tally *t, int nr_nodes, const int *node_ids)
{
	size_t n = nr_nodes > 0 ? (size_t)nr_nodes : 1;

	memset(t, 0, sizeof(*t));
	t->nr_nodes = nr_nodes;
	t->node_ids = calloc(n, sizeof(int));
	t->accessed = calloc(n, sizeof(uint64_t));
	t->hot = calloc(n, sizeof(uint64_t));
	t->cold = calloc(n, sizeof(uint64_t));
	t->rate = calloc(n * DAMON_RATE_BUCKETS, sizeof(uint64_t));
	if (!t->node_ids || !t->accessed || !t->hot || !t->cold || !t->rate) {
		damon_tally_free(t);
		return -1;
	}
	if (nr_nodes > 0)
		memcpy(t->node_ids, node_ids, sizeof(int) * (size_t)nr_nodes);
	return 0;
}

void damon_tally_clear(struct damon_tally *t)
{
	size_t n = (size_t)t->nr_nodes;

	memset(t->accessed, 0, n * sizeof(uint64_t));
	memset(t->hot, 0, n * sizeof(uint64_t));
	memset(t->cold, 0, n * sizeof(uint64_t));
	memset(t->rate, 0, n * DAMON_RATE_BUCKETS * sizeof(uint64_t));
	t->unplaced = 0;
	t->regions = 0;
}

void damon_tally_copy(struct damon_tally *dst, const struct damon_tally *src)
{
	size_t n = (size_t)src->nr_nodes;

	memcpy(dst->accessed, src->accessed, n * sizeof(uint64_t));
	memcpy(dst->hot, src->hot, n * sizeof(uint64_t));
	memcpy(dst->cold, src->cold, n * sizeof(uint64_t));
	memcpy(dst->rate, src->rate, n * DAMON_RATE_BUCKETS * sizeof(uint64_t));
	dst->unplaced = src->unplaced;
	dst->regions = src->regions;
}

void damon_tally_free(struct damon_tally *t)
{
	free(t->node_ids);
	free(t->accessed);
	free(t->hot);
	free(t->cold);
	free(t->rate);
	memset(t, 0, sizeof(*t));
}

int damon_tally_slot(const struct damon_tally *t, int node)
{
	for (int i = 0; i < t->nr_nodes; i++)
		if (t->node_ids[i] == node)
			return i;
	return -1;
}

static void credit(struct damon_tally *t, int node, uint64_t bytes, bool accessed, bool hot, bool cold, int bucket)
{
	int slot = damon_tally_slot(t, node);

	if (slot < 0) {
		t->unplaced += bytes;
		return;
	}
	if (accessed)
		t->accessed[slot] += bytes;
	if (hot)
		t->hot[slot] += bytes;
	if (cold)
		t->cold[slot] += bytes;
	t->rate[slot * DAMON_RATE_BUCKETS + bucket] += bytes;
}

void damon_tally_add(struct damon_tally *t, const struct phys_node_map *map, const struct damon_classes *c,
		     const struct damon_region *r)
{
	uint64_t unit = c->addr_unit ? c->addr_unit : 1;
	uint64_t start = r->start * unit, end = r->end * unit;
	unsigned pct = damon_access_pct(c, r->nr_accesses);
	bool accessed = r->nr_accesses > 0;
	bool hot = pct >= c->hot_pct && accessed;
	bool cold = !accessed && (uint64_t)r->age * c->aggr_us >= c->cold_age_us;
	int bucket = damon_rate_bucket(pct);
	int lo = 0, hi = map->nr;

	t->regions++;
	if (end <= start)
		return;
	if (map->nr == 0) {
		credit(t, t->nr_nodes == 1 ? t->node_ids[0] : -1, end - start, accessed, hot, cold, bucket);
		return;
	}
	/* First range that ends after start. */
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (map->ranges[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int i = lo; start < end; i++) {
		uint64_t upto;

		if (i >= map->nr || map->ranges[i].start >= end) {
			credit(t, -1, end - start, accessed, hot, cold, bucket);   /* beyond the last block */
			break;
		}
		if (map->ranges[i].start > start) {
			credit(t, -1, map->ranges[i].start - start, accessed, hot, cold, bucket);   /* a hole */
			start = map->ranges[i].start;
		}
		upto = map->ranges[i].end < end ? map->ranges[i].end : end;
		credit(t, map->ranges[i].node, upto - start, accessed, hot, cold, bucket);
		start = upto;
	}
}

int damon_stream_init(struct damon_stream *s, int nr_nodes, const int *node_ids)
{
	memset(s, 0, sizeof(*s));
	if (damon_tally_init(&s->building, nr_nodes, node_ids) < 0)
		return -1;
	if (damon_tally_init(&s->latest, nr_nodes, node_ids) < 0) {
		damon_tally_free(&s->building);
		return -1;
	}
	return 0;
}

void damon_stream_free(struct damon_stream *s)
{
	damon_tally_free(&s->building);
	damon_tally_free(&s->latest);
}

uint64_t damon_region_nodes(const struct phys_node_map *map, int nr_nodes, const int *node_ids, uint64_t start,
			    uint64_t end)
{
	uint64_t mask = 0;

	if (map->nr == 0)
		return nr_nodes == 1 && node_ids[0] >= 0 && node_ids[0] < 64 ? 1ull << node_ids[0] : 0;
	for (int i = 0; i < map->nr; i++)
		if (map->ranges[i].start < end && start < map->ranges[i].end && map->ranges[i].node >= 0 &&
		    map->ranges[i].node < 64)
			mask |= 1ull << map->ranges[i].node;
	return mask;
}

void damon_stream_lost(struct damon_stream *s)
{
	if (s->seen)
		s->dropped++;
	s->seen = 0;
	s->expect = 0;
	damon_tally_clear(&s->building);
}

bool damon_stream_add(struct damon_stream *s, const struct phys_node_map *map, const struct damon_classes *c,
		      const struct damon_region *r)
{
	/* A record of another target, or of another count of regions, starts a
	 * new aggregation: the one being built was cut short. */
	if (s->seen && (r->target_id != s->target_id || r->nr_regions != s->expect))
		damon_stream_lost(s);
	if (!s->seen) {
		s->expect = r->nr_regions;
		s->target_id = r->target_id;
	}
	damon_tally_add(&s->building, map, c, r);
	if (++s->seen < s->expect)
		return false;
	damon_tally_copy(&s->latest, &s->building);
	damon_tally_clear(&s->building);
	s->seen = 0;
	s->expect = 0;
	s->aggregations++;
	s->have_latest = true;
	return true;
}

bool damon_stream_fresh(struct damon_stream *s, uint64_t now_ns, uint64_t aggr_us)
{
	if (s->aggregations != s->seen_aggregations) {
		s->seen_aggregations = s->aggregations;
		s->latest_seen_ns = now_ns;
	}
	return s->have_latest && now_ns - s->latest_seen_ns <= 3 * aggr_us * 1000;
}

/* "field:unsigned long start;\toffset:24;\tsize:8;" */
static void layout_field(const char *line, const char *name, int *offset, int *size)
{
	char decl[128];
	const char *semi = strchr(line, ';'), *colon = strstr(line, "field:");
	size_t len, nlen = strlen(name);
	int off, sz;

	if (!colon || !semi || semi < colon)
		return;
	colon += 6;
	len = (size_t)(semi - colon);
	if (len >= sizeof(decl) || len <= nlen)
		return;
	memcpy(decl, colon, len);
	decl[len] = '\0';
	if (strcmp(decl + len - nlen, name) != 0 || decl[len - nlen - 1] != ' ')
		return;
	if (sscanf(semi + 1, " offset:%d; size:%d;", &off, &sz) != 2)
		return;
	*offset = off;
	if (size)
		*size = sz;
}

int damon_record_layout_parse(struct damon_record_layout *l, const char *text)
{
	const char *line = text;
	int size_nr_regions = 0, size_end = 0, size_nr_accesses = 0, size_age = 0;

	memset(l, 0xff, sizeof(*l));
	while (line && *line) {
		layout_field(line, "target_id", &l->target_id, &l->size_target_id);
		layout_field(line, "nr_regions", &l->nr_regions, &size_nr_regions);
		layout_field(line, "start", &l->start, &l->size_start);
		layout_field(line, "end", &l->end, &size_end);
		layout_field(line, "nr_accesses", &l->nr_accesses, &size_nr_accesses);
		layout_field(line, "age", &l->age, &size_age);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (l->target_id < 0 || l->nr_regions < 0 || l->start < 0 || l->end < 0 || l->nr_accesses < 0 || l->age < 0)
		return -1;
	if ((l->size_start != 4 && l->size_start != 8) || size_end != l->size_start ||
	    (l->size_target_id != 4 && l->size_target_id != 8) || size_nr_regions != 4 || size_nr_accesses != 4 ||
	    size_age != 4)
		return -1;
	return 0;
}

static uint64_t load(const unsigned char *p, int size)
{
	if (size == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

bool damon_record_decode(const struct damon_record_layout *l, const void *raw, size_t size, struct damon_region *out)
{
	const unsigned char *p = raw;
	int need = l->age + 4;

	if (l->end + l->size_start > need)
		need = l->end + l->size_start;
	if (l->nr_accesses + 4 > need)
		need = l->nr_accesses + 4;
	if ((size_t)need > size)
		return false;
	out->target_id = load(p + l->target_id, l->size_target_id);
	out->nr_regions = (uint32_t)load(p + l->nr_regions, 4);
	out->start = load(p + l->start, l->size_start);
	out->end = load(p + l->end, l->size_start);
	out->nr_accesses = (uint32_t)load(p + l->nr_accesses, 4);
	out->age = (uint32_t)load(p + l->age, 4);
	return true;
}
