#include "sampler/frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void series_labels_init(struct series_labels *labels)
{
	memset(labels, 0, sizeof(*labels));
	labels->cpu = labels->node = labels->socket = LABEL_NONE;
	labels->pid = labels->tid = LABEL_NONE;
}

bool series_is_per_task(const struct series *s)
{
	return s->labels.pid != LABEL_NONE || s->labels.tid != LABEL_NONE;
}

static int list_push(struct series_index_list *l, int index)
{
	if (l->nr == l->cap) {
		int cap = l->cap ? l->cap * 2 : 64;
		int *grown = realloc(l->index, sizeof(int) * (size_t)cap);

		if (!grown)
			return -1;
		l->index = grown;
		l->cap = cap;
	}
	l->index[l->nr++] = index;
	return 0;
}

static void list_free(struct series_index_list *l)
{
	free(l->index);
	memset(l, 0, sizeof(*l));
}

static int fill_series(struct series *s, const char *name, const char *unit, double scale, enum series_kind kind,
		       const struct series_labels *labels)
{
	char *copy = strdup(name);
	char *cgroup = labels && labels->cgroup ? strdup(labels->cgroup) : NULL;

	if (!copy || (labels && labels->cgroup && !cgroup)) {
		free(copy);
		free(cgroup);
		return -1;
	}
	/* A reused entry: no reader looks at its old contents any more. */
	free(s->name);
	free(s->unavailable);
	free(s->labels.cgroup);
	memset(s, 0, sizeof(*s));
	s->name = copy;
	snprintf(s->unit, sizeof(s->unit), "%s", unit ? unit : "");
	s->scale = scale;
	s->kind = kind;
	if (labels)
		s->labels = *labels;
	else
		series_labels_init(&s->labels);
	s->labels.cgroup = cgroup;
	s->state = SERIES_LIVE;
	return 0;
}

static int append(struct series_table *table)
{
	if (!table->storage.base && stable_array_init(&table->storage, sizeof(struct series), SERIES_TABLE_MAX) < 0)
		return -1;
	if (stable_array_fit(&table->storage, (size_t)table->nr + 1) < 0)
		return -1;
	table->series = table->storage.base;
	table->capacity = (int)table->storage.usable;
	return table->nr;
}

int series_table_add(struct series_table *table, const char *name, const char *unit, double scale,
		     enum series_kind kind, const struct series_labels *labels)
{
	int at = append(table);

	if (at < 0 || fill_series(&table->series[at], name, unit, scale, kind, labels) < 0)
		return -1;
	return table->nr++;
}

int series_table_add_live(struct series_table *table, const char *name, const char *unit, double scale,
			  enum series_kind kind, const struct series_labels *labels)
{
	struct series_index_list *f = &table->free;
	int at = -1;

	/* Oldest retired first: the one most likely every reader is done with. */
	if (f->head < f->nr && table->series[f->index[f->head]].retired_seq < table->horizon)
		at = f->index[f->head];
	if (at < 0 && (at = append(table)) < 0)
		return -1;
	if (list_push(&table->added, at) < 0 || fill_series(&table->series[at], name, unit, scale, kind, labels) < 0) {
		if (table->added.nr && table->added.index[table->added.nr - 1] == at)
			table->added.nr--;
		return -1;
	}
	if (at == table->nr) {
		table->nr++;
	} else {
		f->head++;
		table->nr_retired--;
		/* Keep the free list short: drop what was taken. */
		if (f->head == f->nr)
			f->head = f->nr = 0;
	}
	return at;
}

void series_table_retire(struct series_table *table, int index)
{
	struct series *s;

	if (index < 0 || index >= table->nr)
		return;
	s = &table->series[index];
	if (s->state != SERIES_LIVE)
		return;
	/* Without memory to list it, the series stays live (and empty): never a wrong value. */
	if (list_push(&table->retiring, index) == 0)
		s->state = SERIES_RETIRING;
}

bool series_table_changes(const struct series_table *table, struct series_changes *out)
{
	out->added = table->added.index;
	out->nr_added = table->added.nr;
	out->retired = table->retiring.index;
	out->nr_retired = table->retiring.nr;
	return out->nr_added || out->nr_retired;
}

void series_table_frame_done(struct series_table *table, struct frame *frame, uint64_t seq)
{
	struct series_index_list *f = &table->free;

	for (int i = 0; i < table->retiring.nr; i++) {
		int index = table->retiring.index[i];

		table->series[index].state = SERIES_RETIRED;
		table->series[index].retired_seq = seq;
		if (frame && index < frame->nr)
			memset(&frame->samples[index], 0, sizeof(frame->samples[index]));
		/* Compact before growing: the taken entries are at the front. */
		if (f->nr == f->cap && f->head) {
			memmove(f->index, f->index + f->head, sizeof(int) * (size_t)(f->nr - f->head));
			f->nr -= f->head;
			f->head = 0;
		}
		if (list_push(f, index) == 0)
			table->nr_retired++;
	}
	table->retiring.nr = 0;
	table->added.nr = 0;
}

