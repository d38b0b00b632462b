/* Metric plans (what to count) and the metric engine (frames -> values). */
#include "metrics/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "host/memory_tiers.h"
#include "metrics/plan_groups.h"

/* ---- plan ---- */

struct plan_builder {
	const struct resolution *res;
	struct metric_plan *plan;
	struct ms_error *err;
};

static int find_event(const struct metric_plan *plan, const char *text)
{
	for (int i = 0; i < plan->nr_events; i++)
		if (strcmp(plan->events[i].text, text) == 0)
			return i;
	return -1;
}

static int add_input(struct plan_builder *b, int family, int role, int event)
{
	struct metric_plan *plan = b->plan;
	const struct resolved_family *rf = &b->res->families[family];
	const struct catalog_role *crole = &rf->family->roles[role];
	const struct resolved_role *rr = &rf->roles[role];
	struct plan_input *in;

	for (int i = 0; i < plan->nr_inputs; i++)
		if (plan->inputs[i].family == family && plan->inputs[i].role == role && plan->inputs[i].event == event)
			return i;
	in = realloc(plan->inputs, sizeof(*in) * (size_t)(plan->nr_inputs + 1));
	if (!in)
		return -1;
	plan->inputs = in;
	in = &in[plan->nr_inputs];
	memset(in, 0, sizeof(*in));
	in->family = family;
	in->role = role;
	in->event = event;
	in->events = calloc((size_t)rr->nr_inst + 1, sizeof(int));
	if (!in->events)
		return -1;
	plan->nr_inputs++;
	for (int i = 0; i < rr->nr_inst; i++) {
		const struct catalog_event *ev = &crole->events[event];
		char text[512];
		int idx;

		resolved_event_text(crole, ev, &rr->inst[i], text, sizeof(text));
		idx = find_event(plan, text);
		if (idx < 0) {
			struct plan_event *pe = realloc(plan->events, sizeof(*pe) * (size_t)(plan->nr_events + 1));

			if (!pe)
				return -1;
			plan->events = pe;
			pe = &pe[plan->nr_events];
			memset(pe, 0, sizeof(*pe));
			pe->text = strdup(text);
			pe->open = strdup(text);
			pe->copy = 1;
			idx = plan->nr_events++;   /* freed with the plan even when a copy failed */
			if (!pe->text || !pe->open)
				return -1;
			snprintf(pe->instance, sizeof(pe->instance), "%s", rr->inst[i].name);
			pe->memory_node = crole->memory_node ? rr->inst[i].memory_node : -1;
			pe->how = ev->how;
			pe->cpus = &rr->inst[i].cpus;
			pe->role = crole;
			pe->event = ev;
			pe->counters = rr->counters;
			pe->group = -1;
		}
		in->events[in->nr_events++] = idx;
	}
	return plan->nr_inputs - 1;
}

struct slot_collect {
	struct plan_builder *b;
	struct plan_metric *pm;
	int family;
	int failed;
};

static int collect_slot(struct expr *ref, void *ctx)
{
	struct slot_collect *c = ctx;
	int input, *pairs;

	if (catalog_slot_builtin(ref->slot))
		return 0;
	for (int i = 0; i < c->pm->nr_slot_inputs; i++)
		if (c->pm->slot_inputs[2 * i] == ref->slot)
			return 0;
	input = add_input(c->b, c->family, catalog_slot_role(ref->slot), catalog_slot_event(ref->slot));
	pairs = input < 0 ? NULL : realloc(c->pm->slot_inputs, sizeof(int) * 2 * (size_t)(c->pm->nr_slot_inputs + 1));
	if (!pairs) {
		c->failed = 1;
		return 1;
	}
	c->pm->slot_inputs = pairs;
	pairs[2 * c->pm->nr_slot_inputs] = ref->slot;
	pairs[2 * c->pm->nr_slot_inputs + 1] = input;
	c->pm->nr_slot_inputs++;
	return 0;
}

static int add_metric(struct plan_builder *b, int idx, bool requested);

struct dep_collect {
	struct plan_builder *b;
	int failed;
};

static int collect_dep(struct expr *ref, void *ctx)
{
	struct dep_collect *c = ctx;

	if (catalog_slot_builtin(ref->slot))
		return 0;
	if (add_metric(c->b, ref->slot, false) < 0) {
		c->failed = 1;
		return 1;
	}
	return 0;
}

