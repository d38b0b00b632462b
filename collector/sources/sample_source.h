/* The sampling source: perf events opened in sampling mode (an instruction
 * and data address, data source, physical address and call chain per
 * sample), one ring buffer per CPU read on the sampler's epoll, and the
 * records that attribute samples later (mappings, names, forks, losses).
 *
 * It serves the names "sample:EVENT" (memscope record --sample EVENT), and
 * gives each event two counter series: "sample:EVENT" (samples delivered)
 * and "sample.lost:EVENT" (samples the kernel could not deliver), so frames
 * show sampling as it goes. The samples themselves go to the session's
 * sample hub (sampler/sample_item.h).
 *
 * The ring wakes the sampler when half of it is written, never per sample;
 * page-fault samples are also read every few milliseconds, and the node of
 * each faulting page is read with move_pages from the sampler's thread after
 * the batch, in one call per process: nothing in the process's fault path. */
#ifndef MEMSCOPE_SAMPLE_SOURCE_H
#define MEMSCOPE_SAMPLE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

struct perf_event_attr;

#include "sampler/sample_item.h"
#include "sources/registry.h"

#define SAMPLE_NAME_PREFIX "sample:"
/* Data pages of each CPU's ring buffer (a power of two), as perf's default. */
#define SAMPLE_DEFAULT_MMAP_PAGES 128
/* Hardware memory sampling: samples per second when neither -c nor -F is given (perf's default). */
#define SAMPLE_DEFAULT_FREQ 4000

/* How to sample, from the command line (record -c, -F, --mmap-pages). */
#define SAMPLE_DEFAULT_ALLOC_MIN 4096

struct sample_options {
	uint64_t period;           /* -c: one sample every N events; 0: the default */
	uint64_t freq;             /* -F: samples per second; 0: the default */
	int mmap_pages;            /* data pages per ring; 0: SAMPLE_DEFAULT_MMAP_PAGES */
	bool no_callchain;         /* --no-callchain */
	bool alloc;                /* --alloc: allocation sites of heap data (uprobes on the allocator) */
	uint64_t alloc_min;        /* --alloc-min: smallest allocation tracked; 0: SAMPLE_DEFAULT_ALLOC_MIN */
	struct sample_hub *hub;    /* where samples go; the command sets hub->deliver before the run */
};

/* The sampling events a source opened, for the recording's header. */
struct sample_event_info {
	const char *name;          /* as asked: "page-faults" */
	const char *pmu;           /* "software", "cpu", "ibs_op", "arm_spe_0" */
	const char *decode;        /* how its samples are decoded (catalog/sampling): "page-fault", "data-src",
				    * "amd-ibs-op", "arm-spe", or "" (no data source) */
	uint64_t sample_type;
	uint64_t period, freq;     /* one of them is 0 */
	int precise;
	bool phys_addr;            /* physical addresses were allowed */
	bool callchain;
};

/* The count so far of the event src samples that counts what attr counts
 * (same type, config and exclusions), summed over its CPUs and tasks: the
 * sampling event is itself a counter, so a frame's counter of the same event
 * needs no second event in the sampled process's path. -1 when src samples
 * no such event, or its fds cannot be read. */
int sample_source_count_of(const struct source *src, const struct perf_event_attr *attr, uint64_t *count);

/* Whether src samples an event counting what attr counts (before it opens). */
bool sample_source_samples(const struct source *src, const struct perf_event_attr *attr);

/* How many events src samples (0 when it is not a sampling source), and each. */
int sample_source_nr_events(const struct source *src);
const struct sample_event_info *sample_source_event(const struct source *src, int i);

#endif
