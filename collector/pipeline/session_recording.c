#include "pipeline/session_recording.h"
#include "util/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/catalog_groups.h"
#include "metrics/metrics.h"
#include "recording/recording_host.h"
#include "catalog/resolver.h"
#include "sources/recording_source.h"

int session_input_check(const struct session_options *opt)
{
	if (opt->system_wide || opt->pids || opt->command || opt->events.nr || opt->replay_path) {
		ms_warn("--input FILE replays a recording: give no -e, -a, -p, --replay "
			"or command (the recording says what was measured)");
		return -1;
	}
	return 0;
}

/* The metrics the recording was made for (requested with -m). */
static int recorded_metrics(const struct recording_header *h, struct name_list *names)
{
	const json_t *list = h->catalog ? json_object_get(h->catalog, "metrics") : NULL, *m;
	size_t i;

	json_array_foreach(list, i, m) {
		const json_t *name = json_object_get(m, "name");

		if (json_is_string(name) && json_is_true(json_object_get(m, "requested")) &&
		    name_list_add(names, json_string_value(name)) < 0)
			return -1;
	}
	return 0;
}

/* Only the metrics asked for are shown; the recorded ones are planned too,
 * so events shared between metrics get the groups and copies (EVENT#2) they
 * were recorded with. */
static void keep_requested(struct metric_plan *plan, const struct name_list *asked)
{
	for (int i = 0; i < plan->nr_metrics; i++) {
		plan->metrics[i].requested = false;
		for (int k = 0; k < asked->nr && !plan->metrics[i].requested; k++)
			plan->metrics[i].requested = catalog_metric_index(plan->cat, asked->names[k]) ==
						     plan->metrics[i].metric;
	}
}

/* Resolve the catalog on the recorded host and bind the plan to the
 * recorded series. */
static int plan_recorded_metrics(struct session *s, const char *path, const struct name_list *metrics,
				 const struct name_list *recorded, struct ms_error *err)
{
	const struct recording_header *h = session_recording_header(s);
	struct recorded_host_tree tree = { .parent_fd = -1, .fd = -1 };
	struct name_list asked = { NULL, 0 }, planned = { NULL, 0 };
	int ret = -1, expanded;

	if (!h->host_files) {
		ms_error_set_kind(err, MS_ERR_NOT_SUPPORTED, "%s was recorded without -m, so it does not describe "
				  "the PMUs of the machine it was made on, and metrics cannot be computed from it; its "
				  "events are shown without -m, or record again with -m METRICS", path);
		return -1;
	}
	if (recording_host_load(h->host_files, &s->host, &tree, err) < 0) {
		ms_error_prefix(err, "%s", path);
		goto out;
	}
	s->host_loaded = true;
	if (catalog_load_default(&s->catalog, err) < 0)
		goto out;
	/* Groups (-M TopdownL1) become their metrics, as in a live run; an
	 * unknown name is a usage error there too. */
	expanded = catalog_expand_groups(s->catalog, metrics, false, &asked, err);
	if (expanded) {
		if (expanded == -1)
			ms_error_mark(err, MS_ERR_USAGE);
		goto out;
	}
	for (int i = 0; i < asked.nr + recorded->nr; i++)
		if (name_list_add(&planned, i < asked.nr ? asked.names[i] : recorded->names[i - asked.nr]) < 0) {
			ms_error_set(err, "out of memory");
			goto out;
		}
	if (resolve(&s->host, s->catalog, &s->resolution, err) < 0 ||
	    metric_plan_build(s->resolution, &planned, &s->plan, err) < 0) {
		ms_error_prefix(err, "%s (resolved on the recorded host)", path);
		goto out;
	}
	keep_requested(s->plan, &asked);
	if (metric_engine_new(s->plan, &s->host, &s->sampler.table, &s->engine, err) < 0) {
		ms_error_prefix(err, "%s: the recording does not hold the events these metrics need", path);
		goto out;
	}
	metric_engine_set_origin(s->engine, METRIC_ORIGIN_RECORDING);
	ret = 0;
out:
	name_list_free(&asked);
	name_list_free(&planned);
	recording_host_remove(&tree);
	return ret;
}

int session_open_recording(struct session *s, const struct session_options *opt, const char *path,
			   struct ms_error *err)
{
	struct name_list metrics = { NULL, 0 };
	int ret = 0;
	const struct source_kind *kind;
	struct source_request req = { .path = path, .command_name = opt->command_name };

	memset(s, 0, sizeof(*s));
	s->registry = opt->registry ? *opt->registry : *source_registry_process();
	kind = source_registry_first(&s->registry, SOURCE_RECORDING);
	req.notes = opt->notes ? opt->notes : stderr;
	if (!kind) {
		ms_error_set(err, "no source reads recordings");
		return -1;
	}
	if (kind->create(kind, &s->sources[0], &req, err) < 0)
		return -1;
	s->nr_sources = 1;
	s->recording = true;
	s->sampler_opened = true;
	if (sampler_open(&s->sampler, s->sources, s->nr_sources, err) < 0)
		return -1;
	if (recorded_metrics(session_recording_header(s), &metrics) < 0) {
		name_list_free(&metrics);
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (opt->metrics.nr || metrics.nr)
		ret = plan_recorded_metrics(s, path, opt->metrics.nr ? &opt->metrics : &metrics, &metrics, err);
	name_list_free(&metrics);
	return ret;
}

int session_recording_end(const struct session *s, const char *command_name, struct ms_error *err)
{
	const char *broken;
	char cut[600];

	if (!s->recording)
		return 0;
	broken = recording_source_error(&s->sources[0]);
	if (broken) {
		ms_error_set(err, "%s", broken);
		return -1;
	}
	/* Only a replay that reached the end of the file knows whether it was cut. */
	if (s->sources[0].finished && recording_source_cut(&s->sources[0], cut, sizeof(cut)))
		ms_warn("warning: %s", cut);
	return 0;
}

int session_recording_fd(const struct session *s)
{
	return s->recording ? recording_source_fd(&s->sources[0]) : -1;
}

const struct recording_header *session_recording_header(const struct session *s)
{
	return recording_source_header(&s->sources[0]);
}

void session_recording_describe(const struct session *s, char *buf, size_t size)
{
	const struct recording_header *h = session_recording_header(s);

	snprintf(buf, size, "%s (recorded%s%s%s%s)", h->target[0] ? h->target : "a recording",
		 h->hostname[0] ? " on " : "", h->hostname, h->start_text[0] ? " at " : "", h->start_text);
}
