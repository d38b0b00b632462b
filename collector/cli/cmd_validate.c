/* memscope validate: run workloads whose traffic is known (memscope-bench
 * touch, stream --kernels triad, lat) under a session, and compare what each
 * metric and event measured with what the workload did: agrees within a
 * tolerance, disagrees by a factor, or cannot be checked here (and why).
 * With --replay, the counts come from a replay file and the expectations from
 * a file (--expect), so the comparison can be checked on any machine. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/validation_store.h"
#include "metrics/metrics.h"
#include "pipeline/session.h"
#include "util/report.h"

#define MAX_EXPECT 16
#define MAX_CHECKS 16
#define MAX_VERDICTS (MAX_CHECKS * MAX_EXPECT)

struct expect {
	char metric[64];            /* a catalog metric or an event (series) name */
	int node;                   /* -1: the whole system */
	double value;
	double tolerance;
	bool absolute;              /* ratios: |measured - expected| <= tolerance */
};

struct check {
	char workload[160];
	char *argv[24];             /* memscope-bench arguments (live) */
	int argc;
	char events[256];
	char metrics[256];
	struct expect exp[MAX_EXPECT];
	int nr;
	char skip[300];             /* set: nothing of it can run here, and why */
};

struct totals {
	const struct check *check;
	struct session *s;
	double sum[MAX_EXPECT];     /* counters: sum; averages: value x seconds */
	double seconds[MAX_EXPECT];
	bool seen[MAX_EXPECT];
};

static void expect_add(struct check *c, const char *metric, int node, double value, double tol, bool absolute)
{
	struct expect *e = &c->exp[c->nr++];

	snprintf(e->metric, sizeof(e->metric), "%s", metric);
	e->node = node;
	e->value = value;
	e->tolerance = tol;
	e->absolute = absolute;
}

static void check_args(struct check *c, const char *bench, const char *args)
{
	char *copy = strdup(args), *save = NULL;

	c->argv[c->argc++] = strdup(bench);
	for (char *t = strtok_r(copy, " ", &save); t && c->argc < 22; t = strtok_r(NULL, " ", &save))
		c->argv[c->argc++] = strdup(t);
	c->argv[c->argc] = NULL;
	free(copy);
}

static size_t last_level_cache(void)
{
	size_t best = 0;

	for (int i = 0; i < 8; i++) {
		char path[128], text[64];
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!(f = fopen(path, "r")))
			break;
		if (fgets(text, sizeof(text), f)) {
			char *end;
			size_t v = strtoul(text, &end, 10);

			v *= *end == 'K' ? 1024 : *end == 'M' ? 1 << 20 : 1;
			if (v > best)
				best = v;
		}
		fclose(f);
	}
	return best ? best : 32u << 20;
}

/* The checks of a live run: faults and page placement (kernel and eBPF), a
 * triad of known bytes on each node (memory controller counters), local and
 * remote reads (remote ratio), a chase that misses the LLC on every load. */
