/* The sampling decode tables (the YAML files of catalog/sampling) on data source values
 * and raw records of each vendor, with the attribution computed by hand from
 * the kernel's and perf's definitions (the comments give each step). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/sample_decode.h"
#include "check.h"
#include "config.h"

static struct sample_decoders *dec;

/* perf_mem_data_src pieces (include/uapi/linux/perf_event.h). */
#define OP_LOAD       (0x02ull << 0)
#define OP_STORE      (0x04ull << 0)
#define LVL_HIT       (0x02ull << 5)
#define LVL_MISS      (0x04ull << 5)
#define LVL_L1        (0x08ull << 5)
#define LVL_L2        (0x20ull << 5)
#define LVL_L3        (0x40ull << 5)
#define LVL_LOC_RAM   (0x80ull << 5)
#define LVL_REM_RAM1  (0x100ull << 5)
#define LVL_REM_CCE1  (0x400ull << 5)
#define LVL_REM_CCE2  (0x800ull << 5)
#define LVL_NA        (0x01ull << 5)
#define SNOOP_NA      (0x01ull << 19)
#define SNOOP_NONE    (0x02ull << 19)
#define SNOOP_HIT     (0x04ull << 19)
#define SNOOP_MISS    (0x08ull << 19)
#define SNOOP_HITM    (0x10ull << 19)
#define LOCK_NA       (0x01ull << 24)
#define TLB_NA        (0x01ull << 26)
#define TLB_HIT       (0x02ull << 26)
#define TLB_MISS      (0x04ull << 26)
#define TLB_L1        (0x08ull << 26)
#define TLB_L2        (0x10ull << 26)
#define TLB_WK        (0x20ull << 26)
#define LVLNUM(x)     ((uint64_t)(x) << 33)
#define LVLNUM_L1     LVLNUM(0x1)
#define LVLNUM_L2     LVLNUM(0x2)
#define LVLNUM_L3     LVLNUM(0x3)
#define LVLNUM_CXL    LVLNUM(0x9)
#define LVLNUM_ANY    LVLNUM(0xb)
#define LVLNUM_RAM    LVLNUM(0xd)
#define LVLNUM_NA     LVLNUM(0xf)
#define REMOTE        (0x1ull << 37)
#define SNOOPX_PEER   (0x2ull << 38)

static void expect_access(uint64_t data_src, const char *level, int remote, bool hitm, bool peer, int op)
{
	struct mem_access a;

	sample_decode_access(dec, data_src, &a);
	CHECK_EQ_STR(a.level ? a.level : "-", level);
	CHECK_EQ_INT(a.remote, remote);
	CHECK_EQ_INT(a.hitm, hitm);
	CHECK_EQ_INT(a.peer, peer);
	CHECK_EQ_INT(a.op, op);
}

/* Intel PEBS: the kernel's pebs_data_source[] entries (arch/x86/events/intel/ds.c,
 * Sandy Bridge and later, with LEVEL()) and precise_store_data(). */
