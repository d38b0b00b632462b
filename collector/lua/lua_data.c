#include "lua/lua_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void label_filter_init(struct label_filter *f)
{
	f->cpu = f->node = f->socket = f->pid = f->tid = LABEL_ANY;
	f->instance = NULL;
}

static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

int lua_data_find(const struct lua_data *d, const char *name)
{
	if (!d->hash_size)
		return -1;
	for (unsigned i = name_hash(name) & (unsigned)(d->hash_size - 1);; i = (i + 1) & (unsigned)(d->hash_size - 1)) {
		int n = d->hash[i];

		if (n < 0)
			return -1;
		if (!strcmp(d->names[n], name))
			return n;
	}
}

static unsigned group_slot(const struct lua_data *d, const char *name)
{
	unsigned i = name_hash(name) & (unsigned)(d->group_hash_size - 1);

	while (d->group_hash[i] >= 0 && strcmp(d->groups[d->group_hash[i]].name, name))
		i = (i + 1) & (unsigned)(d->group_hash_size - 1);
	return i;
}

/* The ended series of a name, by name: -1 when none ended. */
static int find_group(const struct lua_data *d, const char *name)
{
	return d->group_hash_size ? d->group_hash[group_slot(d, name)] : -1;
}

/* Ended series k joins its name's group (made on first use; the hash grows
 * with the number of names, a few dozen). -1 when out of memory. */
static int group_add(struct lua_data *d, int k)
{
	const char *name = d->ended[k].name;
	int g = find_group(d, name);
	struct lua_ended_group *gr;

	if (g < 0) {
		if (2 * (d->nr_groups + 1) > d->group_hash_size) {
			int size = d->group_hash_size ? 2 * d->group_hash_size : 16;
			int *hash = malloc((size_t)size * sizeof(int));

			if (!hash)
				return -1;
			free(d->group_hash);
			d->group_hash = hash;
			d->group_hash_size = size;
			for (int i = 0; i < size; i++)
				hash[i] = -1;
			for (int i = 0; i < d->nr_groups; i++)
				hash[group_slot(d, d->groups[i].name)] = i;
		}
		gr = realloc(d->groups, (size_t)(d->nr_groups + 1) * sizeof(*gr));
		if (!gr)
			return -1;
		d->groups = gr;
		g = d->nr_groups++;
		d->groups[g] = (struct lua_ended_group){ .name = name };
		d->group_hash[group_slot(d, name)] = g;
	}
	gr = &d->groups[g];
	if (gr->nr == gr->cap) {
		int cap = gr->cap ? 2 * gr->cap : 16;
		int *idx = realloc(gr->idx, (size_t)cap * sizeof(int));

		if (!idx)
			return -1;
		gr->idx = idx;
		gr->cap = cap;
	}
	gr->idx[gr->nr++] = k;
	return 0;
}

int lua_data_ended_of(const struct lua_data *d, int name, const int **ended)
{
	int g = name >= 0 && name < d->nr_names ? d->name_group[name] : -1;

	*ended = g >= 0 ? d->groups[g].idx : NULL;
	return g >= 0 ? d->groups[g].nr : 0;
}

int lua_data_nr_members(const struct lua_data *d, int name)
{
	const int *ended;

	if (name < 0 || name >= d->nr_names)
		return 0;
	return d->name_first[name + 1] - d->name_first[name] + lua_data_ended_of(d, name, &ended);
}

int lua_data_member(const struct lua_data *d, int name, int k)
{
	int live = d->name_first[name + 1] - d->name_first[name];
	const int *ended;

	if (k < live)
		return d->by_name[d->name_first[name] + k];
	lua_data_ended_of(d, name, &ended);
	return -1 - ended[k - live];
}

/* Series grouped by name, over the first nr_series entries of the table
 * (those the frames so far hold, less those that ended), and the names of
 * series that ended (their lists are kept apart: lua_data_ended_of), so that
 * a name is found while any series of it was seen. Linear in the table, not
 * in what ended. */
