/* The catalog loader: the shipped catalog loads, and every kind of mistake in
 * a catalog file gives an error naming file:line:column and what was expected. */
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/catalog_expr.h"
#include "check.h"
#include "config.h"
#include "fixture_tree.h"
#include "sources/bpf_source.h"

static const char *const good_metrics =
	"metrics:\n"
	"  - name: mem.read_bytes\n"
	"    unit: B\n"
	"    kind: counter\n"
	"    description: bytes read\n"
	"  - name: mem.read_bw\n"
	"    unit: B/s\n"
	"    kind: gauge\n"
	"    description: read bandwidth\n"
	"    formula: mem.read_bytes / seconds\n";

static const char *const good_family =
	"family: test\n"
	"description: a test family\n"
	"sources: [\"Linux drivers/perf/test.c\"]\n"
	"pmus:\n"
	"  ddrc:\n"
	"    match: '^test_ddrc[0-9]+$'\n"
	"    scope: channel\n"
	"    events:\n"
	"      flux_rd: event=0x01\n"
	"metrics:\n"
	"  mem.read_bytes:\n"
	"    - formula: ddrc.flux_rd * 32\n"
	"      source: test\n";

/* Load a catalog made of the two texts; return the error text ("" on success). */
static const char *load(const char *metrics, const char *family)
{
	static struct ms_error err;
	struct catalog *cat = NULL;
	char dir[4096];
	int rc;

	tree_new(dir, sizeof(dir));
	tree_write(dir, "metrics.yaml", metrics);
	tree_write(dir, "pmu/test.yaml", family);
	memset(&err, 0, sizeof(err));
	rc = catalog_load(&cat, dir, &err);
	catalog_free(cat);
	tree_remove(dir);
	if (rc == 0)
		return "";
	/* strip the temporary directory so the expected text is stable */
	{
		char *slash = strstr(err.text, "memscope-test-");

		if (slash) {
			char *rest = strchr(slash, '/');
			char copy[sizeof(err.text)];

			snprintf(copy, sizeof(copy), "%s", rest ? rest + 1 : slash);
			snprintf(err.text, sizeof(err.text), "%s", copy);
		}
	}
	return err.text;
}

static char *replace(const char *text, const char *from, const char *to)
{
	static char out[8192];
	const char *at = strstr(text, from);

	if (!at) {
		fprintf(stderr, "test bug: '%s' not in text\n", from);
		exit(2);
	}
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

static void test_shipped_catalog(void)
{
	struct catalog *cat = NULL;
	struct ms_error err = { "" };
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	CHECK_EQ_INT(catalog_load(&cat, dir, &err), 0);
	if (!cat) {
		fprintf(stderr, "%s\n", err.text);
		return;
	}
	/* the top-down metrics carry their metric groups */
	{
		int i = catalog_metric_index(cat, "topdown.memory_bound");

		CHECK(i >= 0);
		if (i >= 0) {
			CHECK_EQ_INT(cat->metrics[i].nr_groups, 2);
			CHECK_EQ_STR(cat->metrics[i].groups[0], "TopdownL2");
			CHECK_EQ_STR(cat->metrics[i].groups[1], "memory");
		}
	}
	/* the vocabulary the issue asks for */
	const char *required[] = { "mem.read_bytes", "mem.write_bytes", "mem.read_bw", "mem.write_bw",
				   "mem.local_accesses", "mem.remote_accesses", "mem.remote_ratio", "llc.accesses",
				   "llc.misses", "llc.miss_rate", "interconnect.tx_bytes", "interconnect.rx_bytes",
				   "coherence.snoops_sent", "queue.full_cycles", "queue.occupancy",
				   "uncore.clockticks", "kernel.faults", "kernel.cpu_migrations",
				   "kernel.pages_migrated", "numa.hit", "numa.miss", "numa.foreign", "numa.local",
				   "numa.other", "proc.faults", "proc.pages_alloc", "proc.offcpu_ratio",
				   "proc.migrations", "proc.migrations_cross_node" };
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		CHECK(catalog_metric_index(cat, required[i]) >= 0);
	/* a renamed metric's old name finds it */
	CHECK(catalog_metric_index(cat, "proc.pages_placed") == catalog_metric_index(cat, "proc.pages_alloc"));
	CHECK(catalog_metric_index(cat, "proc.pages_unplaced") == catalog_metric_index(cat, "proc.pages_alloc_unplaced"));
	/* every family the issue names */
	const char *families[] = { "hisi-hip08", "hisi-hip09", "thunderx2", "amd-fam15h-nb", "amd-zen1-2",
				   "amd-zen3", "amd-zen4", "amd-zen5", "intel-nehalem-westmere", "intel-skylake-sp",
				   "intel-icelake-sp", "intel-sapphire-rapids", "intel-granite-rapids", "arm-neoverse-cmn",
				   "arm-dmc620", "nvidia-grace", "linux-kernel",
				   "linux-ebpf", "linux-damon" };
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		bool found = false;

		for (int f = 0; f < cat->nr_families; f++)
			found |= strcmp(cat->families[f].name, families[i]) == 0;
		if (!found)
			CHECK_FAIL("family %s missing", families[i]);
	}
	/* every mapping names its source; approximate ones carry a caveat (enforced by the loader) */
	for (int f = 0; f < cat->nr_families; f++)
		for (int m = 0; m < cat->families[f].nr_metrics; m++)
			for (int k = 0; k < cat->families[f].metrics[m].nr_mappings; k++)
				CHECK(cat->families[f].metrics[m].mappings[k].source[0] != '\0');
	catalog_free(cat);
}

