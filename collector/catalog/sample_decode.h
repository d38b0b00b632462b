/* Decoding memory samples, as data: catalog/sampling/data-src.yaml describes
 * the kernel's perf_mem_data_src and how memscope reads it (level, remote,
 * HITM, peer); amd-ibs-op.yaml and arm-spe.yaml turn the vendors' own
 * registers and records into a perf_mem_data_src with ordered rules, as the
 * kernel and perf do. No vendor knowledge lives in this code: a new encoding
 * is a new file (docs/catalog.md, "Sampling decode tables").
 *
 * Rule groups run in file order; in a group the first rule whose `when`
 * conditions all hold and none of whose `unless` sets holds applies its
 * `set` (replace the named data source fields), `add` (OR them in), `clear`
 * (zero an input register), `weight` (the sample's weight from a field) and
 * `stop` (no data source: not a memory operation). */
#ifndef MEMSCOPE_SAMPLE_DECODE_H
#define MEMSCOPE_SAMPLE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct sample_decoders;
struct decode_table;

/* Load every YAML file of <dir>/sampling; data-src.yaml must be among them. */
int sample_decoders_load(struct sample_decoders **out, const char *catalog_dir, struct ms_error *err);
void sample_decoders_free(struct sample_decoders *d);

/* The table for a decode name ("amd-ibs-op"), or NULL. */
const struct decode_table *sample_decoders_find(const struct sample_decoders *d, const char *decode);

/* The CPU the samples were taken on (the rules of some tables depend on it). */
struct decode_cpu {
	int family, model;          /* x86; -1 unknown */
	int implementer, part;      /* Arm MIDR; -1 unknown */
};

/* What a vendor decoder needs: its registers, by the names its table gives
 * (input.registers), and the capability word that precedes them. */
struct decode_input {
	uint64_t regs[16];
	int nr_regs;
	uint64_t caps;
};

/* Fill in from a sample's raw bytes: AMD IBS (u32 caps, then u64 registers)
 * or an Arm SPE record's packets. -1 with err when they do not fit. */
int decode_input_from_raw(const struct decode_table *t, const uint8_t *raw, size_t size, struct decode_input *in,
			  struct ms_error *err);

/* Run a vendor table. data_src: the composed perf_mem_data_src (0 when the
 * operation is not a load or a store); weight set when the table gives one. */
void decode_table_run(const struct decode_table *t, const struct decode_input *in, const struct decode_cpu *cpu,
		      uint64_t *data_src, uint64_t *weight, bool *has_weight);

/* How memscope reads a perf_mem_data_src (data-src.yaml's attribution). */
struct mem_access {
	const char *level;          /* "L1", "LFB", "L2", "L3", "RAM", "a cache", ...; NULL when not said */
	int remote;                 /* 1 served from another node, 0 locally, -1 not said */
	bool hitm;                  /* hit a line another core had modified */
	bool peer;                  /* supplied by a peer core's cache */
	int op;                     /* 'L' load, 'S' store, 'P' prefetch, 'X' exec, 0 not said */
};

void sample_decode_access(const struct sample_decoders *d, uint64_t data_src, struct mem_access *out);

/* "LOAD L3|HIT SNOOP HITM REMOTE" style text of every field that is set. */
void sample_decode_describe(const struct sample_decoders *d, uint64_t data_src, char *buf, size_t size);

#endif
