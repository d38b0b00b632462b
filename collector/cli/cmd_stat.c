/* memscope stat: count events for a command, processes or the whole system,
 * printing periodic lines (-I) and final totals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics/aggregate.h"
#include "cli/commands.h"
#include "cli/measure_options.h"
#include "cli/exit_status.h"
#include "cli/measure_run.h"
#include "ctl/ctl_fifo.h"
#include "events/event.h"
#include "pipeline/session.h"
#include "pipeline/session_control.h"
#include "pipeline/session_recording.h"
#include "metrics/metrics.h"
#include "pipeline/lua_session.h"
#include "recording/recording.h"
#include "sinks/lua_sink.h"
#include "sinks/stat_repeat.h"
#include "sinks/stat_output.h"
#include "sinks/stat_sink.h"
#include "sinks/stat_threads.h"
#include "util/report.h"

enum { OPT_JSON = CLI_LONG_ONLY, OPT_PER_THREAD, OPT_SELF_DESCRIBING, OPT_INTERVAL_COUNT, OPT_TIMEOUT, OPT_CONTROL,
       OPT_METRIC_ONLY, OPT_FOR_EACH_CGROUP, OPT_COLUMNS, OPT_NO_BIG_NUM, OPT_NO_MERGE,
       OPT_PER_CLUSTER, OPT_PER_CACHE, OPT_QUIET, OPT_LOG_FD, OPT_APPEND, OPT_SUMMARY, OPT_NO_CSV_SUMMARY,
       OPT_MEMORY, OPT_TD_LEVEL };

/* perf's -d, -dd, -ddd: cache events added to the default set, level by level. */
static const char *const stat_detailed_events[] = {
	"L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses",
	"L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,iTLB-load-misses",
	"L1-dcache-prefetches,L1-dcache-prefetch-misses",
};

/* After perf's cache events, -d adds memscope's memory-system detail where
 * the host can count it: the pages the measured tasks placed (and on each
 * node: STAT_DETAILED_PLACEMENT), the share of their memory accesses that went
 * to another node, and DRAM bandwidth; a metric the host cannot count is
 * named with the reason. */
#define STAT_DETAILED_MEMORY "proc.pages_alloc,mem.remote_ratio,mem.read_bw,mem.write_bw"
#define STAT_DETAILED_PLACEMENT "proc.pages_alloc"

/* perf stat's default events: without -e or -m, stat counts what perf stat
 * counts (a hardware event the host has no PMU for is shown <not supported>);
 * system-wide, the CPUs' clock rather than the tasks'. */
#define STAT_DEFAULT_EVENTS \
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses"
#define STAT_DEFAULT_EVENTS_SYSTEM_WIDE \
	"cpu-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses"

#define STAT_MAX_REPEAT 100000
/* The catalog's deepest top-down group is TopdownL5 (metrics.yaml). */
#define STAT_TD_MAX_LEVEL 5
#define STAT_TD_MAX_LEVEL_TEXT "5"

/* What stat takes beside the session's options. */
struct stat_extra {
	bool per_thread;
	long interval_count;     /* --interval-count, 0: none */
	long timeout_ms;         /* --timeout, 0: none */
	long repeat;             /* -r, 1: once */
	const char *output_path; /* -o */
	bool append;             /* --append */
	int log_fd;              /* --log-fd, -1: none */
	bool quiet;              /* --quiet */
	bool null_run;           /* -n */
	bool sync_first;         /* -S */
	int detailed;            /* -d given this many times */
	bool memory_detail;      /* -d added memscope's memory-system detail (STAT_DETAILED_MEMORY) */
	const char *control;     /* --control SPEC */
	long delay_ms;           /* -D: 0 none, -1 until enable */
	struct measure_sinks sinks; /* --influx FILE ... */
};

struct stat_args {
	struct session_options *opt;
	struct stat_output *output;
	struct stat_extra *extra;
	struct lua_cli *lua;
	bool json, csv;
};

/* The structs stat's option rows write to (cli_parse_into's dest). */
enum { TO_ARGS, TO_EXTRA, TO_OUTPUT, TO_SESSION };

static const struct cli_option stat_when_options[] = {
	{ OPT_INTERVAL_COUNT, "interval-count", "N", "with -I: stop after N interval lines", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_LONG(TO_EXTRA, struct stat_extra, interval_count, 1, 1000000000L) },
	{ 'r', "repeat", "N", "run the command N times: the mean of each count and metric, and its spread\n"
	  "(perf's +- : the standard deviation of the mean)", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_LONG(TO_EXTRA, struct stat_extra, repeat, 1, STAT_MAX_REPEAT) },
	{ OPT_TIMEOUT, "timeout", "MS", "stop after MS milliseconds (a command still running is ended)",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_LONG(TO_EXTRA, struct stat_extra, timeout_ms, 1, SESSION_MAX_INTERVAL_MS) },
	{ 'n', "null", NULL, "run the command and print its elapsed time alone, counting nothing (perf's -n)",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_EXTRA, struct stat_extra, null_run) },
	{ 'S', "sync", NULL, "call sync() before the run (perf's)", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_EXTRA, struct stat_extra, sync_first) },
	{ 0 },
};