static void test_good(void)
{
	CHECK_EQ_STR(load(good_metrics, good_family), "");
}

static void test_errors(void)
{
	/* unknown key, with the expected ones */
	CHECK_EQ_STR(load(replace(good_metrics, "    unit: B\n", "    unti: B\n"), good_family),
		     "metrics.yaml:3:5: unknown key 'unti' in a metric; expected one of: name, unit, kind, "
		     "description, formula, vendors, formerly, plugin, groups, scale_unit");
	/* an old name that is another metric's name */
	CHECK_EQ_STR(load(replace(good_metrics, "    unit: B/s\n", "    formerly: mem.read_bytes\n    unit: B/s\n"),
			  good_family),
		     "metrics.yaml:7:15: 'formerly: mem.read_bytes' names metric 'mem.read_bytes' (line 2)");
	/* groups: a list of names, each once */
	CHECK_EQ_STR(load(replace(good_metrics, "    unit: B\n", "    unit: B\n    groups: TopdownL1\n"), good_family),
		     "metrics.yaml:4:13: metric 'mem.read_bytes': 'groups' must be a list of group names ([TopdownL1, memory])");
	CHECK_EQ_STR(load(replace(good_metrics, "    unit: B\n", "    unit: B\n    groups: [memory, Top-down]\n"), good_family),
		     "metrics.yaml:4:22: metric 'mem.read_bytes': group 'Top-down': use letters, digits and '_'");
	CHECK_EQ_STR(load(replace(good_metrics, "    unit: B\n", "    unit: B\n    groups: [memory, memory]\n"), good_family),
		     "metrics.yaml:4:22: metric 'mem.read_bytes': group 'memory' is listed twice");
	/* duplicate metric */
	CHECK_EQ_STR(load(replace(good_metrics, "mem.read_bw\n", "mem.read_bytes\n"), good_family),
		     "metrics.yaml:6:11: duplicate metric 'mem.read_bytes' (first defined at line 2)");
	/* bad kind */
	CHECK_EQ_STR(load(replace(good_metrics, "kind: gauge", "kind: rate"), good_family),
		     "metrics.yaml:8:11: metric 'mem.read_bw': unknown kind 'rate'; expected counter, gauge or ratio");
	/* derived formula over an unknown metric: column of the name */
	CHECK_EQ_STR(load(replace(good_metrics, "mem.read_bytes / seconds", "mem.read_byte / seconds"), good_family),
		     "metrics.yaml:10:14: formula refers to unknown metric 'mem.read_byte'; expected a metric "
		     "defined in this file, 'seconds', 'smt_on' or 'core_wide'");
	/* formula syntax */
	CHECK_EQ_STR(load(replace(good_metrics, "mem.read_bytes / seconds", "mem.read_bytes / / seconds"),
			  good_family),
		     "metrics.yaml:10:31: mem.read_bw: formula 'mem.read_bytes / / seconds': expected a number, a "
		     "name or '(', found '/'");
	/* YAML syntax */
	CHECK_EQ_STR(load(replace(good_metrics, "    kind: counter\n", "    kind: [counter\n"), good_family),
		     "metrics.yaml:5:16: YAML syntax error: did not find expected ',' or ']' while parsing a flow "
		     "sequence");
	/* unknown event in a family formula: column of the reference */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "ddrc.flux_rd * 32", "ddrc.flux_wr * 32")),
		     "pmu/test.yaml:12:16: formula refers to unknown event 'ddrc.flux_wr'; events defined for this "
		     "role: flux_rd");
	/* formula over a role that does not exist */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "ddrc.flux_rd * 32", "32 * hha.rx_outer")),
		     "pmu/test.yaml:12:21: formula refers to unknown PMU role 'hha'; roles in this family: ddrc");
	/* a family mapping a metric the vocabulary does not have */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "  mem.read_bytes:\n", "  mem.reads:\n")),
		     "pmu/test.yaml:11:3: unknown metric 'mem.reads'; a family may only map metrics defined in "
		     "metrics.yaml");
	/* a family mapping a derived metric */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "  mem.read_bytes:\n", "  mem.read_bw:\n")),
		     "pmu/test.yaml:11:3: metric 'mem.read_bw' is derived in metrics.yaml (mem.read_bytes / "
		     "seconds); map its inputs instead");
	/* unknown key in a mapping */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      source: test\n", "      sauce: test\n")),
		     "pmu/test.yaml:13:7: unknown key 'sauce' in mapping of mem.read_bytes; expected one of: "
		     "formula, source, caveat, fidelity, upstream_differs, adds");
	/* adds is a yes or no */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      source: test\n", "      source: test\n      adds: maybe\n")),
		     "pmu/test.yaml:14:13: mapping of mem.read_bytes: 'adds' must be true or false");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      source: test\n", "      source: test\n      adds: true\n")),
		     "");
	/* memory_node names how an instance's node is found; only cxl_memdev is known */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "    scope: channel\n", "    scope: channel\n    memory_node: dimm\n")),
		     "pmu/test.yaml:8:18: role 'ddrc': memory_node 'dimm' is not known; expected cxl_memdev (a perf "
		     "role of CXL memory device PMUs: the node of the memory the device backs)");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "    scope: channel\n",
						"    scope: channel\n    memory_node: cxl_memdev\n")),
		     "");
	/* why an event or a mapping differs from perf's tables is a sentence, not a list */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      flux_rd: event=0x01\n",
						"      flux_rd: { config: event=0x01, upstream_differs: [a] }\n")),
		     "pmu/test.yaml:9:56: flux_rd: 'upstream_differs' must be a scalar, found a list");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      source: test\n",
						"      source: test\n      upstream_differs: perf rounds 64 B to 6.1e-5 MiB\n")),
		     "");
	/* a CPUID field names a leaf, a register and bits */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "    scope: channel\n",
						"    scope: channel\n    counters_cpuid: \"0x80000022 rbx 10-15\"\n")),
		     "pmu/test.yaml:8:21: role 'ddrc': counters_cpuid '0x80000022 rbx 10-15': expected LEAF REGISTER "
		     "LO-HI such as \"0x80000022 ebx 10-15\" (register eax, ebx, ecx or edx, bits 0..31)");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "    scope: channel\n",
						"    scope: channel\n    counters_cpuid: \"0x80000022 ebx 10-15\"\n")), "");
	/* a mapping without its source */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      source: test\n", "")),
		     "pmu/test.yaml:12:7: mapping of mem.read_bytes: missing required key 'source'");
	/* approximate without a caveat */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      source: test\n",
						"      source: test\n      fidelity: approximate\n")),
		     "pmu/test.yaml:14:17: an approximate mapping needs a 'caveat' saying what differs");
	/* regex that does not compile */
	CHECK_CONTAINS(load(good_metrics, replace(good_family, "'^test_ddrc[0-9]+$'", "'^test_ddrc[0-9+$'")),
		       "pmu/test.yaml:6:12: role 'ddrc': 'match' is not a valid POSIX extended regular expression");
	/* duplicate event within a role (YAML itself allows repeated keys) */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "      flux_rd: event=0x01\n",
						"      flux_rd: event=0x01\n      flux_rd: event=0x02\n")),
		     "pmu/test.yaml:10:7: role 'ddrc': duplicate event 'flux_rd' (first at line 9)");
	/* event with both config and procfs */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "flux_rd: event=0x01",
						"flux_rd: { config: event=0x01, perf: page-faults }")),
		     "pmu/test.yaml:9:16: event 'flux_rd': give exactly one of 'config' (format terms), 'perf' (an "
		     "event string), 'procfs' (vmstat/KEY, numastat/KEY, node_vmstat/KEY or node_meminfo/KEY), "
		     "'bpf' (an eBPF series), 'plugin' (a plugin's series) or 'damon' (a DAMON series)");
	/* a DAMON series belongs in a 'source: damon' role, and is named damon.NAME */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "flux_rd: event=0x01", "flux_rd: { damon: damon.hot_bytes }")),
		     "pmu/test.yaml:9:16: event 'flux_rd': 'damon' events belong in a role with 'source: damon'");
	/* a plugin's series belongs in a 'source: plugin' role, and 'instance' scopes only those */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "flux_rd: event=0x01", "flux_rd: { plugin: x.bytes }")),
		     "pmu/test.yaml:9:16: event 'flux_rd': 'plugin' events belong in a role with 'source: plugin'");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "scope: channel", "scope: instance")),
		     "pmu/test.yaml:7:12: role 'ddrc': scope 'instance' (a row per instance or cgroup label) is for "
		     "'source: plugin' roles");
	/* unknown scope */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "scope: channel", "scope: chanel")),
		     "pmu/test.yaml:7:12: role 'ddrc': unknown scope 'chanel'; expected one of: cpu, core, ccx, "
		     "channel, die, sccl, node, socket, system, instance");
	/* a cycle between derived metrics */
	CHECK_EQ_STR(load("metrics:\n"
			  "  - { name: a.x, kind: counter, description: x, formula: a.y + 1 }\n"
			  "  - { name: a.y, kind: counter, description: y, formula: a.x * 2 }\n",
			  replace(good_family, "  mem.read_bytes:\n    - formula: ddrc.flux_rd * 32\n      source: test\n",
				  "  {}\n")),
		     "metrics.yaml:2:5: metric 'a.x': its formula depends on itself through other metrics");
}

