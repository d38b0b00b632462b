/* memscope stat: count events for a command, processes or the whole system,
 * printing periodic lines (-I) and final totals. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "aggregate.h"
#include "commands.h"
#include "event.h"
#include "host.h"
#include "sampler.h"
#include "sinks/stat_output.h"
#include "sources/bpf_source.h"
#include "sources/perf_source.h"
#include "target.h"

#define DEFAULT_EVENTS "page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"
#define MIN_INTERVAL_MS 10
#define MAX_INTERVAL_MS (24L * 3600 * 1000)

struct stat_options {
	char *events;               /* comma list, -e may repeat */
	long interval_ms;
	bool system_wide;
	const char *pids;
	enum aggr_mode aggr;
	enum stat_format format;
	char separator[8];
	char **command;
};

struct stat_run {
	struct aggregation aggr;
	struct aggr_cell *interval_cells;
	struct aggr_cell *total_cells;
	struct stat_output output;
	uint64_t start_ns;
	bool print_intervals;
};

static void stat_usage(FILE *out)
{
	fprintf(out,
		"usage: memscope stat [-e EVENTS] [-I MS] [-a | -p PID[,PID...] | [--] CMD [ARGS...]]\n"
		"                     [--per-cpu | --per-socket | --per-node] [-x SEP | --json]\n"
		"\n"
		"  -e, --events LIST   events to count (default: " DEFAULT_EVENTS ")\n"
		"                      names: page-faults, pmu/alias/, pmu/field=val,.../,\n"
		"                      subsys:tracepoint, pmu::EVENT:UMASK (libpfm4)\n"
		"  -I, --interval MS   print counts every MS milliseconds (at least %d)\n"
		"  -a, --all-cpus      count the whole system, one counter per CPU\n"
		"  -p, --pid PIDS      attach to running processes (all their threads)\n"
		"      --per-cpu       one row per CPU (also --per-socket, --per-node)\n"
		"  -x, --field-separator SEP   CSV output\n"
		"      --json          one JSON object per line\n", MIN_INTERVAL_MS);
}

static int append_events(struct stat_options *opt, const char *more)
{
	size_t old = opt->events ? strlen(opt->events) : 0;
	char *grown = realloc(opt->events, old + strlen(more) + 2);

	if (!grown)
		return -1;
	if (old)
		grown[old++] = ',';
	strcpy(grown + old, more);
	opt->events = grown;
	return 0;
}

