/* The perf groups of a metric plan (plan_groups.h). */
#include "metrics/plan_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An owner's current group on one PMU instance. */
struct instance_group {
	char instance[64];
	int group;
	int used;                 /* general counters taken */
};

/* A set of groups (one per instance) and the event copies counted in them. */
struct owner {
	int *events;              /* plan event indices */
	int nr_events;
	struct instance_group *groups;
	int nr_groups;
	bool split;               /* some instance needed more than one group */
};

/* A metric's mapping (or the mapping added to it) and its perf events. */
struct unit {
	struct plan_metric *pm;
	int order;
	int *tmpl;                /* distinct perf template events, in the formula's order */
	int nr;
};

struct placer {
	struct metric_plan *plan;
	struct plan_event *tmpl;  /* the plan's events before placing: each one once, ungrouped */
	int nr_tmpl;
	int *tmpl_map;            /* non-perf template -> its plan event */
	struct plan_input *old_inputs;
	int nr_old_inputs;
	struct owner *owners;
	int nr_owners;
	int *input_owner, *input_old; /* per new input: its owner (-1 none) and old input */
};

static int owner_find(const struct placer *p, const struct owner *o, const char *open)
{
	for (int i = 0; i < o->nr_events; i++)
		if (!strcmp(p->plan->events[o->events[i]].open, open))
			return o->events[i];
	return -1;
}

static struct instance_group *instance_group(struct owner *o, const char *instance)
{
	struct instance_group *g;

	for (int i = 0; i < o->nr_groups; i++)
		if (!strcmp(o->groups[i].instance, instance))
			return &o->groups[i];
	g = realloc(o->groups, sizeof(*g) * (size_t)(o->nr_groups + 1));
	if (!g)
		return NULL;
	o->groups = g;
	g = &g[o->nr_groups++];
	snprintf(g->instance, sizeof(g->instance), "%s", instance);
	g->group = -1;
	g->used = 0;
	return g;
}

/* A new copy of template t in owner o's group on its instance (the next
 * group when the current one's counters are all taken). */
static int owner_add(struct placer *p, struct owner *o, int t)
{
	struct metric_plan *plan = p->plan;
	const struct plan_event *src = &p->tmpl[t];
	struct instance_group *g = instance_group(o, src->instance);
	struct plan_event *pe = realloc(plan->events, sizeof(*pe) * (size_t)(plan->nr_events + 1));
	int *events = realloc(o->events, sizeof(int) * (size_t)(o->nr_events + 1));

	if (pe)
		plan->events = pe;
	if (events)
		o->events = events;
	if (!g || !pe || !events)
		return -1;
	pe = &pe[plan->nr_events];
	*pe = *src;
	pe->text = NULL;          /* named once every copy is made */
	if (!(pe->open = strdup(src->open)))
		return -1;
	plan->nr_events++;
	if (g->group < 0) {
		g->group = plan->nr_groups++;
	} else if (!src->event->fixed && src->counters > 0 && g->used >= src->counters) {
		g->group = plan->nr_groups++;   /* more events than counters: the next slice */
		g->used = 0;
		o->split = true;
	}
	pe->group = g->group;
	/* A fixed counter (Intel's cycles, reference cycles, slots) takes none of the general ones. */
	g->used += !src->event->fixed;
	o->events[o->nr_events++] = plan->nr_events - 1;
	return 0;
}

/* General counters the unit's events not yet in o would take on instance
 * `instance`, and whether they fit beside those o has taken there. */
static bool fits_beside(const struct placer *p, struct owner *o, const struct unit *u, const char *instance)
{
	int fresh = 0, used = 0, counters = 0;

	for (int i = 0; o && i < o->nr_groups; i++)
		if (!strcmp(o->groups[i].instance, instance))
			used = o->groups[i].used;
	for (int i = 0; i < u->nr; i++) {
		const struct plan_event *t = &p->tmpl[u->tmpl[i]];

		if (strcmp(t->instance, instance) != 0)
			continue;
		counters = t->counters;
		fresh += !t->event->fixed && (!o || owner_find(p, o, t->open) < 0);
	}
	return counters <= 0 || used + fresh <= counters;
}

static bool fits_everywhere(const struct placer *p, struct owner *o, const struct unit *u)
{
	for (int i = 0; i < u->nr; i++)
		if (!fits_beside(p, o, u, p->tmpl[u->tmpl[i]].instance))
			return false;
	return true;
}

static bool subset_of(const struct placer *p, const struct owner *o, const struct unit *u)
{
	for (int i = 0; i < u->nr; i++)
		if (owner_find(p, o, p->tmpl[u->tmpl[i]].open) < 0)
			return false;
	return true;
}