static int live_checks(const struct host *host, const char *bench, struct check *c)
{
	int n = 0, pages = 16384, cpu0 = host->topo.cpus[0].cpu;
	size_t llc = last_level_cache(), triad = 4 * llc;
	char args[256];

	/* 1. Faults: one per page touched (plus the program's own start-up, < 2%). */
	snprintf(c[n].workload, sizeof(c[n].workload), "first touch of %d pages", pages);
	snprintf(args, sizeof(args), "touch --pages %d --cpu %d --no-plot --format csv", pages, cpu0);
	check_args(&c[n], bench, args);
	snprintf(c[n].events, sizeof(c[n].events), "page-faults,proc.faults");
	snprintf(c[n].metrics, sizeof(c[n].metrics), "kernel.faults");
	expect_add(&c[n], "page-faults", -1, pages, 0.05, false);
	expect_add(&c[n], "proc.faults", -1, pages, 0.05, false);
	expect_add(&c[n], "kernel.faults", -1, pages, 0.05, false);
	n++;
	/* 2. Placement: the pages bound to each node land there. */
	for (int i = 0; i < host->topo.nr_nodes && n < MAX_CHECKS - 3; i++) {
		int node = host->topo.nodes[i];

		snprintf(c[n].workload, sizeof(c[n].workload), "first touch of %d pages bound to node %d", pages, node);
		snprintf(args, sizeof(args), "touch --pages %d --node %d --no-plot --format csv", pages, node);
		check_args(&c[n], bench, args);
		snprintf(c[n].events, sizeof(c[n].events), "proc.pages_alloc");
		expect_add(&c[n], "proc.pages_alloc", node, pages, 0.05, false);
		n++;
	}
	/* 3. A triad of known bytes: arrays of S bytes, R repetitions. First touch
	 * writes 3S (the kernel's zeroing) and the program's fill reads 3S (write
	 * allocate) and writes 3S; each triad reads 3S (b, c and a's write
	 * allocate) and writes S. */
	{
		int reps = 10;
		double s = (double)triad, rd = 3 * s * (reps + 1), wr = s * (reps + 6);

		snprintf(c[n].workload, sizeof(c[n].workload), "triad, 3 arrays of %.0f MiB, %d repetitions, on CPU %d",
			 s / (1 << 20), reps, cpu0);
		/* Exactly reps repetitions: the expected bytes count them. */
		snprintf(args, sizeof(args), "stream --kernels triad --threads 1 --cpus %d --size %zu --reps %d "
			 "--max-reps %d --no-plot --format csv", cpu0, triad, reps, reps);
		check_args(&c[n], bench, args);
		snprintf(c[n].metrics, sizeof(c[n].metrics), "mem.read_bytes,mem.write_bytes,mem.read_bw,mem.write_bw");
		expect_add(&c[n], "mem.read_bytes", host->topo.cpus[0].node, rd, 0.15, false);
		expect_add(&c[n], "mem.write_bytes", host->topo.cpus[0].node, wr, 0.15, false);
		/* The bandwidths, integrated over the run, are the same bytes. */
		expect_add(&c[n], "mem.read_bw", host->topo.cpus[0].node, rd, 0.15, false);
		expect_add(&c[n], "mem.write_bw", host->topo.cpus[0].node, wr, 0.15, false);
		n++;
	}
	/* 4. Remote ratio: reads of memory on the CPU's own node, then another's. */
	for (int remote = 0; remote < 2; remote++) {
		int node = host->topo.cpus[0].node, other = -1;

		for (int i = 0; i < host->topo.nr_nodes; i++)
			if (host->topo.nodes[i] != node)
				other = host->topo.nodes[i];
		if (remote && other < 0)
			snprintf(c[n].workload, sizeof(c[n].workload), "remote reads: CPU %d (node %d), data on another node",
				 cpu0, node);
		else
			snprintf(c[n].workload, sizeof(c[n].workload), "%s reads: CPU %d (node %d), data on node %d",
				 remote ? "remote" : "local", cpu0, node, remote ? other : node);
		snprintf(c[n].metrics, sizeof(c[n].metrics), "mem.remote_ratio");
		expect_add(&c[n], "mem.remote_ratio", -1, remote ? 1.0 : 0.0, 0.1, true);
		if (remote && other < 0) {
			snprintf(c[n].skip, sizeof(c[n].skip), "this machine has one NUMA node: nothing is remote");
		} else {
			snprintf(args, sizeof(args), "touch --pages 65536 --node %d --passes 20 --cpu %d --no-plot "
				 "--format csv", remote ? other : node, cpu0);
			check_args(&c[n], bench, args);
		}
		n++;
	}
	/* 5. LLC misses: a chase over 4x the LLC, random within windows: every load misses. */
	snprintf(c[n].workload, sizeof(c[n].workload), "pointer chase over %zu MiB (4x the LLC)", 4 * llc >> 20);
	snprintf(args, sizeof(args), "lat --pattern window --strides 64 --sizes %zu --min-time 300 --reps 5 --cpu %d "
		 "--no-plot --format csv", 4 * llc, cpu0);
	check_args(&c[n], bench, args);
	snprintf(c[n].metrics, sizeof(c[n].metrics), "llc.miss_rate");
	expect_add(&c[n], "llc.miss_rate", -1, 1.0, 0.1, true);
	n++;
	return n;
}