/* A family over the eBPF series: one role with the long form, one with the shorthand. */
static const char *const bpf_family =
	"family: test\n"
	"description: a test family\n"
	"sources: [\"Linux include/trace/events/kmem.h\"]\n"
	"pmus:\n"
	"  proc:\n"
	"    source: bpf\n"
	"    scope: system\n"
	"    events:\n"
	"      faults: { bpf: proc.faults }\n"
	"  pages:\n"
	"    source: bpf\n"
	"    scope: node\n"
	"    events:\n"
	"      alloc: proc.pages_alloc\n"
	"metrics:\n"
	"  mem.read_bytes:\n"
	"    - formula: proc.faults + pages.alloc\n"
	"      source: test\n";

/* Values a file can hold that used to go wrong silently. */
static void test_bad_values(void)
{
	static char deep[8192];

	/* fixed: true or false, nothing else */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "flux_rd: event=0x01",
						"flux_rd: { config: event=0x01, fixed: yes }")),
		     "pmu/test.yaml:9:45: event 'flux_rd': 'fixed' is true or false (true: a fixed counter of the PMU "
		     "counts it, as Intel's cycles and reference cycles)");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "flux_rd: event=0x01",
						"flux_rd: { config: event=0x01, fixed: true }")), "");
	/* A priority beyond int became -1 and won over every family. */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "sources:", "priority: 9223372036854775807\nsources:")),
		     "pmu/test.yaml:3:11: test: priority 9223372036854775807 is out of range: give 0 (first) to "
		     "1000 (last)");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "sources:", "priority: -1\nsources:")),
		     "pmu/test.yaml:3:11: test: priority -1 is out of range: give 0 (first) to 1000 (last)");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "sources:", "priority: 99999999999999999999\nsources:")),
		     "pmu/test.yaml:3:11: test: 'priority' must be an integer (decimal or 0x hex), found "
		     "'99999999999999999999'");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "sources:", "priority: 1000\nsources:")), "");
	/* A second document was ignored, valid or not. */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "metrics:\n", "---\nfamily: other\nmetrics:\n")),
		     "pmu/test.yaml:10:1: a second YAML document: a catalog file holds one document; remove the "
		     "'---' line or move what follows into a file of its own");
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "metrics:\n", "---\n[unclosed\nmetrics:\n")),
		     "pmu/test.yaml:12:8: YAML syntax error: did not find expected ',' or ']' while parsing a flow "
		     "sequence");
	/* A document end marker with nothing after it is one document. */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "metrics:\n", "metrics:\n")), "");
	CHECK_EQ_STR(load(replace(good_metrics, "mem.read_bytes / seconds\n", "mem.read_bytes / seconds\n...\n"),
			  good_family), "");
	/* A formula nested 3,000 deep: an error at its column, no stack overflow. */
	snprintf(deep, sizeof(deep), "%s", "    formula: ");
	memset(deep + 13, '(', 3000);
	snprintf(deep + 3013, sizeof(deep) - 3013, "mem.read_bytes / seconds\n");
	CHECK_CONTAINS(load(replace(good_metrics, "    formula: mem.read_bytes / seconds\n", deep), good_family),
		       "metrics.yaml:10:1014: mem.read_bw: formula '((((");
	CHECK_CONTAINS(load(replace(good_metrics, "    formula: mem.read_bytes / seconds\n", deep), good_family),
		       "((((...': the formula nests more than 1000 levels");
	CHECK_CONTAINS(load(replace(good_metrics, "    formula: mem.read_bytes / seconds\n", deep), good_family),
		       "the formula nests more than 1000 levels");
}