static int plan_index(const struct metric_plan *plan, int metric)
{
	for (int i = 0; i < plan->nr_metrics; i++)
		if (plan->metrics[i].metric == metric)
			return i;
	return -1;
}

/* Add metric idx (after its dependencies); returns its plan index. */
static int add_metric(struct plan_builder *b, int idx, bool requested)
{
	struct metric_plan *plan = b->plan;
	const struct catalog_metric *metric = &plan->cat->metrics[idx];
	const struct resolved_metric *rm = &b->res->metrics[idx];
	struct plan_metric *pm;
	int at = plan_index(plan, idx);

	if (at >= 0) {
		plan->metrics[at].requested |= requested;
		return at;
	}
	if (!rm->available) {
		ms_error_set(b->err, "metric '%s' is not available on this host: %s", metric->name, rm->why);
		ms_error_append(b->err, " (memscope list --explain %s shows how it is computed)", metric->name);
		return -1;
	}
	if (metric->formula) {
		struct dep_collect c = { b, 0 };

		expr_each_ref(metric->formula, collect_dep, &c);
		if (c.failed)
			return -1;
	}
	pm = &plan->metrics[plan->nr_metrics++];
	memset(pm, 0, sizeof(*pm));
	pm->metric = idx;
	pm->requested = requested;
	pm->family = rm->family;
	pm->mapping = rm->mapping;
	if (metric->formula) {
		pm->dep_plan = malloc(sizeof(int) * (size_t)plan->cat->nr_metrics);
		if (!pm->dep_plan)
			goto oom;
		for (int i = 0; i < plan->cat->nr_metrics; i++)
			pm->dep_plan[i] = plan_index(plan, i);
	} else {
		struct slot_collect c = { b, pm, rm->family, 0 };

		expr_each_ref(rm->fm->mappings[rm->mapping].formula, collect_slot, &c);
		if (c.failed)
			goto oom;
		if (rm->add_family >= 0) {
			struct slot_collect a = { b, NULL, rm->add_family, 0 };

			if (!(pm->add = calloc(1, sizeof(*pm->add))))
				goto oom;
			a.pm = pm->add;
			pm->add->metric = idx;
			pm->add->family = rm->add_family;
			pm->add->mapping = rm->add_mapping;
			expr_each_ref(rm->add_fm->mappings[rm->add_mapping].formula, collect_slot, &a);
			if (a.failed)
				goto oom;
		}
	}
	return plan->nr_metrics - 1;
oom:
	ms_error_set(b->err, "building the metric plan: out of memory");
	return -1;
}

static void suggest_metric(const struct catalog *cat, const char *name, struct ms_error *err)
{
	const char *dot = strchr(name, '.');
	size_t prefix = dot ? (size_t)(dot - name + 1) : strlen(name);
	int shown = 0;

	for (int i = 0; i < cat->nr_metrics && shown < 8; i++)
		if (strncmp(cat->metrics[i].name, name, prefix) == 0 || strstr(cat->metrics[i].name, name)) {
			ms_error_append(err, "%s%s", shown ? ", " : "; similar: ", cat->metrics[i].name);
			shown++;
		}
	ms_error_append(err, " (memscope list --metrics lists them all)");
}

int metric_plan_build(const struct resolution *res, const struct name_list *names, struct metric_plan **out,
		      struct ms_error *err)
{
	struct metric_plan *plan = calloc(1, sizeof(*plan));
	struct plan_builder b = { res, plan, err };
	int nr = 0;

	*out = NULL;
	if (!plan)
		goto oom;
	plan->cat = res->cat;
	plan->res = res;
	plan->metrics = calloc((size_t)res->cat->nr_metrics + 1, sizeof(*plan->metrics));
	if (!plan->metrics)
		goto oom;
	for (int i = 0; i < names->nr; i++) {
		const char *name = names->names[i];
		int idx = catalog_metric_index(res->cat, name);

		if (idx < 0) {
			ms_error_set(err, "unknown metric '%s'", name);
			suggest_metric(res->cat, name, err);
			goto fail;
		}
		if (add_metric(&b, idx, true) < 0)
			goto fail;
		nr++;
	}
	if (nr == 0) {
		ms_error_set(err, "no metric named; give -m METRIC[,METRIC...] (memscope list --metrics)");
		goto fail;
	}
	if (plan_place_groups(plan) < 0)
		goto oom;
	*out = plan;
	return 0;
oom:
	ms_error_set(err, "building the metric plan: out of memory");
fail:
	metric_plan_free(plan);
	return -1;
}

