#include "sources/replay_source.h"
#include "sources/registry.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/kernel_stats.h"

#define REPLAY_FORMAT "memscope-replay"
#define REPLAY_VERSION 1

/* One series the plan needs and how the file names it. */
struct replay_series {
	int event;            /* plan event */
	int cpu;              /* LABEL_NONE for procfs series */
	int node;             /* numastat: the node; else the cpu's node */
	int first_copy;       /* a plan event's copy N > 1: the series of its copy 1 here, else -1 */
};

struct replay_frame {
	uint64_t time_ns;
	uint64_t interval_ns;
	struct sample *samples;   /* one per series */
};

struct replay_source {
	const struct host *host;
	const struct metric_plan *plan;
	char *path;
	struct replay_series *series;
	int nr_series;
	struct replay_frame *frames;
	int nr_frames;
	int next;
};

static int add_series(struct replay_source *rs, struct series_table *table, int event, int cpu, int node)
{
	const struct plan_event *pe = &rs->plan->events[event];
	const struct topology *topo = &rs->host->topo;
	struct replay_series *s = realloc(rs->series, sizeof(*s) * (size_t)(rs->nr_series + 1));
	struct series_labels labels;

	if (!s)
		return -1;
	rs->series = s;
	s[rs->nr_series] = (struct replay_series){ event, cpu, node, -1 };
	/* Copy 1 is made (and registered) before copy N: a line without copy N's
	 * value gives it copy 1's, as if both groups had counted the same. */
	for (int i = 0; pe->copy > 1 && i < rs->nr_series; i++)
		if (s[i].cpu == cpu && rs->plan->events[s[i].event].copy == 1 &&
		    !strcmp(rs->plan->events[s[i].event].open, pe->open))
			s[rs->nr_series].first_copy = i;
	series_labels_init(&labels);
	labels.cpu = cpu;
	labels.node = node;
	if (cpu != LABEL_NONE) {
		const struct cpu_place *place = topology_cpu(topo, cpu);

		if (place) {
			labels.node = place->node;
			labels.socket = place->socket;
			s[rs->nr_series].node = place->node;
		}
		/* A CXL device's bytes are its memory's node's, read through a CPU of another. */
		if (pe->memory_node != -1)
			labels.node = pe->memory_node >= 0 ? pe->memory_node : LABEL_NONE;
	} else if (node != LABEL_NONE) {
		/* a node's socket, when all its CPUs share one */
		for (int c = 0; c < topo->nr_cpus; c++)
			if (topo->cpus[c].node == node)
				labels.socket = labels.socket == LABEL_NONE || labels.socket == topo->cpus[c].socket
							? topo->cpus[c].socket
							: -2;
		if (labels.socket == -2)
			labels.socket = LABEL_NONE;
	}
	snprintf(labels.instance, sizeof(labels.instance), "%s", pe->instance);
	/* A node's meminfo values are levels: the file holds them as they were. */
	if (series_table_add(table, pe->text, "", 1.0,
			     pe->how == EVENT_HOW_PROCFS && kernel_stat_file_of(pe->text)->gauge ? SERIES_GAUGE
											      : SERIES_COUNTER,
			     &labels) < 0)
		return -1;
	rs->nr_series++;
	return 0;
}

static int register_series(struct replay_source *rs, struct series_table *table)
{
	const struct metric_plan *plan = rs->plan;

	for (int i = 0; i < plan->nr_events; i++) {
		const struct plan_event *pe = &plan->events[i];
		/* vmstat and most eBPF series have one series for the whole target;
		 * numastat and the eBPF series of a `scope: node` role one per node. */
		bool one_series = (pe->how == EVENT_HOW_PROCFS && !kernel_stat_file_of(pe->text)->per_node) ||
				  (pe->how == EVENT_HOW_BPF && strcmp(pe->role->scope, "node") != 0);

		if (pe->how == EVENT_HOW_PROCFS || pe->how == EVENT_HOW_BPF || pe->how == EVENT_HOW_DAMON) {
			if (one_series) {
				if (add_series(rs, table, i, LABEL_NONE, LABEL_NONE))
					return -1;
				continue;
			}
			for (int n = 0; n < rs->host->topo.nr_nodes; n++)
				if (add_series(rs, table, i, LABEL_NONE, rs->host->topo.nodes[n]))
					return -1;
			continue;
		}
		for (int c = 0; c < pe->cpus->nr; c++)
			if (add_series(rs, table, i, pe->cpus->cpus[c], LABEL_NONE))
				return -1;
	}
	return 0;
}