static int build_names(struct lua_data *d)
{
	int nr = d->nr_series + d->nr_groups;
	int *name_of = calloc((size_t)nr + 1, sizeof(int));
	int *count;

	free(d->names);
	free(d->name_first);
	free(d->name_group);
	free(d->by_name);
	free(d->hash);
	d->nr_names = 0;
	d->names = calloc((size_t)nr + 1, sizeof(char *));
	d->name_first = calloc((size_t)nr + 2, sizeof(int));
	d->name_group = malloc(((size_t)nr + 1) * sizeof(int));
	d->by_name = calloc((size_t)nr + 1, sizeof(int));
	d->hash_size = 16;
	while (d->hash_size < 2 * nr + 2)
		d->hash_size *= 2;
	d->hash = malloc((size_t)d->hash_size * sizeof(int));
	if (!name_of || !d->names || !d->name_first || !d->name_group || !d->by_name || !d->hash) {
		free(name_of);
		d->hash_size = 0;   /* no name is found: never a wrong one */
		d->nr_names = 0;
		return -1;
	}
	for (int i = 0; i < d->hash_size; i++)
		d->hash[i] = -1;
	for (int j = 0; j < nr; j++) {
		bool live = j < d->nr_series;
		const char *name = live ? (d->ended_index[j] ? NULL : d->table->series[j].name)
					: d->groups[j - d->nr_series].name;
		int n;

		name_of[j] = -1;
		if (!name)
			continue;
		n = lua_data_find(d, name);
		if (n < 0) {
			unsigned h = name_hash(name) & (unsigned)(d->hash_size - 1);

			n = d->nr_names++;
			d->names[n] = name;
			d->name_group[n] = -1;
			while (d->hash[h] >= 0)
				h = (h + 1) & (unsigned)(d->hash_size - 1);
			d->hash[h] = n;
		}
		if (!live) {
			d->name_group[n] = j - d->nr_series;
			continue;
		}
		name_of[j] = n;
		d->name_first[n + 1]++;
	}
	for (int n = 0; n < d->nr_names; n++)
		d->name_first[n + 1] += d->name_first[n];
	count = calloc((size_t)d->nr_names + 1, sizeof(int));
	if (!count) {
		free(name_of);
		d->hash_size = 0;
		d->nr_names = 0;
		return -1;
	}
	for (int j = 0; j < d->nr_series; j++)
		if (name_of[j] >= 0)
			d->by_name[d->name_first[name_of[j]] + count[name_of[j]]++] = j;
	free(count);
	free(name_of);
	return 0;
}

static void shape(struct lua_data *d, int i)
{
	const struct series *s = &d->table->series[i];
	double scale = s->scale > 0 ? s->scale : 1.0;

	d->push_scale[i] = s->unavailable ? 0 : s->kind == SERIES_COUNTER ? scale : -scale;
}

int lua_data_init(struct lua_data *d, const struct series_table *table, int history)
{
	size_t n = (size_t)table->nr + 1;

	memset(d, 0, sizeof(*d));
	d->table = table;
	d->nr_series = table->nr;
	d->history_cap = history > 0 ? history : 1;
	d->current = malloc(n * sizeof(double));
	d->totals = calloc(n, sizeof(double));
	d->push_scale = calloc(n, sizeof(double));
	d->seen = calloc(n, sizeof(bool));
	d->ended_index = calloc(n, sizeof(bool));
	d->ended_slot = malloc(n * sizeof(int));
	d->start_s = calloc(n, sizeof(double));
	d->gauge = calloc(n, sizeof(*d->gauge));
	d->history = malloc((size_t)d->history_cap * n * sizeof(double));
	d->history_time = calloc((size_t)d->history_cap, sizeof(double));
	d->history_interval = calloc((size_t)d->history_cap, sizeof(double));
	if (!d->current || !d->totals || !d->push_scale || !d->seen || !d->ended_index || !d->ended_slot || !d->start_s || !d->gauge ||
	    !d->history || !d->history_time || !d->history_interval ||
	    build_names(d) < 0) {
		lua_data_free(d);
		return -1;
	}
	for (int i = 0; i < table->nr; i++) {
		d->ended_slot[i] = -1;
		d->current[i] = NAN;
		shape(d, i);
	}
	return 0;
}

