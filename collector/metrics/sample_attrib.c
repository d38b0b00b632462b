#include "metrics/sample_attrib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sample_attributor_init(struct sample_attributor *a, const struct sample_decoders *decoders,
			   const struct topology *topo, const struct decode_cpu *cpu)
{
	memset(a, 0, sizeof(*a));
	strtab_init(&a->strings);
	a->decoders = decoders;
	a->topo = topo;
	if (cpu)
		a->cpu = *cpu;
	else
		a->cpu = (struct decode_cpu){ -1, -1, -1, -1 };
	return address_space_init(&a->space, &a->strings);
}

void sample_attributor_free(struct sample_attributor *a)
{
	address_space_free(&a->space);
	strtab_free(&a->strings);
}

int sample_attributor_event(struct sample_attributor *a, const char *name, const char *decode)
{
	if (a->nr_events == ATTRIB_EVENTS_MAX)
		return -1;
	a->events[a->nr_events].name = strtab_intern(&a->strings, name);
	a->events[a->nr_events].decode = strtab_intern(&a->strings, decode ? decode : "");
	if (!a->events[a->nr_events].name || !a->events[a->nr_events].decode)
		return -1;
	a->nr_events++;
	return 0;
}

const char *attrib_remote_text(int remote)
{
	return remote > 0 ? "remote" : remote == 0 ? "local" : "?";
}

/* The data source of a sample: the kernel's, or composed from the vendor's
 * record by its decode table. */
static uint64_t data_source(struct sample_attributor *a, const struct attrib_event *ev, const struct event_sample *s,
			    uint64_t *weight, const char **error)
{
	const struct decode_table *t;
	struct decode_input in;
	struct ms_error err = { "" };
	uint64_t data_src = s->data_src;
	bool has_weight;

	*error = NULL;
	if (!a->decoders || !ev || !ev->decode[0] || !strcmp(ev->decode, "data-src") ||
	    !strcmp(ev->decode, "page-fault") || !s->raw_size)
		return data_src;
	if (!(t = sample_decoders_find(a->decoders, ev->decode))) {
		snprintf(a->decode_error, sizeof(a->decode_error), "no decode table '%s' in this memscope's catalog",
			 ev->decode);
		*error = a->decode_error;
		return data_src;
	}
	if (decode_input_from_raw(t, s->raw, s->raw_size, &in, &err) < 0) {
		snprintf(a->decode_error, sizeof(a->decode_error), "%s", err.text);
		*error = a->decode_error;
		return data_src;
	}
	decode_table_run(t, &in, &a->cpu, &data_src, weight, &has_weight);
	return data_src;
}

int sample_attribute(struct sample_attributor *a, const struct sample_item *item, struct attributed_sample *out)
{
	const struct event_sample *s = item->sample;
	const struct attrib_event *ev;
	const struct cpu_place *place;
	uint64_t t;
	int first = 0;

	switch (item->kind) {
	case SAMPLE_ITEM_MAP:
		return address_space_map(&a->space, item->map);
	case SAMPLE_ITEM_TASK:
		return address_space_task(&a->space, item->task);
	case SAMPLE_ITEM_MAPS_UNREADABLE:
		return address_space_maps_unreadable(&a->space, item->pid, item->why);
	case SAMPLE_ITEM_ALLOC:
		return address_space_alloc(&a->space, item->time_ns, item->alloc);
	case SAMPLE_ITEM_LOST:
	case SAMPLE_ITEM_DAMON_REGION:
		return 0;
	case SAMPLE_ITEM_SAMPLE:
		break;
	}
	memset(out, 0, sizeof(*out));
	out->sample = s;
	t = s->time_ns;
	ev = s->event >= 0 && s->event < a->nr_events ? &a->events[s->event] : NULL;
	out->event = ev ? ev->name : "?";
	if (s->user) {
		address_space_code(&a->space, s->pid, t, s->ip, false, &out->code);
	} else {
		out->code = (struct code_site){ "[kernel]", "[kernel]", "[kernel]", "", 0, false };
	}
	/* The user call chain starts at the sampled instruction itself. */
	if (s->nr_callchain && s->callchain[0] == s->ip)
		first = 1;
	for (int i = first; i < s->nr_callchain && out->nr_chain < ATTRIB_CHAIN_MAX; i++)
		address_space_code(&a->space, s->pid, t, s->callchain[i], true, &out->chain[out->nr_chain++]);
	if (s->addr)
		address_space_data(&a->space, s->pid, t, s->addr, &out->data);
	else
		out->data = (struct data_object){ "[no data address]", MAPPING_ANON, false, 0, 0 };
	out->comm = address_space_comm(&a->space, s->pid);
	out->node = s->node;
	place = a->topo && s->cpu >= 0 ? topology_cpu(a->topo, s->cpu) : NULL;
	out->cpu_node = place ? place->node : -1;
	out->weight = s->weight;
	out->data_src = data_source(a, ev, s, &out->weight, &out->decode_error);
	out->remote = -1;
	out->access.remote = -1;
	if (a->decoders && out->data_src) {
		sample_decode_access(a->decoders, out->data_src, &out->access);
		if (out->access.remote >= 0) {
			out->remote = out->access.remote;
			out->remote_from_hardware = true;
		}
	}
	if (out->remote < 0 && out->node >= 0 && out->cpu_node >= 0)
		out->remote = out->node != out->cpu_node;
	return 1;
}
