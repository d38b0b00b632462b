/* memscope-bench COMMAND [OPTIONS]: see usage() and docs/bench.md. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum {
	OPT_SIZES = 0x100, OPT_STRIDES, OPT_THREADS, OPT_CPUS, OPT_CPU, OPT_REPS, OPT_MIN_TIME, OPT_HUGE,
	OPT_SIZE, OPT_PATTERN, OPT_CONF, OPT_LOCAL, OPT_REMOTE, OPT_MAX_THREADS, OPT_STATE, OPT_REF,
	OPT_HEAT_SIZE, OPT_PROCS, OPT_ROUNDS, OPT_MAX_PAR, OPT_FORMAT, OPT_OUTPUT, OPT_NO_PLOT,
	OPT_TIMER, OPT_QUIET, OPT_PHASE_MS, OPT_PAGES, OPT_NODE, OPT_KERNELS, OPT_PASSES, OPT_HELP,
	OPT_MAX_REPS, OPT_PRECISION, OPT_MAX_TIME, OPT_PLOT_FORMAT, OPT_FORCE, OPT_ISOLATE, OPT_KERNEL,
};

static const struct option longopts[] = {
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "strides", required_argument, NULL, OPT_STRIDES },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "min-time", required_argument, NULL, OPT_MIN_TIME },
	{ "huge", no_argument, NULL, OPT_HUGE },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "conf", required_argument, NULL, OPT_CONF },
	{ "local", required_argument, NULL, OPT_LOCAL },
	{ "remote", required_argument, NULL, OPT_REMOTE },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "ref", required_argument, NULL, OPT_REF },
	{ "heat-size", required_argument, NULL, OPT_HEAT_SIZE },
	{ "procs", required_argument, NULL, OPT_PROCS },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "max-par", required_argument, NULL, OPT_MAX_PAR },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "no-plot", no_argument, NULL, OPT_NO_PLOT },
	{ "plot-format", required_argument, NULL, OPT_PLOT_FORMAT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "isolate", required_argument, NULL, OPT_ISOLATE },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "timer", required_argument, NULL, OPT_TIMER },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "phase-ms", required_argument, NULL, OPT_PHASE_MS },
	{ "pages", required_argument, NULL, OPT_PAGES },
	{ "node", required_argument, NULL, OPT_NODE },
	{ "kernels", required_argument, NULL, OPT_KERNELS },
	{ "passes", required_argument, NULL, OPT_PASSES },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "max-reps", required_argument, NULL, OPT_MAX_REPS },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "max-time", required_argument, NULL, OPT_MAX_TIME },
	{ NULL, 0, NULL, 0 },
};

/* Options every command takes, then each command's own. */
static const int common_opts[] = { OPT_REPS, OPT_MAX_REPS, OPT_PRECISION, OPT_MAX_TIME, OPT_MIN_TIME, OPT_FORMAT,
				   OPT_OUTPUT, OPT_NO_PLOT, OPT_PLOT_FORMAT, OPT_FORCE, OPT_ISOLATE, OPT_TIMER, OPT_QUIET, OPT_PHASE_MS,
				   OPT_HELP, 0 };

struct command {
	const char *name;
	int (*run)(struct bench_opts *o);
	const char *summary;
	int opts[12];
	bool plots;                 /* draws a plot by default */
};

