#include "pipeline/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "pipeline/session_recording.h"
#include "metrics/metrics.h"
#include "catalog/resolver.h"
#include "sources/procfs_source.h"
#include "sources/replay_source.h"
#include "sources/bpf_source.h"
#include "sources/perf_source.h"


const char session_options_help[] =
	"  -e, --events LIST   events to count (default without -m: " SESSION_DEFAULT_EVENTS ")\n"
	"                      names: page-faults, pmu/alias/, pmu/field=val,.../,\n"
	"                      subsys:tracepoint, pmu::EVENT:UMASK (libpfm4), proc.* (eBPF)\n"
	"  -m, --metrics LIST  portable metrics (memscope list --metrics), e.g. mem.read_bw,numa.hit\n"
	"      --replay FILE   counter values from FILE instead of this machine (docs/replay-format.md)\n"
	"      --input FILE    the frames of a recording (memscope record) instead of this machine\n"
	"  -I, --interval MS   a frame every MS milliseconds (at least 10)\n"
	"  -a, --all-cpus      the whole system, one counter per CPU (with CMD: while it runs)\n"
	"  -p, --pid PIDS      attach to running processes (all their threads)\n"
	"      --per-cpu       one row per CPU (also --per-socket, --per-node)\n"
	"      --per-channel   -m metrics per memory channel (PMUs the catalog scopes per channel)\n";

void session_options_init(struct session_options *opt, const char *command_name)
{
	memset(opt, 0, sizeof(*opt));
	opt->command_name = command_name;
	opt->aggr = AGGR_TOTAL;
}

static int append_list(char **list, const char *more)
{
	size_t old = *list ? strlen(*list) : 0;
	char *grown = realloc(*list, old + strlen(more) + 2);

	if (!grown)
		return -1;
	if (old)
		grown[old++] = ',';
	strcpy(grown + old, more);
	*list = grown;
	return 0;
}

static int parse_interval(const struct session_options *opt, const char *text, long *ms)
{
	char *end;

	errno = 0;
	*ms = strtol(text, &end, 10);
	if (errno || end == text || *end) {
		fprintf(stderr, "memscope %s: -I %s: not a number of milliseconds (e.g. -I 500)\n",
			opt->command_name, text);
		return -1;
	}
	if (*ms < SESSION_MIN_INTERVAL_MS || *ms > SESSION_MAX_INTERVAL_MS) {
		fprintf(stderr, "memscope %s: -I %s: the interval must be between %d ms and %ld ms "
			"(shorter intervals cost more than they measure)\n", opt->command_name, text,
			SESSION_MIN_INTERVAL_MS, SESSION_MAX_INTERVAL_MS);
		return -1;
	}
	return 0;
}

int session_option(struct session_options *opt, int c, const char *arg)
{
	switch (c) {
	case 'e':
	case 'm':
		if (append_list(c == 'e' ? &opt->events : &opt->metrics, arg) < 0) {
			fprintf(stderr, "memscope %s: out of memory\n", opt->command_name);
			return -1;
		}
		return 1;
	case 'I':
		return parse_interval(opt, arg, &opt->interval_ms) < 0 ? -1 : 1;
	case 'a': opt->system_wide = true; return 1;
	case 'p': opt->pids = arg; return 1;
	case SESSION_OPT_REPLAY: opt->replay_path = arg; return 1;
	case SESSION_OPT_INPUT: opt->input_path = arg; return 1;
	case SESSION_OPT_PER_CPU: opt->aggr = AGGR_CPU; return 1;
	case SESSION_OPT_PER_SOCKET: opt->aggr = AGGR_SOCKET; return 1;
	case SESSION_OPT_PER_NODE: opt->aggr = AGGR_NODE; return 1;
	case SESSION_OPT_PER_CHANNEL: opt->aggr = AGGR_CHANNEL; return 1;
	default: return 0;
	}
}

int session_options_finish(struct session_options *opt, int argc, char **argv)
{
	if (optind < argc)
		opt->command = &argv[optind];
	if (opt->input_path)
		return session_input_check(opt);
	if (opt->replay_path) {
		if (opt->system_wide || opt->pids || opt->command || opt->events || !opt->metrics) {
			fprintf(stderr, "memscope %s: --replay FILE replays the counters of -m METRICS from "
				"FILE: give -m, and no -e, -a, -p or command\n", opt->command_name);
			return -1;
		}
		return 0;
	}
	if (!opt->system_wide && !opt->pids && !opt->command) {
		fprintf(stderr, "memscope %s: say what to measure: -a (whole system), -p PID, "
			"or a command after --\n", opt->command_name);
		return -1;
	}
	if (opt->pids && (opt->system_wide || opt->command)) {
		fprintf(stderr, "memscope %s: -p excludes -a and a command; choose one "
			"(-a -- CMD counts the whole system while CMD runs)\n", opt->command_name);
		return -1;
	}
	if (!opt->events && !opt->metrics && append_list(&opt->events, SESSION_DEFAULT_EVENTS) < 0)
		return -1;
	return 0;
}

