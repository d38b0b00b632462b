#include "events/spe_record.h"

#include <string.h>

const char *const spe_register_names[SPE_REGISTERS] = {
	[SPE_EVENTS] = "events", [SPE_OP_CLASS] = "op_class", [SPE_OP_TYPE] = "op_type",
	[SPE_SOURCE] = "source", [SPE_HAS_SOURCE] = "has_source", [SPE_LATENCY] = "latency",
	[SPE_VA] = "va", [SPE_PA] = "pa", [SPE_PC] = "pc",
};

/* Header bytes (first byte of each packet). */
#define HDR_PAD        0x00
#define HDR_END        0x01
#define HDR_TIMESTAMP  0x71
#define HDR_EVENTS     0x42   /* under mask 0xcf: bits 5:4 give the payload size */
#define HDR_SOURCE     0x43
#define HDR_CONTEXT    0x64   /* under mask 0xfc */
#define HDR_OP_TYPE    0x48   /* under mask 0xfc: bits 1:0 the class */
#define HDR_EXTENDED   0x20   /* under mask 0xe0: a second header byte follows */
#define HDR_ADDRESS    0xb0   /* under mask 0xf8: bits 2:0 the index */
#define HDR_COUNTER    0x98

#define ADDR_PC 0
#define ADDR_DATA_VA 2
#define ADDR_DATA_PA 3
#define COUNTER_TOTAL 0

static uint64_t payload_value(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n < 8 ? n : 8);   /* little-endian, as SPE writes it */
	return v;
}

int spe_record_decode(const uint8_t *bytes, size_t size, uint64_t regs[SPE_REGISTERS], int *nr_regs,
		      struct ms_error *err)
{
	size_t at = 0;

	memset(regs, 0, sizeof(uint64_t) * SPE_REGISTERS);
	*nr_regs = SPE_REGISTERS;
	while (at < size) {
		uint8_t h = bytes[at], h1 = h;
		size_t head = 1, len;
		int index = 0;
		uint64_t v;

		if (h == HDR_PAD) {
			at++;
			continue;
		}
		if (h == HDR_END)
			return 0;
		if ((h & 0xe0) == HDR_EXTENDED) {
			if (at + 1 >= size)
				goto cut;
			h1 = bytes[at + 1];
			head = 2;
			index = (h & 0x3) << 3;
		}
		len = (size_t)1 << ((h1 >> 4) & 0x3);
		if (h1 == HDR_TIMESTAMP)
			len = 8;
		if (at + head + len > size)
			goto cut;
		v = payload_value(bytes + at + head, len);
		if (h1 == HDR_TIMESTAMP)
			return 0; /* a record ends with its timestamp */
		if ((h1 & 0xcf) == HDR_EVENTS) {
			regs[SPE_EVENTS] = v;
		} else if ((h1 & 0xcf) == HDR_SOURCE) {
			regs[SPE_SOURCE] = v;
			regs[SPE_HAS_SOURCE] = 1;
		} else if ((h1 & 0xfc) == HDR_OP_TYPE) {
			regs[SPE_OP_CLASS] = h1 & 0x3;
			regs[SPE_OP_TYPE] = v;
		} else if ((h1 & 0xfc) == HDR_CONTEXT) {
			/* the context id: not needed (the sample has the pid) */
		} else if ((h1 & 0xf8) == HDR_ADDRESS) {
			index |= h1 & 0x7;
			/* Bits 55:0 are the address; the byte above holds tags. */
			if (index == ADDR_DATA_VA)
				regs[SPE_VA] = (v & (UINT64_C(1) << 55)) ? (v | UINT64_C(0xff00000000000000))
									 : (v & UINT64_C(0x00ffffffffffffff));
			else if (index == ADDR_DATA_PA)
				regs[SPE_PA] = v & UINT64_C(0x00ffffffffffffff);
			else if (index == ADDR_PC)
				regs[SPE_PC] = (v & (UINT64_C(1) << 55)) ? (v | UINT64_C(0xff00000000000000))
									 : (v & UINT64_C(0x00ffffffffffffff));
		} else if ((h1 & 0xf8) == HDR_COUNTER) {
			if (((h1 & 0x7) | index) == COUNTER_TOTAL)
				regs[SPE_LATENCY] = v;
		} else {
			ms_error_set(err, "SPE record: unknown packet header 0x%02x at byte %zu", h1, at);
			return -1;
		}
		at += head + len;
	}
	return 0;
cut:
	ms_error_set(err, "SPE record: the packet at byte %zu is cut (%zu bytes in the record)", at, size);
	return -1;
}