static const struct command commands[] = {
	{ "bw", bench_bw, "bandwidth of rd|wr|rdwr|cp|bzero|all over sizes from L1 to DRAM",
	  { OPT_SIZES, OPT_CPU, OPT_HUGE, OPT_KERNEL }, true },
	{ "lat", bench_lat, "load latency by pointer chasing, strides 16..512 B, over sizes",
	  { OPT_SIZES, OPT_STRIDES, OPT_PATTERN, OPT_CPU, OPT_HUGE }, true },
	{ "par", bench_par, "memory-level parallelism: loads in flight from independent chains",
	  { OPT_SIZES, OPT_MAX_PAR, OPT_CPU, OPT_HUGE }, true },
	{ "ctx", bench_ctx, "context switch time: processes passing a token through pipes on one CPU",
	  { OPT_PROCS, OPT_SIZE, OPT_CPU, OPT_ROUNDS }, false },
	{ "stream", bench_stream, "STREAM copy/scale/add/triad with 1..N concurrent instances",
	  { OPT_SIZE, OPT_THREADS, OPT_CPUS, OPT_KERNELS, OPT_HUGE, OPT_KERNEL }, true },
	{ "numa-triad", bench_numa_triad, "triad with threads and data in (xL, yR) placements, --conf 1|2|3",
	  { OPT_CONF, OPT_SIZE, OPT_LOCAL, OPT_REMOTE, OPT_MAX_THREADS, OPT_HUGE }, true },
	{ "c2c", bench_c2c, "core-to-core: latency and read bandwidth of lines another core left M/E/S",
	  { OPT_STATE, OPT_SIZES, OPT_REF, OPT_CPUS, OPT_HEAT_SIZE, OPT_HUGE }, true },
	{ "touch", bench_touch, "first touch of N pages on node K (a workload of known page placement)",
	  { OPT_PAGES, OPT_NODE, OPT_CPU, OPT_PASSES }, false },
	{ "selftest", bench_selftest, "check the kernels, chains, timer and cache maintenance of this build",
	  { OPT_CPU }, false },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: memscope-bench COMMAND [OPTIONS]     (also: memscope bench COMMAND ...)\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\noptions (each command takes those that apply to it):\n"
		"  --sizes LIST|A-B     sizes (4K,1M,...) or a range A-B in half-octave steps\n"
		"  --pattern window|seq|random  lat: random within 64 KiB windows taken in order (default: the\n"
		"                       prefetchers miss, the TLB does not, the curve shows the caches), in\n"
		"                       address order (lmbench lat_mem_rd), or one random cycle (TLB misses too)\n"
		"  --strides LIST       lat: strides in bytes (default 64; with seq 16,32,64,128,256,512)\n"
		"  --size SIZE          stream, numa-triad: bytes per array; ctx: working set per process\n"
		"  --threads LIST|A-B   stream: numbers of concurrent instances (default 1..CPUs)\n"
		"  --kernels LIST       stream: some of copy,scale,add,triad (default all four)\n"
		"  --kernel WIDTH       bw, stream: the loops' vector width: scalar, sse2, avx2, avx512 (x86-64),\n"
		"                       neon, sve (aarch64); default the widest this CPU has\n"
		"  --cpus LIST          CPUs to use, in order (default: every online CPU)\n"
		"  --cpu N              pin a single-threaded benchmark to CPU N\n"
		"  --conf 1|2|3         numa-triad: 1 threads on both nodes, data on L; 2 cross; 3 split\n"
		"  --local N --remote M numa-triad: the nodes L and R (default: the first two)\n"
		"  --max-threads N      numa-triad: x and y go 0..N (default: CPUs of a node)\n"
		"  --state M|E|S        c2c: the state the lines are left in (default M)\n"
		"  --ref CPU            c2c: the reference core (default: the first CPU)\n"
		"  --heat-size SIZE     c2c: the size of the all-pairs heat map (default: half of L1)\n"
		"  --procs N            ctx: processes in the ring (default 2)\n"
		"  --rounds N           ctx: round trips per measurement (default: by --min-time)\n"
		"  --max-par N          par: most chains at once (default 16)\n"
		"  --pages N --node K   touch: pages to touch and the node to bind them to\n"
		"  --passes P           touch: then read them all P times\n"
		"  --huge               ask for transparent huge pages (default: 4 KiB pages)\n"
		"  --reps N             at least N repetitions of each point (default 6); then more until the\n"
		"                       95%% interval of the median is within --precision of it\n"
		"  --precision PCT      the interval's half-width that is enough, in %% of the median (default 2)\n"
		"  --max-reps N         at most N repetitions of a point (default 50)\n"
		"  --max-time S         at most S seconds of repetitions for a point (default 1)\n"
		"  --min-time MS        each timed repetition lasts at least MS (default 20)\n"
		"  --phase-ms MS        under memscope record: each phase lasts at least MS (default 1000)\n"
		"  --timer auto|cycles|clock   time with the TSC/cntvct_el0 or clock_gettime (default auto)\n"
		"  --format table|csv|json      output on stdout (default table)\n"
		"  -o, --output PREFIX  write PREFIX.json and the plot PREFIX.png (default memscope-bench-COMMAND);\n"
		"                       files of an earlier run are kept: PREFIX-1, PREFIX-2, ... instead\n"
		"  --isolate LIST       run only on these CPUs, under SCHED_FIFO where this user may (the JSON\n"
		"                       says which); the first is the --cpu of single-threaded benchmarks\n"
		"  --force              replace the files of an earlier run at PREFIX (all its plot formats)\n"
		"  --plot-format LIST   the plot files: some of png, svg, pdf (default png), and only those\n"
		"  --no-plot            write no files    --quiet   no progress\n");
}

