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

int series_table_add(struct series_table *table, const char *name, const char *unit, double scale,
		     enum series_kind kind, const struct series_labels *labels)
{
	struct series *s;

	if (table->nr == table->capacity) {
		int capacity = table->capacity ? table->capacity * 2 : 16;
		struct series *grown = realloc(table->series, sizeof(*grown) * (size_t)capacity);

		if (!grown)
			return -1;
		table->series = grown;
		table->capacity = capacity;
	}
	s = &table->series[table->nr];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		return -1;
	snprintf(s->unit, sizeof(s->unit), "%s", unit ? unit : "");
	s->scale = scale;
	s->kind = kind;
	if (labels)
		s->labels = *labels;
	else
		series_labels_init(&s->labels);
	return table->nr++;
}

void series_table_free(struct series_table *table)
{
	for (int i = 0; i < table->nr; i++) {
		free(table->series[i].name);
		free(table->series[i].unavailable);
	}
	free(table->series);
	memset(table, 0, sizeof(*table));
}

int frame_init(struct frame *frame, int nr)
{
	memset(frame, 0, sizeof(*frame));
	frame->samples = calloc(nr > 0 ? (size_t)nr : 1, sizeof(*frame->samples));
	if (!frame->samples)
		return -1;
	frame->nr = nr;
	return 0;
}

void frame_free(struct frame *frame)
{
	free(frame->samples);
	memset(frame, 0, sizeof(*frame));
}

double sample_scaled(const struct sample *s)
{
	/* Multiplexed counters are extrapolated to the whole enabled time, as perf does. */
	if (s->running_ns == 0 || s->running_ns >= s->enabled_ns)
		return (double)s->value;
	return (double)s->value * (double)s->enabled_ns / (double)s->running_ns;
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

		if (!f->valid) {
			t->valid = false;
			continue;
		}
		if (table->series[i].kind == SERIES_GAUGE) {
			t->value = f->value;
		} else {
			t->value += f->value;
			t->enabled_ns += f->enabled_ns;
			t->running_ns += f->running_ns;
		}
	}
	total->interval_ns += frame->interval_ns;
	total->time_ns = frame->time_ns;
	total->seq++;
}
