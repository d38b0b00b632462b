/* Records of a perf sampling ring buffer (perf_event_open(2), "MMAP layout"):
 * samples, and the side-band records that say what each process maps, what
 * it is called and when it forks or exits, and how many records were lost.
 * Parsed according to the sample_type the events were opened with; every
 * event of one ring shares it. */
#ifndef MEMSCOPE_SAMPLE_RECORD_H
#define MEMSCOPE_SAMPLE_RECORD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sample fields memscope asks for; others are refused when the events
 * are opened (sample_layout_supported). */
#define SAMPLE_TYPE_KNOWN (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			   PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
			   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT | \
			   PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR | \
			   PERF_SAMPLE_DATA_PAGE_SIZE)

/* Call chains are cut here (perf's default max stack is 127; memory
 * attribution needs the first few callers). */
#define SAMPLE_CALLCHAIN_MAX 32
/* Raw data kept with a sample: AMD IBS op registers fit (4 + 9 x 8 bytes). */
#define SAMPLE_RAW_MAX 128

/* Where a sample's data node came from, or why it is not known. */
enum sample_node_from {
	NODE_UNKNOWN,               /* not looked up */
	NODE_FROM_PHYS,             /* the physical address (the node owning that memory block) */
	NODE_FROM_PAGE,             /* the page's node, asked of the kernel after the sample (move_pages) */
	NODE_UNKNOWN_NO_ADDRESS,    /* the sample has no data address */
	NODE_UNKNOWN_NO_PHYS,       /* a hardware sample without a physical address */
	NODE_UNKNOWN_EXITED,        /* the process exited before its page's node was read */
	NODE_UNKNOWN_UNMAPPED,      /* the page was unmapped before its node was read */
	NODE_UNKNOWN_NOT_PRESENT,   /* the page was not present when its node was read */
	NODE_UNKNOWN_NOT_ALLOWED,   /* move_pages refused to read the process's pages */
	NODE_FROM_NUMA_MAPS,        /* the page was not present (a hinting fault's); all of its mapping's
				     * pages are on that node (/proc/PID/numa_maps) */
	NODE_FROM_COUNT
};

/* Short name ("page", "exited") for files, and a sentence for people. */
const char *sample_node_from_name(enum sample_node_from from);
const char *sample_node_from_text(enum sample_node_from from);
/* -1 when name is not one. */
int sample_node_from_parse(const char *name);

/* One sample of one sampling event. */
struct event_sample {
	int event;             /* index of the sampling event in the session, -1 when unknown */
	uint64_t id;           /* the kernel's id of the event that took it */
	uint64_t ip;
	bool user;             /* taken in user space */
	uint32_t pid, tid;
	uint64_t time_ns;      /* the events' clock (CLOCK_MONOTONIC) */
	uint64_t addr;         /* data address; 0 when the hardware gave none */
	int32_t cpu;
	uint64_t period;
	uint64_t weight;       /* access latency (cycles) where the hardware gives it */
	uint64_t data_src;     /* union perf_mem_data_src; 0 when not given */
	uint64_t phys_addr;    /* 0 when not given */
	uint64_t data_page_size;
	/* Filled after the sample is read (sources/sample_source.c). */
	int node;              /* NUMA node of the data, -1 unknown */
	enum sample_node_from node_from;
	int nr_callchain;      /* user-space return addresses, innermost first; context markers removed */
	uint32_t raw_size;     /* bytes in raw (cut at SAMPLE_RAW_MAX) */
	/* Only the first nr_callchain and raw_size entries are meaningful (and copied). */
	uint64_t callchain[SAMPLE_CALLCHAIN_MAX];
	uint8_t raw[SAMPLE_RAW_MAX];
};

/* A mapping a process made (PERF_RECORD_MMAP2, or a /proc/PID/maps line
 * read when recording started). */
struct map_event {
	uint32_t pid, tid;
	uint64_t time_ns;
	uint64_t start, len, pgoff;
	uint32_t prot, flags;  /* PROT_*, MAP_* (MMAP2 only; maps lines: prot and MAP_SHARED/PRIVATE) */
	uint32_t maj, min;
	uint64_t ino;
	bool executable;       /* PROT_EXEC (perf sends data mappings with PERF_RECORD_MISC_MMAP_DATA) */
	uint8_t build_id[20];
	uint8_t build_id_size; /* 0: none given */
	char path[4096];       /* file, or "[heap]", "[stack]", "//anon", "" for anonymous memory */
};

enum task_event_kind { TASK_COMM, TASK_FORK, TASK_EXIT };

struct task_event {
	enum task_event_kind kind;
	uint32_t pid, tid;
	uint32_t ppid, ptid;   /* FORK and EXIT */
	uint64_t time_ns;
	bool exec;             /* COMM: the name changed because of exec */
	char comm[16];
};

enum ring_record_kind {
	RING_SAMPLE,
	RING_MMAP,
	RING_TASK,
	RING_LOST,             /* records the kernel could not write: the ring was full */
	RING_LOST_SAMPLES,     /* samples the hardware or the kernel dropped before the ring */
	RING_THROTTLE,         /* the kernel throttled the event: too many samples per second */
	RING_UNTHROTTLE,
	RING_OTHER,            /* a kind memscope does not use */
};

struct ring_record {
	enum ring_record_kind kind;
	uint64_t time_ns;      /* from the sample id (sample_id_all), else 0 */
	uint64_t id;           /* event id, when the record has one */
	int32_t cpu;
	uint64_t lost;         /* RING_LOST, RING_LOST_SAMPLES: how many */
	/* The caller provides the storage for the kinds it wants; NULL: skipped. */
	struct event_sample *sample;
	struct map_event *map;
	struct task_event *task;
};

struct sample_layout {
	uint64_t sample_type;
	bool sample_id_all;    /* non-sample records end with the sample id fields */
};

/* Can records of this sample_type be parsed? */
bool sample_layout_supported(uint64_t sample_type);

/* Parse one record of size hdr->size (a whole record, already copied out of
 * the ring when it wrapped). Returns 0, or -1 when the record is shorter than
 * its fields (a ring out of step, or a corrupt input). */
int ring_record_parse(const struct sample_layout *layout, const struct perf_event_header *hdr,
		      struct ring_record *out);

#endif