static int parse_long(const char *opt, const char *text, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	if (errno || end == text || *end || *out < lo || *out > hi)
		return bench_usage_error("%s '%s': expected a whole number from %ld to %ld", opt, text, lo, hi);
	return 0;
}

/* "4K-64M": half-octave steps (1, 1.5, 2, 3, 4, 6 ... times a power of two). */
static int size_range(const char *opt, size_t lo, size_t hi, size_t *out, int max)
{
	int n = 0;

	if (lo == 0 || hi < lo)
		return bench_usage_error("%s: a range A-B needs 0 < A <= B", opt);
	for (size_t p = 1; p <= hi && n < max; p <<= 1) {
		size_t steps[2] = { p, p + p / 2 };

		for (int k = 0; k < 2 && n < max; k++)
			if (steps[k] >= lo && steps[k] <= hi && (k == 0 || p >= 2))
				out[n++] = steps[k];
	}
	if (n && out[n - 1] != hi && n < max && out[0] <= hi)
		out[n++] = hi;
	return n;
}

static int parse_sizes(const char *opt, const char *text, size_t *out, int max)
{
	char buf[256], *save = NULL;
	const char *dash = strchr(text, '-');
	int n = 0;

	if (dash && !strchr(text, ',')) {
		size_t lo, hi;

		snprintf(buf, sizeof(buf), "%.*s", (int)(dash - text), text);
		if (parse_size(buf, &lo) < 0 || parse_size(dash + 1, &hi) < 0)
			return bench_usage_error("%s '%s': expected SIZE-SIZE like 4K-64M", opt, text), -1;
		return size_range(opt, lo, hi, out, max);
	}
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n >= max)
			return bench_usage_error("%s: at most %d values", opt, max), -1;
		if (parse_size(tok, &out[n]) < 0 || !out[n])
			return bench_usage_error("%s: '%s' is not a size (like 4096, 32K, 1.5M, 2G)", opt, tok), -1;
		n++;
	}
	return n;
}

/* "0,2,5" or "1-4" (every value) of whole numbers in lo..hi. */
static int parse_ints(const char *opt, const char *text, int *out, int max, long lo, long hi)
{
	char buf[1024], *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(tok, &end, 10);
		b = a;
		if (*end == '-' && end != tok)
			b = strtol(end + 1, &end, 10);
		if (errno || end == tok || *end)
			return bench_usage_error("%s: '%s' is not a number or a range A-B", opt, tok), -1;
		if (a < lo || b > hi || b < a)
			return bench_usage_error("%s: %s is out of range %ld..%ld", opt, tok, lo, hi), -1;
		for (long v = a; v <= b; v++) {
			if (n >= max)
				return bench_usage_error("%s: at most %d values", opt, max), -1;
			out[n++] = (int)v;
		}
	}
	return n;
}

static bool allowed(const struct command *cmd, int c)
{
	for (int i = 0; common_opts[i]; i++)
		if (common_opts[i] == c)
			return true;
	for (int i = 0; i < 12 && cmd->opts[i]; i++)
		if (cmd->opts[i] == c)
			return true;
	return false;
}

static const char *opt_name(int c)
{
	for (int i = 0; longopts[i].name; i++)
		if (longopts[i].val == c)
			return longopts[i].name;
	return "?";
}