int series_table_live(const struct series_table *table)
{
	return table->nr - table->nr_retired - table->retiring.nr;
}

void series_table_free(struct series_table *table)
{
	for (int i = 0; i < table->nr; i++) {
		free(table->series[i].name);
		free(table->series[i].unavailable);
		free(table->series[i].labels.cgroup);
	}
	stable_array_free(&table->storage);
	list_free(&table->added);
	list_free(&table->retiring);
	list_free(&table->free);
	memset(table, 0, sizeof(*table));
}

int frame_init(struct frame *frame, int nr)
{
	memset(frame, 0, sizeof(*frame));
	if (stable_array_init(&frame->storage, sizeof(struct sample), SERIES_TABLE_MAX) < 0)
		return -1;
	frame->samples = frame->storage.base;
	return frame_fit(frame, nr);
}

int frame_init_movable(struct frame *frame, int nr)
{
	memset(frame, 0, sizeof(*frame));
	frame->movable_cap = -1;
	if (frame_fit(frame, nr > 0 ? nr : 1) < 0)
		return -1;
	frame->nr = nr;
	return 0;
}

static int grow_movable(struct frame *frame, int nr)
{
	int cap = frame->movable_cap > 0 ? frame->movable_cap : 16;
	struct sample *grown;

	if (nr <= frame->movable_cap)
		return 0;
	if (nr > SERIES_TABLE_MAX)
		return -1;
	while (cap < nr)
		cap = cap > SERIES_TABLE_MAX / 2 ? SERIES_TABLE_MAX : cap * 2;
	grown = realloc(frame->samples, sizeof(struct sample) * (size_t)cap);
	if (!grown)
		return -1;
	frame->samples = grown;
	frame->movable_cap = cap;
	return 0;
}

int frame_fit(struct frame *frame, int nr)
{
	if (nr <= frame->nr)
		return 0;
	if (frame->movable_cap ? grow_movable(frame, nr) < 0
			       : stable_array_fit(&frame->storage, (size_t)(nr > 0 ? nr : 1)) < 0)
		return -1;
	memset(&frame->samples[frame->nr], 0, sizeof(struct sample) * (size_t)(nr - frame->nr));
	frame->nr = nr;
	return 0;
}

void frame_free(struct frame *frame)
{
	if (frame->movable_cap)
		free(frame->samples);
	stable_array_free(&frame->storage);
	memset(frame, 0, sizeof(*frame));
}

double sample_coverage(const struct sample *s)
{
	if (s->enabled_ns == 0)
		return 1.0;
	if (s->running_ns >= s->enabled_ns)
		return 1.0;
	return (double)s->running_ns / (double)s->enabled_ns;
}

void frame_accumulate(struct frame *total, const struct frame *frame, const struct series_table *table)
{
	if (total->seq == 0 && total->interval_ns == 0)
		for (int i = 0; i < total->nr; i++)
			total->samples[i].valid = true;
	for (int i = 0; i < total->nr && i < frame->nr; i++) {
		struct sample *t = &total->samples[i];
		const struct sample *f = &frame->samples[i];

		/* A gauge's total is its last sample, as when frames merge (an
		 * interval before its first value does not hide the later ones). */
		if (table->series[i].kind == SERIES_GAUGE) {
			t->value = f->value;
			t->valid = f->valid;
			continue;
		}
		if (!f->valid) {
			t->valid = false;
			continue;
		}
		{
			t->value += f->value;
			t->enabled_ns += f->enabled_ns;
			t->running_ns += f->running_ns;
		}
	}
	total->interval_ns += frame->interval_ns;
	total->time_ns = frame->time_ns;
	total->seq++;
}

void frame_copy(struct frame *dst, const struct frame *src)
{
	frame_fit(dst, src->nr);
	dst->seq = src->seq;
	dst->time_ns = src->time_ns;
	dst->interval_ns = src->interval_ns;
	memcpy(dst->samples, src->samples, sizeof(*dst->samples) * (size_t)(src->nr < dst->nr ? src->nr : dst->nr));
}

void frame_merge(struct frame *dst, const struct frame *next, const struct series_table *table)
{
	frame_fit(dst, next->nr);
	for (int i = 0; i < dst->nr && i < next->nr; i++) {
		struct sample *d = &dst->samples[i];
		const struct sample *n = &next->samples[i];

		if (table->series[i].kind == SERIES_GAUGE) {
			*d = *n;
			continue;
		}
		d->value += n->value;
		d->enabled_ns += n->enabled_ns;
		d->running_ns += n->running_ns;
		d->valid = d->valid && n->valid;
	}
	dst->interval_ns += next->interval_ns;
	dst->time_ns = next->time_ns;
	dst->seq = next->seq;
}