/* Are o's copies of u's events in one group on each instance? */
static bool in_one_group(const struct placer *p, const struct owner *o, const struct unit *u)
{
	for (int i = 0; i < u->nr; i++)
		for (int k = 0; k < u->nr; k++) {
			int a = owner_find(p, o, p->tmpl[u->tmpl[i]].open), b = owner_find(p, o, p->tmpl[u->tmpl[k]].open);

			if (!strcmp(p->plan->events[a].instance, p->plan->events[b].instance) &&
			    p->plan->events[a].group != p->plan->events[b].group)
				return false;
		}
	return true;
}

/* The owner whose copies unit u reads, made or grown as needed; -1 when out of memory. */
static int choose_owner(struct placer *p, const struct unit *u)
{
	bool fits_alone = fits_everywhere(p, NULL, u);
	struct owner *o;

	/* Its events are an earlier metric's: read them, unless they are in
	 * groups that take turns and this metric would fit one group of its own. */
	for (int i = 0; i < p->nr_owners; i++)
		if (subset_of(p, &p->owners[i], u) && (in_one_group(p, &p->owners[i], u) || !fits_alone))
			return i;
	/* Its new events fit beside an earlier metric's in one group. */
	for (int i = 0; i < p->nr_owners; i++) {
		o = &p->owners[i];
		if (o->split || !fits_everywhere(p, o, u))
			continue;
		for (int k = 0; k < u->nr; k++)
			if (owner_find(p, o, p->tmpl[u->tmpl[k]].open) < 0 && owner_add(p, o, u->tmpl[k]) < 0)
				return -1;
		return i;
	}
	/* Groups of its own, with its own copy of each event. */
	o = realloc(p->owners, sizeof(*o) * (size_t)(p->nr_owners + 1));
	if (!o)
		return -1;
	p->owners = o;
	o = &o[p->nr_owners++];
	memset(o, 0, sizeof(*o));
	for (int k = 0; k < u->nr; k++)
		if (owner_add(p, o, u->tmpl[k]) < 0)
			return -1;
	return p->nr_owners - 1;
}

/* The input reading old input `old` through owner `owner`'s copies. */
static int input_for(struct placer *p, int old, int owner)
{
	struct metric_plan *plan = p->plan;
	const struct plan_input *src = &p->old_inputs[old];
	struct plan_input *in;
	int *io, *ii;

	for (int i = 0; i < plan->nr_inputs; i++)
		if (p->input_old[i] == old && p->input_owner[i] == owner)
			return i;
	in = realloc(plan->inputs, sizeof(*in) * (size_t)(plan->nr_inputs + 1));
	if (in)
		plan->inputs = in;
	io = realloc(p->input_owner, sizeof(int) * (size_t)(plan->nr_inputs + 1));
	if (io)
		p->input_owner = io;
	ii = realloc(p->input_old, sizeof(int) * (size_t)(plan->nr_inputs + 1));
	if (ii)
		p->input_old = ii;
	if (!in || !io || !ii)
		return -1;
	in = &in[plan->nr_inputs];
	*in = *src;
	if (!(in->events = calloc((size_t)src->nr_events + 1, sizeof(int))))
		return -1;
	io[plan->nr_inputs] = owner;
	ii[plan->nr_inputs] = old;
	plan->nr_inputs++;
	for (int k = 0; k < src->nr_events; k++) {
		const struct plan_event *t = &p->tmpl[src->events[k]];

		in->events[k] = plan_event_is_perf(t) ? owner_find(p, &p->owners[owner], t->open)
						      : p->tmpl_map[src->events[k]];
		if (in->events[k] < 0)
			return -1;   /* never: the owner holds every perf event of its units */
	}
	return plan->nr_inputs - 1;
}

static int unit_add_template(struct unit *u, int t)
{
	int *grown;

	for (int i = 0; i < u->nr; i++)
		if (u->tmpl[i] == t)
			return 0;
	grown = realloc(u->tmpl, sizeof(int) * (size_t)(u->nr + 1));
	if (!grown)
		return -1;
	u->tmpl = grown;
	u->tmpl[u->nr++] = t;
	return 0;
}

/* Largest first (perf's metric_list_cmp), then in the catalog's order: the
 * same metrics give the same groups and copies in whatever order they are
 * asked for (a recording read with some of its metrics finds its copies). */
static int compare_units(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->nr != y->nr)
		return y->nr - x->nr;
	if (x->pm->metric != y->pm->metric)
		return x->pm->metric - y->pm->metric;
	return x->order - y->order;
}