void lua_data_free(struct lua_data *d)
{
	free(d->names);
	free(d->name_first);
	free(d->name_group);
	free(d->by_name);
	free(d->hash);
	for (int g = 0; g < d->nr_groups; g++)
		free(d->groups[g].idx);
	free(d->groups);
	free(d->group_hash);
	free(d->current);
	free(d->totals);
	free(d->push_scale);
	free(d->seen);
	free(d->ended_index);
	free(d->ended_slot);
	free(d->start_s);
	free(d->gauge);
	for (int k = 0; k < d->nr_ended; k++) {
		free(d->ended[k].name);
		free(d->ended[k].unavailable);
	}
	free(d->ended);
	free(d->history);
	free(d->history_time);
	free(d->history_interval);
	memset(d, 0, sizeof(*d));
}

static void reset(struct lua_data *d, int i)
{
	d->totals[i] = 0;
	d->seen[i] = false;
	d->ended_index[i] = false;
	d->ended_slot[i] = -1;
	d->start_s[i] = 0;
	d->gauge[i] = (struct lua_gauge_stats){ 0 };
}

/* Series that appeared during the run (processes): the arrays grow to the
 * frame's length (the history keeps its rows, new columns not read), and a
 * reused index starts its totals again. */
static int grow(struct lua_data *d, const struct frame *frame)
{
	const struct series_changes *c = frame->changes;
	int old = d->nr_series, nr = frame->nr > old ? frame->nr : old;
	size_t n = (size_t)nr + 1;

	if (nr > old) {
		double *current = realloc(d->current, n * sizeof(double));
		double *totals = current ? realloc(d->totals, n * sizeof(double)) : NULL;
		double *push_scale = totals ? realloc(d->push_scale, n * sizeof(double)) : NULL;
		bool *seen = push_scale ? realloc(d->seen, n * sizeof(bool)) : NULL;
		bool *ended_index = seen ? realloc(d->ended_index, n * sizeof(bool)) : NULL;
		int *ended_slot = ended_index ? realloc(d->ended_slot, n * sizeof(int)) : NULL;
		double *start_s = ended_slot ? realloc(d->start_s, n * sizeof(double)) : NULL;
		struct lua_gauge_stats *gauge = start_s ? realloc(d->gauge, n * sizeof(*gauge)) : NULL;
		double *history = gauge ? malloc((size_t)d->history_cap * n * sizeof(double)) : NULL;

		if (current)
			d->current = current;
		if (totals)
			d->totals = totals;
		if (push_scale)
			d->push_scale = push_scale;
		if (seen)
			d->seen = seen;
		if (ended_index)
			d->ended_index = ended_index;
		if (ended_slot)
			d->ended_slot = ended_slot;
		if (start_s)
			d->start_s = start_s;
		if (gauge)
			d->gauge = gauge;
		if (!history)
			return -1;
		for (int row = 0; row < d->history_cap; row++)
			for (int i = 0; i < nr + 1; i++)
				history[(size_t)row * n + (size_t)i] =
					i < old ? d->history[(size_t)row * (size_t)(old + 1) + (size_t)i] : NAN;
		free(d->history);
		d->history = history;
		for (int i = old; i < nr; i++) {
			d->current[i] = NAN;
			reset(d, i);
			shape(d, i);
		}
		d->nr_series = nr;
	}
	for (int k = 0; c && k < c->nr_added; k++)
		if (c->added[k] < old) {
			reset(d, c->added[k]);
			shape(d, c->added[k]);
		}
	return nr > old || (c && c->nr_added) ? build_names(d) : 0;
}

/* The frame held the last values of these series: what they added up to is
 * kept in ended[] (the index may go to another series later). Scripts still
 * read this frame's values by index (on_frame runs after the push); the next
 * push (end_pending) takes the indices out of the name lists. Without memory
 * the index keeps its totals until it is reused. */
