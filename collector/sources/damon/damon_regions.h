/* DAMON regions into bytes per NUMA node: what one aggregation of a
 * physical-address kdamond says about each node's memory. A region's
 * addresses are split over the nodes whose memory blocks they cover
 * (host/page_node.h); its access rate is nr_accesses samples out of
 * aggregation / sample interval, and its age counts the aggregations it kept
 * that rate. Pure arithmetic: the source feeds it tracepoint records, the
 * tests feed it regions written by hand. */
#ifndef MEMSCOPE_DAMON_REGIONS_H
#define MEMSCOPE_DAMON_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/page_node.h"

/* Access-rate buckets of the histogram (damon.access_rate_bytes). */
enum { DAMON_RATE_BUCKETS = 5 };
/* Label of bucket b: "0%", "1-24%", "25-49%", "50-74%", "75-100%". */
const char *damon_rate_bucket_name(int bucket);

/* One record of damon:damon_aggregated. */
struct damon_region {
	uint64_t target_id;
	uint32_t nr_regions;   /* regions of this target in the aggregation */
	uint64_t start, end;   /* in units of the context's addr_unit */
	uint32_t nr_accesses;  /* samples (of aggr/sample) that found the region accessed */
	uint32_t age;          /* aggregations it kept this access pattern */
};

/* What makes a region hot or cold (options --damon-hot and --damon-cold-age). */
struct damon_classes {
	uint64_t sample_us, aggr_us;    /* the kdamond's intervals */
	uint64_t addr_unit;             /* bytes per address unit */
	unsigned hot_pct;               /* hot: accessed in at least this share of samples */
	uint64_t cold_age_us;           /* cold: not accessed for at least this long */
};

#define DAMON_DEFAULT_HOT_PCT 50
#define DAMON_DEFAULT_COLD_AGE_US 60000000ull

/* The access rate of a region in percent of its aggregation's samples. */
unsigned damon_access_pct(const struct damon_classes *c, uint32_t nr_accesses);
int damon_rate_bucket(unsigned pct);

/* Bytes per node of one aggregation. Slot i is node node_ids[i]. */
struct damon_tally {
	int nr_nodes;
	int *node_ids;
	uint64_t *accessed, *hot, *cold;
	uint64_t *rate;        /* nr_nodes x DAMON_RATE_BUCKETS */
	uint64_t unplaced;     /* bytes in no node's memory blocks */
	uint64_t regions;
};

int damon_tally_init(struct damon_tally *t, int nr_nodes, const int *node_ids);
void damon_tally_clear(struct damon_tally *t);
void damon_tally_copy(struct damon_tally *dst, const struct damon_tally *src);
void damon_tally_free(struct damon_tally *t);
/* Add region r, split over the nodes of map (a map without ranges and a
 * single node: that node holds all memory). */
void damon_tally_add(struct damon_tally *t, const struct phys_node_map *map, const struct damon_classes *c,
		     const struct damon_region *r);
/* The nodes whose memory [start, end) (bytes) covers, as a bit mask (bit n:
 * node n; nodes above 63 are left out). A map without ranges and a single
 * node: that node. */
uint64_t damon_region_nodes(const struct phys_node_map *map, int nr_nodes, const int *node_ids, uint64_t start,
			    uint64_t end);
/* The slot of node, or -1. */
int damon_tally_slot(const struct damon_tally *t, int node);

/* Records in the order the kdamond emits them, made into whole
 * aggregations: `latest` is the last complete one. */
struct damon_stream {
	struct damon_tally building, latest;
	uint32_t expect, seen;         /* regions of the aggregation being built */
	uint64_t target_id;
	uint64_t aggregations;         /* complete ones since the start */
	uint64_t dropped;              /* aggregations cut by lost records */
	bool have_latest;
	uint64_t seen_aggregations;    /* damon_stream_fresh: the count at its last call */
	uint64_t latest_seen_ns;       /* when a call first saw the latest aggregation */
};

int damon_stream_init(struct damon_stream *s, int nr_nodes, const int *node_ids);
void damon_stream_free(struct damon_stream *s);
/* One record; true when it completed an aggregation. */
bool damon_stream_add(struct damon_stream *s, const struct phys_node_map *map, const struct damon_classes *c,
		      const struct damon_region *r);
/* Records were lost: the aggregation being built is dropped. */
void damon_stream_lost(struct damon_stream *s);
/* Is the latest aggregation one to show at now_ns (CLOCK_MONOTONIC)? Not
 * when none is complete, nor when no new one has come for three aggregation
 * intervals (the kdamond stopped or was restarted as another thread): its
 * values would be stale, not the memory as it is. */
bool damon_stream_fresh(struct damon_stream *s, uint64_t now_ns, uint64_t aggr_us);

/* Field offsets of damon:damon_aggregated's raw record (tracefs format). */
struct damon_record_layout {
	int target_id, nr_regions, start, end, nr_accesses, age;   /* offsets; -1 when missing */
	int size_target_id, size_start;                            /* 4 or 8 (unsigned long) */
};

/* Parse the tracefs format text; -1 when a field is missing. */
int damon_record_layout_parse(struct damon_record_layout *l, const char *format_text);
/* Decode one raw record; false when it is too short. */
bool damon_record_decode(const struct damon_record_layout *l, const void *raw, size_t size, struct damon_region *out);

#endif