static int parse_interval(const char *text, long *ms)
{
	char *end;

	errno = 0;
	*ms = strtol(text, &end, 10);
	if (errno || end == text || *end) {
		fprintf(stderr, "memscope stat: -I %s: not a number of milliseconds (e.g. -I 500)\n", text);
		return -1;
	}
	if (*ms < MIN_INTERVAL_MS || *ms > MAX_INTERVAL_MS) {
		fprintf(stderr, "memscope stat: -I %s: the interval must be between %d ms and %ld ms "
			"(shorter intervals cost more than they measure)\n", text, MIN_INTERVAL_MS,
			MAX_INTERVAL_MS);
		return -1;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct stat_options *opt)
{
	enum { OPT_PER_CPU = 256, OPT_PER_SOCKET, OPT_PER_NODE, OPT_JSON };
	static const struct option longopts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "interval", required_argument, NULL, 'I' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "per-cpu", no_argument, NULL, OPT_PER_CPU },
		{ "per-socket", no_argument, NULL, OPT_PER_SOCKET },
		{ "per-node", no_argument, NULL, OPT_PER_NODE },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(opt, 0, sizeof(*opt));
	opt->format = STAT_TEXT;
	optind = 1;
	/* '+': options end at the command's name, as with perf stat. */
	while ((c = getopt_long(argc, argv, "+e:I:ap:x:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (append_events(opt, optarg) < 0)
				return -1;
			break;
		case 'I':
			if (parse_interval(optarg, &opt->interval_ms) < 0)
				return -1;
			break;
		case 'a': opt->system_wide = true; break;
		case 'p': opt->pids = optarg; break;
		case OPT_PER_CPU: opt->aggr = AGGR_CPU; break;
		case OPT_PER_SOCKET: opt->aggr = AGGR_SOCKET; break;
		case OPT_PER_NODE: opt->aggr = AGGR_NODE; break;
		case 'x':
			if (!optarg[0] || strlen(optarg) >= sizeof(opt->separator)) {
				fprintf(stderr, "memscope stat: -x needs a short separator, e.g. -x,\n");
				return -1;
			}
			opt->format = STAT_CSV;
			snprintf(opt->separator, sizeof(opt->separator), "%s", optarg);
			break;
		case OPT_JSON: opt->format = STAT_JSON; break;
		case 'h':
			stat_usage(stdout);
			exit(0);
		default:
			stat_usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		opt->command = &argv[optind];
	if (!opt->system_wide && !opt->pids && !opt->command) {
		fprintf(stderr, "memscope stat: say what to measure: -a (whole system), -p PID, "
			"or a command after --\n");
		stat_usage(stderr);
		return -1;
	}
	if (opt->pids && (opt->system_wide || opt->command)) {
		fprintf(stderr, "memscope stat: -p excludes -a and a command; choose one "
			"(-a -- CMD counts the whole system while CMD runs)\n");
		return -1;
	}
	if (!opt->events && append_events(opt, DEFAULT_EVENTS) < 0)
		return -1;
	return 0;
}

/* eBPF series names go to the bpf source, everything else to perf. */
static int split_events(const struct stat_options *opt, char **perf_events, char ***bpf_names, int *nr_bpf)
{
	char **names;
	int nr;
	size_t len = 0;

	if (event_list_split(opt->events, &names, &nr) < 0)
		return -1;
	*bpf_names = calloc((size_t)nr + 1, sizeof(char *));
	*perf_events = calloc(strlen(opt->events) + 1, 1);
	if (!*bpf_names || !*perf_events) {
		event_names_free(names, nr);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		if (bpf_series_name_known(names[i])) {
			(*bpf_names)[(*nr_bpf)++] = names[i];
			names[i] = NULL;
		} else {
			len += (size_t)sprintf(*perf_events + len, "%s%s", len ? "," : "", names[i]);
		}
	}
	event_names_free(names, nr);
	if (len == 0) {
		free(*perf_events);
		*perf_events = NULL;
	}
	return 0;
}

static int on_frame(const struct frame *frame, bool last, void *ctx)
{
	struct stat_run *run = ctx;
	double time_s = (double)(frame->time_ns - run->start_ns) / 1e9;

	aggregation_clear(&run->aggr, run->interval_cells);
	aggregation_add(&run->aggr, frame, run->interval_cells);
	aggregation_add(&run->aggr, frame, run->total_cells);
	/* The last frame is usually a partial interval; it is printed too, so the
	 * interval lines always add up to the totals. */
	if (run->print_intervals && (frame->interval_ns > 0 || !last))
		stat_output_interval(&run->output, time_s, (double)frame->interval_ns / 1e9,
				     run->interval_cells);
	return 0;
}

static void describe_target(const struct stat_options *opt, char *buf, size_t size)
{
	if (opt->command) {
		size_t len = (size_t)snprintf(buf, size, "'");

		for (int i = 0; opt->command[i] && len + 2 < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", opt->command[i]);
		if (len + 20 < size)
			snprintf(buf + len, size - len, opt->system_wide ? "' (system wide)" : "'");
	} else if (opt->pids) {
		snprintf(buf, size, "process id '%s'", opt->pids);
	} else {
		snprintf(buf, size, "system wide");
	}
}

static int terminal_rows(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4)
		return ws.ws_row - 2;
	return 25;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_options opt;
	struct host host;
	struct target target;
	struct event *events = NULL;
	int nr_events = 0, status = 1;
	struct ms_error err = { "" };
	struct source sources[2];
	int nr_sources = 0;
	char *perf_events = NULL;
	char **bpf_names = NULL;
	int nr_bpf = 0;
	struct sampler sampler;
	struct stat_run run;
	struct perf_source_options popt;
	char title[512];

	memset(&target, 0, sizeof(target));
	memset(&sampler, 0, sizeof(sampler));
	memset(&run, 0, sizeof(run));
	memset(sources, 0, sizeof(sources));
	if (parse_options(argc, argv, &opt) < 0) {
		free(opt.events);
		return EXIT_USAGE;
	}
	if (host_load(&host, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		free(opt.events);
		return 1;
	}
	if (split_events(&opt, &perf_events, &bpf_names, &nr_bpf) < 0) {
		fprintf(stderr, "memscope stat: out of memory\n");
		goto out;
	}
	if (perf_events && event_list_parse(&host, perf_events, &events, &nr_events, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		status = EXIT_USAGE;
		goto out;
	}
	if (host.roots.is_fixture) {
		fprintf(stderr, "memscope stat: MEMSCOPE_SYSFS_ROOT=%s describes another machine: its "
			"counters cannot be opened here; unset it to count on this machine\n", host.roots.sys);
		goto out;
	}
	if (opt.system_wide && !opt.command) {
		target.kind = TARGET_SYSTEM;
	} else if (opt.pids) {
		if (target_parse_pids(&target, opt.pids, &err) < 0) {
			fprintf(stderr, "memscope stat: %s\n", err.text);
			status = EXIT_USAGE;
			goto out;
		}
	} else if (target_prepare_command(&target, opt.command, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}
	target.system_wide = opt.system_wide;

	if (nr_events) {
		popt.host = &host;
		popt.target = &target;
		popt.events = events;
		popt.nr_events = nr_events;
		popt.task_per_cpu = opt.aggr != AGGR_TOTAL;
		if (perf_source_create(&sources[nr_sources], &popt, &err) < 0) {
			fprintf(stderr, "memscope stat: %s\n", err.text);
			goto out;
		}
		nr_sources++;
	}
	if (nr_bpf) {
		struct bpf_source_options bopt;

		memset(&bopt, 0, sizeof(bopt));
		bopt.tgids = target.pids;
		bopt.nr_tgids = target.nr_pids;
		bopt.system_wide = target.system_wide;
		if (bpf_source_create(&sources[nr_sources], &host, &bopt, (const char *const *)bpf_names,
				      nr_bpf, &err) < 0) {
			/* The eBPF probes are one source among others: without them,
			 * the counters still run. */
			fprintf(stderr, "memscope stat: %s\n", err.text);
			if (!nr_sources)
				goto out;
		} else {
			nr_sources++;
		}
	}
	if (sampler_open(&sampler, sources, nr_sources, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}
	if (nr_events) {
		const struct source *perf = &sources[0];

		if (perf_source_user_only(perf))
			fprintf(stderr, "memscope stat: note: counting user space only (perf_event_paranoid "
				"is 2 and memscope has no CAP_PERFMON); for kernel time too: sudo sysctl "
				"kernel.perf_event_paranoid=1\n");
		for (int i = 0; i < perf_source_nr_skipped(perf); i++)
			fprintf(stderr, "memscope stat: note: %s\n", perf_source_skipped_reason(perf, i));
	}

	if (aggregation_init(&run.aggr, &sampler.table, opt.aggr) < 0) {
		fprintf(stderr, "memscope stat: out of memory\n");
		goto out;
	}
	run.interval_cells = calloc((size_t)(run.aggr.nr_rows * run.aggr.nr_columns), sizeof(struct aggr_cell));
	run.total_cells = calloc((size_t)(run.aggr.nr_rows * run.aggr.nr_columns), sizeof(struct aggr_cell));
	if (!run.interval_cells || !run.total_cells) {
		fprintf(stderr, "memscope stat: out of memory\n");
		goto out;
	}
	aggregation_clear(&run.aggr, run.total_cells);
	describe_target(&opt, title, sizeof(title));
	run.output.format = opt.format;
	run.output.out = stdout;
	run.output.aggr = &run.aggr;
	run.output.title = title;
	run.output.header_every = terminal_rows();
	snprintf(run.output.separator, sizeof(run.output.separator), "%s", opt.separator);
	run.print_intervals = opt.interval_ms > 0;
	run.start_ns = monotonic_ns();

	if (sampler_run(&sampler, &target, (uint64_t)opt.interval_ms * 1000000ull, on_frame, &run, &err) < 0) {
		fprintf(stderr, "memscope stat: %s\n", err.text);
		goto out;
	}
	stat_output_totals(&run.output, (double)(sampler.frame.time_ns - sampler.start_ns) / 1e9,
			   run.total_cells);
	status = target.kind == TARGET_COMMAND ? target_exit_code(&target) : 0;
	if (target.kind == TARGET_PIDS && sampler.end == SAMPLER_END_TARGET)
		fprintf(stderr, "memscope stat: the attached process%s exited\n",
			target.nr_pids > 1 ? "es have" : " has");
out:
	if (sampler.nr_sources)
		sampler_close(&sampler);
	else
		for (int i = 0; i < nr_sources; i++)
			sources[i].ops->close(&sources[i]);
	free(perf_events);
	event_names_free(bpf_names, nr_bpf);
	aggregation_free(&run.aggr);
	free(run.interval_cells);
	free(run.total_cells);
	target_free(&target);
	event_list_free(events, nr_events);
	host_free(&host);
	free(opt.events);
	return status;
}