static const struct cli_option stat_where_options[] = {
	{ 'C', "cpu", "CPUS", "count only on these CPUs (perf's list: 0-3,8), system-wide (implies -a);\n"
	  "an uncore event counts on its PMU's cpumask CPUs among them", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_STRING(TO_SESSION, struct session_options, cpu_list) },
	{ 'G', "cgroup", "CGROUPS", "with -a: count the -e perf events in these cgroup v2 groups only, the\n"
	  "n-th name for the n-th event (one name: every event), as perf's -G;\n"
	  "names are relative to the cgroup2 mount, or absolute paths", CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_FOR_EACH_CGROUP, "for-each-cgroup", "CGROUPS", "with -a: count every -e event in each of these cgroups",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

/* perf stat's --control and -D: counting switched off and on while it runs. */
static const struct cli_option stat_control_options[] = {
	{ OPT_CONTROL, "control", "SPEC", "fd:CTL[,ACK] (descriptor numbers) or fifo:CTL[,ACK] (FIFO\n"
	  "paths): take enable, disable, ping (and memscope ctl's commands) one per\n"
	  "line from CTL, each acknowledged with 'ack' on ACK, as perf stat --control", CLI_COMPLETE_FILE, NULL, 0, CLI_TO_STRING(TO_EXTRA, struct stat_extra, control) },
	{ 'D', "delay", "MS", "count from MS milliseconds after the start; -1: from the first enable",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

static const struct cli_option stat_row_options[] = {
	{ 'A', "no-aggr", NULL, "perf's name for --per-cpu: one row per CPU", CLI_COMPLETE_NONE, NULL, 0 },
	{ 't', "tid", "TIDS", "count these threads only (perf's -t: no other thread of their process)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_PER_THREAD, "per-thread", NULL, "one row per thread of the measured processes (proc.* events)",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_EXTRA, struct stat_extra, per_thread) },
	{ OPT_PER_CLUSTER, "per-cluster", NULL, "one row per CPU cluster (perf's S0-D0-CLS0; topology/cluster_id)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_PER_CACHE, "per-cache", "LN", "one row per cache instance, the last level's or level N's (L1..L4):\n"
	  "the CPUs that share it (perf's S0-D0-L3-ID0, ID the first CPU that shares it)", CLI_COMPLETE_NONE, NULL,
	  CLI_OPTIONAL_ARG },
	{ OPT_NO_MERGE, "no-merge", NULL, "perf's: do not merge an event's PMU instances; memscope shows an event\n"
	  "once per row as -e named it, so this changes nothing", CLI_COMPLETE_NONE, NULL, 0, CLI_ACCEPTED },
	{ 0 },
};

static const struct cli_option stat_output_options[] = {
	{ 'x', "field-separator", "SEP", "CSV: perf stat's fields, separated by SEP", CLI_COMPLETE_NONE, NULL, 0 },
	{ 'j', "json", NULL, "JSON: one object per counter and row, with perf stat's keys", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_ARGS, struct stat_args, json) },
	{ 'o', "output", "FILE", "write the lines and totals to FILE instead of standard error",
	  CLI_COMPLETE_FILE, NULL, 0 },
	{ OPT_COLUMNS, "columns", NULL, "text: memscope's table, a line per interval with a column per event\n"
	  "(without it: perf's lines, one per event and interval)", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_OUTPUT, struct stat_output, columns) },
	{ OPT_NO_BIG_NUM, "no-big-num", NULL, "text: counts without thousands separators", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_OUTPUT, struct stat_output, no_big_num) },
	{ 'B', "big-num", NULL, "text: counts with thousands separators (the default, as perf's)", CLI_COMPLETE_NONE,
	  NULL, 0, CLI_ACCEPTED },
	{ OPT_QUIET, "quiet", NULL, "print no counts and no notes, only errors (perf's --quiet)", CLI_COMPLETE_NONE,
	  NULL, 0 },
	{ OPT_LOG_FD, "log-fd", "N", "write the lines and totals to descriptor N (perf's --log-fd)",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_INT(TO_EXTRA, struct stat_extra, log_fd, 1, 1 << 20) },
	{ OPT_APPEND, "append", NULL, "with -o: add to the end of FILE", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_EXTRA, struct stat_extra, append) },
	{ OPT_SUMMARY, "summary", NULL, "with -I: the totals after the intervals too (CSV: 'summary' as their time)",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_OUTPUT, struct stat_output, summary) },
	{ OPT_NO_CSV_SUMMARY, "no-csv-summary", NULL, "with --summary and -x: the totals' lines without 'summary'",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_OUTPUT, struct stat_output, no_csv_summary) },
	{ OPT_METRIC_ONLY, "metric-only", NULL, "only the metrics (-m, Lua; without: the events' shadow metrics), a column\n"
	  "each, as perf's --metric-only",
	  CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_OUTPUT, struct stat_output, metric_only) },
	{ OPT_SELF_DESCRIBING, "self-describing", NULL, "with -x or -j: memscope's own form: a CSV header line, or\n"
	  "one JSON object per interval with every row, status and reason", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(TO_OUTPUT, struct stat_output, self_describing) },
	{ 0 },
};