/* Accepted names for an event: the plan text, "<instance>/<catalog event>/"
 * ("<instance>/<catalog event>/#N" for its copy N > 1), and for procfs
 * events the text itself ("vmstat/pgfault", "numastat/numa_hit"). */
static bool event_named(const struct plan_event *pe, const char *name, size_t len)
{
	char alt[256];

	if (strlen(pe->text) == len && strncmp(pe->text, name, len) == 0)
		return true;
	if (pe->how == EVENT_HOW_PROCFS || pe->how == EVENT_HOW_BPF || pe->how == EVENT_HOW_DAMON)
		return false;
	if (pe->copy > 1)
		snprintf(alt, sizeof(alt), "%s/%s/#%d", pe->instance, pe->event->name, pe->copy);
	else
		snprintf(alt, sizeof(alt), "%s/%s/", pe->instance, pe->event->name);
	return strlen(alt) == len && strncmp(alt, name, len) == 0;
}

#define REPLAY_LEFT_OUT (-3)

/* Under stat -C: does key name a CPU the list leaves out, or an uncore PMU
 * none of whose cpumask CPUs it names? Its values are then not counted. */
static bool left_out_by_cpu_list(const struct replay_source *rs, const char *key, size_t len, int want_cpu)
{
	char pmu_name[256];
	const char *slash = memchr(key, '/', len);
	const struct pmu *pmu;

	if (!rs->host->cpus_restricted)
		return false;
	if (want_cpu != LABEL_NONE && !topology_cpu(&rs->host->topo, want_cpu))
		return true;
	if (!slash || (size_t)(slash - key) >= sizeof(pmu_name))
		return false;
	snprintf(pmu_name, sizeof(pmu_name), "%.*s", (int)(slash - key), key);
	pmu = pmu_find(&rs->host->pmus, pmu_name);
	return pmu && pmu->outside_cpu_list;
}

/* Which series does key name? Returns its index, REPLAY_LEFT_OUT (a series
 * -C leaves out), or -1 with err set. */
static int series_for_key(struct replay_source *rs, const char *key, int line, struct ms_error *err)
{
	const char *at = strrchr(key, '@');
	size_t len = at ? (size_t)(at - key) : strlen(key);
	int want_cpu = LABEL_NONE, want_node = LABEL_NONE, found = -1, matches = 0;
	char which[256] = "";
	size_t wlen = 0;

	if (at) {
		char *end;

		if (strncmp(at + 1, "cpu", 3) == 0)
			want_cpu = (int)strtol(at + 4, &end, 10);
		else if (strncmp(at + 1, "node", 4) == 0)
			want_node = (int)strtol(at + 5, &end, 10);
		else
			end = (char *)at;
		if (end == at || *end || (want_cpu == LABEL_NONE && want_node == LABEL_NONE)) {
			ms_error_set(err, "%s:%d: series '%s': after '@' expected cpuN or nodeN", rs->path, line, key);
			return -1;
		}
	}
	for (int s = 0; s < rs->nr_series; s++) {
		const struct replay_series *rsr = &rs->series[s];

		if (!event_named(&rs->plan->events[rsr->event], key, len))
			continue;
		matches++;
		if (wlen < sizeof(which) - 16)
			wlen += (size_t)snprintf(which + wlen, sizeof(which) - wlen, rsr->cpu != LABEL_NONE ? " @cpu%d"
										 : rsr->node != LABEL_NONE ? " @node%d" : "%.0d",
						 rsr->cpu != LABEL_NONE ? rsr->cpu : rsr->node);
		if ((want_cpu != LABEL_NONE && rsr->cpu != want_cpu) ||
		    (want_node != LABEL_NONE && (rsr->cpu != LABEL_NONE || rsr->node != want_node)))
			continue;
		if (found >= 0 && !at) {
			found = -2;
			continue;
		}
		if (found != -2)
			found = s;
	}
	if (found >= 0)
		return found;
	if (left_out_by_cpu_list(rs, key, len, want_cpu))
		return REPLAY_LEFT_OUT;
	if (matches == 0) {
		ms_error_set(err, "%s:%d: unknown series '%.*s': the metrics asked for do not count it", rs->path, line,
			     (int)len, key);
		if (rs->plan->nr_events > 0)
			ms_error_append(err, "; they count e.g. '%s' (or '%s/%s/')", rs->plan->events[0].text,
					rs->plan->events[0].instance,
					rs->plan->events[0].event ? rs->plan->events[0].event->name : "");
	} else if (found == -2) {
		ms_error_set(err, "%s:%d: series '%s' is counted on several CPUs/nodes; name one:%s", rs->path, line, key,
			     which);
	} else {
		ms_error_set(err, "%s:%d: series '%s' is not counted there; it is counted at:%s", rs->path, line, key,
			     which);
	}
	return -1;
}