/* --expect FILE: {"format": "memscope-validate-expect", "version": 1,
 * "workload": TEXT, "expect": [{"metric", "node" (optional), "value",
 * "tolerance" (optional, 0.15), "absolute" (optional)}]}. */
static int expect_file(const char *path, struct check *c, struct ms_error *err)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *list, *e;
	const char *fmt;
	size_t i;
	char metrics[256] = "";

	if (!root) {
		ms_error_set(err, "%s:%d: %s", path, jerr.line, jerr.text);
		return -1;
	}
	fmt = json_string_value(json_object_get(root, "format"));
	list = json_object_get(root, "expect");
	if (!fmt || strcmp(fmt, "memscope-validate-expect") || !json_is_array(list) || !json_array_size(list)) {
		ms_error_set(err, "%s: not an expectation file: it needs \"format\": \"memscope-validate-expect\" and a "
			     "non-empty \"expect\" list (see memscope-validate(1))", path);
		json_decref(root);
		return -1;
	}
	snprintf(c->workload, sizeof(c->workload), "%s",
		 json_string_value(json_object_get(root, "workload")) ? json_string_value(json_object_get(root, "workload"))
								       : path);
	json_array_foreach(list, i, e) {
		const char *m = json_string_value(json_object_get(e, "metric"));
		json_t *v = json_object_get(e, "value"), *node = json_object_get(e, "node"),
		       *tol = json_object_get(e, "tolerance");

		if (!m || !json_is_number(v) || (node && !json_is_integer(node)) || (tol && !json_is_number(tol))) {
			ms_error_set(err, "%s: expect[%zu]: needs \"metric\" (text), \"value\" (a number), and optional "
				     "\"node\" (an integer) and \"tolerance\" (a number)", path, i);
			json_decref(root);
			return -1;
		}
		if (c->nr >= MAX_EXPECT) {
			ms_error_set(err, "%s: more than %d expectations", path, MAX_EXPECT);
			json_decref(root);
			return -1;
		}
		expect_add(c, m, node ? (int)json_integer_value(node) : -1, json_number_value(v),
			   tol ? json_number_value(tol) : 0.15, json_is_true(json_object_get(e, "absolute")));
		if (!strstr(metrics, m))
			snprintf(metrics + strlen(metrics), sizeof(metrics) - strlen(metrics), "%s%s", metrics[0] ? "," : "", m);
	}
	snprintf(c->metrics, sizeof(c->metrics), "%s", metrics);
	json_decref(root);
	return 0;
}

static bool is_counter_metric(const struct session *s, const char *name)
{
	int i = s->catalog ? catalog_metric_index(s->catalog, name) : -1;

	return i < 0 || s->catalog->metrics[i].kind == METRIC_COUNTER || !strcmp(s->catalog->metrics[i].unit, "B/s");
}

static int scope_index(const struct metric_engine *engine, int node)
{
	if (node < 0)
		return 0;
	for (int i = 0; i < metric_engine_nr_scopes(engine, SCOPE_NODE); i++)
		if (metric_engine_scope_id(engine, SCOPE_NODE, i) == node)
			return i;
	return -1;
}

/* The validation's sink: each frame's metric values (computed once by the
 * session) and raw series add up into the totals to judge. */
static int validate_frame(struct sink *sink, const struct sink_frame *f)
{
	struct totals *t = sink->priv;
	struct session *s = t->s;
	const struct frame *frame = f->frame;
	double seconds = (double)frame->interval_ns * 1e-9;

	for (int e = 0; e < t->check->nr; e++) {
		const struct expect *x = &t->check->exp[e];
		int pm = s->plan ? metric_plan_find(s->plan, x->metric) : -1;

		if (pm >= 0) {
			int idx = scope_index(s->engine, x->node);
			const struct metric_value *v = idx < 0 ? NULL :
				metric_engine_value(s->engine, f->metrics, pm, x->node < 0 ? SCOPE_SYSTEM : SCOPE_NODE, idx);

			if (v && v->valid && isfinite(v->value)) {
				/* Counts add up; a bandwidth times its interval is bytes; ratios are averaged. */
				bool rate = !strcmp(s->catalog->metrics[catalog_metric_index(s->catalog, x->metric)].unit, "B/s");

				t->sum[e] += is_counter_metric(s, x->metric) ? v->value * (rate ? seconds : 1) : v->value * seconds;
				t->seconds[e] += seconds;
				t->seen[e] = true;
			}
			continue;
		}
		for (int i = 0; i < session_series(s)->nr && i < frame->nr; i++) {
			const struct series *se = &session_series(s)->series[i];

			if (strcmp(se->name, x->metric) || !frame->samples[i].valid || se->unavailable)
				continue;
			if (x->node >= 0 && se->labels.node != x->node)
				continue;
			t->sum[e] += sample_scaled(&frame->samples[i]) * se->scale;
			t->seen[e] = true;
		}
	}
	return 0;
}