/* perf's -M: memscope's metrics are -m's (the catalog's names and groups). */
static const struct cli_option stat_count_options[] = {
	{ 'M', NULL, "LIST", "perf's spelling of -m: catalog metrics and metric groups, e.g. -M TopdownL1,memory\n"
	  "(memscope list --groups)", CLI_COMPLETE_METRICS, NULL, 0 },
	{ OPT_TD_LEVEL, "td-level", "N", "perf's top-down levels 1 to N: the metric groups TopdownL1 ... TopdownLN\n"
	  "(as -M TopdownL1,...,TopdownLN; N from 1 to " STAT_TD_MAX_LEVEL_TEXT ", 0 as perf's: every level)",
	  CLI_COMPLETE_NONE, NULL, 0 },
	{ 'd', "detailed", NULL, "perf's -d (-dd, -ddd): its cache events beside the default ones", CLI_COMPLETE_NONE,
	  NULL, 0, CLI_TO_COUNT(TO_EXTRA, struct stat_extra, detailed) },
	{ OPT_MEMORY, "memory", NULL, "count the memory set: " SESSION_DEFAULT_EVENTS, CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

static const struct cli_group stat_groups[] = {
	{ "What to count", measure_count_options },
	{ NULL, stat_count_options },
	{ NULL, measure_damon_options },
	{ NULL, measure_lua_options },
	{ "Where", measure_target_options },
	{ NULL, stat_where_options },
	{ NULL, measure_file_options },
	{ "When", measure_interval_options },
	{ NULL, stat_when_options },
	{ NULL, stat_control_options },
	{ "Rows", measure_row_options },
	{ NULL, stat_row_options },
	{ "Output", stat_output_options },
	{ NULL, measure_sink_options },
	{ NULL, NULL },
};

#define STAT_CGROUP_NO_SELF_DESCRIBING "counts events in cgroups; it excludes --self-describing (use perf's -x SEP or --json forms)"
#define STAT_CGROUP_NO_PER_THREAD "counts events in cgroups; it excludes --per-thread (eBPF counts every task, not a cgroup's)"
#define STAT_COLUMNS_TEXT_ONLY "--columns is a form of the text output; it excludes -x, --json and --metric-only"

/* Combinations stat refuses, in the order they are checked; --help lists them. */
static const struct cli_rule stat_rules[] = {
	{ CLI_EXCLUDES, 'x', { 'j' }, "-x and --json are two output forms; choose one" },
	{ CLI_EXCLUDES, OPT_METRIC_ONLY, { OPT_SELF_DESCRIBING },
	  "--metric-only prints perf's metric-only form; it excludes --self-describing" },
	{ CLI_EXCLUDES, OPT_METRIC_ONLY, { OPT_PER_THREAD },
	  "--metric-only prints perf's metric-only form; it excludes --per-thread (events, not metrics)" },
	{ CLI_NEEDS, OPT_SELF_DESCRIBING, { 'x', 'j' }, "--self-describing is a form of -x SEP or --json; give one of them" },
	{ CLI_EXCLUDES, 'G', { OPT_SELF_DESCRIBING }, "-G " STAT_CGROUP_NO_SELF_DESCRIBING },
	{ CLI_EXCLUDES, 'G', { OPT_PER_THREAD }, "-G " STAT_CGROUP_NO_PER_THREAD },
	{ CLI_EXCLUDES, OPT_FOR_EACH_CGROUP, { OPT_SELF_DESCRIBING }, "--for-each-cgroup " STAT_CGROUP_NO_SELF_DESCRIBING },
	{ CLI_EXCLUDES, OPT_FOR_EACH_CGROUP, { OPT_PER_THREAD }, "--for-each-cgroup " STAT_CGROUP_NO_PER_THREAD },
	{ CLI_EXCLUDES, OPT_COLUMNS, { 'x' }, STAT_COLUMNS_TEXT_ONLY },
	{ CLI_EXCLUDES, OPT_COLUMNS, { 'j' }, STAT_COLUMNS_TEXT_ONLY },
	{ CLI_EXCLUDES, OPT_COLUMNS, { OPT_METRIC_ONLY }, STAT_COLUMNS_TEXT_ONLY },
	{ CLI_EXCLUDES, OPT_CONTROL, { SESSION_OPT_INPUT },
	  "--control switches counting on and off in a live run; --input FILE is read whole" },
	{ CLI_EXCLUDES, OPT_CONTROL, { SESSION_OPT_REPLAY },
	  "--control switches counting on and off in a live run; --replay FILE is read whole" },
	{ CLI_EXCLUDES, OPT_TIMEOUT, { SESSION_OPT_INPUT }, "--timeout ends a live run; --input FILE is read to its end" },
	{ CLI_EXCLUDES, OPT_TIMEOUT, { SESSION_OPT_REPLAY }, "--timeout ends a live run; --replay FILE is read to its end" },
	{ CLI_NEEDS, OPT_INTERVAL_COUNT, { 'I' }, "--interval-count counts the lines of -I MS; give -I too" },
	{ 0 },
};

const struct cli_command stat_command = {
	.name = "stat",
	.summary = "count events and metrics for a command, processes or the system",
	.usage = "[OPTIONS] [-a | -p PIDS | [--] CMD [ARGS...]]\n"
		 "--replay FILE -m METRICS [OPTIONS]\n"
		 "--input FILE [OPTIONS]",
	.groups = stat_groups,
	.epilog = "Options end at CMD: what follows is the command's own.\n",
	.operands = CLI_COMPLETE_COMMAND,
	.options_first = true,
	.rules = stat_rules,
};


/* A whole number from 1 to max for option name, or -1 (said on stderr). */
static long positive_number(const char *name, const char *arg, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > max) {
		ms_warn("%s %s: give a whole number from 1 to %ld", name, arg, max);
		return -1;
	}
	return v;
}

static int stat_option(void *ctx, int key, const char *arg)
{
	struct stat_args *a = ctx;
	int shared = measure_cli_option(a->opt, a->lua, key, arg);

	if (shared <= 0)
		return shared;
	if ((shared = measure_sink_option(&a->extra->sinks, "stat", key, arg)) <= 0)
		return shared;
	switch (key) {
	case 'x':
		if (!arg[0] || strlen(arg) >= sizeof(a->output->separator)) {
			ms_warn("-x needs a short separator, e.g. -x,");
			return -1;
		}
		a->csv = true;
		snprintf(a->output->separator, sizeof(a->output->separator), "%s", arg);
		return 0;
	case 'G':
	case OPT_FOR_EACH_CGROUP:
		if (a->opt->cgroups) {
			ms_warn("give -G or --for-each-cgroup once (names: a comma list)");
			return -1;
		}
		if (!arg[0] || (key == OPT_FOR_EACH_CGROUP && (strstr(arg, ",,") || arg[0] == ',' ||
							   arg[strlen(arg) - 1] == ','))) {
			ms_warn("%s needs cgroup names, e.g. %s mygroup",
				key == 'G' ? "-G" : "--for-each-cgroup", key == 'G' ? "-G" : "--for-each-cgroup");
			return -1;
		}
		a->opt->cgroups = arg;
		a->opt->for_each_cgroup = key == OPT_FOR_EACH_CGROUP;
		return 0;
	case 'A':
		return measure_cli_option(a->opt, a->lua, SESSION_OPT_PER_CPU, NULL) == 0 ? 0 : -1;
	case 'o':
		if (!arg[0]) {
			ms_warn("-o needs a file name");
			return -1;
		}
		a->extra->output_path = arg;
		return 0;
	case 'D':
		if (!strcmp(arg, "-1")) {
			a->extra->delay_ms = -1;
			return 0;
		}
		if (!strcmp(arg, "0")) {
			a->extra->delay_ms = 0;
			return 0;
		}
		a->extra->delay_ms = positive_number("-D", arg, SESSION_MAX_INTERVAL_MS);
		if (a->extra->delay_ms < 0) {
			ms_warn("-D -1 counts from the first enable of --control");
			return -1;
		}
		return 0;
	case 'M':
		return measure_cli_option(a->opt, a->lua, 'm', arg) == 0 ? 0 : -1;
	case OPT_TD_LEVEL: {
		/* perf's 0 (its default): every level there is. */
		char *end, groups[16 * STAT_TD_MAX_LEVEL] = "";
		long level = strtol(arg, &end, 10);

		if (end == arg || *end || level < 0 || level > STAT_TD_MAX_LEVEL) {
			ms_warn("--td-level %s: give a level from 1 to %d (TopdownL1 ... TopdownL%d), "
				"or 0 for every level", arg, STAT_TD_MAX_LEVEL, STAT_TD_MAX_LEVEL);
			return -1;
		}
		if (level == 0)
			level = STAT_TD_MAX_LEVEL;
		for (long l = 1; l <= level; l++)
			snprintf(groups + strlen(groups), sizeof(groups) - strlen(groups), "%sTopdownL%ld", l > 1 ? "," : "",
				 l);
		return measure_cli_option(a->opt, a->lua, 'm', groups) == 0 ? 0 : -1;
	}
	case 't':
		a->opt->pids = arg;
		a->opt->threads_only = true;
		return 0;
	case OPT_MEMORY:
		return measure_cli_option(a->opt, a->lua, 'e', SESSION_DEFAULT_EVENTS) == 0 ? 0 : -1;
	case OPT_QUIET:
		a->extra->quiet = true;
		a->opt->quiet_notes = true;
		return 0;
	case OPT_PER_CLUSTER:
	case OPT_PER_CACHE: {
		enum aggr_mode mode = key == OPT_PER_CLUSTER ? AGGR_CLUSTER : AGGR_CACHE;

		/* As the other --per-* (measure_cli_option): one kind of row. */
		if (a->opt->aggr != AGGR_TOTAL && a->opt->aggr != mode) {
			ms_warn("--per-%s and --per-%s: one kind of row at a time; choose one",
				a->opt->aggr == AGGR_THREAD ? "thread" : aggr_mode_name(a->opt->aggr), aggr_mode_name(mode));
			return -1;
		}
		a->opt->aggr = mode;
		if (key == OPT_PER_CACHE && arg) {
			/* perf's form: L1..L4 (or l1..l4); without it, the last level. */
			if (strlen(arg) != 2 || (arg[0] != 'L' && arg[0] != 'l') || arg[1] < '1' || arg[1] > '4') {
				ms_warn("--per-cache=%s: the cache level is L1, L2, L3 or L4 "
					"(as perf's: L[1-4] or l[1-4]); --per-cache alone takes the last level", arg);
				return -1;
			}
			a->opt->cache_level = arg[1] - '0';
		}
		return 0;
	}
	default:
		return -1;
	}
}

static int parse_options(int argc, char **argv, struct session_options *opt, struct stat_output *output,
			 struct stat_extra *extra, struct lua_cli *lua)
{
	struct stat_args a = { opt, output, extra, lua, false, false };
	void *const dest[] = { [TO_ARGS] = &a, [TO_EXTRA] = extra, [TO_OUTPUT] = output, [TO_SESSION] = opt };
	int status, first = cli_parse_into(&stat_command, argc, argv, stat_option, &a, dest, &status);
	char defaults[1024];

	if (first < 0)
		return status ? -1 : 1;
	output->format = a.csv ? STAT_CSV : a.json ? STAT_JSON : STAT_TEXT;
	if (opt->cpu_list && opt->input_path) {
		ms_warn("-C chooses the CPUs counted on this machine; %s was counted "
			"already (--per-cpu shows its CPUs one by one)", opt->input_path);
		return -1;
	}
	opt->default_events = opt->system_wide || opt->cpu_list ? STAT_DEFAULT_EVENTS_SYSTEM_WIDE : STAT_DEFAULT_EVENTS;
	/* -d adds to the default set only, as perf's. */
	if (extra->detailed) {
		snprintf(defaults, sizeof(defaults), "%s", opt->default_events);
		for (int level = 0; level < extra->detailed && level < 3; level++)
			snprintf(defaults + strlen(defaults), sizeof(defaults) - strlen(defaults), ",%s",
				 stat_detailed_events[level]);
		opt->default_events = defaults;
	}
	status = session_options_finish(opt, argv + first);
	/* The list is taken (copied) by now: nothing keeps this function's buffer. */
	opt->default_events = NULL;
	if (status < 0)
		return -1;
	/* -d's memory-system detail joins perf's default set (as perf's -d, not
	 * an -e list), in the aggregations metrics are computed for. */
	if (extra->detailed && opt->default_events_used && !opt->input_path && !opt->replay_path &&
	    !extra->per_thread && (opt->aggr == AGGR_TOTAL || opt->aggr == AGGR_NODE || opt->aggr == AGGR_SOCKET)) {
		struct ms_error err;

		if (name_list_add_text(&opt->metrics, STAT_DETAILED_MEMORY, &err) < 0) {
			ms_warn("-d: %s", err.text);
			return -1;
		}
		extra->memory_detail = true;
	}
	if (extra->repeat > 1 && (!opt->command || opt->interval_ms || extra->per_thread || lua->nr_scripts ||
				  output->self_describing)) {
		ms_warn("-r repeats a command and prints the mean of its totals: give a command "
			"(not -p, --input or --replay), without -I, --per-thread, --lua or --self-describing");
		return -1;
	}
	/* --control's and --timeout's refusals are stat_rules; -D 0 is no delay. */
	if (extra->delay_ms && (opt->input_path || opt->replay_path)) {
		ms_warn("-D switches counting on and off in a live run; %s is read whole",
			opt->input_path ? "--input FILE" : "--replay FILE");
		return -1;
	}
	if (extra->delay_ms < 0 && !extra->control) {
		ms_warn("-D -1 starts with counting off until an enable arrives: give "
			"--control fd:CTL[,ACK] or --control fifo:CTL[,ACK] to send it");
		return -1;
	}
	if (extra->per_thread && (opt->aggr != AGGR_TOTAL || opt->metrics.nr || opt->replay_path)) {
		ms_warn("--per-thread splits the events of -p PID, a command or -a (every "
			"thread) by thread; it excludes -m, --replay and --per-cpu/socket/node");
		return -1;
	}
	return 0;
}

/* An event named by -e whose series are all for the whole target (the
 * eBPF proc.* counts but proc.pages_alloc, /proc/vmstat) has no value in
 * any row of --per-node, --per-socket, --per-cpu...: said once on stderr,
 * so that -x and -j, which leave such rows out as perf does, lose nothing
 * silently. */
static void note_unsplit_events(const struct session_options *opt, const struct series_table *table)
{
	static const char *const by[] = { [AGGR_CPU] = "CPU", [AGGR_SOCKET] = "socket", [AGGR_NODE] = "node",
					  [AGGR_CORE] = "core", [AGGR_DIE] = "die", [AGGR_CLUSTER] = "cluster",
					  [AGGR_CACHE] = "cache" };

	/* perf's default events are shown as they are, without notes. */
	if (opt->aggr >= (int)(sizeof(by) / sizeof(by[0])) || !by[opt->aggr] || opt->default_events_used ||
	    opt->quiet_notes)
		return;
	for (int e = 0; e < opt->events.nr; e++) {
		bool named = false, split = false;

		for (int i = 0; i < table->nr; i++) {
			const struct series *s = &table->series[i];

			if (strcmp(s->name, opt->events.names[e]) || series_is_per_task(s))
				continue;
			named = true;
			split |= s->labels.cpu != LABEL_NONE || s->labels.node != LABEL_NONE ||
				 s->labels.socket != LABEL_NONE;
		}
		if (named && !split)
			ms_warn("%s is not split by %s: its source counts it as a whole "
				"(memscope list --explain %s); its total is the run without --per-%s",
				opt->events.names[e], by[opt->aggr], opt->events.names[e],
				opt->aggr == AGGR_CPU ? "cpu" : by[opt->aggr]);
	}
}

/* Does the recording hold a thread's own series (record --per-thread)?
 * They start in the frames, so the file is read until the first one.
 * 1, 0, or -1 with err (the file's own error, FILE:LINE). */
static int recording_has_threads(const char *path, struct ms_error *err)
{
	struct recording_reader *r;
	struct recording_record rec;
	struct frame frame;
	int found = 0;

	if (recording_reader_open(&r, path, err) < 0)
		return -1;
	if (frame_init(&frame, 0) < 0) {
		recording_reader_close(r);
		ms_error_set(err, "out of memory");
		return -1;
	}
	while (!found) {
		const struct series_table *table = &recording_reader_header(r)->table;

		if (recording_reader_next(r, &rec, &frame, err) < 0) {
			found = -1;
			break;
		}
		if (rec.kind == RECORD_EOF)
			break;
		for (int i = 0; i < table->nr && !found; i++)
			found = table->series[i].labels.tid != LABEL_NONE;
	}
	frame_free(&frame);
	recording_reader_close(r);
	return found;
}

/* --per-tier needs catalog metrics and a kernel that lists memory tiers. */
static int check_tiers(const struct session *s)
{
	if (!s->plan) {
		ms_warn("--per-tier shows catalog metrics per memory tier: name some with -m "
			"(e.g. -m tier.promote_rate,tier.demote_rate,mem.read_bw)");
		return EXIT_USAGE;
	}
	if (metric_engine_nr_scopes(s->engine, SCOPE_TIER) == 0) {
		ms_warn("--per-tier: the kernel lists no memory tiers here (%s/devices/virtual/"
			"memory_tiering/memory_tierN/nodelist: Linux 6.1 or later, with the nodes of each tier online); "
			"--per-node splits by node", s->host.roots.sys);
		return 1;
	}
	return 0;
}

/* --per-channel (--per-instance) needs catalog metrics, and memory channels
 * (or plugin instances) among what they count. */
static int check_channels(const struct session *s, enum aggr_mode mode)
{
	const char *option = mode == AGGR_INSTANCE ? "--per-instance" : "--per-channel";

	if (!s->plan) {
		ms_warn("%s shows catalog metrics per memory channel%s: "
			"name some with -m (e.g. -m mem.read_bw,mem.write_bw)", option,
			mode == AGGR_INSTANCE ? " or plugin instance" : "");
		return EXIT_USAGE;
	}
	if (metric_engine_nr_scopes(s->engine, SCOPE_CHANNEL) == 0) {
		ms_warn("%s: none of the metrics asked for is counted per memory "
			"channel%s on this machine: the PMUs behind them cover a socket, die or node, or the host has "
			"none (channel PMUs: Intel uncore_imc_N, HiSilicon DDRC, AMD UMC; memscope list --explain "
			"METRIC shows what a metric uses here)", option,
			mode == AGGR_INSTANCE ? " or plugin instance" : "");
		return 1;
	}
	return 0;
}

/* Text repeats its header every screenful on a terminal, every 25 lines
 * elsewhere (a pipe, -o FILE: the same lines either way). */
static int header_every(FILE *out)
{
	struct winsize ws;

	if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4)
		return ws.ws_row - 2;
	return 25;
}