void session_options_free(struct session_options *opt)
{
	free(opt->events);
	free(opt->metrics);
	opt->events = opt->metrics = NULL;
}

void session_describe_target(const struct session_options *opt, char *buf, size_t size)
{
	if (opt->command) {
		size_t len = (size_t)snprintf(buf, size, "'");

		for (int i = 0; opt->command[i] && len + 2 < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", opt->command[i]);
		if (len + 20 < size)
			snprintf(buf + len, size - len, opt->system_wide ? "' (system wide)" : "'");
	} else if (opt->input_path) {
		snprintf(buf, size, "recording '%s'", opt->input_path);
	} else if (opt->replay_path) {
		snprintf(buf, size, "replay of '%s'", opt->replay_path);
	} else if (opt->pids) {
		snprintf(buf, size, "process id '%s'", opt->pids);
	} else {
		snprintf(buf, size, "system wide");
	}
}

/* eBPF series names go to the bpf source, everything else to perf. */
static int split_events(struct session *s, const char *text, char **perf_events)
{
	char **names;
	int nr;
	size_t len = 0;

	*perf_events = NULL;
	if (!text)
		text = "";
	if (event_list_split(text, &names, &nr) < 0)
		return -1;
	s->bpf_names = calloc((size_t)nr + 1, sizeof(char *));
	*perf_events = calloc(strlen(text) + 1, 1);
	if (!s->bpf_names || !*perf_events) {
		event_names_free(names, nr);
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		/* A name given twice is one series: counting it twice would only
		 * double its column. */
		bool again = false;

		for (int j = 0; j < i; j++)
			again |= names[j] && !strcmp(names[j], names[i]);
		for (int j = 0; j < s->nr_bpf; j++)
			again |= !strcmp(s->bpf_names[j], names[i]);
		if (again)
			continue;
		if (bpf_series_name_known(names[i])) {
			s->bpf_names[s->nr_bpf++] = names[i];
			names[i] = NULL;
		} else {
			len += (size_t)sprintf(*perf_events + len, "%s%s", len ? "," : "", names[i]);
		}
	}
	event_names_free(names, nr);
	return 0;
}

static int prepare_target(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	if (opt->system_wide && !opt->command) {
		s->target.kind = TARGET_SYSTEM;
		s->target.system_wide = true;
		return 0;
	}
	if (opt->pids)
		return target_parse_pids(&s->target, opt->pids, err) < 0 ? EXIT_USAGE : 0;
	if (target_prepare_command(&s->target, opt->command, err) < 0)
		return 1;
	s->target.system_wide = opt->system_wide;
	return 0;
}

static int create_sources(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	if (s->nr_events) {
		struct perf_source_options popt = {
			.host = &s->host,
			.target = &s->target,
			.events = s->events,
			.nr_events = s->nr_events,
			/* Split by CPU only when the output splits by CPU, socket or node. */
			.task_per_cpu = opt->aggr != AGGR_TOTAL,
		};

		if (perf_source_create(&s->sources[s->nr_sources], &popt, err) < 0)
			return -1;
		s->nr_sources++;
	}
	if (s->nr_bpf) {
		struct bpf_source_options bopt;

		memset(&bopt, 0, sizeof(bopt));
		bopt.tgids = s->target.pids;
		bopt.nr_tgids = s->target.nr_pids;
		bopt.system_wide = s->target.system_wide;
		bopt.top_n = opt->bpf_top_n;
		bopt.warnings = opt->notes;
		if (bpf_source_create(&s->sources[s->nr_sources], &s->host, &bopt,
				      (const char *const *)s->bpf_names, s->nr_bpf, &s->bpf_unavailable) < 0) {
			/* The eBPF probes are one source among others: without them the
			 * counters still run. */
			if (!s->nr_sources && !opt->bpf_optional) {
				*err = s->bpf_unavailable;
				return -1;
			}
			if (!opt->bpf_optional)
				fprintf(stderr, "memscope %s: %s\n", opt->command_name, s->bpf_unavailable.text);
		} else {
			s->bpf_unavailable.text[0] = '\0';
			s->nr_sources++;
		}
	}
	return 0;
}

static void report_notes(const struct session *s, const struct session_options *opt)
{
	const struct source *perf = &s->sources[0];
	FILE *out = opt->notes ? opt->notes : stderr;

	if (!s->nr_events || s->sources[0].replay)
		return;
	if (perf_source_user_only(perf))
		fprintf(out, "memscope %s: note: counting user space only (perf_event_paranoid is 2 "
			"and memscope has no CAP_PERFMON); for kernel time too: sudo sysctl "
			"kernel.perf_event_paranoid=1\n", opt->command_name);
	for (int i = 0; i < perf_source_nr_skipped(perf); i++)
		fprintf(out, "memscope %s: note: %s\n", opt->command_name, perf_source_skipped_reason(perf, i));
}

/* A name that is not in the catalog at all is a usage error; one the host
 * cannot measure is not (metric_plan_build says why). */
static int check_metric_names(const struct catalog *cat, const char *list, struct ms_error *err)
{
	char **names;
	int nr, ret = 0;

	if (event_list_split(list, &names, &nr) < 0)
		return -1;
	for (int i = 0; i < nr && !ret; i++) {
		bool known = false;

		for (int m = 0; m < cat->nr_metrics; m++)
			known |= !strcmp(cat->metrics[m].name, names[i]);
		if (!known) {
			ms_error_set(err, "unknown metric '%s'; see memscope list --metrics", names[i]);
			ret = -1;
		}
	}
	event_names_free(names, nr);
	return ret;
}

static int add_unmeasured(struct session *s, const char *metric, const char *why)
{
	size_t size = strlen(metric) + strlen(why) + 3;
	char **grown = realloc(s->unmeasured, sizeof(char *) * (size_t)(s->nr_unmeasured + 1));
	char *text = malloc(size);

	if (grown)
		s->unmeasured = grown;
	if (!grown || !text) {
		free(text);
		return -1;
	}
	snprintf(text, size, "%s: %s", metric, why);
	s->unmeasured[s->nr_unmeasured++] = text;
	return 0;
}

/* metrics_if_available: the comma list of the metrics in list this host can
 * measure; each of the others is kept with the resolver's reason. */
static int keep_measurable_metrics(struct session *s, const char *list, char **measurable)
{
	char **names;
	int nr, ret = 0;
	size_t len = 0;

	if (event_list_split(list, &names, &nr) < 0)
		return -1;
	*measurable = calloc(strlen(list) + 1, 1);
	for (int i = 0; i < nr && *measurable && !ret; i++) {
		int idx = catalog_metric_index(s->catalog, names[i]);

		if (idx < 0)
			ret = add_unmeasured(s, names[i], "not in the catalog");
		else if (!s->resolution->metrics[idx].available)
			ret = add_unmeasured(s, names[i], s->resolution->metrics[idx].why);
		else
			len += (size_t)sprintf(*measurable + len, "%s%s", len ? "," : "", names[i]);
	}
	event_names_free(names, nr);
	return *measurable && !ret ? 0 : -1;
}

const char *session_metric_why(const struct session *s, const char *metric)
{
	size_t len = strlen(metric);

	for (int i = 0; i < s->nr_unmeasured; i++)
		if (!strncmp(s->unmeasured[i], metric, len) && s->unmeasured[i][len] == ':')
			return s->unmeasured[i];
	return NULL;
}

/* An event named twice (by -e and by a metric) is counted once: its series
 * serve both. eBPF series are looked up among the bpf source's names. */
static bool has_event(const struct session *s, const char *text, bool bpf)
{
	for (int i = 0; !bpf && i < s->nr_events; i++)
		if (!strcmp(s->events[i].name, text))
			return true;
	for (int i = 0; bpf && i < s->nr_bpf; i++)
		if (!strcmp(s->bpf_names[i], text))
			return true;
	return false;
}

/* Plan the metrics and add their perf events (grouped as the plan says) and
 * their eBPF series (to the bpf source's names). */
static int plan_metrics(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	char *measurable = NULL;
	int failed;

	if (catalog_load_default(&s->catalog, err) < 0)
		return 1;
	if (!opt->metrics_if_available && check_metric_names(s->catalog, opt->metrics, err) < 0)
		return EXIT_USAGE;
	if (resolve(&s->host, s->catalog, &s->resolution, err) < 0)
		return 1;
	if (opt->metrics_if_available && keep_measurable_metrics(s, opt->metrics, &measurable) < 0) {
		free(measurable);
		ms_error_set(err, "out of memory");
		return 1;
	}
	if (measurable && !measurable[0]) {
		free(measurable);
		return 0; /* none of them: no plan, every one has its reason */
	}
	failed = metric_plan_build(s->resolution, measurable ? measurable : opt->metrics, &s->plan, err) < 0;
	free(measurable);
	if (failed)
		return 1;
	if (opt->replay_path)
		return 0; /* the replay source provides every planned series */
	for (int i = 0; i < s->plan->nr_events; i++) {
		const struct plan_event *pe = &s->plan->events[i];
		bool bpf = pe->how == EVENT_HOW_BPF;
		struct event *grown;

		if (pe->how == EVENT_HOW_PROCFS || has_event(s, pe->text, bpf))
			continue;
		if (bpf) {
			/* bpf_names stays NULL-terminated; it owns its strings. */
			char **names = realloc(s->bpf_names, sizeof(char *) * (size_t)(s->nr_bpf + 2));

			if (names)
				s->bpf_names = names;
			if (!names || !(names[s->nr_bpf] = strdup(pe->text))) {
				ms_error_set(err, "out of memory");
				return 1;
			}
			names[++s->nr_bpf] = NULL;
			continue;
		}
		grown = realloc(s->events, sizeof(*grown) * (size_t)(s->nr_events + 1));
		if (!grown) {
			ms_error_set(err, "out of memory");
			return 1;
		}
		s->events = grown;
		if (event_parse(&s->host, pe->text, &s->events[s->nr_events], err) < 0) {
			ms_error_prefix(err, "catalog event for %s", pe->instance);
			return 1;
		}
		s->events[s->nr_events++].group_hint = pe->group;
	}
	return 0;
}

int session_open(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	char *perf_events = NULL;
	int ret;

	if (opt->input_path)
		return session_open_recording(s, opt, opt->input_path, err);
	memset(s, 0, sizeof(*s));
	if (host_load(&s->host, err) < 0)
		return 1;
	s->host_loaded = true;
	if (split_events(s, opt->events, &perf_events) < 0) {
		ms_error_set(err, "out of memory");
		return 1;
	}
	if (perf_events[0] && event_list_parse(&s->host, perf_events, &s->events, &s->nr_events, err) < 0) {
		free(perf_events);
		return EXIT_USAGE;
	}
	free(perf_events);
	if (opt->metrics) {
		ret = plan_metrics(s, opt, err);
		if (ret)
			return ret;
	}
	if (opt->replay_path) {
		if (replay_source_create(&s->sources[0], &s->host, s->plan, opt->replay_path, err) < 0)
			return 1;
		s->nr_sources = 1;
		goto open_sources;
	}
	if (s->host.roots.is_fixture) {
		ms_error_set(err, "MEMSCOPE_SYSFS_ROOT=%s describes another machine: its counters cannot "
			     "be opened here; unset it to count on this machine", s->host.roots.sys);
		return 1;
	}
	ret = prepare_target(s, opt, err);
	if (ret)
		return ret;
	if (create_sources(s, opt, err) < 0)
		return 1;
	if (s->plan && metric_plan_needs_procfs(s->plan)) {
		if (procfs_source_create(&s->sources[s->nr_sources], &s->host, s->plan, err) < 0)
			return 1;
		s->nr_sources++;
	}
open_sources:
	s->sampler_opened = true;
	if (sampler_open(&s->sampler, s->sources, s->nr_sources, err) < 0)
		return 1;
	if (s->plan && metric_engine_new(s->plan, &s->host, &s->sampler.table, &s->engine, err) < 0)
		return 1;
	report_notes(s, opt);
	return 0;
}

int session_run(struct session *s, const struct session_options *opt, sampler_frame_fn on_frame,
		void *ctx, struct ms_error *err)
{
	if (sampler_run(&s->sampler, &s->target, (uint64_t)opt->interval_ms * 1000000ull, on_frame, ctx,
			err) < 0)
		return -1;
	return session_recording_end(s, opt->command_name, err);
}

struct source *session_bpf_source(struct session *s)
{
	for (int i = 0; i < s->nr_sources; i++)
		if (!strcmp(s->sources[i].ops->name, "bpf"))
			return &s->sources[i];
	return NULL;
}

int session_exit_code(const struct session *s)
{
	return s->target.kind == TARGET_COMMAND ? target_exit_code(&s->target) : 0;
}

void session_close(struct session *s)
{
	int closed = 0;

	if (s->sampler_opened) {
		closed = s->sampler.nr_sources;
		sampler_close(&s->sampler);
	}
	/* Sources created but never reached by sampler_open(). */
	for (int i = closed; i < s->nr_sources; i++)
		s->sources[i].ops->close(&s->sources[i]);
	metric_engine_free(s->engine);
	metric_plan_free(s->plan);
	for (int i = 0; i < s->nr_unmeasured; i++)
		free(s->unmeasured[i]);
	free(s->unmeasured);
	resolution_free(s->resolution);
	catalog_free(s->catalog);
	target_free(&s->target);
	event_list_free(s->events, s->nr_events);
	event_names_free(s->bpf_names, s->nr_bpf);
	if (s->host_loaded)
		host_free(&s->host);
	memset(s, 0, sizeof(*s));
}