static bool event_matches(const char *text, const struct series_table *table, bool (*match)(const struct series *))
{
	for (int s = 0; s < table->nr; s++)
		if (!strcmp(table->series[s].name, text) && match(&table->series[s]))
			return true;
	return false;
}

static bool plan_metric_inputs_match(const struct metric_plan *plan, int i, const struct series_table *table,
				     bool (*match)(const struct series *), int depth)
{
	const struct plan_metric *pm = &plan->metrics[i];

	if (depth > plan->nr_metrics)
		return false;   /* a cycle the catalog loader refuses; never loop */
	for (int k = 0; k + 1 < 2 * pm->nr_slot_inputs; k += 2) {
		const struct plan_input *in = &plan->inputs[pm->slot_inputs[k + 1]];

		for (int e = 0; e < in->nr_events; e++)
			if (event_matches(plan->events[in->events[e]].text, table, match))
				return true;
	}
	for (int c = 0; pm->dep_plan && c < plan->cat->nr_metrics; c++)
		if (pm->dep_plan[c] >= 0 && pm->dep_plan[c] != i &&
		    plan_metric_inputs_match(plan, pm->dep_plan[c], table, match, depth + 1))
			return true;
	return false;
}

static bool counts_whole_system(const struct series *s)
{
	return s->labels.whole_system;
}

static bool is_level(const struct series *s)
{
	return s->kind == SERIES_GAUGE;
}

bool metric_plan_whole_system(const struct metric_plan *plan, int i, const struct series_table *table)
{
	return plan_metric_inputs_match(plan, i, table, counts_whole_system, 0);
}

bool metric_plan_level(const struct metric_plan *plan, int i, const struct series_table *table)
{
	return plan_metric_inputs_match(plan, i, table, is_level, 0);
}

void metric_plan_free(struct metric_plan *plan)
{
	if (!plan)
		return;
	for (int i = 0; i < plan->nr_events; i++) {
		free(plan->events[i].text);
		free(plan->events[i].open);
	}
	free(plan->events);
	for (int i = 0; i < plan->nr_inputs; i++)
		free(plan->inputs[i].events);
	free(plan->inputs);
	for (int i = 0; plan->metrics && i < plan->nr_metrics; i++) {
		free(plan->metrics[i].slot_inputs);
		if (plan->metrics[i].add)
			free(plan->metrics[i].add->slot_inputs);
		free(plan->metrics[i].add);
		free(plan->metrics[i].dep_plan);
	}
	free(plan->metrics);
	free(plan);
}

bool plan_event_is_perf(const struct plan_event *pe)
{
	return pe->how == EVENT_HOW_CONFIG || pe->how == EVENT_HOW_PERF;
}

bool metric_plan_needs_procfs(const struct metric_plan *plan)
{
	for (int i = 0; i < plan->nr_events; i++)
		if (plan->events[i].how == EVENT_HOW_PROCFS)
			return true;
	return false;
}

int metric_plan_find(const struct metric_plan *plan, const char *name)
{
	int idx = catalog_metric_index(plan->cat, name);   /* also a metric's old name */

	for (int i = 0; idx >= 0 && i < plan->nr_metrics; i++)
		if (plan->metrics[i].metric == idx)
			return i;
	return -1;
}

/* ---- engine ---- */

struct bound_series {
	int series;       /* index in the frame */
	int event;        /* plan event */
	int node_scope;   /* index among node scopes, -1 when the series has no node */
	int socket_scope;
	int channel_scope; /* index among channel scopes, -1 when not a channel's series */
	int tier_scope;   /* index among tier scopes, -1 when its node is in no tier */
};

struct input_acc {
	double sum;
	double coverage;
	int nr;           /* series that contributed */
	int group;        /* first perf group seen, -1 none */
	bool many_groups;
	bool invalid;     /* a contributing sample could not be read */
	bool missing;     /* one of its events was never opened */
};