static void keep_ended(struct lua_data *d, const struct series_changes *c)
{
	for (int k = 0; k < c->nr_retired; k++) {
		int i = c->retired[k];
		const struct series *s;
		struct lua_ended_series *e;

		if (i < 0 || i >= d->nr_series || d->ended_index[i] || d->ended_slot[i] >= 0)
			continue;
		if (d->nr_ended == d->cap_ended) {
			int cap = d->cap_ended ? 2 * d->cap_ended : 64;
			struct lua_ended_series *grown = realloc(d->ended, (size_t)cap * sizeof(*grown));

			if (!grown)
				return;
			d->ended = grown;
			d->cap_ended = cap;
		}
		s = &d->table->series[i];
		e = &d->ended[d->nr_ended];
		memset(e, 0, sizeof(*e));
		e->name = strdup(s->name);
		e->unavailable = s->unavailable ? strdup(s->unavailable) : NULL;
		if (!e->name || (s->unavailable && !e->unavailable)) {
			free(e->name);
			free(e->unavailable);
			return;
		}
		snprintf(e->unit, sizeof(e->unit), "%s", s->unit);
		e->kind = s->kind;
		e->labels = s->labels;
		e->labels.cgroup = NULL;
		e->total = d->totals[i];
		e->seen = d->seen[i];
		e->peak = d->gauge[i].peak;
		e->mean = d->gauge[i].reads ? d->gauge[i].sum / (double)d->gauge[i].reads : NAN;
		e->start_s = d->start_s[i];
		e->end_s = d->time_s;
		e->index = i;
		d->ended_slot[i] = d->nr_ended++;
	}
}

/* The series kept by the last frame leave their indices. */
static void end_pending(struct lua_data *d)
{
	for (int k = d->first_pending; k < d->nr_ended; k++) {
		int i = d->ended[k].index;

		/* Without memory for its name's list, the index keeps it (until reused). */
		if (group_add(d, k) < 0)
			continue;
		reset(d, i);
		d->ended_index[i] = true;
		d->ended[k].index = -1;
	}
	d->first_pending = d->nr_ended;
	build_names(d);
}

void lua_data_entry(const struct lua_data *d, int v, struct lua_data_entry *out)
{
	if (v < 0 || d->ended_slot[v] >= 0) {
		const struct lua_ended_series *e = &d->ended[v < 0 ? -1 - v : d->ended_slot[v]];

		*out = (struct lua_data_entry){ e->name, e->unit, e->unavailable, e->kind, &e->labels, true, e->seen,
						e->total, e->peak, e->mean, e->total, e->start_s, e->end_s };
		return;
	}
	const struct series *s = &d->table->series[v];
	const struct lua_gauge_stats *g = &d->gauge[v];

	*out = (struct lua_data_entry){ s->name, s->unit, s->unavailable, s->kind, &s->labels, false, d->seen[v],
					d->totals[v], g->peak, g->reads ? g->sum / (double)g->reads : NAN,
					d->totals[v], d->start_s[v], NAN };
}