static void test_pebs(void)
{
	/* 0x01 L1 local: OP_LH | P(LVL, L1) | LEVEL(L1) | P(SNOOP, NONE) */
	expect_access(OP_LOAD | LVL_HIT | LVL_L1 | LVLNUM_L1 | SNOOP_NONE, "L1", 0, false, false, 'L');
	CHECK_EQ_U64(OP_LOAD | LVL_HIT | LVL_L1 | LVLNUM_L1 | SNOOP_NONE, 0x200100142ull);
	/* 0x07 L3 hit, snoop HITM: a line another core of this socket modified */
	expect_access(OP_LOAD | LVL_HIT | LVL_L3 | LVLNUM_L3 | SNOOP_HITM, "L3", 0, true, false, 'L');
	/* 0x09 L3 miss, snoop HITM: REM_CCE1 | REM | LEVEL(L3): modified in the other socket's cache */
	expect_access(OP_LOAD | LVL_HIT | LVL_REM_CCE1 | REMOTE | LVLNUM_L3 | SNOOP_HITM, "L3", 1, true, false, 'L');
	CHECK_EQ_U64(OP_LOAD | LVL_HIT | LVL_REM_CCE1 | REMOTE | LVLNUM_L3 | SNOOP_HITM, 0x2600808042ull);
	/* 0x0c L3 miss, exclusive: local DRAM */
	expect_access(OP_LOAD | LVL_HIT | LVL_LOC_RAM | LVLNUM_RAM | SNOOP_NONE | SNOOP_MISS, "RAM", 0, false, false,
		      'L');
	/* 0x0d L3 miss, exclusive: remote DRAM (REM_RAM1 | REM | LEVEL(RAM)) */
	expect_access(OP_LOAD | LVL_HIT | LVL_REM_RAM1 | LVLNUM_RAM | REMOTE | SNOOP_NONE | SNOOP_MISS, "RAM", 1, false,
		      false, 'L');
	/* Older kernels without LEVEL(): 0x0b L3 miss, shared, REM_RAM1 only */
	expect_access(OP_LOAD | LVL_HIT | LVL_REM_RAM1 | SNOOP_HIT, "RAM", 1, false, false, 'L');
	/* precise_store_data: P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(TLB, L2), L1 hit, STLB hit */
	expect_access(OP_STORE | SNOOP_NA | LVL_L1 | LVL_HIT | TLB_L2 | TLB_HIT, "L1", 0, false, false, 'S');
	/* a store that missed L1: level L1 (missed), no locality said */
	expect_access(OP_STORE | SNOOP_NA | LVL_L1 | LVL_MISS | TLB_L2 | TLB_HIT, "L1", -1, false, false, 'S');
	/* no data source at all */
	expect_access(0, "-", -1, false, false, 0);
}

/* IBS raw data: u32 caps, then IbsOpCtl, IbsOpRip, IbsOpData, IbsOpData2,
 * IbsOpData3, IbsDcLinAd, IbsDcPhysAd (arch/x86/events/amd/ibs.c). */
static void ibs_raw(uint8_t raw[60], uint32_t caps, uint64_t data2, uint64_t data3)
{
	uint64_t regs[7] = { 0x30000, 0x401000, 0, data2, data3, 0x7f0000001000, 0x12340000 };

	memcpy(raw, &caps, 4);
	memcpy(raw + 4, regs, sizeof(regs));
}

#define IBS_LD        (1ull << 0)
#define IBS_ST        (1ull << 1)
#define IBS_DC_MISS   (1ull << 7)
#define IBS_LIN_VALID (1ull << 17)
#define IBS_PHY_VALID (1ull << 18)
#define IBS_L2_MISS   (1ull << 20)
#define IBS_LAT(c)    ((uint64_t)(c) << 32)
#define CAPS_ZEN4     (1u << 11)

static uint64_t run_ibs(uint32_t caps, uint64_t data2, uint64_t data3, int family, int model, uint64_t *weight,
			bool *has_weight)
{
	const struct decode_table *t = sample_decoders_find(dec, "amd-ibs-op");
	struct decode_cpu cpu = { family, model, -1, -1 };
	struct decode_input in;
	struct ms_error err = { "" };
	uint8_t raw[60];
	uint64_t data_src = ~0ull;

	ibs_raw(raw, caps, data2, data3);
	if (!t || decode_input_from_raw(t, raw, sizeof(raw), &in, &err) < 0) {
		CHECK_FAIL("amd-ibs-op: %s", t ? err.text : "no table");
		return 0;
	}
	decode_table_run(t, &in, &cpu, &data_src, weight, has_weight);
	return data_src;
}

