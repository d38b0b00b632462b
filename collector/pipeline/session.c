#include "pipeline/session.h"
#include "util/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/catalog_groups.h"
#include "pipeline/session_pipeline.h"
#include "catalog/catalog_sampling.h"
#include "pipeline/session_recording.h"
#include "metrics/metrics.h"
#include "catalog/resolver.h"
#include "events/event.h"
#include "sources/perf_source.h"
#include "sources/sample_source.h"
#include "util/array.h"



void session_options_init(struct session_options *opt, const char *command_name)
{
	memset(opt, 0, sizeof(*opt));
	opt->command_name = command_name;
	opt->aggr = AGGR_TOTAL;
}


static int count_names(const char *list)
{
	int n = 1;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n;
}

/* A cgroup named twice in --for-each-cgroup would be one column counted twice. */
static bool repeated_name(const char *list, char *why, size_t size)
{
	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		size_t len = strcspn(p, ",");

		for (const char *q = p + len; *q == ','; ) {
			size_t other = strcspn(++q, ",");

			if (other == len && !strncmp(p, q, len)) {
				snprintf(why, size, "names cgroup '%.*s' twice: give each cgroup once", (int)len, p);
				return true;
			}
			q += other;
		}
	}
	return false;
}

/* What perf refuses with -G, and what memscope cannot filter by cgroup. */
static bool cgroup_options_refused(const struct session_options *opt)
{
	const char *g = opt->for_each_cgroup ? "--for-each-cgroup" : "-G";
	const char *why = NULL;
	char buf[200];

	if (opt->input_path || opt->replay_path)
		why = "counts live perf events in cgroups: it takes no --input or --replay";
	else if (opt->pids)
		why = "counts in cgroups on every CPU: it excludes -p (as perf's); use -a";
	else if (!opt->system_wide)
		why = "counts in cgroups on every CPU: add -a (as perf's -G, system-wide only)";
	else if (opt->metrics.nr)
		why = "counts perf events (-e) in cgroups; -m metrics are not counted per cgroup";
	else if (!opt->events.nr)
		why = "names cgroups for the -e events: give the events with -e";
	else if (!opt->for_each_cgroup && count_names(opt->cgroups) > opt->events.nr) {
		snprintf(buf, sizeof(buf), "names %d cgroups for %d -e events: give one cgroup per event "
			 "(or one for all)", count_names(opt->cgroups), opt->events.nr);
		why = buf;
	}
	if (!why && opt->for_each_cgroup && repeated_name(opt->cgroups, buf, sizeof(buf)))
		why = buf;
	if (why)
		ms_warn("%s %s", g, why);
	return why != NULL;
}

/* -G's pairs, in perf's order: -G maps names to events in order (one name
 * to every event); --for-each-cgroup: each cgroup, every event. */
static int pair_cgroups(struct session *s, const struct session_options *opt)
{
	int nr_groups = count_names(opt->cgroups), nr = 0;
	char **group = calloc((size_t)nr_groups, sizeof(char *));
	char *p;

	s->cgroup_text = strdup(opt->cgroups);
	s->cgroups = calloc((size_t)nr_groups * (size_t)opt->events.nr + 1, sizeof(*s->cgroups));
	if (!group || !s->cgroup_text || !s->cgroups) {
		free(group);
		return -1;
	}
	p = s->cgroup_text;
	for (int i = 0; i < nr_groups; i++) {
		group[i] = p;
		p += strcspn(p, ",");
		if (*p)
			*p++ = '\0';
	}
	if (opt->for_each_cgroup) {
		for (int g = 0; g < nr_groups; g++)
			for (int e = 0; e < opt->events.nr; e++)
				s->cgroups[nr++] = (struct event_cgroup){ opt->events.names[e], group[g] };
	} else {
		for (int e = 0; e < opt->events.nr && (nr_groups == 1 || e < nr_groups); e++)
			s->cgroups[nr++] = (struct event_cgroup){ opt->events.names[e], group[nr_groups == 1 ? 0 : e] };
	}
	s->nr_cgroups = nr;
	free(group);
	return 0;
}

/* eBPF and kernel statistics count every task: with -G they would be
 * whole-system numbers beside the cgroup's. */