/* --timeout: when it fires, the run ends with its final frame, as on a signal. */
static int timeout_reached(struct sampler *sampler, int fd, void *ctx)
{
	(void)sampler;
	(void)fd;
	(void)ctx;
	return 1;
}

struct delay {
	struct session *session;
	long ms;
};

/* -D MS counts from MS after the start of the run (the command's start), as
 * perf's: the timer set before the run is set again for what remains. */
static int delay_over(struct sampler *sampler, int fd, void *ctx)
{
	const struct delay *d = ctx;
	uint64_t n, since = monotonic_ns() - sampler->start_ns, want = (uint64_t)d->ms * 1000000ull;
	char reply[256];

	if (read(fd, &n, sizeof(n)) < 0) {
		/* Armed once: it fired. */
	}
	if (since < want) {
		struct itimerspec its = { .it_value = { .tv_sec = (time_t)((want - since) / 1000000000ull),
							.tv_nsec = (long)((want - since) % 1000000000ull) } };

		if (timerfd_settime(fd, 0, &its, NULL) == 0)
			return 0;
	}
	if (session_set_counting(d->session, true, reply, sizeof(reply)) < 0)
		ms_warn("-D: %s", reply);
	return 0;
}

/* A one-shot timer of ms milliseconds the run waits on, calling fn; its
 * descriptor, or -1 with err set. */