struct metric_engine {
	const struct metric_plan *plan;
	struct bound_series *bound;
	int nr_bound;
	int nr_nodes, nr_sockets, nr_channels, nr_tiers, nr_scopes; /* scopes: [system, nodes, sockets, channels, tiers] */
	int *node_ids, *socket_ids;
	int *tier_ids;            /* ascending memory_tierN numbers */
	int *node_tier;           /* per node scope: its index among tier scopes, -1 none */
	struct metric_channel *channels;
	bool *event_missing;      /* plan event with no series: its source could not open it */
	enum metric_origin origin;
	double smt_on, core_wide;  /* the formulas' built-ins smt_on and core_wide */
};

/* One frame's values, owned by whoever computes them: the engine itself is
 * never written after metric_engine_new, so any thread may compute. */
struct metric_values {
	struct input_acc *acc;    /* nr_inputs x nr_scopes: scratch of the last compute */
	struct metric_value *values; /* nr_metrics x nr_scopes */
	int nr_values;
	double seconds;
};

static int scope_offset(const struct metric_engine *e, enum metric_scope scope)
{
	switch (scope) {
	case SCOPE_NODE: return 1;
	case SCOPE_SOCKET: return 1 + e->nr_nodes;
	case SCOPE_CHANNEL: return 1 + e->nr_nodes + e->nr_sockets;
	case SCOPE_TIER: return 1 + e->nr_nodes + e->nr_sockets + e->nr_channels;
	default: return 0;
	}
}

int metric_engine_nr_scopes(const struct metric_engine *e, enum metric_scope scope)
{
	switch (scope) {
	case SCOPE_NODE: return e->nr_nodes;
	case SCOPE_SOCKET: return e->nr_sockets;
	case SCOPE_CHANNEL: return e->nr_channels;
	case SCOPE_TIER: return e->nr_tiers;
	default: return 1;
	}
}

int metric_engine_scope_id(const struct metric_engine *e, enum metric_scope scope, int index)
{
	switch (scope) {
	case SCOPE_NODE: return e->node_ids[index];
	case SCOPE_SOCKET: return e->socket_ids[index];
	case SCOPE_CHANNEL: return index;
	case SCOPE_TIER: return e->tier_ids[index];
	default: return -1;
	}
}

int metric_engine_node_tier(const struct metric_engine *e, int node)
{
	for (int n = 0; n < e->nr_nodes; n++)
		if (e->node_ids[n] == node)
			return e->node_tier[n] >= 0 ? e->tier_ids[e->node_tier[n]] : -1;
	return -1;
}

const struct metric_channel *metric_engine_channel(const struct metric_engine *e, int index)
{
	return index >= 0 && index < e->nr_channels ? &e->channels[index] : NULL;
}

static bool is_channel_event(const struct plan_event *pe)
{
	return pe->role && pe->role->scope && (!strcmp(pe->role->scope, "channel") || !strcmp(pe->role->scope, "instance"));
}

/* The channel (or plugin instance) a series of a channel event belongs to. */
static const char *channel_name(const struct plan_event *pe, const struct series *series)
{
	if (strcmp(pe->role->scope, "instance") != 0)
		return pe->instance;
	if (series->labels.instance[0])
		return series->labels.instance;
	return series->labels.cgroup ? series->labels.cgroup : pe->instance;
}

static int find_channel(const struct metric_engine *e, const char *instance, int cpu)
{
	for (int i = 0; i < e->nr_channels; i++)
		if (e->channels[i].cpu == cpu && !strcmp(e->channels[i].instance, instance))
			return i;
	return -1;
}

