/* Format fields and term encoding, on a PMU built in memory so each rule is
 * tested alone (test_pmu.c does the same through the fixture trees). */
#include <linux/perf_event.h>

#include "check.h"
#include "host/pmu.h"

static struct pmu_format make_format(const char *name, const char *text)
{
	struct pmu_format fmt = { .name = (char *)name };
	struct ms_error err = { "" };

	if (pmu_format_parse(text, &fmt, &err) < 0)
		CHECK_FAIL("format %s=%s: %s", name, text, err.text);
	return fmt;
}

static void test_parse(void)
{
	struct pmu_format fmt;
	struct ms_error err = { "" };

	fmt = make_format("event", "config:0-7,32-35");
	CHECK_EQ_INT(fmt.word, PMU_CONFIG);
	CHECK_EQ_U64(fmt.mask, 0xf000000ffULL);
	CHECK_EQ_INT(fmt.width, 12);

	fmt = make_format("x", "config1:8");
	CHECK_EQ_INT(fmt.word, PMU_CONFIG1);
	CHECK_EQ_U64(fmt.mask, 0x100);
	CHECK_EQ_INT(fmt.width, 1);

	fmt = make_format("x", "config2:0-15");
	CHECK_EQ_INT(fmt.word, PMU_CONFIG2);
	CHECK_EQ_U64(fmt.mask, 0xffff);
	CHECK_EQ_INT(fmt.width, 16);

	fmt = make_format("x", "config:5");
	CHECK_EQ_U64(fmt.mask, 0x20);

	fmt = make_format("x", "config:0-63");
	CHECK_EQ_U64(fmt.mask, ~0ULL);
	CHECK_EQ_INT(fmt.width, 64);

	fmt = make_format("x", "config3:0-1");
	CHECK_EQ_INT(fmt.word, PMU_CONFIG3);

	/* Zen DF event: three ranges, 14 bits. */
	fmt = make_format("x", "config:0-7,32-35,59-60\n");
	CHECK_EQ_U64(fmt.mask, 0x1800000f000000ffULL);
	CHECK_EQ_INT(fmt.width, 14);

	const char *bad[] = { "config", "config:", "cfg:0-7", "config:7-0", "config:64", "config:0-64",
			      "config:0-7,", "config:0-7,5", "config:a", "config:0-7 x", "config4:1",
			      ":1", "config:-1", "config:1--2" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.text[0] = '\0';
		if (pmu_format_parse(bad[i], &fmt, &err) != -1)
			CHECK_FAIL("format \"%s\" was accepted", bad[i]);
		CHECK_CONTAINS(err.text, bad[i]);
		CHECK_CONTAINS(err.text, "expected");
	}
	pmu_format_parse("cfg:0-7", &fmt, &err);
	CHECK_EQ_STR(err.text, "format \"cfg:0-7\": unknown word \"cfg\"; expected config, config1, "
		     "config2 or config3");
}

static void test_apply(void)
{
	struct pmu_format event = make_format("event", "config:0-7,32-35");
	struct perf_event_attr attr = { 0 };

	pmu_format_apply(&event, 0x1f7, &attr);
	CHECK_EQ_U64(attr.config, 0xf7 | (0x1ULL << 32));

	/* Applying again replaces the field and leaves other bits alone. */
	attr.config |= 0xff00;
	pmu_format_apply(&event, 0xabc, &attr);
	CHECK_EQ_U64(attr.config, 0xbc | 0xff00 | (0xaULL << 32));

	struct pmu_format wide = make_format("v", "config1:0-63");

	pmu_format_apply(&wide, 0x8000000000000001ULL, &attr);
	CHECK_EQ_U64(attr.config1, 0x8000000000000001ULL);

	struct pmu_format split = make_format("umask", "config:8-15,24-27");

	attr.config = 0;
	pmu_format_apply(&split, 0x7fe, &attr);
	CHECK_EQ_U64(attr.config, (0xfeULL << 8) | (0x7ULL << 24));
}

/* A PMU like the kernel's nhm uncore plus a few aliases, built in memory. */
static struct pmu_format formats[8];
static struct pmu_alias aliases[] = {
	{ .name = "clockticks", .terms = "event=0xff,umask=0x00", .scale = 1.0, .unit = "" },
	{ .name = "needs_chan", .terms = "event=0x01,chan=?", .scale = 1.0, .unit = "" },
	{ .name = "qhl_request_remote_reads", .terms = "event=0x20,umask=0x04", .scale = 1.0,
	  .unit = "" },
	{ .name = "raw_word", .terms = "config=0x1234", .scale = 1.0, .unit = "" },
	{ .name = "typo", .terms = "event=0x01,bogus=3", .scale = 1.0, .unit = "" },
};

static struct pmu make_pmu(void)
{
	/* Sorted by name, as pmu_set_load leaves them. */
	formats[0] = make_format("chan", "config1:0-3");
	formats[1] = make_format("cmask", "config:24-31");
	formats[2] = make_format("edge", "config:18");
	formats[3] = make_format("event", "config:0-7");
	formats[4] = make_format("inv", "config:23");
	formats[5] = make_format("tt_core", "config2:0-15");
	formats[6] = make_format("umask", "config:8-15");
	return (struct pmu){ .name = "uncore", .type = 12, .formats = formats, .nr_formats = 7,
			     .aliases = aliases, .nr_aliases = 5 };
}