static int parse_value(struct replay_source *rs, json_t *v, uint64_t interval_ns, struct sample *out, int line,
		       const char *key, struct ms_error *err)
{
	json_t *value, *enabled, *running;

	out->enabled_ns = out->running_ns = interval_ns;
	out->valid = true;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		out->value = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (json_is_object(v)) {
		value = json_object_get(v, "value");
		enabled = json_object_get(v, "enabled_ns");
		running = json_object_get(v, "running_ns");
		if (json_is_integer(value) && json_integer_value(value) >= 0 && (!enabled || json_is_integer(enabled)) &&
		    (!running || json_is_integer(running)) && json_object_size(v) == 1u + !!enabled + !!running) {
			out->value = (uint64_t)json_integer_value(value);
			if (enabled)
				out->enabled_ns = (uint64_t)json_integer_value(enabled);
			if (running)
				out->running_ns = (uint64_t)json_integer_value(running);
			if (out->running_ns <= out->enabled_ns)
				return 0;
		}
	}
	ms_error_set(err, "%s:%d: value of '%s': expected a non-negative integer count, or {\"value\": N, "
		     "\"enabled_ns\": E, \"running_ns\": R} with R <= E", rs->path, line, key);
	return -1;
}

/* 9.2e9 s in ns is just below INT64_MAX. */
#define REPLAY_MAX_SECONDS 9.2e9

static int parse_file(struct replay_source *rs, struct ms_error *err)
{
	FILE *fp = fopen(rs->path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = -1;
	bool header = false;
	double last_t = 0;
	uint64_t last_ns = 0, time_ns;

	if (!fp) {
		ms_error_set(err, "%s: cannot open the replay file: %s", rs->path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, fp)) >= 0) {
		json_error_t jerr;
		json_t *doc, *t, *values, *v;
		struct replay_frame *fr;
		const char *key;

		lineno++;
		if (len == 0 || line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		doc = json_loads(line, 0, &jerr);
		if (!doc || !json_is_object(doc)) {
			ms_error_set(err, "%s:%d:%d: not a JSON object: %s", rs->path, lineno, doc ? 1 : jerr.column,
				     doc ? "expected {...}" : jerr.text);
			json_decref(doc);
			goto out;
		}
		if (!header) {
			json_t *fmt = json_object_get(doc, "format"), *ver = json_object_get(doc, "version");

			if (!json_is_string(fmt) || strcmp(json_string_value(fmt), REPLAY_FORMAT) != 0 ||
			    !json_is_integer(ver) || json_integer_value(ver) != REPLAY_VERSION) {
				ms_error_set(err, "%s:%d: expected the header {\"format\": \"%s\", \"version\": %d}", rs->path,
					     lineno, REPLAY_FORMAT, REPLAY_VERSION);
				json_decref(doc);
				goto out;
			}
			header = true;
			json_decref(doc);
			continue;
		}
		t = json_object_get(doc, "t");
		values = json_object_get(doc, "values");
		if (!json_is_number(t) || !json_is_object(values) || json_object_size(doc) != 2) {
			ms_error_set(err, "%s:%d: expected {\"t\": SECONDS, \"values\": {SERIES: COUNT, ...}}", rs->path,
				     lineno);
			json_decref(doc);
			goto out;
		}
		if (json_number_value(t) <= last_t) {
			ms_error_set(err, "%s:%d: t = %g must be after the previous frame's %g", rs->path, lineno,
				     json_number_value(t), last_t);
			json_decref(doc);
			goto out;
		}
		/* Times are kept in nanoseconds in 64 bits (recordings store them
		 * as JSON integers): beyond ~292 years they cannot be represented,
		 * and converting such a double to an integer is undefined. */
		if (!(json_number_value(t) < REPLAY_MAX_SECONDS)) {
			ms_error_set(err, "%s:%d: t = %g s is out of range: times are seconds since the start, below "
				     "%.0f s (about 292 years)", rs->path, lineno, json_number_value(t), REPLAY_MAX_SECONDS);
			json_decref(doc);
			goto out;
		}
		time_ns = (uint64_t)(json_number_value(t) * 1e9 + 0.5);
		if (time_ns <= last_ns) {
			ms_error_set(err, "%s:%d: t = %.12g s is less than a nanosecond after the previous frame's %.12g s: "
				     "frames need an interval of at least 1 ns", rs->path, lineno, json_number_value(t),
				     last_t);
			json_decref(doc);
			goto out;
		}
		fr = realloc(rs->frames, sizeof(*fr) * (size_t)(rs->nr_frames + 1));
		if (!fr) {
			json_decref(doc);
			goto oom;
		}
		rs->frames = fr;
		fr = &fr[rs->nr_frames++];
		fr->time_ns = time_ns;
		fr->interval_ns = time_ns - last_ns;
		last_t = json_number_value(t);
		last_ns = time_ns;
		/* Series the line does not mention stay invalid: never a silent zero. */
		fr->samples = calloc((size_t)rs->nr_series + 1, sizeof(struct sample));
		if (!fr->samples) {
			json_decref(doc);
			goto oom;
		}
		json_object_foreach(values, key, v) {
			int s = series_for_key(rs, key, lineno, err);

			if (s == REPLAY_LEFT_OUT)
				continue;
			if (s < 0 || parse_value(rs, v, fr->interval_ns, &fr->samples[s], lineno, key, err)) {
				json_decref(doc);
				goto out;
			}
		}
		json_decref(doc);
		for (int s = 0; s < rs->nr_series; s++)
			if (!fr->samples[s].valid && rs->series[s].first_copy >= 0)
				fr->samples[s] = fr->samples[rs->series[s].first_copy];
	}
	if (!header)
		ms_error_set(err, "%s: empty replay file; expected a header line and one line per interval", rs->path);
	else if (rs->nr_frames == 0)
		ms_error_set(err, "%s: no frames after the header", rs->path);
	else
		rc = 0;
	goto out;
oom:
	ms_error_set(err, "%s: out of memory", rs->path);
out:
	free(line);
	fclose(fp);
	return rc;
}

static int replay_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct replay_source *rs = src->priv;

	src->first = table->nr;
	if (register_series(rs, table)) {
		ms_error_set(err, "replay source: out of memory");
		return -1;
	}
	src->count = table->nr - src->first;
	return parse_file(rs, err);
}