static int validate_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	(void)sink;
	(void)setup;
	(void)err;
	return 0;
}

static void validate_end(struct sink *sink, const struct sink_end *end)
{
	(void)sink;
	(void)end;
}

static const struct sink_ops validate_sink_ops = {
	.name = "validate",
	.open = validate_open,
	.frame = validate_frame,
	.end = validate_end,
};

static void judge(const struct check *c, int e, const struct totals *t, const char *why, struct verdict *v)
{
	const struct expect *x = &c->exp[e];

	memset(v, 0, sizeof(*v));
	snprintf(v->metric, sizeof(v->metric), "%s", x->metric);
	snprintf(v->workload, sizeof(v->workload), "%s", c->workload);
	v->node = x->node;
	v->expected = x->value;
	v->tolerance = x->tolerance;
	v->absolute = x->absolute;
	if (why || !t || !t->seen[e]) {
		v->kind = VERDICT_UNCHECKED;
		snprintf(v->why, sizeof(v->why), "%s", why ? why : "no value was read during the workload");
		return;
	}
	v->measured = t->sum[e];
	if (!is_counter_metric(t->s, x->metric) && t->seconds[e] > 0)
		v->measured = t->sum[e] / t->seconds[e];
	v->ratio = x->value != 0 ? v->measured / x->value : NAN;
	if (x->absolute)
		v->kind = fabs(v->measured - x->value) <= x->tolerance ? VERDICT_AGREES : VERDICT_DISAGREES;
	else
		v->kind = fabs(v->ratio - 1) <= x->tolerance ? VERDICT_AGREES : VERDICT_DISAGREES;
}

/* Why one expectation cannot be checked in this session, or NULL. */
static const char *expect_why(struct session *s, const struct expect *x, char *buf, size_t size)
{
	const char *why = session_metric_why(s, x->metric);

	if (why)
		return why;
	if (session_name_why(s, x->metric)) {
		snprintf(buf, size, "its source did not start: %s", session_name_why(s, x->metric));
		return buf;
	}
	for (int i = 0; i < session_series(s)->nr; i++) {
		const struct series *se = &session_series(s)->series[i];

		if (!strcmp(se->name, x->metric) && se->unavailable) {
			snprintf(buf, size, "%s", se->unavailable);
			return buf;
		}
	}
	return NULL;
}

/* Run one check and judge each of its expectations. */
/* Counts and bytes in full (4429185024, not 4.42919e+09); ratios and other
 * fractions with six significant digits. */
static void table_number(double value, char *buf, size_t size)
{
	if (isfinite(value) && (fabs(value) >= 1e6 || (value == floor(value) && fabs(value) < 1e18)))
		snprintf(buf, size, "%.0f", value);
	else
		snprintf(buf, size, "%.6g", value);
}