static void test_bpf_events(void)
{
	struct catalog *cat = NULL;
	struct ms_error err = { "" };
	char dir[4096], known[1024] = "", expected[1400];
	size_t len = 0;

	/* the series names the catalog accepts are exactly the bpf source's */
	for (const char *const *n = bpf_series_names(); *n; n++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", len ? ", " : "", *n);
	CHECK_CONTAINS(known, "proc.faults, proc.faults_user");
	CHECK_CONTAINS(known, "proc.pages_alloc");

	CHECK_EQ_STR(load(good_metrics, bpf_family), "");
	/* a misspelt series, long form: the column of the name */
	snprintf(expected, sizeof(expected), "pmu/test.yaml:9:22: event 'faults': unknown eBPF series 'proc.fault'; "
		 "expected one of: %s", known);
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "{ bpf: proc.faults }", "{ bpf: proc.fault }")), expected);
	/* ... and shorthand */
	snprintf(expected, sizeof(expected), "pmu/test.yaml:14:14: event 'alloc': unknown eBPF series "
		 "'pages_alloc'; expected one of: %s", known);
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "alloc: proc.pages_alloc", "alloc: pages_alloc")),
		     expected);
	/* a bpf event in a perf role, and a perf event in a bpf role */
	CHECK_EQ_STR(load(good_metrics, replace(good_family, "flux_rd: event=0x01", "flux_rd: { bpf: proc.faults }")),
		     "pmu/test.yaml:9:16: event 'flux_rd': 'bpf' events belong in a role with 'source: bpf'");
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "{ bpf: proc.faults }", "{ perf: page-faults }")),
		     "pmu/test.yaml:9:15: event 'faults': a 'source: bpf' role takes only 'bpf' events");
	{
		char damon_family[2048];

		snprintf(damon_family, sizeof(damon_family), "%s",
			 replace(bpf_family, "    source: bpf\n", "    source: damon\n"));
		CHECK_EQ_STR(load(good_metrics, replace(damon_family, "{ bpf: proc.faults }", "{ damon: hot_bytes }")),
			     "pmu/test.yaml:9:24: event 'faults': DAMON series 'hot_bytes' must be damon.NAME");
	}
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "    source: bpf\n    scope: system",
						"    source: ebpf\n    scope: system")),
		     "pmu/test.yaml:6:13: role 'proc': unknown source; expected perf, procfs, bpf, plugin or damon");
	/* a procfs statistic of a file memscope does not read, and one without a key */
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "    source: bpf\n    scope: system",
						"    source: procfs\n    scope: system")),
		     "pmu/test.yaml:9:15: event 'faults': a 'source: procfs' role takes only 'procfs' events");
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "    source: bpf\n    scope: system\n    events:\n"
						"      faults: { bpf: proc.faults }",
						"    source: procfs\n    scope: node\n    events:\n"
						"      faults: { procfs: meminfo/MemFree }")),
		     "pmu/test.yaml:9:25: event 'faults': procfs statistic 'meminfo/MemFree' must be vmstat/KEY, "
		     "numastat/KEY, node_vmstat/KEY or node_meminfo/KEY");
	CHECK_EQ_STR(load(good_metrics, replace(bpf_family, "    source: bpf\n    scope: system\n    events:\n"
						"      faults: { bpf: proc.faults }",
						"    source: procfs\n    scope: node\n    events:\n"
						"      faults: { procfs: node_meminfo/ }")),
		     "pmu/test.yaml:9:25: event 'faults': procfs statistic 'node_meminfo/' must be vmstat/KEY, "
		     "numastat/KEY, node_vmstat/KEY or node_meminfo/KEY");

	/* the shipped family: every proc.* metric is built on eBPF series */
	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (catalog_load(&cat, dir, &err) != 0) {
		CHECK_FAIL("%s", err.text);
		return;
	}
	for (int f = 0; f < cat->nr_families; f++) {
		const struct catalog_family *fam = &cat->families[f];

		if (strcmp(fam->name, "linux-ebpf") != 0)
			continue;
		CHECK(fam->nr_metrics >= 8);
		for (int r = 0; r < fam->nr_roles; r++) {
			CHECK_EQ_INT(fam->roles[r].source, ROLE_BPF);
			for (int e = 0; e < fam->roles[r].nr_events; e++) {
				CHECK_EQ_INT(fam->roles[r].events[e].how, EVENT_HOW_BPF);
				CHECK(bpf_series_name_known(fam->roles[r].events[e].text));
			}
		}
		for (int m = 0; m < fam->nr_metrics; m++)
			CHECK_EQ_INT(strncmp(cat->metrics[fam->metrics[m].metric].name, "proc.", 5), 0);
	}
	catalog_free(cat);
}