static void test_ibs(void)
{
	uint64_t w = 0, ds;
	bool has_w;
	struct ms_error err = { "" };
	struct decode_input in;
	uint8_t short_raw[20] = { 0 };

	/* Zen 3 (19h model 01h) load from remote DRAM: DataSrc 3, RmtNode 1, DcMiss, L2Miss,
	 * 300 cycles: LVL REM_RAM1|HIT; CacheHitSt invalid on this model: SNOOP NA;
	 * L1 TLB hit; not locked. */
	ds = run_ibs(0x3ff, 0x3 | 1 << 4, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | IBS_PHY_VALID | IBS_L2_MISS |
		     IBS_LAT(300), 0x19, 0x01, &w, &has_w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_REM_RAM1 | LVL_HIT | SNOOP_NA | TLB_L1 | TLB_HIT | LOCK_NA);
	CHECK(has_w);
	CHECK_EQ_INT(w, 300);
	expect_access(ds, "RAM", 1, false, false, 'L');

	/* Zen 2 (17h model 31h) load hitting a modified line in the local L3 complex:
	 * DataSrc 2 (local cache), CacheHitSt 0: LVL L3|REM_CCE1|HIT, SNOOP HITM (perf
	 * reads REM_CCE1 as a remote cache). */
	ds = run_ibs(0x3ff, 0x2, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | IBS_L2_MISS | IBS_LAT(80), 0x17, 0x31, &w,
		     &has_w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_L3 | LVL_REM_CCE1 | LVL_HIT | SNOOP_HITM | TLB_L1 | TLB_HIT | LOCK_NA);
	expect_access(ds, "L3", 1, true, false, 'L');

	/* the same on Zen 3 model 01h: CacheHitSt is not valid there, so no HITM */
	ds = run_ibs(0x3ff, 0x2, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | IBS_L2_MISS, 0x19, 0x01, &w, &has_w);
	expect_access(ds, "L3", 1, false, false, 'L');

	/* Zen 4 (19h model 11h, IBS_CAPS_ZEN4): a far CCX's cache (extended DataSrc 5),
	 * CacheHitSt 0: LVL REM_CCE2|HIT and SNOOP HITM. */
	ds = run_ibs(0x3ff | CAPS_ZEN4, 0x5, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | IBS_L2_MISS, 0x19, 0x11, &w,
		     &has_w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_REM_CCE2 | LVL_HIT | SNOOP_HITM | TLB_L1 | TLB_HIT | LOCK_NA);
	expect_access(ds, "a cache", 1, true, false, 'L');

	/* Zen 4, CXL memory (extended DataSrc 8 = low bits 0, high bits 01 at 6-7) on
	 * this node: LVLNUM CXL; no MEM_LVL; locality not said. */
	ds = run_ibs(CAPS_ZEN4, 0x40, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | IBS_L2_MISS, 0x19, 0x11, &w, &has_w);
	CHECK_EQ_U64(ds, OP_LOAD | LVLNUM_CXL | SNOOP_NA | TLB_L1 | TLB_HIT | LOCK_NA);
	expect_access(ds, "CXL", -1, false, false, 'L');

	/* Zen 4 local DRAM (DataSrc 3, RmtNode 0) */
	ds = run_ibs(CAPS_ZEN4, 0x3, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | IBS_L2_MISS, 0x19, 0x11, &w, &has_w);
	expect_access(ds, "RAM", 0, false, false, 'L');

	/* a store hitting L1: LVL L1|HIT, SNOOP NA (stores have no IbsOpData2) */
	ds = run_ibs(CAPS_ZEN4, 0, IBS_ST | IBS_LIN_VALID, 0x19, 0x11, &w, &has_w);
	CHECK_EQ_U64(ds, OP_STORE | LVL_L1 | LVL_HIT | SNOOP_NA | TLB_L1 | TLB_HIT | LOCK_NA);
	CHECK(!has_w);
	expect_access(ds, "L1", 0, false, false, 'S');

	/* an op that is neither a load nor a store: no data source */
	CHECK_EQ_U64(run_ibs(CAPS_ZEN4, 0x3, IBS_DC_MISS, 0x19, 0x11, &w, &has_w), 0);

	/* erratum 1293 (19h model 01h, software prefetch): IbsOpData2 reads as 0, so a
	 * load with DataSrc 3 and L2 hit falls through to the MAB check: LVL NA */
	ds = run_ibs(0x3ff, 0x13, IBS_LD | IBS_DC_MISS | IBS_LIN_VALID | (1ull << 21), 0x19, 0x01, &w, &has_w);
	CHECK_EQ_U64(ds & (0x3fffull << 5), LVL_NA);

	/* raw data too short for the registers */
	CHECK_EQ_INT(decode_input_from_raw(sample_decoders_find(dec, "amd-ibs-op"), short_raw, sizeof(short_raw),
					   &in, &err), -1);
	CHECK_CONTAINS(err.text, "this one has 20 bytes");
}

/* One SPE record: PC, operation type, events, data source, virtual address,
 * total latency, END (Arm ARM SPE packets). */