static int cgroup_refuses(const struct session *s, const struct source_kind *kind, const char *name,
			  struct ms_error *err)
{
	if (!strcmp(kind->name, "perf"))
		return 0;
	for (int i = 0; i < s->nr_cgroups; i++)
		if (!strcmp(s->cgroups[i].event, name) && s->cgroups[i].cgroup[0]) {
			ms_error_usage(err, "-G counts perf events in a cgroup, but '%s' comes from the %s source, "
				       "which counts every task, not a cgroup's: leave it out or count it without -G",
				       name, kind->name);
			return -1;
		}
	return 0;
}

int session_options_finish(struct session_options *opt, char **command)
{
	if (command && command[0])
		opt->command = command;
	if (opt->cgroups && cgroup_options_refused(opt))
		return -1;
	if (opt->input_path)
		return session_input_check(opt);
	if (opt->replay_path) {
		if (opt->system_wide || opt->pids || opt->command || opt->events.nr || !opt->metrics.nr) {
			ms_warn("--replay FILE replays the counters of -m METRICS from "
				"FILE: give -m, and no -e, -a, -p or command");
			return -1;
		}
		return 0;
	}
	if (opt->cpu_list && opt->pids) {
		ms_warn("-C counts whole CPUs, -p a process's threads wherever they run; "
			"choose one");
		return -1;
	}
	/* perf's -C: the whole system on those CPUs, while a command runs if one is given. */
	if (opt->cpu_list)
		opt->system_wide = true;
	if (!opt->system_wide && !opt->pids && !opt->command) {
		ms_warn("say what to measure: -a (whole system), -p PID, "
			"or a command after --");
		return -1;
	}
	if (opt->pids && opt->command && strcmp(opt->command_name, "stat")) {
		/* Only stat counts processes for a command's duration (perf stat -p PID -- CMD). */
		ms_warn("-p excludes a command; choose one");
		return -1;
	}
	if (opt->pids && opt->system_wide) {
		ms_warn("-p excludes -a; choose one "
			"(-a -- CMD counts the whole system while CMD runs, -p PID -- CMD the processes)");
		return -1;
	}
	if (!opt->events.nr && !opt->metrics.nr) {
		struct ms_error err;

		if (name_list_add_text(&opt->events, opt->default_events ? opt->default_events : SESSION_DEFAULT_EVENTS,
				       &err) < 0) {
			ms_report(&err);
			return -1;
		}
		opt->default_events_used = opt->default_events != NULL;
	}
	return 0;
}

void session_options_free(struct session_options *opt)
{
	name_list_free(&opt->events);
	name_list_free(&opt->metrics);
	free(opt->samples);
	opt->samples = NULL;
}