static bool lookup_fixed(const struct expr *ref, void *ctx, double *value)
{
	(void)ctx;
	if (strcmp(ref->name, "a") == 0) {
		*value = 6;
		return true;
	}
	return false;
}

static void test_expr(void)
{
	char msg[256], text[128];
	int offset = -1;
	const char *fault = "unset";
	struct expr *e = expr_parse("(a + 2) * 64 / 0x10 - -1", &offset, msg, sizeof(msg));

	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_NEAR(expr_eval(e, lookup_fixed, NULL, &fault), 33.0, 1e-12);
	CHECK(fault == NULL);
	expr_format(e, text, sizeof(text));
	CHECK_EQ_STR(text, "(a + 2) * 64 / 16 - -1");
	expr_free(e);
	/* division by zero is "no value", never inf */
	e = expr_parse("a / (a - 6)", &offset, msg, sizeof(msg));
	expr_eval(e, lookup_fixed, NULL, &fault);
	CHECK_EQ_STR(fault ? fault : "(null)", EXPR_FAULT_DIVISION);
	expr_free(e);
	/* Overflow is no value either, with its own reason (it used to print
	 * inf and drop out of JSON output). */
	e = expr_parse("1e308 * 1e308", &offset, msg, sizeof(msg));
	CHECK_EQ_INT(expr_eval(e, lookup_fixed, NULL, &fault) == 0, 1);
	CHECK_EQ_STR(fault ? fault : "(null)", EXPR_FAULT_RANGE);
	expr_free(e);
	e = expr_parse("-1e308 * 10 + a", &offset, msg, sizeof(msg));
	expr_eval(e, lookup_fixed, NULL, &fault);
	CHECK_EQ_STR(fault ? fault : "(null)", EXPR_FAULT_RANGE);
	expr_free(e);
	CHECK(expr_parse("a +", &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_INT(offset, 3);
	CHECK_EQ_STR(msg, "expected a number, a name or '(' at the end of the formula");
	CHECK(expr_parse("2a", &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_INT(offset, 1);
}

static int count_refs(struct expr *ref, void *ctx);

/* perf's choice, comparisons, min and max: values worked out by hand (a = 6),
 * only the branch taken is evaluated, and the text comes back as written. */
static void check_formula(const char *text, double want, const char *formatted)
{
	char msg[256], out[256];
	int offset = -1, refs = 0;
	const char *fault = "unset";
	struct expr *e = expr_parse(text, &offset, msg, sizeof(msg));

	CHECK(e != NULL);
	if (!e) {
		fprintf(stderr, "%s: %d: %s\n", text, offset, msg);
		return;
	}
	CHECK_NEAR(expr_eval(e, lookup_fixed, NULL, &fault), want, 1e-12);
	CHECK(fault == NULL);
	expr_format(e, out, sizeof(out));
	CHECK_EQ_STR(out, formatted);
	CHECK_EQ_INT(expr_each_ref(e, count_refs, &refs), 0);
	expr_free(e);
}

static void test_expr_choice(void)
{
	char msg[256];
	int offset = -1;
	const char *fault = NULL;
	struct expr *e;

	check_formula("min(a, 4) + max(a, 4)", 10.0, "min(a, 4) + max(a, 4)");
	check_formula("max((a - 10) / a, 0)", 0.0, "max((a - 10) / a, 0)");
	check_formula("a / 2 if a > 5 else a", 3.0, "a / 2 if a > 5 else a");
	check_formula("a / 2 if a < 5 else a", 6.0, "a / 2 if a < 5 else a");
	/* the condition is a number: not 0 holds */
	check_formula("1 if a - 6 else 2", 2.0, "1 if a - 6 else 2");
	/* right-associative, as perf's */
	check_formula("1 if a < 0 else 2 if a < 7 else 3", 2.0, "1 if a < 0 else 2 if a < 7 else 3");
	/* inside a sum it needs its parentheses, and keeps them */
	check_formula("10 * (a if a > 0 else 0) - 1", 59.0, "10 * (a if a > 0 else 0) - 1");
	check_formula("(a > 5) + (a < 5)", 1.0, "(a > 5) + (a < 5)");
	/* the branch not taken may divide by zero */
	check_formula("a if a > 0 else a / 0", 6.0, "a if a > 0 else a / 0");
	/* the branch taken may not */
	e = expr_parse("a / 0 if a > 0 else a", &offset, msg, sizeof(msg));
	expr_eval(e, lookup_fixed, NULL, &fault);
	CHECK_EQ_STR(fault ? fault : "(null)", EXPR_FAULT_DIVISION);
	expr_free(e);
	/* a name that starts with a keyword is a name */
	e = expr_parse("iffy + elsewhere + minimum", &offset, msg, sizeof(msg));
	CHECK(e != NULL);
	expr_free(e);
	CHECK(expr_parse("a if a > 0", &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_STR(msg, "expected 'else' after the condition of 'if' at the end of the formula");
	CHECK(expr_parse("min(a)", &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_INT(offset, 5);
	CHECK_EQ_STR(msg, "expected ',' between the two arguments of min or max, found ')'");
	CHECK(expr_parse("avg(a, 1)", &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_INT(offset, 0);
	CHECK_CONTAINS(msg, "min( or max(");
	CHECK(expr_parse("if a else 1", &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_INT(offset, 0);
}

/* Formulas deep enough to overflow the stack of every recursive walk (the
 * parser, expr_each_ref, eval, format, free): refused by the parser with
 * where and why; the deepest allowed ones still work. */
static int count_refs(struct expr *ref, void *ctx)
{
	(void)ref;
	(*(int *)ctx)++;
	return 0;
}

static void test_expr_depth(void)
{
	size_t n = 300000;
	char *text = malloc(4 * n + 16), msg[256];
	int offset = -1, refs = 0;
	const char *fault;
	struct expr *e;

	/* 100,000 parentheses */
	memset(text, '(', 100000);
	strcpy(text + 100000, "a");
	CHECK(expr_parse(text, &offset, msg, sizeof(msg)) == NULL);
	CHECK_EQ_INT(offset, EXPR_MAX_DEPTH);
	CHECK_CONTAINS(msg, "the formula nests more than 1000 levels");
	/* 300,000 signs */
	memset(text, '-', n);
	strcpy(text + n, "a");
	CHECK(expr_parse(text, &offset, msg, sizeof(msg)) == NULL);
	CHECK_CONTAINS(msg, "the formula nests more than 1000 levels");
	/* a 300,000-term sum, and a product */
	for (size_t i = 0; i < n; i++)
		memcpy(text + 2 * i, i ? "+a" : " a", 2);
	text[2 * n] = '\0';
	CHECK(expr_parse(text, &offset, msg, sizeof(msg)) == NULL);
	CHECK_CONTAINS(msg, "the formula nests more than 1000 levels");
	CHECK_EQ_INT(offset, 2 * EXPR_MAX_DEPTH + 2);   /* just after the 1,001st term */
	for (size_t i = 0; i < n; i++)
		text[2 * i] = i ? '*' : ' ';
	CHECK(expr_parse(text, &offset, msg, sizeof(msg)) == NULL);
	/* 1,000 terms, 999 parentheses: fine, and walked without trouble. */
	for (size_t i = 0; i < 1000; i++)
		memcpy(text + 2 * i, i ? "+a" : " a", 2);
	text[2000] = '\0';
	e = expr_parse(text, &offset, msg, sizeof(msg));
	CHECK(e != NULL);
	CHECK_EQ_INT(expr_each_ref(e, count_refs, &refs), 0);
	CHECK_EQ_INT(refs, 1000);
	CHECK_NEAR(expr_eval(e, lookup_fixed, NULL, &fault), 6000.0, 1e-9);
	expr_free(e);
	memset(text, '(', 999);
	strcpy(text + 999, "a");
	for (int i = 0; i < 999; i++)
		strcat(text, ")");
	e = expr_parse(text, &offset, msg, sizeof(msg));
	CHECK(e != NULL);
	expr_free(e);
	free(text);
}

int main(void)
{
	test_shipped_catalog();
	test_good();
	test_errors();
	test_bpf_events();
	test_bad_values();
	test_expr_choice();
	test_expr();
	test_expr_depth();
	return check_summary("catalog");
}
