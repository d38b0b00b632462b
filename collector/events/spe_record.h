/* Arm SPE records: the packets the Statistical Profiling Extension writes for
 * one sampled operation (Arm ARM, "Statistical Profiling Extension"; the
 * packet layouts of Linux tools/perf/util/arm-spe-decoder/arm-spe-pkt-decoder.h),
 * read into the named fields the sampling decode table (catalog/sampling/
 * arm-spe.yaml) refers to. */
#ifndef MEMSCOPE_SPE_RECORD_H
#define MEMSCOPE_SPE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

enum spe_register {
	SPE_EVENTS,       /* the events packet's bits (L1D access/refill, LLC, TLB, remote access...) */
	SPE_OP_CLASS,     /* operation type packet: 0 other, 1 load/store/atomic, 2 branch */
	SPE_OP_TYPE,      /* its payload (load/store: bit 0 set for a store) */
	SPE_SOURCE,       /* the data source packet (IMPLEMENTATION DEFINED) */
	SPE_HAS_SOURCE,   /* 1 when there was one */
	SPE_LATENCY,      /* total latency counter, cycles */
	SPE_VA,           /* data virtual address */
	SPE_PA,           /* data physical address */
	SPE_PC,           /* the instruction's address */
	SPE_REGISTERS
};

extern const char *const spe_register_names[SPE_REGISTERS];

/* Read one record's packets (up to an END or TIMESTAMP packet, or the end of
 * the bytes). -1 with err naming the offset of a packet that is cut or
 * unknown. */
int spe_record_decode(const uint8_t *bytes, size_t size, uint64_t regs[SPE_REGISTERS], int *nr_regs,
		      struct ms_error *err);

#endif