static size_t spe_record(uint8_t *b, int store, uint16_t events, int source, uint16_t latency)
{
	size_t n = 0;
	uint64_t pc = 0x400123, va = 0xffff7f0000001000ull & 0x00ffffffffffffffull;

	b[n++] = 0xb0;                        /* address, index 0: PC */
	memcpy(b + n, &pc, 8), n += 8;
	b[n++] = 0x49;                        /* operation type, class 1: load/store */
	b[n++] = (uint8_t)store;
	b[n++] = 0x52;                        /* events, 2 bytes */
	memcpy(b + n, &events, 2), n += 2;
	if (source >= 0) {
		b[n++] = 0x43;                /* data source, 1 byte */
		b[n++] = (uint8_t)source;
	}
	b[n++] = 0xb2;                        /* address, index 2: data virtual address */
	memcpy(b + n, &va, 8), n += 8;
	b[n++] = 0x98;                        /* counter, index 0: total latency */
	memcpy(b + n, &latency, 2), n += 2;
	b[n++] = 0x01;                        /* END */
	return n;
}

#define EV_RETIRED    (1u << 1)
#define EV_L1D_ACCESS (1u << 2)
#define EV_L1D_REFILL (1u << 3)
#define EV_TLB_ACCESS (1u << 4)
#define EV_LLC_ACCESS (1u << 8)
#define EV_LLC_MISS   (1u << 9)
#define EV_REMOTE     (1u << 10)

static uint64_t run_spe(int implementer, int part, int store, uint16_t events, int source, uint64_t *weight)
{
	const struct decode_table *t = sample_decoders_find(dec, "arm-spe");
	struct decode_cpu cpu = { -1, -1, implementer, part };
	struct decode_input in;
	struct ms_error err = { "" };
	uint8_t raw[64];
	size_t n = spe_record(raw, store, events, source, 250);
	uint64_t data_src = ~0ull;
	bool has_w;

	if (!t || decode_input_from_raw(t, raw, n, &in, &err) < 0) {
		CHECK_FAIL("arm-spe: %s", t ? err.text : "no table");
		return 0;
	}
	decode_table_run(t, &in, &cpu, &data_src, weight, &has_w);
	CHECK(has_w);
	return data_src;
}

static void test_spe(void)
{
	uint64_t w = 0, ds;
	struct ms_error err = { "" };
	struct decode_input in;
	uint8_t cut[3] = { 0xb0, 0x01, 0x02 };

	/* Neoverse N1 (0x41/0xd0c) load from DRAM (source 0xe): LOC_RAM|HIT, LVLNUM RAM,
	 * SNOOP NONE; TLB access (no walk): WK|HIT; latency 250 cycles */
	ds = run_spe(0x41, 0xd0c, 0, EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL | EV_LLC_ACCESS | EV_LLC_MISS |
		     EV_TLB_ACCESS, 0xe, &w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_LOC_RAM | LVL_HIT | LVLNUM_RAM | SNOOP_NONE | TLB_WK | TLB_HIT);
	CHECK_EQ_INT(w, 250);
	expect_access(ds, "RAM", 0, false, false, 'L');
	/* N1, a peer core's cache (0x9): L2|HIT, LVLNUM L2, SNOOPX PEER */
	ds = run_spe(0x41, 0xd0c, 0, EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL, 0x9, &w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_L2 | LVL_HIT | LVLNUM_L2 | SNOOPX_PEER);
	expect_access(ds, "L2", 0, false, true, 'L');
	/* Neoverse V1 (0xd40), the other socket (0xd): REM_CCE1, ANY_CACHE, REMOTE, PEER */
	ds = run_spe(0x41, 0xd40, 0, EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL | EV_LLC_ACCESS | EV_LLC_MISS, 0xd, &w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_REM_CCE1 | LVLNUM_ANY | REMOTE | SNOOPX_PEER);
	expect_access(ds, "a cache", 1, false, true, 'L');
	/* Neoverse N2 (0xd49) system cache (0xb): L3|HIT, SNOOP HIT */
	ds = run_spe(0x41, 0xd49, 0, EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL | EV_LLC_ACCESS, 0xb, &w);
	expect_access(ds, "L3", 0, false, false, 'L');
	/* N1 store: no level in Neoverse records */
	ds = run_spe(0x41, 0xd0c, 1, EV_RETIRED | EV_L1D_ACCESS, 0x0, &w);
	CHECK_EQ_U64(ds, OP_STORE | LVL_NA | LVLNUM_NA | SNOOP_NA);
	expect_access(ds, "-", -1, false, false, 'S');
	/* AmpereOne (0xc0/0xac4): its 0x5 is a remote chip's cache */
	ds = run_spe(0xc0, 0xac4, 0, EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL, 0x5, &w);
	expect_access(ds, "a cache", 1, false, true, 'L');
	/* AmpereOne 0x8 is its L1D (the common encoding's 0x8 is L2) */
	ds = run_spe(0xc0, 0xac4, 0, EV_RETIRED | EV_L1D_ACCESS, 0x8, &w);
	expect_access(ds, "L1", 0, false, false, 'L');
	/* another part (Cortex-A76, 0xd0b): the events packet, LLC miss plus remote access */
	ds = run_spe(0x41, 0xd0b, 0, EV_RETIRED | EV_L1D_ACCESS | EV_L1D_REFILL | EV_LLC_ACCESS | EV_LLC_MISS |
		     EV_REMOTE, -1, &w);
	CHECK_EQ_U64(ds, OP_LOAD | LVL_L3 | LVL_MISS | LVL_REM_CCE1);
	expect_access(ds, "L3", 1, false, false, 'L');
	/* a cut packet */
	CHECK_EQ_INT(decode_input_from_raw(sample_decoders_find(dec, "arm-spe"), cut, sizeof(cut), &in, &err), -1);
	CHECK_CONTAINS(err.text, "byte 0 is cut");
}

