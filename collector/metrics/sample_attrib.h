/* Attribution of recorded samples: who (the code: symbol, source line,
 * binary, call chain, process) touched what (the data object: a variable,
 * the heap, a stack, an anonymous region, a file), where the data lives (its
 * node) and where the code ran (the CPU's node), and how the access was
 * served (level, remote, HITM) when the hardware says so. One attributor
 * per recording: it is fed the mapping and process records as they come and
 * turns each sample into an attributed_sample. */
#ifndef MEMSCOPE_SAMPLE_ATTRIB_H
#define MEMSCOPE_SAMPLE_ATTRIB_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog/sample_decode.h"
#include "host/topology.h"
#include "metrics/address_space.h"
#include "sampler/sample_item.h"
#include "util/strtab.h"

#define ATTRIB_EVENTS_MAX 16
#define ATTRIB_CHAIN_MAX 8

/* What the recording says about each sampling event. */
struct attrib_event {
	const char *name;             /* "page-faults" */
	const char *decode;           /* "page-fault", "data-src", "amd-ibs-op", "arm-spe", "" */
};

struct attributed_sample {
	const struct event_sample *sample;
	const char *event;            /* the sampling event's name */
	struct code_site code;        /* at the sample's instruction */
	struct code_site chain[ATTRIB_CHAIN_MAX];   /* its callers, innermost first */
	int nr_chain;
	struct data_object data;      /* at its data address */
	const char *comm;
	int node;                     /* of the data, -1 unknown */
	int cpu_node;                 /* of the CPU that ran the code, -1 unknown */
	int remote;                   /* 1 remote, 0 local, -1 not known */
	bool remote_from_hardware;    /* the data source said so (else: node vs CPU node) */
	struct mem_access access;     /* the data source, decoded (level NULL when none) */
	uint64_t data_src;            /* as decoded (vendor records composed into one) */
	uint64_t weight;
	const char *decode_error;     /* a vendor record that could not be decoded, or NULL */
};

struct sample_attributor {
	struct strtab strings;
	struct address_space space;
	const struct sample_decoders *decoders;   /* NULL: no hardware data sources decoded */
	const struct topology *topo;              /* NULL: CPU nodes unknown */
	struct decode_cpu cpu;
	struct attrib_event events[ATTRIB_EVENTS_MAX];
	int nr_events;
	char decode_error[256];
};

int sample_attributor_init(struct sample_attributor *a, const struct sample_decoders *decoders,
			   const struct topology *topo, const struct decode_cpu *cpu);
void sample_attributor_free(struct sample_attributor *a);
/* Describe event i (names are copied). */
int sample_attributor_event(struct sample_attributor *a, const char *name, const char *decode);

/* A mapping, process or unreadable-maps item: kept for the samples after it.
 * Samples: attributed into out (returns 1); others return 0; -1 out of memory. */
int sample_attribute(struct sample_attributor *a, const struct sample_item *item, struct attributed_sample *out);

/* "remote", "local" or "?" */
const char *attrib_remote_text(int remote);

#endif
