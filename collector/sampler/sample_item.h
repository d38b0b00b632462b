/* What a sampling source delivers besides frames: samples (instruction and
 * data addresses, data source, call chain, the data's node) and the records
 * needed to attribute them later (mappings, process names, forks, samples
 * lost). Items travel beside frames, in the order they were read; an item's
 * pointers are valid only during the call that hands it over. */
#ifndef MEMSCOPE_SAMPLE_ITEM_H
#define MEMSCOPE_SAMPLE_ITEM_H

#include <stdbool.h>
#include <stdint.h>

#include "events/sample_record.h"

enum sample_item_kind {
	SAMPLE_ITEM_SAMPLE,
	SAMPLE_ITEM_MAP,            /* a mapping: at the start (/proc/PID/maps) or made later (MMAP2) */
	SAMPLE_ITEM_TASK,           /* COMM, FORK, EXIT */
	SAMPLE_ITEM_LOST,           /* samples the kernel could not deliver */
	SAMPLE_ITEM_MAPS_UNREADABLE,/* /proc/PID/maps of a process could not be read: its data stays unknown */
	SAMPLE_ITEM_ALLOC,          /* a large heap allocation or its free (record --alloc) */
	SAMPLE_ITEM_DAMON_REGION,   /* one region of a complete DAMON aggregation (the damon source) */
};

/* An allocation the allocator probes saw (malloc, calloc, realloc,
 * aligned_alloc, posix_memalign) or the free of one; the item's time_ns is
 * when it returned. */
struct alloc_event {
	uint32_t pid, tid;
	uint64_t addr;
	uint64_t size;              /* 0 for a free */
	uint64_t caller;            /* the allocating call's return address */
	bool free;
};

/* One region of a kdamond's aggregation, in bytes of physical memory; the
 * item's time_ns is when the aggregation was read (all of its regions share
 * it). nr_accesses counts samples out of `samples` (aggregation / sample
 * interval). */
struct damon_region_event {
	uint64_t start, end;        /* bytes: [start, end) */
	uint32_t nr_accesses, age;
	uint32_t samples;           /* samples per aggregation: nr_accesses' maximum */
	uint32_t nr_regions;        /* regions of its aggregation */
	uint64_t nodes;             /* bit n: the region covers memory of node n (nodes 0-63) */
	uint32_t pid;               /* a virtual region of this process (vaddr kdamond); 0: physical */
	bool placed;                /* pid's virtual pages whose frames lie in physical regions of this
				     * nr_accesses and age (pagemap; a paddr kdamond), not a vaddr region */
};

enum sample_lost_kind {
	LOST_RING_FULL,             /* PERF_RECORD_LOST: the ring buffer was full */
	LOST_BY_KERNEL,             /* PERF_RECORD_LOST_SAMPLES: dropped before the ring (PEBS, AUX) */
	LOST_THROTTLED,             /* the kernel throttled the event (PERF_RECORD_THROTTLE): count unknown */
	LOST_UNDELIVERED,           /* counted by the event but never delivered nor reported lost (the ring
				     * was full when sampling stopped): event count / period - samples - lost */
	LOST_BEHIND,                /* read, but a sink fell so far behind that it could not take them */
};
#define SAMPLE_LOST_KINDS (LOST_BEHIND + 1)

struct sample_item {
	enum sample_item_kind kind;
	uint64_t time_ns;           /* CLOCK_MONOTONIC */
	const struct event_sample *sample;
	const struct map_event *map;
	const struct task_event *task;
	const struct alloc_event *alloc;
	const struct damon_region_event *damon;
	/* SAMPLE_ITEM_LOST */
	enum sample_lost_kind lost_kind;
	int event;                  /* the sampling event, -1 when the record does not say */
	uint64_t lost;
	/* SAMPLE_ITEM_MAPS_UNREADABLE */
	uint32_t pid;
	const char *why;
};

/* Where a handed-over item's pointers can point: its own copies. */
struct sample_item_storage {
	struct event_sample sample;
	struct map_event map;
	struct task_event task;
	struct alloc_event alloc;
	struct damon_region_event damon;
	char why[512];
};

/* Where a sampling source hands its items: set by the command before the run
 * starts (the recording writer, a report). Not set: items are dropped. */
struct sample_hub {
	void (*deliver)(const struct sample_item *item, void *ctx);
	void *ctx;
};

#endif