static void test_describe(void)
{
	char text[256];

	sample_decode_describe(dec, OP_LOAD | LVL_HIT | LVL_REM_CCE1 | REMOTE | LVLNUM_L3 | SNOOP_HITM, text,
			       sizeof(text));
	CHECK_EQ_STR(text, "op=LOAD lvl=HIT|REM_CCE1 snoop=HITM lvl_num=L3 remote=REMOTE");
}

/* Load a table dir/sampling/x.yaml (next to the real data-src.yaml) whose
 * rules are `rule`: the load must fail with each of the expected texts. */
static void expect_table_error(const char *rule, const char *where, const char *why)
{
	char dir[] = "/tmp/memscope-decode-XXXXXX", path[4200], cmd[4400];
	struct sample_decoders *bad = NULL;
	struct ms_error err = { "" };
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK_FAIL("mkdtemp failed");
		return;
	}
	snprintf(path, sizeof(path), "%s/sampling", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s/catalog/sampling/data-src.yaml %s/", path,
		 MEMSCOPE_SOURCE_DIR, path);
	if (system(cmd) != 0)
		return;
	snprintf(path, sizeof(path), "%s/sampling/x.yaml", dir);
	f = fopen(path, "w");
	fputs("decode: x\ndescription: d\nsource: s\ninput: { registers: [a] }\nfields:\n  f: { register: a, bits: \"0\" }\n"
	      "rules:\n  mem_lvl:\n", f);
	fputs(rule, f);
	fclose(f);
	CHECK_EQ_INT(sample_decoders_load(&bad, dir, &err), -1);
	CHECK_CONTAINS(err.text, where);
	CHECK_CONTAINS(err.text, why);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		CHECK_FAIL("cannot remove %s", dir);
}

/* A broken table names file:line:column. */
static void test_errors(void)
{
	expect_table_error("    - { when: { f: 1 }, set: { mem_lvl: [L9, HIT] } }\n", "x.yaml:9:",
			   "'L9' is not a name of mem_lvl");
	/* An empty condition value was read past its end (a fuzzer found it). */
	expect_table_error("    - { when: { cpu_implementer: }, set: { mem_lvl: [L3, HIT] } }\n", "x.yaml:9:",
			   "a condition value is empty: give a number, a list of numbers or \"lo-hi\"");
	expect_table_error("    - when: { f: \"\" }\n      set: { mem_lvl: [L3, HIT] }\n", "x.yaml:9:",
			   "a condition value is empty");
	expect_table_error("    - { when: { f: [] }, set: { mem_lvl: [L3, HIT] } }\n", "x.yaml:9:",
			   "a condition value is empty ([])");
	expect_table_error("    - { when: { f: [1, \"\"] }, set: { mem_lvl: [L3, HIT] } }\n", "x.yaml:9:",
			   "a condition value is empty");
}

int main(void)
{
	struct ms_error err = { "" };
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (sample_decoders_load(&dec, dir, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return 1;
	}
	test_pebs();
	test_ibs();
	test_spe();
	test_describe();
	test_errors();
	sample_decoders_free(dec);
	return check_summary("sample_decode");
}