void session_describe_target(const struct session_options *opt, char *buf, size_t size)
{
	/* -C counts those CPUs, not the system: named as perf names them. */
	if (opt->cpu_list && !opt->input_path && !opt->replay_path) {
		snprintf(buf, size, "'CPU(s) %s'", opt->cpu_list);
	} else if (opt->command) {
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

/* Add name to the session's names unless it is there already: an event
 * named twice (twice by -e, or by -e and by a metric) is one series. */
static int add_name(struct session *s, const char *name)
{
	char **grown;

	for (int i = 0; i < s->nr_names; i++)
		if (!strcmp(s->names[i], name))
			return 0;
	grown = realloc(s->names, sizeof(char *) * (size_t)(s->nr_names + 2));
	if (!grown)
		return -1;
	s->names = grown;
	if (!(grown[s->nr_names] = strdup(name)))
		return -1;
	grown[++s->nr_names] = NULL;
	return 0;
}

static int add_event_list(struct session *s, const struct name_list *events)
{
	for (int i = 0; i < events->nr; i++)
		if (add_name(s, events->names[i]) < 0)
			return -1;
	return 0;
}

static int prepare_target(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	if (opt->system_wide && !opt->command) {
		s->target.kind = TARGET_SYSTEM;
		s->target.system_wide = true;
		return 0;
	}
	if (opt->pids && !opt->command) {
		s->target.threads_only = opt->threads_only;
		if (target_parse_pids(&s->target, opt->pids, err) < 0) {
			ms_error_mark(err, MS_ERR_USAGE);
			return -1;
		}
		return 0;
	}
	if (opt->pids) {
		/* perf's -p PID -- CMD: the processes are counted while CMD runs. */
		if (target_parse_pids(&s->target, opt->pids, err) < 0) {
			ms_error_mark(err, MS_ERR_USAGE);
			return -1;
		}
		s->target.threads_only = opt->threads_only;
		s->target.attach = s->target.pids;
		s->target.nr_attach = s->target.nr_pids;
		s->target.pids = NULL;
		s->target.nr_pids = 0;
	}
	if (target_prepare_command(&s->target, opt->command, err) < 0)
		return -1;
	s->target.system_wide = opt->system_wide;
	return 0;
}

static void note_left_out(struct session *s, const struct source_kind *kind, const struct ms_error *why)
{
	s->left_out[s->nr_left_out].kind = kind;
	s->left_out[s->nr_left_out++].why = *why;
}

/* -C restricts counters opened per CPU (perf's events, a replay of them);
 * other sources count per task or for the whole system. */
static int cpu_list_refuses(const struct source_kind *kind, const char *name, struct ms_error *err)
{
	if (!strcmp(kind->name, "perf") || !strcmp(kind->name, "replay"))
		return 0;
	ms_error_usage(err, "-C counts only on the CPUs it names, but '%s' comes from the %s source, which %s: "
		       "leave it out or count without -C", name, kind->name,
		       !strcmp(kind->name, "bpf") ? "counts per task, not per CPU" :
		       !strcmp(kind->name, "procfs") ? "reads the kernel's statistics of the whole system" :
						       "does not count per CPU");
	return -1;
}

/* Route every name to the kind of this mode that claims it, and make one
 * source per kind with names, in registry order. */
static int create_sources(struct session *s, const struct session_options *opt, enum source_kind_mode mode,
			  struct ms_error *err)
{
	const struct source_kind **owner = calloc((size_t)s->nr_names + 1, sizeof(*owner));
	const char **claimed = calloc((size_t)s->nr_names + 1, sizeof(*claimed));
	/* The sampling source hands its items to the session (session_run.c). */
	struct sample_options sampling = opt->sampling;
	int status = 0;

	sampling.hub = &s->sample_hub;
	if (!owner || !claimed) {
		ms_error_set(err, "out of memory");
		status = -1;
		goto out;
	}
	for (int i = 0; i < s->nr_names; i++)
		owner[i] = source_registry_claim(&s->registry, mode, s->names[i]);
	for (int k = 0; k < s->registry.nr && !status; k++) {
		const struct source_kind *kind = s->registry.kinds[k];
		struct source_request req = {
			.host = &s->host,
			.target = mode == SOURCE_LIVE ? &s->target : NULL,
			.names = claimed,
			.plan = s->plan,
			.path = opt->replay_path,
			/* Split by CPU only when the output splits by CPU, socket or node. */
			.per_cpu = opt->aggr != AGGR_TOTAL,
			.per_process = opt->per_process,
			.per_thread = opt->per_thread,
			.thread_pid = opt->thread_pid,
			.start_disabled = opt->start_disabled,
			.notes = opt->notes ? opt->notes : stderr,
			.command_name = opt->command_name,
			.sampling = &sampling,
			.cgroups = s->cgroups,
			.nr_cgroups = s->nr_cgroups,
			.damon_hot_pct = opt->damon_hot_pct,
			.damon_cold_age_us = opt->damon_cold_age_us,
			.damon_mode = (enum damon_mode)opt->damon_mode,
			.interval_ms = opt->interval_ms,
		};
		struct ms_error why = { "" };

		for (int i = 0; i < s->nr_names; i++)
			if (owner[i] == kind)
				claimed[req.nr_names++] = s->names[i];
		if (!req.nr_names)
			continue;
		if (opt->cpu_list && (status = cpu_list_refuses(kind, claimed[0], err)) != 0)
			break;
		for (int i = 0; i < req.nr_names && !status; i++)
			status = cgroup_refuses(s, kind, claimed[i], err);
		if (status)
			break;
		status = kind->create(kind, &s->sources[s->nr_sources], &req, &why);
		if (!status) {
			s->nr_sources++;
			continue;
		}
		if (!kind->optional) {
			*err = why;
			break;
		}
		/* An optional source is one among others: without it the rest
		 * still count. */
		status = 0;
		note_left_out(s, kind, &why);
	}
	if (!status && !s->nr_sources && s->nr_left_out) {
		*err = s->left_out[0].why;
		status = -1;
	}
	/* Said once: as the error when nothing else runs, else as notes. */
	for (int i = 0; !status && !opt->bpf_optional && i < s->nr_left_out; i++)
		ms_warn("%s", s->left_out[i].why.text);
out:
	free(owner);
	free(claimed);
	return status;
}

/* Every name the user wrote must mean something to the kind that claims it,
 * before anything starts. Plan events come from the catalog: a failure there
 * is the catalog's, found when the source is made. */
static int check_names(struct session *s, enum source_kind_mode mode, int nr_user_names, struct ms_error *err)
{
	for (int i = 0; i < nr_user_names; i++) {
		const struct source_kind *kind = source_registry_claim(&s->registry, mode, s->names[i]);

		if (!kind) {
			ms_error_usage(err, "'%s': no source serves this name (memscope list --events)", s->names[i]);
			return -1;
		}
		if (kind->check && kind->check(kind, &s->host, s->names[i], err) < 0) {
			ms_error_mark(err, MS_ERR_USAGE);
			return -1;
		}
	}
	return 0;
}

static void report_notes(struct session *s, const struct session_options *opt)
{
	FILE *out = opt->notes ? opt->notes : stderr;

	if (opt->quiet_notes || opt->default_events_used)
		return;
	for (int i = 0; i < s->nr_sources; i++)
		if (s->sources[i].ops->notes)
			s->sources[i].ops->notes(&s->sources[i], out, opt->command_name);
}

static int add_unmeasured(struct session *s, const char *metric, enum unmeasured_reason reason, const char *why)
{
	size_t size = strlen(metric) + strlen(why) + 3;
	struct session_unmeasured *u;

	if (array_grow_int(&s->unmeasured, &s->cap_unmeasured, s->nr_unmeasured + 1, sizeof(*s->unmeasured)) < 0)
		return -1;
	u = &s->unmeasured[s->nr_unmeasured];
	*u = (struct session_unmeasured){ strdup(metric), reason, strdup(why), malloc(size) };
	if (!u->name || !u->why || !u->line) {
		free(u->name);
		free(u->why);
		free(u->line);
		return -1;
	}
	snprintf(u->line, size, "%s: %s", metric, why);
	s->nr_unmeasured++;
	return 0;
}

/* metrics_if_available: the metrics in list this host can measure; each of
 * the others is kept with the resolver's reason. */
static int keep_measurable_metrics(struct session *s, const struct name_list *list, struct name_list *measurable)
{
	int ret = 0;

	for (int i = 0; i < list->nr && !ret; i++) {
		const char *name = list->names[i];
		int idx = catalog_metric_index(s->catalog, name);

		if (idx < 0)
			ret = add_unmeasured(s, name, UNMEASURED_NOT_IN_CATALOG, "not in the catalog");
		else if (!s->resolution->metrics[idx].available)
			ret = add_unmeasured(s, name, UNMEASURED_NOT_ON_HOST, s->resolution->metrics[idx].why);
		else
			ret = name_list_add(measurable, name);
	}
	return ret;
}

static int none_measurable(const struct session *s, struct ms_error *err)
{
	for (int i = 0; i < s->nr_unmeasured; i++) {
		const struct session_unmeasured *u = &s->unmeasured[i];

		if (s->nr_unmeasured == 1) {
			ms_error_set_kind(err, MS_ERR_NOT_SUPPORTED, "metric '%s' is not available on this host: %s "
					  "(memscope list --explain %s shows how it is computed)", u->name, u->why, u->name);
			return -1;
		}
		if (i == 0)
			ms_error_set_kind(err, MS_ERR_NOT_SUPPORTED,
					  "none of the metrics asked for can be counted on this host: ");
		ms_error_append(err, "%s'%s': %s", i ? "; " : "", u->name, u->why);
	}
	ms_error_append(err, " (memscope list --explain METRIC shows how each is computed)");
	return -1;
}

const char *session_metric_why(const struct session *s, const char *metric)
{
	for (int i = 0; i < s->nr_unmeasured; i++)
		if (!strcmp(s->unmeasured[i].name, metric))
			return s->unmeasured[i].line;
	return NULL;
}

/* Plan the metrics and add their events to the names (the perf kind keeps
 * each plan event's group). */
static int plan_metrics(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	struct name_list measurable = { NULL, 0 }, asked = { NULL, 0 };
	bool partial = opt->metrics_if_available || opt->metrics_partial;
	int failed;

	if (catalog_load_default(&s->catalog, err) < 0)
		return -1;
	/* Groups (-M TopdownL1) become their metrics; a name that is neither a
	 * metric nor a group is a usage error, one the host cannot measure is
	 * not (metric_plan_build or keep_measurable_metrics says why). */
	failed = catalog_expand_groups(s->catalog, &opt->metrics, opt->metrics_if_available, &asked, err);
	if (failed) {
		name_list_free(&asked);
		if (failed == -1)
			ms_error_mark(err, MS_ERR_USAGE);
		return -1;
	}
	if (resolve(&s->host, s->catalog, &s->resolution, err) < 0) {
		name_list_free(&asked);
		return -1;
	}
	if (partial) {
		if (keep_measurable_metrics(s, &asked, &measurable) < 0) {
			name_list_free(&measurable);
			name_list_free(&asked);
			ms_error_set(err, "out of memory");
			return -1;
		}
		name_list_free(&asked);
		/* Nothing at all to count (no metric, no event): a failure that
		 * names each metric with its reason, before anything starts. */
		if (!measurable.nr && opt->metrics_partial && s->nr_names == 0)
			return none_measurable(s, err);
		if (!measurable.nr)
			return 0; /* none of them: no plan, every one has its reason */
	}
	failed = metric_plan_build(s->resolution, partial ? &measurable : &asked, &s->plan, err) < 0;
	name_list_free(&measurable);
	name_list_free(&asked);
	if (failed)
		return -1;
	/* Their events join the names; the registry decides who reads each. */
	for (int i = 0; i < s->plan->nr_events; i++)
		if (add_name(s, s->plan->events[i].text) < 0) {
			ms_error_set(err, "out of memory");
			return -1;
		}
	return 0;
}

/* --sample: each event becomes the name "sample:EVENT" of the sampling kind;
 * "mem" is the catalog's choice for this host (list --explain sample.mem). */
static int add_sample_names(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	struct name_list list = { NULL, 0 };
	char **specs;
	int nr, ret = 0;

	if (name_list_add_text(&list, opt->samples, err) < 0) {
		name_list_free(&list);
		ms_error_prefix(err, "--sample");
		return -1;
	}
	specs = list.names;
	nr = list.nr;
	for (int i = 0; i < nr && !ret; i++) {
		struct sampling_choice choice;
		char name[1100];

		if (strcmp(specs[i], "mem")) {
			snprintf(name, sizeof(name), "%s%s", SAMPLE_NAME_PREFIX, specs[i]);
			ret = add_name(s, name) < 0;
			continue;
		}
		if ((!s->catalog && catalog_load_default(&s->catalog, err) < 0) ||
		    (!s->resolution && resolve(&s->host, s->catalog, &s->resolution, err) < 0)) {
			ret = 1;
			break;
		}
		if (sampling_choose(s->resolution, "mem", &choice, err) < 0) {
			ret = 1;
			break;
		}
		for (int e = 0; e < choice.nr_events && !ret; e++) {
			snprintf(name, sizeof(name), "%s%s", SAMPLE_NAME_PREFIX, choice.events[e]);
			ret = add_name(s, name) < 0;
		}
	}
	if (ret && !err->text[0])
		ms_error_set(err, "out of memory");
	name_list_free(&list);
	return ret ? -1 : 0;
}

int session_open(struct session *s, const struct session_options *opt, struct ms_error *err)
{
	int ret;

	if (opt->input_path) {
		ret = session_open_recording(s, opt, opt->input_path, err);
		session_describe_target(opt, s->title, sizeof(s->title));
		return ret;
	}
	memset(s, 0, sizeof(*s));
	session_describe_target(opt, s->title, sizeof(s->title));
	if (opt->registry)
		s->registry = *opt->registry;
	else
		s->registry = *source_registry_process();
	if (host_load(&s->host, err) < 0)
		return -1;
	s->host_loaded = true;
	if (opt->cpu_list && host_restrict_cpus(&s->host, "-C", opt->cpu_list, err) < 0) {
		ms_error_mark(err, MS_ERR_USAGE);
		return -1;
	}
	if (opt->aggr == AGGR_CACHE && opt->cache_level &&
	    topology_select_cache_level(&s->host.topo, opt->cache_level, err) < 0) {
		ms_error_prefix(err, "--per-cache=L%d", opt->cache_level);
		ms_error_mark(err, MS_ERR_USAGE);
		return -1;
	}
	if (add_event_list(s, &opt->events) < 0 || (opt->cgroups && pair_cgroups(s, opt) < 0)) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	ret = check_names(s, opt->replay_path ? SOURCE_FILE : SOURCE_LIVE, s->nr_names, err);
	if (ret)
		return ret;
	if (opt->metrics.nr) {
		ret = plan_metrics(s, opt, err);
		if (ret)
			return ret;
		/* Kernel statistics and eBPF series are not counted per CPU. */
		for (int i = 0; s->plan && opt->cpu_list && i < s->plan->nr_events; i++)
			if (s->plan->events[i].how == EVENT_HOW_PROCFS || s->plan->events[i].how == EVENT_HOW_BPF ||
			    s->plan->events[i].how == EVENT_HOW_DAMON) {
				ms_error_usage(err, "-C counts only on the CPUs it names, but the metrics asked for read "
					       "'%s', which %s: leave those metrics out or count without -C",
					       s->plan->events[i].text, s->plan->events[i].how == EVENT_HOW_BPF
					       ? "eBPF counts per task, not per CPU" : "the kernel keeps for the whole system");
				return -1;
			}
	}
	if (opt->samples && (ret = add_sample_names(s, opt, err)))
		return ret;
	if (!opt->replay_path) {
		if (s->host.roots.is_fixture) {
			ms_error_set_kind(err, MS_ERR_NOT_SUPPORTED, "MEMSCOPE_SYSFS_ROOT=%s describes another "
					  "machine: its counters cannot be opened here; unset it to count on this machine",
					  s->host.roots.sys);
			return -1;
		}
		ret = prepare_target(s, opt, err);
		if (ret)
			return ret;
	}
	ret = create_sources(s, opt, opt->replay_path ? SOURCE_FILE : SOURCE_LIVE, err);
	if (ret)
		return ret;
	/* A counter of what is also sampled (page-faults with --sample
	 * page-faults) reads the sampling event's own count. */
	for (int i = 0; i < s->nr_sources; i++)
		if (sample_source_nr_events(&s->sources[i]) > 0)
			for (int j = 0; j < s->nr_sources; j++)
				perf_source_count_from(&s->sources[j], &s->sources[i]);
	s->sampler_opened = true;
	if (sampler_open(&s->sampler, s->sources, s->nr_sources, err) < 0)
		return -1;
	if (s->plan && metric_engine_new(s->plan, &s->host, &s->sampler.table, &s->engine, err) < 0)
		return -1;
	if (s->engine && opt->replay_path)
		metric_engine_set_origin(s->engine, METRIC_ORIGIN_REPLAY);
	report_notes(s, opt);
	return 0;
}

bool session_task_target(const struct session *s)
{
	if (s->recording)
		return !session_recording_header(s)->system_wide;
	return s->target.kind != TARGET_SYSTEM && !s->target.system_wide;
}

bool session_per_task(const struct session *s)
{
	for (int i = 0; i < s->nr_sources; i++)
		if (s->sources[i].kind->per_task)
			return true;
	return false;
}

const char *session_name_why(const struct session *s, const char *name)
{
	for (int i = 0; i < s->nr_left_out; i++)
		if (s->left_out[i].kind->claims(s->left_out[i].kind, name))
			return s->left_out[i].why.text;
	return NULL;
}

int session_exit_code(const struct session *s)
{
	return s->target.kind == TARGET_COMMAND ? target_exit_code(&s->target) : 0;
}

enum sampler_end session_end(const struct session *s)
{
	return s->sampler.end;
}

const struct series_table *session_series(const struct session *s)
{
	return &s->sampler.table;
}

bool session_exec_failed(const struct session *s)
{
	return s->target.exec_failed;
}

int session_attached_processes(const struct session *s)
{
	return s->target.kind == TARGET_PIDS ? s->target.nr_pids : 0;
}

const struct rusage *session_child_rusage(const struct session *s)
{
	return &s->target.child_rusage;
}

int session_watch_add(struct session *s, int fd, sampler_ready_fn fn, void *ctx, struct ms_error *err)
{
	return sampler_watch_add(&s->sampler, fd, fn, ctx, err);
}

void session_close(struct session *s)
{
	int closed = 0;

	session_pipeline_close(s);
	if (s->sampler_opened) {
		closed = s->sampler.nr_sources;
		sampler_close(&s->sampler);
	}
	/* Sources created but never reached by sampler_open(). */
	for (int i = closed; i < s->nr_sources; i++)
		s->sources[i].ops->close(&s->sources[i]);
	metric_engine_free(s->engine);
	metric_plan_free(s->plan);
	for (int i = 0; i < s->nr_unmeasured; i++) {
		free(s->unmeasured[i].name);
		free(s->unmeasured[i].why);
		free(s->unmeasured[i].line);
	}
	free(s->unmeasured);
	resolution_free(s->resolution);
	catalog_free(s->catalog);
	target_free(&s->target);
	event_names_free(s->names, s->nr_names);
	free(s->cgroups);
	free(s->cgroup_text);
	if (s->host_loaded)
		host_free(&s->host);
	memset(s, 0, sizeof(*s));
}