static int run_check(const struct check *c, const char *replay, struct verdict *out)
{
	struct session_options opt;
	struct session s;
	struct totals t;
	struct sink sink;
	struct ms_error err = { "" };
	char whybuf[MAX_EXPECT][400];
	const char *why[MAX_EXPECT] = { NULL };
	int saved = -1, status;

	if (c->skip[0]) {
		for (int e = 0; e < c->nr; e++)
			judge(c, e, NULL, c->skip, &out[e]);
		return c->nr;
	}
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	session_options_init(&opt, "validate");
	opt.metrics_if_available = true;
	opt.bpf_optional = true;
	opt.notes = fopen("/dev/null", "w");
	if ((c->events[0] && !replay && name_list_add_text(&opt.events, c->events, &err) < 0) ||
	    (c->metrics[0] && name_list_add_text(&opt.metrics, c->metrics, &err) < 0)) {
		session_options_free(&opt);
		fclose(opt.notes);
		for (int e = 0; e < c->nr; e++)
			judge(c, e, NULL, err.text, &out[e]);
		return c->nr;
	}
	if (replay)
		opt.replay_path = replay;
	else
		opt.command = (char **)c->argv;
	/* The workload's own output is not validate's: it goes to /dev/null. */
	if (!replay) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			close(null);
		}
	}
	status = session_open(&s, &opt, &err);
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	t.check = c;
	t.s = &s;
	sink = (struct sink){ .ops = &validate_sink_ops, .priv = &t };
	if (status == 0 && (session_add_sink(&s, &sink, NULL, &err) < 0 || session_run(&s, &opt, &err) < 0))
		status = 1;
	if (status == 0 && !replay && session_exit_code(&s) != 0) {
		ms_error_set(&err, "the workload exited with status %d", session_exit_code(&s));
		status = 1;
	}
	for (int e = 0; e < c->nr; e++) {
		if (status)
			why[e] = err.text;
		else
			why[e] = expect_why(&s, &c->exp[e], whybuf[e], sizeof(whybuf[e]));
		judge(c, e, status ? NULL : &t, why[e], &out[e]);
	}
	session_close(&s);
	session_options_free(&opt);
	if (opt.notes)
		fclose(opt.notes);
	return c->nr;
}

enum { OPT_WRITE = CLI_LONG_ONLY, OPT_REPLAY, OPT_EXPECT };

struct validate_args {
	const char *replay, *expect, *write_path;
	bool write;
};

#define VALIDATE_REPLAY_EXPECT "--replay and --expect go together: the counts and what they should show"

/* Combinations validate refuses; --help lists them. */
static const struct cli_rule validate_rules[] = {
	{ CLI_NEEDS, OPT_REPLAY, { OPT_EXPECT }, VALIDATE_REPLAY_EXPECT },
	{ CLI_NEEDS, OPT_EXPECT, { OPT_REPLAY }, VALIDATE_REPLAY_EXPECT },
	{ 0 },
};

static const struct cli_option validate_options[] = {
	{ OPT_WRITE, "write", "FILE", "keep the verdicts for memscope list --explain (default:\n"
	  "~/.local/state/memscope/validation.json, or $MEMSCOPE_VALIDATION)", CLI_COMPLETE_FILE, NULL,
	  CLI_OPTIONAL_ARG },
	{ OPT_REPLAY, "replay", "FILE", "counter values of a run (docs/replay-format.md) on the machine\n"
	  "MEMSCOPE_SYSFS_ROOT describes, instead of running the workloads", CLI_COMPLETE_FILE, NULL, 0,
	  CLI_TO_STRING(0, struct validate_args, replay) },
	{ OPT_EXPECT, "expect", "FILE", "what the replayed run should show (memscope-validate(1))",
	  CLI_COMPLETE_FILE, NULL, 0, CLI_TO_STRING(0, struct validate_args, expect) },
	{ 0 },
};

static const struct cli_group validate_groups[] = {
	{ NULL, validate_options },
	{ NULL, NULL },
};

const struct cli_command validate_command = {
	.name = "validate",
	.summary = "check this machine's metrics against workloads of known traffic",
	.usage = "[--write[=FILE]]\n--replay COUNTS.jsonl --expect EXPECT.json [--write[=FILE]]",
	.groups = validate_groups,
	.epilog = "Runs workloads of known traffic (memscope-bench touch, triad, chase) under memscope and says,\n"
		  "for each metric this host has, whether it agrees with what the workload did.\n",
	.rules = validate_rules,
};

static int validate_option(void *ctx, int key, const char *arg)
{
	struct validate_args *a = ctx;

	switch (key) {
	case OPT_WRITE: a->write = true; a->write_path = arg; return 0;
	default: return -1;
	}
}