static int encode(const struct pmu *pmu, const char *terms, struct perf_event_attr *attr,
		  struct ms_error *err)
{
	*attr = (struct perf_event_attr){ 0 };
	err->text[0] = '\0';
	return pmu_encode_terms(pmu, terms, attr, err);
}

static void check_config(const struct pmu *pmu, const char *terms, uint64_t config,
			 uint64_t config1, uint64_t config2)
{
	struct perf_event_attr attr;
	struct ms_error err;

	if (encode(pmu, terms, &attr, &err) < 0) {
		CHECK_FAIL("%s/%s/: %s", pmu->name, terms, err.text);
		return;
	}
	CHECK_EQ_U64(attr.config, config);
	CHECK_EQ_U64(attr.config1, config1);
	CHECK_EQ_U64(attr.config2, config2);
}

static void check_error(const struct pmu *pmu, const char *terms, const char *expected)
{
	struct perf_event_attr attr;
	struct ms_error err;

	if (encode(pmu, terms, &attr, &err) != -1) {
		CHECK_FAIL("%s/%s/ was accepted", pmu->name, terms);
		return;
	}
	CHECK_CONTAINS(err.text, expected);
}

static void test_encode(void)
{
	struct pmu pmu = make_pmu();
	struct perf_event_attr attr;
	struct ms_error err;

	check_config(&pmu, "event=0x03,umask=0x02", 0x0203, 0, 0);
	check_config(&pmu, "event=3,umask=2", 0x0203, 0, 0);           /* decimal */
	check_config(&pmu, "event=010", 10, 0, 0);                      /* decimal, not octal */
	check_config(&pmu, "event=0X1F", 0x1f, 0, 0);
	check_config(&pmu, " event = 0x03 , umask=0x02 ", 0x0203, 0, 0);
	check_config(&pmu, "edge", 1ULL << 18, 0, 0);                   /* flag means 1 */
	check_config(&pmu, "edge,inv,cmask=1", (1ULL << 18) | (1ULL << 23) | (1ULL << 24), 0, 0);
	check_config(&pmu, "config=0x500203", 0x500203, 0, 0);          /* whole words */
	check_config(&pmu, "config1=0xff,config2=7", 0, 0xff, 7);
	check_config(&pmu, "config=0xffff,event=0x01", 0xff01, 0, 0);   /* field on top of word */
	check_config(&pmu, "chan=3,event=1", 1, 3, 0);
	check_config(&pmu, "tt_core=0xffff", 0, 0, 0xffff);
	check_config(&pmu, "event=0xff", 0xff, 0, 0);                   /* the widest that fits */

	/* Aliases expand; the user's own fields win whatever the order. */
	check_config(&pmu, "clockticks", 0xff, 0, 0);
	check_config(&pmu, "qhl_request_remote_reads", 0x0420, 0, 0);
	check_config(&pmu, "qhl_request_remote_reads,umask=0x08", 0x0820, 0, 0);
	check_config(&pmu, "umask=0x08,qhl_request_remote_reads", 0x0820, 0, 0);
	check_config(&pmu, "raw_word", 0x1234, 0, 0);
	check_config(&pmu, "clockticks,edge", 0xff | (1ULL << 18), 0, 0);

	/* '?' in an alias: the user must supply that field. */
	check_config(&pmu, "needs_chan,chan=5", 0x01, 5, 0);
	check_config(&pmu, "chan=0,needs_chan", 0x01, 0, 0);
	check_error(&pmu, "needs_chan", "uncore/needs_chan/ needs a value for 'chan'");
	check_error(&pmu, "needs_chan", "uncore/needs_chan,chan=0x0/");

	/* Too wide: names the field, its width, its word and the largest value. */
	encode(&pmu, "umask=0x100", &attr, &err);
	CHECK_EQ_STR(err.text, "uncore: umask=0x100 does not fit: field 'umask' is 8 bits wide "
		     "(config), at most 0xff");
	check_error(&pmu, "edge=2", "field 'edge' is 1 bit wide (config), at most 0x1");
	check_error(&pmu, "chan=16", "field 'chan' is 4 bits wide (config1), at most 0xf");

	/* Unknown field: lists the PMU's fields. */
	encode(&pmu, "event=1,foo=2", &attr, &err);
	CHECK_EQ_STR(err.text, "uncore: unknown term 'foo'; uncore fields: chan, cmask, edge, "
		     "event, inv, tt_core, umask (or one of its 5 event names; see memscope list "
		     "--pmus)");
	check_error(&pmu, "typo", "unknown term 'bogus' (in the definition of typo)");

	/* Malformed terms. */
	check_error(&pmu, "event=0xzz", "event=0xzz: expected a decimal or 0x-prefixed");
	check_error(&pmu, "event=-1", "expected a decimal");
	check_error(&pmu, "event=", "expected field=value");
	check_error(&pmu, "=5", "expected field=value");
	check_error(&pmu, "event=1,,umask=2", "empty term");
	check_error(&pmu, "config", "'config' needs a value");
	check_error(&pmu, "event=0x1ffffffffffffffff", "expected a decimal");
	check_error(&pmu, "config3=1", "config3 is not supported");

	/* An empty term list is valid: nothing is set. */
	check_config(&pmu, "", 0, 0, 0);

	/* A PMU without format fields still takes whole words. */
	struct pmu bare = { .name = "software", .type = 1 };

	check_config(&bare, "config=9", 9, 0, 0);
	check_error(&bare, "event=1", "software has no format fields (only config=, config1=, "
		    "config2=)");
}

int main(void)
{
	test_parse();
	test_apply();
	test_encode();
	return check_summary("test_pmu_format");
}