static int parse(struct bench_opts *o, const struct command *cmd, int argc, char **argv)
{
	static char prefix[256];
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == 'o')
			c = OPT_OUTPUT;
		if (c == 'h')
			c = OPT_HELP;
		if (c == '?')
			return 2;
		if (!allowed(cmd, c))
			return bench_usage_error("--%s does not apply to %s", opt_name(c), cmd->name);
		switch (c) {
		case OPT_SIZES:
			if ((o->nr_sizes = parse_sizes("--sizes", optarg, o->sizes, BENCH_MAX_LIST)) <= 0)
				return 2;
			break;
		case OPT_STRIDES:
			if ((o->nr_strides = parse_sizes("--strides", optarg, o->strides, BENCH_MAX_LIST)) <= 0)
				return 2;
			for (int i = 0; i < o->nr_strides; i++)
				if (o->strides[i] < sizeof(void *) || o->strides[i] % sizeof(void *))
					return bench_usage_error("--strides: %zu is not a multiple of %zu bytes (a pointer)",
								 o->strides[i], sizeof(void *));
			break;
		case OPT_THREADS:
			if ((o->nr_threads = parse_ints("--threads", optarg, o->threads, BENCH_MAX_LIST, 1,
							BENCH_MAX_CPUS)) <= 0)
				return 2;
			break;
		case OPT_CPUS:
			if ((o->nr_cpus = parse_ints("--cpus", optarg, o->cpus, BENCH_MAX_CPUS, 0,
						     BENCH_MAX_CPUS - 1)) <= 0)
				return 2;
			for (int i = 0; i < o->nr_cpus; i++)
				if (!topo_has_cpu(&o->topo, o->cpus[i]))
					return bench_usage_error("--cpus: CPU %d is not online here", o->cpus[i]);
			break;
		case OPT_CPU:
			if (parse_long("--cpu", optarg, 0, BENCH_MAX_CPUS - 1, &v))
				return 2;
			if (!topo_has_cpu(&o->topo, (int)v))
				return bench_usage_error("--cpu: CPU %ld is not online here", v);
			o->cpu = (int)v;
			break;
		case OPT_REF:
			if (parse_long("--ref", optarg, 0, BENCH_MAX_CPUS - 1, &v))
				return 2;
			if (!topo_has_cpu(&o->topo, (int)v))
				return bench_usage_error("--ref: CPU %ld is not online here", v);
			o->ref_cpu = (int)v;
			break;
		case OPT_REPS:
			if (parse_long("--reps", optarg, 1, 1000, &v))
				return 2;
			o->reps = (int)v;
			break;
		case OPT_MAX_REPS:
			if (parse_long("--max-reps", optarg, 1, 1000, &v))
				return 2;
			o->max_reps = (int)v;
			break;
		case OPT_PRECISION: {
			char *end;
			double pct = strtod(optarg, &end);

			if (end == optarg || *end || !(pct > 0 && pct <= 100))
				return bench_usage_error("--precision '%s': expected a percentage above 0, like 2 or 0.5",
							 optarg);
			o->precision = pct / 100;
			break;
		}
		case OPT_MAX_TIME: {
			char *end;
			double sec = strtod(optarg, &end);

			if (end == optarg || *end || !(sec >= 0 && sec <= 3600))
				return bench_usage_error("--max-time '%s': expected seconds from 0 to 3600, like 1 or 0.5",
							 optarg);
			o->max_time_s = sec;
			break;
		}
		case OPT_MIN_TIME:
			if (parse_long("--min-time", optarg, 0, 60000, &v))
				return 2;
			o->min_time_s = (double)v / 1000;
			break;
		case OPT_PHASE_MS:
			if (parse_long("--phase-ms", optarg, 0, 600000, &v))
				return 2;
			o->phase_min_s = (double)v / 1000;
			break;
		case OPT_HUGE: o->huge = true; break;
		case OPT_KERNELS: {
			char buf[128], *save = NULL;

			snprintf(buf, sizeof(buf), "%s", optarg);
			o->kernels = 0;
			for (char *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
				int found = -1;

				for (int i = ST_COPY; i <= ST_TRIAD; i++)
					if (!strcmp(k, stream_kernel_name(i)))
						found = i;
				if (found < 0)
					return bench_usage_error("--kernels: '%s' is not copy, scale, add or triad", k);
				o->kernels |= 1u << found;
			}
			break;
		}
		case OPT_SIZE:
		case OPT_HEAT_SIZE: {
			size_t s;

			if (parse_size(optarg, &s) < 0 || !s)
				return bench_usage_error("--%s '%s': expected a size like 64M", opt_name(c), optarg);
			*(c == OPT_SIZE ? &o->size : &o->heat_size) = s;
			break;
		}
		case OPT_PATTERN: {
			enum chain_order how;

			if (chain_order_parse(optarg, &how) < 0)
				return bench_usage_error("--pattern '%s': expected seq, random or window", optarg);
			o->pattern = optarg;
			break;
		}
		case OPT_CONF:
			if (parse_long("--conf", optarg, 1, 3, &v))
				return 2;
			o->conf = (int)v;
			break;
		case OPT_LOCAL:
		case OPT_REMOTE:
		case OPT_NODE:
			if (parse_long(c == OPT_LOCAL ? "--local" : c == OPT_REMOTE ? "--remote" : "--node", optarg, 0,
				       BENCH_MAX_NODES - 1, &v))
				return 2;
			if (!topo_has_node(&o->topo, (int)v))
				return bench_usage_error("--%s: node %ld does not exist here", opt_name(c), v);
			*(c == OPT_LOCAL ? &o->local_node : c == OPT_REMOTE ? &o->remote_node : &o->node) = (int)v;
			break;
		case OPT_MAX_THREADS:
			if (parse_long("--max-threads", optarg, 1, 256, &v))
				return 2;
			o->max_threads = (int)v;
			break;
		case OPT_STATE: {
			enum c2c_state st;

			if (c2c_state_parse(optarg, &st) < 0)
				return bench_usage_error("--state '%s': expected M, E or S", optarg);
			o->state = optarg;
			break;
		}
		case OPT_PROCS:
			if (parse_long("--procs", optarg, 2, 64, &v))
				return 2;
			o->procs = (int)v;
			break;
		case OPT_ROUNDS:
			if (parse_long("--rounds", optarg, 1, 100000000, &v))
				return 2;
			o->rounds = v;
			break;
		case OPT_MAX_PAR:
			if (parse_long("--max-par", optarg, 1, 16, &v))
				return 2;
			o->max_par = (int)v;
			break;
		case OPT_PASSES:
			if (parse_long("--passes", optarg, 0, 1000000, &v))
				return 2;
			o->passes = (int)v;
			break;
		case OPT_PAGES:
			if (parse_long("--pages", optarg, 1, 1L << 30, &v))
				return 2;
			o->pages = (size_t)v;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "table")) o->format = FMT_TABLE;
			else if (!strcmp(optarg, "csv")) o->format = FMT_CSV;
			else if (!strcmp(optarg, "json")) o->format = FMT_JSON;
			else return bench_usage_error("--format '%s': expected table, csv or json", optarg);
			break;
		case OPT_OUTPUT:
			if (!optarg[0])
				return bench_usage_error("-o: an empty prefix");
			o->prefix = optarg;
			break;
		case OPT_NO_PLOT: o->plot = false; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_KERNEL: {
			int k = kernel_find(optarg);

			if (k < 0) {
				char names[128] = "";

				for (int i = 0; i < kernel_count(); i++)
					snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
						 kernel_name(i));
				return bench_usage_error("--kernel '%s': expected one of %s (on %s)", optarg, names,
							 arch_name(arch_this()));
			}
			if (!kernel_available(k)) {
				fprintf(stderr, "memscope-bench: --kernel %s: this CPU does not have it (%s); the widest "
					"here is %s\n", optarg, arch_this() == ARCH_AARCH64 ? "HWCAP" : "CPUID",
					kernel_name(kernel_widest()));
				return 1;
			}
			kernel_select(k);
			break;
		}
		case OPT_ISOLATE:
			if ((o->nr_isolate = parse_ints("--isolate", optarg, o->isolate, BENCH_MAX_CPUS, 0,
							BENCH_MAX_CPUS - 1)) <= 0)
				return 2;
			for (int i = 0; i < o->nr_isolate; i++)
				if (!topo_has_cpu(&o->topo, o->isolate[i]))
					return bench_usage_error("--isolate: CPU %d is not online here", o->isolate[i]);
			break;
		case OPT_PLOT_FORMAT: {
			char buf[64], *save = NULL;

			snprintf(buf, sizeof(buf), "%s", optarg);
			o->plot_formats = 0;
			for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
				int found = -1;

				for (int i = 0; i < PLOT_NR_FORMATS; i++)
					if (!strcmp(f, plot_format_name(i)))
						found = i;
				if (found < 0)
					return bench_usage_error("--plot-format: '%s' is not png, svg or pdf", f);
				o->plot_formats |= 1u << found;
			}
			if (!o->plot_formats)
				return bench_usage_error("--plot-format: give png, svg or pdf (or --no-plot for none)");
			break;
		}
		case OPT_TIMER:
			if (!strcmp(optarg, "auto")) o->timer = TIMER_AUTO;
			else if (!strcmp(optarg, "cycles")) o->timer = TIMER_CYCLES;
			else if (!strcmp(optarg, "clock")) o->timer = TIMER_CLOCK;
			else return bench_usage_error("--timer '%s': expected auto, cycles or clock", optarg);
			break;
		case OPT_QUIET: o->quiet = true; break;
		case OPT_HELP:
			usage(stdout);
			exit(0);
		}
	}
	/* bw takes its operation as a word: memscope-bench bw rd */
	if (!strcmp(cmd->name, "bw") && optind < argc) {
		const char *ops[] = { "rd", "wr", "rdwr", "cp", "bzero", "all" };
		bool ok = false;

		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			ok |= !strcmp(argv[optind], ops[i]);
		if (!ok)
			return bench_usage_error("bw '%s': expected rd, wr, rdwr, cp, bzero or all", argv[optind]);
		o->op = argv[optind++];
	}
	if (optind < argc)
		return bench_usage_error("%s: unexpected argument '%s'", cmd->name, argv[optind]);
	if (o->max_reps < o->reps)
		o->max_reps = o->reps;
	if (o->nr_isolate && !o->nr_cpus) {
		memcpy(o->cpus, o->isolate, (size_t)o->nr_isolate * sizeof(o->cpus[0]));
		o->nr_cpus = o->nr_isolate;
	}
	if (o->nr_isolate && o->cpu < 0)
		o->cpu = o->isolate[0];
	if (!o->prefix) {
		snprintf(prefix, sizeof(prefix), "memscope-bench-%s", cmd->name);
		o->prefix = prefix;
	}
	return 0;
}