static int replay_enable(struct source *src, struct ms_error *err)
{
	return 0;
}

static int replay_disable(struct source *src)
{
	return 0;
}

static int replay_sample(struct source *src, struct frame *frame)
{
	struct replay_source *rs = src->priv;
	const struct replay_frame *fr;

	if (rs->next >= rs->nr_frames) {
		src->finished = true;
		for (int i = 0; i < src->count; i++)
			frame->samples[src->first + i].valid = false;
		return 0;
	}
	fr = &rs->frames[rs->next++];
	memcpy(frame->samples + src->first, fr->samples, sizeof(struct sample) * (size_t)src->count);
	frame->time_ns = fr->time_ns;
	frame->interval_ns = fr->interval_ns;
	if (rs->next >= rs->nr_frames)
		src->finished = true;
	return 0;
}

static void replay_close(struct source *src)
{
	struct replay_source *rs = src->priv;

	if (!rs)
		return;
	for (int i = 0; i < rs->nr_frames; i++)
		free(rs->frames[i].samples);
	free(rs->frames);
	free(rs->series);
	free(rs->path);
	free(rs);
	src->priv = NULL;
}

static const struct source_ops replay_ops = {
	.name = "replay",
	.open = replay_open,
	.enable = replay_enable,
	.disable = replay_disable,
	.sample = replay_sample,
	.close = replay_close,
};

int replay_source_init(struct source *src, const struct host *host, const struct metric_plan *plan,
			 const char *path, struct ms_error *err)
{
	struct replay_source *rs = calloc(1, sizeof(*rs));

	memset(src, 0, sizeof(*src));
	if (!rs || !(rs->path = strdup(path))) {
		free(rs);
		ms_error_set(err, "replay source: out of memory");
		return -1;
	}
	rs->host = host;
	rs->plan = plan;
	src->ops = &replay_ops;
	src->priv = rs;
	src->replay = true;
	return 0;
}

int replay_source_nr_frames(const struct source *src)
{
	const struct replay_source *rs = src->priv;

	return rs ? rs->nr_frames : 0;
}

/* ---- The registry kind: every series of the plan, from the file ---- */

static bool replay_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	(void)name;
	return true;
}

static int replay_kind_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			      struct ms_error *err)
{
	if (replay_source_init(src, req->host, req->plan, req->path, err) < 0)
		return -1;
	src->kind = kind;
	return 0;
}

const struct source_kind replay_source_kind = {
	.name = "replay",
	.description = "counter values per interval from a file (--replay; docs/replay-format.md)",
	.mode = SOURCE_FILE,
	.claims = replay_claims,
	.create = replay_kind_create,
};