static int start_timer(struct session *s, long ms, const char *option, sampler_ready_fn fn, void *ctx,
		       struct ms_error *err)
{
	struct itimerspec its = { .it_value = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0) {
		ms_error_set(err, "%s: cannot set a timer: %s", option, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (session_watch_add(s, fd, fn, ctx, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* perf's -n: the command run and timed, nothing counted; perf's title and
 * elapsed line. The command's exit status is returned, as stat's. */
static int null_run(const struct session_options *opt, FILE *out)
{
	char title[512];
	uint64_t start = monotonic_ns();
	int wstatus;
	struct rusage ru;
	pid_t child;

	if (!opt->command) {
		ms_warn("-n times a command: give one after --");
		return EXIT_USAGE;
	}
	child = fork();
	if (child < 0) {
		ms_warn("-n: cannot start %s: %s", opt->command[0], strerror(errno));
		return 1;
	}
	if (child == 0) {
		execvp(opt->command[0], opt->command);
		ms_warn("cannot run %s: %s", opt->command[0], strerror(errno));
		_exit(127);
	}
	while (wait4(child, &wstatus, 0, &ru) < 0 && errno == EINTR)
		;
	session_describe_target(opt, title, sizeof(title));
	/* perf -n: the heading, the elapsed time and the command's user and system time. */
	fprintf(out, "\n Performance counter stats for %s:\n\n %17.9f seconds time elapsed\n\n", title,
		(double)(monotonic_ns() - start) / 1e9);
	fprintf(out, " %17.9f seconds user\n %17.9f seconds sys\n\n\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

/* -m as -e: each metric this host cannot measure is named with the
 * resolver's reason and the rest is counted (a run with nothing at all to
 * count failed in session_open, naming each). */
static void note_unmeasured(const struct session *s)
{
	int counted = 0;

	for (int i = 0; s->plan && i < s->plan->nr_metrics; i++)
		counted += s->plan->metrics[i].requested;
	for (int i = 0; i < s->nr_unmeasured; i++) {
		const struct session_unmeasured *u = &s->unmeasured[i];

		ms_warn("note: metric '%s' is not available on this host: %s (memscope list "
			"--explain %s shows how it is computed); %s still counted", u->name, u->why, u->name,
			counted ? "the other metrics are" : "the rest is");
	}
}

/* How often stat without -I reads a run that has gauges. */
#define GAUGE_SAMPLE_MS 100

static bool has_gauges(const struct series_table *table)
{
	for (int i = 0; i < table->nr; i++)
		if (table->series[i].kind == SERIES_GAUGE && !table->series[i].unavailable &&
		    !series_is_per_task(&table->series[i]))
			return true;
	return false;
}

/* What a run of stat (one of -r's) works with once its session is open. */
struct stat_run {
	struct session_options *opt;
	struct stat_extra *extra;
	struct stat_sink_options *sopt;
	struct stat_threads *threads;
	struct lua_engine *lua;
	int *lua_metrics, nr_lua_metrics;
	char **shown;
	int nr_shown;
	bool intervals_asked;
	int run;                        /* 0 for the first (of -r N) */
	struct ctl_fifo *control;
	struct delay *delay;
	int timer_fd[2];                /* --timeout, -D MS */
	struct sink stat_sink, lua_sink;
};

/* The session is open: stat's checks of what it holds, then its sinks,
 * timers and control. */
static int stat_opened(struct measure_run *m, struct ms_error *err)
{
	struct stat_run *r = m->ctx;
	struct session_options *opt = r->opt;
	struct session *session = m->session;
	struct stat_sink_options *sopt = r->sopt;
	int status;

	if (r->run == 0)
		note_unmeasured(session);
	if (opt->input_path && opt->interval_ms &&
	    (uint64_t)opt->interval_ms * 1000000ull < session_recording_header(session)->interval_ns) {
		unsigned long long rec_ms = session_recording_header(session)->interval_ns / 1000000ull;

		ms_warn("-I %ld: %s has a frame every %llu ms; its lines can add frames "
			"up (-I %llu, %llu, ...), not split them", opt->interval_ms, opt->input_path, rec_ms, rec_ms,
			rec_ms * 2);
		return EXIT_USAGE;
	}
	/* A gauge (a level: a cgroup's memory, a process's threads) read once at
	 * the end is read after the target ended: without -I, stat reads the run
	 * every GAUGE_SAMPLE_MS for the gauges' peak, mean and last, and still
	 * prints the totals alone. */
	if (!r->intervals_asked && !opt->input_path && !opt->replay_path && has_gauges(session_series(session)))
		opt->interval_ms = GAUGE_SAMPLE_MS;
	if (opt->aggr == AGGR_TIER && (status = check_tiers(session)) != 0)
		return status;
	if ((opt->aggr == AGGR_CHANNEL || opt->aggr == AGGR_INSTANCE) && (status = check_channels(session, opt->aggr)) != 0)
		return status;
	if ((opt->aggr == AGGR_CPU || aggr_mode_by_place(opt->aggr)) && (opt->metrics.nr || r->nr_lua_metrics)) {
		ms_warn("-m computes metrics for the system, each node (--per-node) "
			"or each socket (--per-socket), not per %s", opt->aggr == AGGR_CPU ? "CPU" : aggr_mode_name(opt->aggr));
		return EXIT_USAGE;
	}
	if (r->extra->per_thread && opt->input_path) {
		int has = recording_has_threads(opt->input_path, err);

		if (has < 0)
			return -1;
		if (!has) {
			ms_warn("--per-thread: threads' own series are not in this recording "
				"(%s); record them with memscope record --per-thread -e proc.faults,... -- CMD",
				opt->input_path);
			return EXIT_USAGE;
		}
	}
	if (r->extra->per_thread) {
		if (stat_threads_init(r->threads, session_series(session), err) < 0)
			return -1;
		r->threads->skip_zero = opt->system_wide;
		sopt->threads = r->threads;
	}
	if (r->run == 0)
		note_unsplit_events(opt, session_series(session));
	sopt->aggr = opt->aggr;
	sopt->shown = opt->metrics.nr || r->nr_lua_metrics ? (const char *const *)r->shown : NULL;
	sopt->nr_shown = r->nr_shown;
	sopt->intervals = r->intervals_asked;
	sopt->interval_count = r->extra->interval_count;
	sopt->lua = r->lua;
	sopt->lua_metrics = r->lua_metrics;
	sopt->nr_lua_metrics = r->nr_lua_metrics;
	sopt->node_detail = r->extra->memory_detail ? STAT_DETAILED_PLACEMENT : NULL;
	sopt->output.header_every = header_every(sopt->output.out);
	/* perf prints the command's user and system time when it counts the
	 * command alone (no -a, -C, -p), once (not -r N), in text, without -I. */
	sopt->output.child_rusage = opt->command && !opt->system_wide && !opt->cpu_list && !opt->pids &&
				    r->extra->repeat == 1 && !r->intervals_asked ? session_child_rusage(session) : NULL;
	/* The totals first, then the scripts' reports. Columns of metrics a
	 * script defines are printed on the script's thread, after it computed
	 * them for the same frame. */
	if (stat_sink_init(&r->stat_sink, sopt, err) < 0 ||
	    measure_run_add(m, &r->stat_sink, r->nr_lua_metrics ? &r->lua_sink : NULL, err) < 0 ||
	    (r->lua && (lua_sink_init(&r->lua_sink, r->lua, err) < 0 || measure_run_add(m, &r->lua_sink, NULL, err) < 0)))
		return -1;
	if ((r->extra->timeout_ms && (r->timer_fd[0] = start_timer(session, r->extra->timeout_ms, "--timeout",
								     timeout_reached, NULL, err)) < 0) ||
	    (r->extra->delay_ms > 0 && (r->timer_fd[1] = start_timer(session, r->extra->delay_ms, "-D", delay_over,
								     r->delay, err)) < 0) ||
	    (r->control->fd >= 0 && session_control_attach(session, NULL, r->control, err) < 0))
		return -1;
	return 0;
}

static int stat_ended(struct measure_run *m)
{
	const struct stat_run *r = m->ctx;
	const struct session *session = m->session;
	int status = session_exit_code(session);

	/* A command that --timeout or --interval-count ended was ended on purpose. */
	if ((r->extra->timeout_ms || r->extra->interval_count) && session_end(session) == SAMPLER_END_SOURCE)
		status = 0;
	if (session_attached_processes(session) && session_end(session) == SAMPLER_END_TARGET)
		ms_warn("the attached process%s exited",
			session_attached_processes(session) > 1 ? "es have" : " has");
	return status;
}

int cmd_stat(int argc, char **argv)
{
	struct session_options opt;
	struct session session;
	struct stat_sink_options sopt = { .output = { .format = STAT_TEXT } };
	struct lua_engine *lua = NULL;
	int *lua_metrics = NULL, nr_lua_metrics = 0;
	struct ms_error err = { "" };
	char **shown = NULL;
	int nr_shown = 0, status = 1;
	struct stat_extra extra = { .per_thread = false, .repeat = 1, .log_fd = -1 };
	struct stat_repeat repeat;
	int first_failure = 0;
	FILE *out = NULL;
	struct ctl_fifo control;
	struct delay delay = { &session, 0 };
	struct stat_threads threads;
	struct lua_cli lua_cli = { .nr_scripts = 0 };
	struct stat_run r = { .opt = &opt, .extra = &extra, .sopt = &sopt, .threads = &threads, .control = &control,
			      .delay = &delay, .timer_fd = { -1, -1 } };
	struct measure_run m = { .session = &session, .opt = &opt, .chosen = &extra.sinks, .ctx = &r,
				 .opened = stat_opened, .ended = stat_ended, .exec_status = true };

	memset(&session, 0, sizeof(session));
	memset(&threads, 0, sizeof(threads));
	ctl_fifo_init(&control);
	session_options_init(&opt, "stat");
	stat_repeat_init(&repeat, 1);
	status = parse_options(argc, argv, &opt, &sopt.output, &extra, &lua_cli);
	if (status) {
		session_options_free(&opt);
		return status < 0 ? EXIT_USAGE : 0;
	}
	status = 1;
	if (extra.output_path && !(out = fopen(extra.output_path, extra.append ? "a" : "w"))) {
		ms_warn("-o %s: cannot create it: %s", extra.output_path, strerror(errno));
		session_options_free(&opt);
		return 1;
	}
	if (!out) {
		/* --quiet: the counts go nowhere; --log-fd N: to that descriptor; neither: to standard error, as
		 * perf's, so the command's own standard output stays its own. A copy of the descriptor, buffered:
		 * each table is written whole, and closing ours leaves the caller's open. */
		int fd = extra.quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC) :
			 fcntl(extra.log_fd >= 0 ? extra.log_fd : STDERR_FILENO, F_DUPFD_CLOEXEC, 3);

		if (fd < 0 || !(out = fdopen(fd, "w"))) {
			ms_warn("%s: %s", extra.quiet ? "--quiet: /dev/null" :
				extra.log_fd >= 0 ? "--log-fd" : "standard error", strerror(errno));
			if (fd >= 0)
				close(fd);
			session_options_free(&opt);
			return extra.log_fd >= 0 && !extra.quiet ? EXIT_USAGE : 1;
		}
	}
	if (extra.null_run) {
		status = null_run(&opt, out);
		if (out)
			fclose(out);
		session_options_free(&opt);
		return status;
	}
	if (extra.sync_first)
		sync();
	/* Short intervals to a file or a pipe: room for a batch of them (one
	 * wake-up of the printer) in one write; before anything is written. */
	if (opt.interval_ms > 0 && opt.interval_ms <= 10 && !isatty(fileno(out)))
		setvbuf(out, NULL, _IOFBF, 1 << 16);
	if (extra.control && ctl_fifo_open_control(&control, extra.control, &err) < 0) {
		ms_report(&err);
		status = EXIT_USAGE;
		goto out;
	}
	opt.start_disabled = extra.delay_ms != 0;
	delay.ms = extra.delay_ms;
	/* What -e named: with metrics, only these events are shown. */
	nr_shown = opt.events.nr;
	if (!(shown = calloc((size_t)nr_shown + 1, sizeof(char *))))
		goto oom;
	for (int i = 0; i < nr_shown; i++)
		if (!(shown[i] = strdup(opt.events.names[i])))
			goto oom;
	if (lua_cli_open(&lua_cli, &opt, sopt.output.format == STAT_CSV ? LUA_OUTPUT_CSV :
			 sopt.output.format == STAT_JSON ? LUA_OUTPUT_JSON : LUA_OUTPUT_TEXT, &lua, &err) < 0) {
		status = cli_fail(&err);
		goto out;
	}
	status = 1;
	if (lua_cli_take_metrics(lua, &opt, &lua_metrics, &nr_lua_metrics) < 0)
		goto oom;
	opt.per_thread = extra.per_thread;
	opt.metrics_partial = true;
	stat_repeat_init(&repeat, (int)extra.repeat);
	r.intervals_asked = opt.interval_ms > 0;
	r.lua = lua;
	r.lua_metrics = lua_metrics;
	r.nr_lua_metrics = nr_lua_metrics;
	r.shown = shown;
	r.nr_shown = nr_shown;
	sopt.repeat = extra.repeat > 1 ? &repeat : NULL;
	sopt.output.out = out;
	/* -r N: a run after another, each measured alone. */
	for (r.run = 0; r.run < extra.repeat; r.run++) {
		status = measure_run(&m);
		for (int i = 0; i < 2; i++) {
			if (r.timer_fd[i] >= 0)
				close(r.timer_fd[i]);
			r.timer_fd[i] = -1;
		}
		if (!m.ran)
			goto out;
		if (status && !first_failure)
			first_failure = status;
	}
	status = first_failure;
	if (extra.repeat > 1 && !stat_repeat_last(&repeat) && !status)
		status = 1;
	goto out;
oom:
	ms_warn("out of memory");
out:
	stat_repeat_free(&repeat);
	ctl_fifo_close(&control);
	if (out && fclose(out) != 0 && status == 0) {
		if (extra.output_path)
			ms_warn("-o %s: could not write it all: %s", extra.output_path,
				strerror(errno));
		else
			ms_warn("%s: could not write it all: %s",
				extra.log_fd >= 0 ? "--log-fd" : "standard error", strerror(errno));
		status = 1;
	}
	event_names_free(shown, nr_shown);
	stat_threads_free(&threads);
	lua_engine_free(lua);
	free(lua_metrics);
	session_options_free(&opt);
	return status;
}