/* --isolate: the process (and the threads it starts) on those CPUs only,
 * and under SCHED_FIFO where allowed, so that other work does not preempt a
 * repetition; what was done goes into the JSON. */
static int isolate(const struct bench_opts *o)
{
	cpu_set_t set;
	struct sched_param sp = { .sched_priority = 1 };
	char cpus[512] = "", json[700];
	const char *why = "";

	CPU_ZERO(&set);
	for (int i = 0; i < o->nr_isolate; i++) {
		CPU_SET((size_t)o->isolate[i], &set);
		snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), "%s%d", i ? "," : "", o->isolate[i]);
	}
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		fprintf(stderr, "memscope-bench: --isolate: cannot run on CPUs %s: %s\n", cpus, strerror(errno));
		return -1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		why = errno == EPERM ? "SCHED_FIFO is not allowed for this user (it needs CAP_SYS_NICE or an "
				       "RLIMIT_RTPRIO above 0): normal priority" : strerror(errno);
	snprintf(json, sizeof(json), "{\"cpus\":[%s],\"scheduler\":\"%s\",\"why\":\"%s\"}", cpus,
		 why[0] ? "other" : "fifo", why);
	load_set_isolate(json);
	if (why[0])
		fprintf(stderr, "memscope-bench: --isolate: %s\n", why);
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench_opts o;
	char err[512];
	const struct command *cmd = NULL;
	int status;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "memscope-bench: unknown command '%s'\n\n", argv[1]);
		usage(stderr);
		return 2;
	}
	if (topo_load(&o.topo, err, sizeof(err)) < 0) {
		fprintf(stderr, "memscope-bench: %s\n", err);
		return 1;
	}
	o.command = cmd->name;
	o.reps = 6;
	o.max_reps = 50;
	o.precision = 0.02;
	o.max_time_s = 1.0;
	o.min_time_s = 0.02;
	o.phase_min_s = phase_under_memscope() ? 1.0 : 0;
	o.plot = cmd->plots;
	o.plot_formats = 1u << PLOT_PNG;
	o.cpu = o.ref_cpu = -1;
	o.local_node = o.remote_node = o.node = -1;
	o.op = "all";
	o.pattern = "window";
	o.state = "M";
	o.procs = 2;
	o.max_par = 16;
	o.kernels = 0xf;
	if ((status = parse(&o, cmd, argc - 1, argv + 1)))
		return status;
	timer_init(o.timer);
	if (o.nr_isolate && isolate(&o) < 0)
		return 1;
	if (o.cpu >= 0 && pin_to_cpu(o.cpu) < 0) {
		fprintf(stderr, "memscope-bench: cannot run on CPU %d: %s\n", o.cpu, strerror(errno));
		return 1;
	}
	if (cmd->plots || !strcmp(cmd->name, "ctx"))
		load_start(&o.topo);
	return cmd->run(&o);
}