static int collect_units(struct placer *p, struct unit **out, int *nr)
{
	struct metric_plan *plan = p->plan;
	struct unit *units = calloc((size_t)plan->nr_metrics * 2 + 1, sizeof(*units));

	*out = units;
	*nr = 0;
	if (!units)
		return -1;
	for (int m = 0; m < plan->nr_metrics; m++) {
		struct plan_metric *pm = &plan->metrics[m];

		for (struct plan_metric *part = pm; part; part = part == pm ? pm->add : NULL) {
			struct unit *u = &units[*nr];

			if (plan->cat->metrics[pm->metric].formula)
				break;   /* derived: reads other metrics' values */
			u->pm = part;
			u->order = *nr;
			(*nr)++;
			for (int s = 0; s < part->nr_slot_inputs; s++) {
				const struct plan_input *in = &p->old_inputs[part->slot_inputs[2 * s + 1]];

				for (int k = 0; k < in->nr_events; k++)
					if (plan_event_is_perf(&p->tmpl[in->events[k]]) &&
					    unit_add_template(u, in->events[k]) < 0)
						return -1;
			}
		}
	}
	qsort(units, (size_t)*nr, sizeof(*units), compare_units);
	return 0;
}

/* Copy 1 is named by what it opens, copy N "open#N", in the order made. */
static int name_copies(struct metric_plan *plan)
{
	for (int i = 0; i < plan->nr_events; i++) {
		struct plan_event *pe = &plan->events[i];
		size_t len;

		if (pe->text)
			continue;
		pe->copy = 1;
		for (int j = 0; j < i; j++)
			pe->copy += plan_event_is_perf(&plan->events[j]) && !strcmp(plan->events[j].open, pe->open);
		len = strlen(pe->open) + 16;
		if (!(pe->text = malloc(len)))
			return -1;
		if (pe->copy == 1)
			snprintf(pe->text, len, "%s", pe->open);
		else
			snprintf(pe->text, len, "%s#%d", pe->open, pe->copy);
		plan->nr_copies += pe->copy > 1;
	}
	return 0;
}

int plan_place_groups(struct metric_plan *plan)
{
	struct placer p = { .plan = plan, .tmpl = plan->events, .nr_tmpl = plan->nr_events,
			    .old_inputs = plan->inputs, .nr_old_inputs = plan->nr_inputs };
	struct unit *units = NULL;
	int nr_units = 0, rc = -1;

	plan->events = NULL;
	plan->nr_events = 0;
	plan->inputs = NULL;
	plan->nr_inputs = 0;
	plan->nr_groups = 0;
	p.tmpl_map = malloc(sizeof(int) * (size_t)(p.nr_tmpl + 1));
	if (!p.tmpl_map)
		goto out;
	/* Events perf does not count (procfs, eBPF, DAMON) stay as they are, ungrouped. */
	for (int i = 0; i < p.nr_tmpl; i++) {
		struct plan_event *pe;

		p.tmpl_map[i] = -1;
		if (plan_event_is_perf(&p.tmpl[i]))
			continue;
		pe = realloc(plan->events, sizeof(*pe) * (size_t)(plan->nr_events + 1));
		if (!pe)
			goto out;
		plan->events = pe;
		pe[plan->nr_events] = p.tmpl[i];
		p.tmpl[i].text = p.tmpl[i].open = NULL;
		p.tmpl_map[i] = plan->nr_events++;
	}
	if (collect_units(&p, &units, &nr_units) < 0)
		goto out;
	for (int i = 0; i < nr_units; i++) {
		struct plan_metric *pm = units[i].pm;
		int owner = units[i].nr ? choose_owner(&p, &units[i]) : -1;

		if (units[i].nr && owner < 0)
			goto out;
		for (int s = 0; s < pm->nr_slot_inputs; s++) {
			int in = input_for(&p, pm->slot_inputs[2 * s + 1], owner);

			if (in < 0)
				goto out;
			pm->slot_inputs[2 * s + 1] = in;
		}
	}
	rc = name_copies(plan);
out:
	for (int i = 0; i < nr_units; i++)
		free(units[i].tmpl);
	free(units);
	for (int i = 0; i < p.nr_owners; i++) {
		free(p.owners[i].events);
		free(p.owners[i].groups);
	}
	free(p.owners);
	for (int i = 0; i < p.nr_tmpl; i++) {
		free(p.tmpl[i].text);
		free(p.tmpl[i].open);
	}
	free(p.tmpl);
	for (int i = 0; i < p.nr_old_inputs; i++)
		free(p.old_inputs[i].events);
	free(p.old_inputs);
	free(p.tmpl_map);
	free(p.input_owner);
	free(p.input_old);
	return rc;
}