void lua_data_push(struct lua_data *d, const struct frame *frame)
{
	double *slot;

	if (d->first_pending < d->nr_ended)
		end_pending(d);
	/* Without memory for the new series, they are left out; the others go on. */
	if (frame->nr > d->nr_series || (frame->changes && frame->changes->nr_added))
		grow(d, frame);
	slot = d->history + (size_t)d->history_head * (size_t)(d->nr_series + 1);

	if (!d->frames)
		d->start_ns = frame->time_ns - frame->interval_ns;
	d->seq = frame->seq;
	d->interval_s = (double)frame->interval_ns / 1e9;
	d->time_s = (double)(frame->time_ns - d->start_ns) / 1e9;
	/* Locals: the stores below would otherwise make the compiler reload
	 * every pointer at every series. */
	const double *push_scale = d->push_scale;
	const struct sample *samples = frame->samples;
	double *totals = d->totals, *current = d->current;
	bool *seen = d->seen;
	int n = d->nr_series < frame->nr ? d->nr_series : frame->nr;

	for (int i = 0; i < n; i++) {
		const struct sample *sm = &samples[i];
		double scale = push_scale[i], v = NAN;

		if (sm->valid && scale != 0) {
			if (scale > 0) {
				v = sample_scaled(sm) * scale;
				totals[i] += v;
			} else {
				struct lua_gauge_stats *g = &d->gauge[i];

				v = (double)sm->value * -scale;
				totals[i] = v;
				if (!g->reads || v > g->peak)
					g->peak = v;
				g->sum += v;
				g->reads++;
			}
			if (!seen[i])
				d->start_s[i] = d->time_s;
			seen[i] = true;
		}
		current[i] = v;
		slot[i] = v;
	}
	d->history_time[d->history_head] = d->time_s;
	d->history_interval[d->history_head] = d->interval_s;
	d->history_head = (d->history_head + 1) % d->history_cap;
	if (d->history_len < d->history_cap)
		d->history_len++;
	d->frames++;
	if (frame->changes && frame->changes->nr_retired)
		keep_ended(d, frame->changes);
}

static bool label_ok(int want, int have)
{
	return want == LABEL_ANY || want == have;
}

/* pid and tid: a sum that names neither is over the totals, which the
 * per-process and per-thread series repeat; one that names a pid is over
 * that process's series, not its threads' as well. */
static bool task_label_ok(int want, int have)
{
	return want == LABEL_ANY ? have == LABEL_NONE : want == have;
}

bool lua_data_series_matches(const struct lua_data *d, int series, const struct label_filter *f)
{
	const struct series_labels *l = series < 0 ? &d->ended[-1 - series].labels : &d->table->series[series].labels;

	return label_ok(f->cpu, l->cpu) && label_ok(f->node, l->node) && label_ok(f->socket, l->socket) &&
	       task_label_ok(f->tid, l->tid) &&
	       (f->tid != LABEL_ANY ? label_ok(f->pid, l->pid) : task_label_ok(f->pid, l->pid)) &&
	       (!f->instance || !f->instance[0] || !strcmp(f->instance, l->instance));
}

static int sum_row(const struct lua_data *d, int name, const struct label_filter *f, const double *row,
		   const bool *seen, double *sum)
{
	double total = 0;
	const int *ended;
	int read = 0, nr_ended;

	if (name < 0 || name >= d->nr_names)
		return 0;
	for (int k = d->name_first[name]; k < d->name_first[name + 1]; k++) {
		int s = d->by_name[k];

		if (!lua_data_series_matches(d, s, f))
			continue;
		if (seen ? !seen[s] : isnan(row[s]))
			continue;
		total += row[s];
		read++;
	}
	/* Series that ended count in totals only: no current or past frame value. */
	nr_ended = seen ? lua_data_ended_of(d, name, &ended) : 0;
	for (int k = 0; k < nr_ended; k++) {
		const struct lua_ended_series *e = &d->ended[ended[k]];

		if (e->seen && lua_data_series_matches(d, -1 - ended[k], f)) {
			total += e->total;
			read++;
		}
	}
	if (read)
		*sum = total;
	return read;
}

int lua_data_sum(const struct lua_data *d, int name, const struct label_filter *f, enum lua_data_what what,
		 double *sum)
{
	if (what == LUA_DATA_TOTAL)
		return sum_row(d, name, f, d->totals, d->seen, sum);
	return sum_row(d, name, f, d->current, NULL, sum);
}

int lua_data_sum_history(const struct lua_data *d, int name, const struct label_filter *f, int age, double *sum)
{
	int slot;

	if (age < 0 || age >= d->history_len)
		return 0;
	slot = (d->history_head - 1 - age + 2 * d->history_cap) % d->history_cap;
	return sum_row(d, name, f, d->history + (size_t)slot * (size_t)(d->nr_series + 1), NULL, sum);
}