static int compare_channels(const void *a, const void *b)
{
	const struct metric_channel *x = a, *y = b;
	int by_name;

	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	by_name = strverscmp(x->instance, y->instance);   /* uncore_imc_2 before uncore_imc_10 */
	if (by_name)
		return by_name;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* The channels the plan counts: one per (instance, CPU) of a channel-scoped role. */
static int collect_channels(struct metric_engine *e, const struct series_table *table)
{
	e->channels = calloc((size_t)table->nr + 1, sizeof(*e->channels));
	if (!e->channels)
		return -1;
	for (int s = 0; s < table->nr; s++) {
		const struct series *series = &table->series[s];
		int ev = series_is_per_task(series) ? -1 : find_event(e->plan, series->name);
		struct metric_channel *ch;

		if (ev < 0 || !is_channel_event(&e->plan->events[ev]) ||
		    find_channel(e, channel_name(&e->plan->events[ev], series), series->labels.cpu) >= 0)
			continue;
		ch = &e->channels[e->nr_channels++];
		ch->instance = channel_name(&e->plan->events[ev], series);
		ch->cpu = series->labels.cpu;
		ch->node = series->labels.node;
		ch->socket = series->labels.socket;
	}
	qsort(e->channels, (size_t)e->nr_channels, sizeof(*e->channels), compare_channels);
	return 0;
}

const struct metric_value *metric_engine_value(const struct metric_engine *e, const struct metric_values *v,
					       int plan_metric, enum metric_scope scope, int index)
{
	return &v->values[plan_metric * e->nr_scopes + scope_offset(e, scope) + index];
}

struct metric_values *metric_values_new(const struct metric_engine *e)
{
	struct metric_values *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->nr_values = e->plan->nr_metrics * e->nr_scopes;
	v->acc = calloc((size_t)(e->plan->nr_inputs * e->nr_scopes) + 1, sizeof(*v->acc));
	v->values = calloc((size_t)v->nr_values + 1, sizeof(*v->values));
	if (!v->acc || !v->values) {
		metric_values_free(v);
		return NULL;
	}
	/* Nothing computed yet: no value is shown as a number. */
	for (int i = 0; i < v->nr_values; i++)
		v->values[i] = (struct metric_value){ .valid = false, .why = "no frame yet", .coverage = 1.0 };
	return v;
}

void metric_values_free(struct metric_values *v)
{
	if (!v)
		return;
	free(v->acc);
	free(v->values);
	free(v);
}

void metric_values_copy(struct metric_values *dst, const struct metric_values *src)
{
	memcpy(dst->values, src->values, sizeof(*dst->values) * (size_t)src->nr_values);
	dst->seconds = src->seconds;
}

static int int_index(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

/* Each node's memory tier as the kernel lists them (a recording's host reads
 * the recorded files): the tier scopes sum their nodes. No tiers: none. */
static int collect_tiers(struct metric_engine *e, const struct host *host)
{
	struct memory_tiers tiers;
	struct ms_error err;

	e->node_tier = malloc(sizeof(int) * (size_t)(e->nr_nodes + 1));
	e->tier_ids = malloc(sizeof(int) * (size_t)(e->nr_nodes + 1));
	if (!e->node_tier || !e->tier_ids)
		return -1;
	for (int n = 0; n < e->nr_nodes; n++)
		e->node_tier[n] = -1;
	if (memory_tiers_load(&tiers, &host->roots, &host->topo, &err) < 0)
		return 0;
	for (int n = 0; tiers.have_tiers && n < e->nr_nodes; n++) {
		const struct node_tier *nt = memory_tiers_node(&tiers, e->node_ids[n]);

		if (nt && nt->tier >= 0 && int_index(e->tier_ids, e->nr_tiers, nt->tier) < 0)
			e->tier_ids[e->nr_tiers++] = nt->tier;
	}
	for (int i = 1; i < e->nr_tiers; i++)   /* ascending: the fastest tier first */
		for (int j = i; j > 0 && e->tier_ids[j - 1] > e->tier_ids[j]; j--) {
			int t = e->tier_ids[j];

			e->tier_ids[j] = e->tier_ids[j - 1];
			e->tier_ids[j - 1] = t;
		}
	for (int n = 0; tiers.have_tiers && n < e->nr_nodes; n++) {
		const struct node_tier *nt = memory_tiers_node(&tiers, e->node_ids[n]);

		if (nt && nt->tier >= 0)
			e->node_tier[n] = int_index(e->tier_ids, e->nr_tiers, nt->tier);
	}
	memory_tiers_free(&tiers);
	return 0;
}

int metric_engine_new(const struct metric_plan *plan, const struct host *host, const struct series_table *table,
		      struct metric_engine **out, struct ms_error *err)
{
	struct metric_engine *e = calloc(1, sizeof(*e));
	const struct topology *topo = &host->topo;

	*out = NULL;
	if (!e)
		goto oom;
	e->plan = plan;
	/* SMT: some core has more than one CPU. Core events are counted on every
	 * CPU, so the counts cover whole cores unless stat -C left CPUs out of
	 * an SMT machine (perf: system-wide and no SMT or whole cores listed). */
	e->smt_on = topo->smt ? 1 : 0;
	e->core_wide = !host->cpus_restricted || !e->smt_on ? 1 : 0;
	e->nr_nodes = topo->nr_nodes;
	e->node_ids = malloc(sizeof(int) * (size_t)(topo->nr_nodes + 1));
	e->socket_ids = malloc(sizeof(int) * (size_t)(topo->nr_cpus + 1));
	if (!e->node_ids || !e->socket_ids)
		goto oom;
	memcpy(e->node_ids, topo->nodes, sizeof(int) * (size_t)topo->nr_nodes);
	for (int i = 0; i < topo->nr_cpus; i++)
		if (int_index(e->socket_ids, e->nr_sockets, topo->cpus[i].socket) < 0)
			e->socket_ids[e->nr_sockets++] = topo->cpus[i].socket;
	for (int i = 1; i < e->nr_sockets; i++)   /* ascending socket ids */
		for (int j = i; j > 0 && e->socket_ids[j - 1] > e->socket_ids[j]; j--) {
			int t = e->socket_ids[j];

			e->socket_ids[j] = e->socket_ids[j - 1];
			e->socket_ids[j - 1] = t;
		}
	if (collect_channels(e, table) < 0 || collect_tiers(e, host) < 0)
		goto oom;
	e->nr_scopes = 1 + e->nr_nodes + e->nr_sockets + e->nr_channels + e->nr_tiers;
	e->bound = calloc((size_t)table->nr + 1, sizeof(*e->bound));
	if (!e->bound)
		goto oom;
	for (int s = 0; s < table->nr; s++) {
		const struct series *series = &table->series[s];
		int ev = series_is_per_task(series) ? -1 : find_event(plan, series->name);

		if (ev < 0)
			continue;
		e->bound[e->nr_bound].series = s;
		e->bound[e->nr_bound].event = ev;
		e->bound[e->nr_bound].node_scope =
			series->labels.node == LABEL_NONE ? -1 : int_index(e->node_ids, e->nr_nodes, series->labels.node);
		e->bound[e->nr_bound].socket_scope = series->labels.socket == LABEL_NONE
							     ? -1
							     : int_index(e->socket_ids, e->nr_sockets, series->labels.socket);
		e->bound[e->nr_bound].channel_scope =
			is_channel_event(&plan->events[ev])
				? find_channel(e, channel_name(&plan->events[ev], series), series->labels.cpu)
				: -1;
		e->bound[e->nr_bound].tier_scope =
			e->bound[e->nr_bound].node_scope < 0 ? -1 : e->node_tier[e->bound[e->nr_bound].node_scope];
		e->nr_bound++;
	}
	e->event_missing = calloc((size_t)plan->nr_events + 1, sizeof(bool));
	if (!e->event_missing)
		goto oom;
	for (int i = 0; i < plan->nr_events; i++) {
		bool seen = false;

		for (int b = 0; b < e->nr_bound && !seen; b++)
			seen = e->bound[b].event == i;
		e->event_missing[i] = !seen;
	}
	*out = e;
	return 0;
oom:
	metric_engine_free(e);
	ms_error_set(err, "metric engine: out of memory");
	return -1;
}

void metric_engine_set_origin(struct metric_engine *e, enum metric_origin origin)
{
	e->origin = origin;
}

/* Why an input has no value in a scope: never a guess about this host when
 * the values come from a file. */
static const char *input_why(const struct metric_engine *e, const struct input_acc *a)
{
	static const char *const why[3][3] = {
		[METRIC_ORIGIN_LIVE] = {
			"a counter of this metric could not be opened",
			"a counter of this metric was not read this interval",
			"no counter of this metric belongs to this scope",
		},
		[METRIC_ORIGIN_REPLAY] = {
			"not in this replay file: it gives no value for a counter of this metric "
			"(memscope list --explain METRIC names them)",
			"not in this replay file: a counter of this metric has no value here (memscope list "
			"--explain METRIC names every counter its lines must give)",
			"no counter of this metric belongs to this scope",
		},
		[METRIC_ORIGIN_RECORDING] = {
			"not in this recording: a counter of this metric was not recorded; record it with -m and "
			"this metric",
			"not in this recording: a counter of this metric has no value here (it was not read "
			"when this was recorded)",
			"no counter of this metric belongs to this scope",
		},
	};
	/* An input whose every sample was unreadable has nr 0 too: unread, not absent. */
	int k = a && a->missing ? 0 : a && a->invalid ? 1 : 2;

	return why[e->origin][k];
}

void metric_engine_free(struct metric_engine *e)
{
	if (!e)
		return;
	free(e->bound);
	free(e->node_ids);
	free(e->socket_ids);
	free(e->tier_ids);
	free(e->node_tier);
	free(e->channels);
	free(e->event_missing);
	free(e);
}

static void acc_add(struct input_acc *a, const struct sample *s, int group)
{
	if (!s->valid || (s->enabled_ns > 0 && s->running_ns == 0)) {
		a->invalid = true;
		return;
	}
	a->sum += sample_scaled(s);
	if (sample_coverage(s) < a->coverage)
		a->coverage = sample_coverage(s);
	if (a->nr == 0)
		a->group = group;
	else if (a->group != group)
		a->many_groups = true;
	a->nr++;
}

struct eval_ctx {
	const struct metric_engine *e;
	struct metric_values *v;
	const struct plan_metric *pm;
	int scope;            /* absolute scope index */
	double coverage;
	int group;            /* -2 none yet */
	bool many_groups;
	bool mixed;
	bool absent;          /* an input has no counter in this scope (rather than an unread one) */
	const char *why;
	enum metric_why_code why_code; /* why's code */
};

static void note_group(struct eval_ctx *c, int group, bool many)
{
	if (many || (c->group != -2 && c->group != group))
		c->many_groups = true;
	c->group = group;
}

static bool lookup_input(const struct expr *ref, void *ctx, double *value)
{
	struct eval_ctx *c = ctx;
	const struct input_acc *a = NULL;

	if (ref->slot == CATALOG_SLOT_SMT_ON || ref->slot == CATALOG_SLOT_CORE_WIDE) {
		*value = ref->slot == CATALOG_SLOT_SMT_ON ? c->e->smt_on : c->e->core_wide;
		return true;
	}
	if (ref->slot == CATALOG_SLOT_SECONDS) {
		*value = c->v->seconds;
		if (c->v->seconds <= 0) {
			c->why = "zero-length interval";
			c->why_code = METRIC_WHY_OTHER;
		}
		return c->v->seconds > 0;
	}
	for (int i = 0; i < c->pm->nr_slot_inputs; i++)
		if (c->pm->slot_inputs[2 * i] == ref->slot)
			a = &c->v->acc[c->pm->slot_inputs[2 * i + 1] * c->e->nr_scopes + c->scope];
	if (!a || a->nr == 0 || a->invalid || a->missing) {
		c->absent = a && a->nr == 0 && !a->invalid && !a->missing;
		c->why = input_why(c->e, a);
		c->why_code = a && (a->missing || a->invalid) ? METRIC_WHY_OTHER : METRIC_WHY_NOT_IN_SCOPE;
		return false;
	}
	if (a->coverage < c->coverage)
		c->coverage = a->coverage;
	note_group(c, a->group, a->many_groups);
	*value = a->sum;
	return true;
}

static bool lookup_metric(const struct expr *ref, void *ctx, double *value)
{
	struct eval_ctx *c = ctx;
	const struct metric_value *v;
	int dep;

	if (ref->slot == CATALOG_SLOT_SMT_ON || ref->slot == CATALOG_SLOT_CORE_WIDE) {
		*value = ref->slot == CATALOG_SLOT_SMT_ON ? c->e->smt_on : c->e->core_wide;
		return true;
	}
	if (ref->slot == CATALOG_SLOT_SECONDS) {
		*value = c->v->seconds;
		if (c->v->seconds <= 0) {
			c->why = "zero-length interval";
			c->why_code = METRIC_WHY_OTHER;
		}
		return c->v->seconds > 0;
	}
	dep = c->pm->dep_plan[ref->slot];
	v = &c->v->values[dep * c->e->nr_scopes + c->scope];
	if (!v->valid) {
		c->why = v->why;
		c->why_code = v->why_code;
		return false;
	}
	if (v->coverage < c->coverage)
		c->coverage = v->coverage;
	c->mixed |= v->mixed_slices;
	*value = v->value;
	return true;
}

/* Add the value of another family's mapping (a CXL device's bytes) to v in a
 * scope it has counters in. primary_fault: NULL when v is valid, "" when the
 * chosen mapping has no counter in this scope (then v is the addition alone),
 * else why v has no value (it keeps none). */
static void add_mapping_value(const struct metric_engine *e, struct metric_values *out, const struct plan_metric *add,
			      int sc, const char *primary_fault, struct metric_value *v)
{
	const struct resolved_metric *rm = &e->plan->res->metrics[add->metric];
	struct eval_ctx c = { e, out, add, sc, 1.0, -2, false, false, false, NULL };
	const char *fault;
	double value = expr_eval(rm->add_fm->mappings[rm->add_mapping].formula, lookup_input, &c, &fault);

	if (fault && c.absent)
		return;   /* no device of this family in this scope */
	if (primary_fault && primary_fault[0])
		return;
	if (fault) {
		v->valid = false;
		v->why = c.why ? c.why : fault;
		v->why_code = c.why ? c.why_code : METRIC_WHY_OTHER;
		return;
	}
	if (primary_fault) {
		v->valid = true;
		v->why = NULL;
		v->why_code = METRIC_WHY_OTHER;
		v->value = value;
		v->coverage = c.coverage;
		v->mixed_slices = c.mixed || (c.many_groups && c.coverage < 0.999);
		return;
	}
	v->value += value;
	if (c.coverage < v->coverage)
		v->coverage = c.coverage;
	v->mixed_slices |= c.mixed || (c.many_groups && c.coverage < 0.999);
}

void metric_engine_compute(const struct metric_engine *e, const struct frame *frame, struct metric_values *out)
{
	const struct metric_plan *plan = e->plan;

	out->seconds = (double)frame->interval_ns / 1e9;
	for (int in = 0; in < plan->nr_inputs; in++) {
		bool missing = false;

		for (int k = 0; k < plan->inputs[in].nr_events; k++)
			missing |= e->event_missing[plan->inputs[in].events[k]];
		for (int sc = 0; sc < e->nr_scopes; sc++)
			out->acc[in * e->nr_scopes + sc] = (struct input_acc){ .coverage = 1.0, .group = -1, .missing = missing };
	}
	for (int b = 0; b < e->nr_bound; b++) {
		const struct bound_series *bs = &e->bound[b];
		const struct sample *s = &frame->samples[bs->series];
		int group = plan->events[bs->event].group;

		for (int in = 0; in < plan->nr_inputs; in++) {
			const struct plan_input *pin = &plan->inputs[in];
			struct input_acc *row = &out->acc[in * e->nr_scopes];
			bool uses = false;

			for (int k = 0; k < pin->nr_events && !uses; k++)
				uses = pin->events[k] == bs->event;
			if (!uses)
				continue;
			acc_add(&row[0], s, group);
			if (bs->node_scope >= 0)
				acc_add(&row[1 + bs->node_scope], s, group);
			if (bs->socket_scope >= 0)
				acc_add(&row[1 + e->nr_nodes + bs->socket_scope], s, group);
			if (bs->channel_scope >= 0)
				acc_add(&row[1 + e->nr_nodes + e->nr_sockets + bs->channel_scope], s, group);
			if (bs->tier_scope >= 0)
				acc_add(&row[1 + e->nr_nodes + e->nr_sockets + e->nr_channels + bs->tier_scope], s, group);
		}
	}
	for (int m = 0; m < plan->nr_metrics; m++) {
		const struct plan_metric *pm = &plan->metrics[m];
		const struct catalog_metric *cm = metric_plan_catalog_metric(plan, m);
		const struct expr *formula = cm->formula;

		if (!formula) {
			const struct resolved_metric *rm = &plan->res->metrics[pm->metric];

			formula = rm->fm->mappings[rm->mapping].formula;
		}
		for (int sc = 0; sc < e->nr_scopes; sc++) {
			struct eval_ctx c = { e, out, pm, sc, 1.0, -2, false, false, false, NULL };
			struct metric_value *v = &out->values[m * e->nr_scopes + sc];
			const char *fault;

			v->value = expr_eval(formula, cm->formula ? lookup_metric : lookup_input, &c, &fault);
			v->valid = !fault;
			/* A missing input says which and why (c.why); otherwise the
			 * formula's own fault. */
			v->why = !fault ? NULL : c.why ? c.why : fault;
			v->why_code = fault && c.why ? c.why_code : METRIC_WHY_OTHER;
			v->coverage = c.coverage;
			/* Extrapolated counts from different time slices do not describe the same instant. */
			v->mixed_slices = c.mixed || (c.many_groups && c.coverage < 0.999);
			if (pm->add)
				add_mapping_value(e, out, pm->add, sc, !fault ? NULL : c.absent ? "" : v->why, v);
		}
	}
}