int cmd_validate(int argc, char **argv)
{
	static struct check checks[MAX_CHECKS];
	static struct verdict verdicts[MAX_VERDICTS];
	struct validate_args args = { NULL, NULL, NULL, false };
	const char *replay, *expect, *write_path;
	bool write;
	char path[4096], bench[PATH_MAX + 64], text[600];
	struct ms_error err = { "" };
	int nr_checks = 0, nr = 0, agree = 0, disagree = 0, status = 0;
	void *const dest[] = { &args };
	int first = cli_parse_into(&validate_command, argc, argv, validate_option, &args, dest, &status);

	if (first < 0)
		return status;
	replay = args.replay;
	expect = args.expect;
	write_path = args.write_path;
	write = args.write;
	if (first < argc) {
		ms_warn("unexpected argument (give no command: validate runs its own workloads)");
		return EXIT_USAGE;
	}
	memset(checks, 0, sizeof(checks));
	if (replay) {
		if (expect_file(expect, &checks[0], &err) < 0) {
			ms_report(&err);
			return EXIT_USAGE;
		}
		nr_checks = 1;
	} else {
		struct host host;

		if (bench_program_find(bench, sizeof(bench)) < 0) {
			ms_warn("memscope-bench was not found (%s): it is built and installed with "
				"memscope; set MEMSCOPE_BENCH to its path", bench);
			return 1;
		}
		if (host_load(&host, &err) < 0) {
			ms_report(&err);
			return 1;
		}
		nr_checks = live_checks(&host, bench, checks);
		host_free(&host);
	}
	for (int i = 0; i < nr_checks; i++) {
		/* A check that cannot run here is not announced as running. */
		if (!replay && !checks[i].skip[0])
			ms_warn("%s...", checks[i].workload);
		nr += run_check(&checks[i], replay, &verdicts[nr]);
	}
	printf("%-18s %-7s %16s %16s  %s\n", "metric", "scope", "expected", "measured", "verdict");
	for (int i = 0; i < nr; i++) {
		const struct verdict *v = &verdicts[i];
		char scope[16] = "system", expected[40], measured[40];

		if (v->node >= 0)
			snprintf(scope, sizeof(scope), "node%d", v->node);
		verdict_text(v, text, sizeof(text));
		table_number(v->expected, expected, sizeof(expected));
		if (v->kind == VERDICT_UNCHECKED)
			snprintf(measured, sizeof(measured), "-");
		else
			table_number(v->measured, measured, sizeof(measured));
		printf("%-18s %-7s %16s %16s  %s\n", v->metric, scope, expected, measured, text);
		agree += v->kind == VERDICT_AGREES;
		disagree += v->kind == VERDICT_DISAGREES;
	}
	for (int i = 0; i < nr; i++)
		if (strstr(verdicts[i].metric, "_bw")) {
			printf("(bandwidths are compared integrated over the run: bytes)\n");
			break;
		}
	printf("\n%d agree, %d disagree, %d cannot be checked here.", agree, disagree, nr - agree - disagree);
	if (agree) {
		printf(" Trusted on this machine:");
		for (int i = 0; i < nr; i++) {
			bool again = false;

			for (int j = 0; j < i; j++)
				again |= verdicts[j].kind == VERDICT_AGREES && !strcmp(verdicts[j].metric, verdicts[i].metric);
			if (verdicts[i].kind == VERDICT_AGREES && !again)
				printf(" %s", verdicts[i].metric);
		}
	}
	printf("\n");
	if (write) {
		if (!write_path && validation_default_path(path, sizeof(path), &err) == 0)
			write_path = path;
		if (!write_path || validation_write(write_path, verdicts, nr, &err) < 0) {
			ms_report(&err);
			status = 1;
		} else {
			printf("Verdicts written to %s (memscope list --explain METRIC shows them).\n", write_path);
		}
	}
	for (int i = 0; i < nr_checks; i++)
		for (int a = 0; a < checks[i].argc; a++)
			free(checks[i].argv[a]);
	/* A disagreement is a finding about the machine's counters, not a failure to run. */
	return status ? status : disagree ? 3 : 0;
}
