#include "sinks/sample_sink.h"
#include "util/report.h"

#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "metrics/damon_hot_share.h"
#include "sampler/sample_batch.h"
#include "sources/damon/damon_regions.h"

struct sample_sink {
	struct sample_sink_options opt;
	struct sample_decoders *decoders;
	struct sample_attributor attrib;
	struct sample_report report;
	struct c2c_report c2c;
	struct damon_hot_share hot;           /* DAMON's virtual regions: the objects' hot share */
	struct sample_output out;
	struct sample_item_storage storage;   /* the item being read from a batch */
	char events[512];
	char title[300];
	bool first_listed;
	bool attrib_ready;
	bool failed;                          /* out of memory: the report would be partial */
	const char *command_name;
};

bool recording_has_samples(const struct recording_header *h)
{
	return h->sampling && json_array_size(json_object_get(h->sampling, "events")) > 0;
}

static int json_int_or(const json_t *o, const char *key, int fallback)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int)json_integer_value(v) : fallback;
}

static void sample_sink_free(struct sample_sink *ss)
{
	if (!ss)
		return;
	sample_report_free(&ss->report);
	c2c_report_free(&ss->c2c);
	damon_hot_share_free(&ss->hot);
	if (ss->attrib_ready)
		sample_attributor_free(&ss->attrib);
	sample_decoders_free(ss->decoders);
	free(ss);
}

static int build(struct sample_sink *ss, const struct recording_header *h, struct ms_error *err)
{
	const struct sample_sink_options *o = &ss->opt;
	struct catalog *cat = NULL;
	const json_t *events = h->sampling ? json_object_get(h->sampling, "events") : NULL;
	const json_t *cpu = h->sampling ? json_object_get(h->sampling, "cpu") : NULL;
	struct decode_cpu dcpu = { json_int_or(cpu, "family", -1), json_int_or(cpu, "model", -1),
				   json_int_or(cpu, "implementer", -1), json_int_or(cpu, "part", -1) };
	size_t len = 0;

	if (!recording_has_samples(h)) {
		const char *why = h->sampling ? json_string_value(json_object_get(h->sampling, "unavailable")) : NULL;

		if (why)
			ms_error_set(err, "%s has no samples: sampling could not start when it was recorded: %s", o->file,
				     why);
		else
			ms_error_set(err, "%s has no samples: it was recorded without --sample (memscope record --sample "
				     "mem -- CMD records them)", o->file);
		return -1;
	}
	/* The decode tables live beside the catalog this memscope reads. */
	if (catalog_load_default(&cat, err) < 0 || sample_decoders_load(&ss->decoders, cat->dir, err) < 0) {
		catalog_free(cat);
		return -1;
	}
	catalog_free(cat);
	if (sample_attributor_init(&ss->attrib, ss->decoders, h->has_topology ? &h->topo : NULL, &dcpu) < 0)
		goto oom;
	ss->attrib_ready = true;
	for (size_t i = 0; i < json_array_size(events); i++) {
		const json_t *e = json_array_get(events, i);
		const char *name = json_string_value(json_object_get(e, "event"));
		const char *decode = json_string_value(json_object_get(e, "decode"));

		if (!name || sample_attributor_event(&ss->attrib, name, decode) < 0) {
			ms_error_set(err, "%s:1: \"sampling\".\"events\"[%zu] needs an \"event\" name (at most %d events)",
				     o->file, i, ATTRIB_EVENTS_MAX);
			return -1;
		}
		len += (size_t)snprintf(ss->events + len, len < sizeof(ss->events) ? sizeof(ss->events) - len : 0,
					"%s%s", i ? ", " : "", name);
	}
	if (sample_report_init(&ss->report, o->keys, o->nr_keys, &ss->attrib.strings) < 0 ||
	    c2c_report_init(&ss->c2c) < 0)
		goto oom;
	snprintf(ss->title, sizeof(ss->title), "%s", h->target[0] ? h->target : "?");
	ss->out = (struct sample_output){ o->out, o->format, o->top, ss->title, o->file, ss->events, ss->decoders };
	ss->first_listed = true;
	return 0;
oom:
	ms_error_set(err, "out of memory");
	return -1;
}

static int sample_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct sample_sink *ss = sink->priv;

	(void)err;
	ss->command_name = setup->command_name;
	if (ss->opt.list)
		sample_output_list_begin(&ss->out);
	return 0;
}

static int sample_frame(struct sink *sink, const struct sink_frame *f)
{
	(void)sink;
	(void)f;
	return 0;
}

static int take(struct sample_sink *ss, const struct sample_item *item)
{
	struct attributed_sample s;
	int got;

	if (item->kind == SAMPLE_ITEM_LOST) {
		sample_report_lost(&ss->report, item);
		return 0;
	}
	if (item->kind == SAMPLE_ITEM_DAMON_REGION)
		return ss->opt.nr_keys ? damon_hot_share_add(&ss->hot, item->damon) : 0;
	got = sample_attribute(&ss->attrib, item, &s);
	if (got <= 0)
		return got;
	if (ss->opt.nr_keys && sample_report_add(&ss->report, &s) < 0)
		return -1;
	if (ss->opt.c2c && c2c_report_add(&ss->c2c, &s) < 0)
		return -1;
	if (ss->opt.list)
		sample_output_list_sample(&ss->out, &s, &ss->first_listed);
	if (ss->opt.on_sample)
		ss->opt.on_sample(&s, (double)s.sample->time_ns / 1e9, ss->opt.ctx);
	return 0;
}

static int sample_samples(struct sink *sink, const struct sample_batch *batch)
{
	struct sample_sink *ss = sink->priv;
	struct sample_item item;
	size_t at = 0;

	if (ss->failed)
		return 0;
	while (sample_batch_next(batch, &at, &ss->storage, &item)) {
		if (take(ss, &item) < 0) {
			ss->failed = true;
			return 1;  /* a report of part of the samples as if it were all of them is wrong */
		}
	}
	return 0;
}

static void sample_end(struct sink *sink, const struct sink_end *end)
{
	struct sample_sink *ss = sink->priv;

	if (ss->failed) {
		ms_warn("out of memory while attributing samples: no sample report");
		return;
	}
	if (end->samples_dropped)
		ms_warn("%llu sample items were not attributed (the report fell behind)", (unsigned long long)end->samples_dropped);
	if (symbolizer_unavailable(ss->attrib.space.sz))
		ms_warn("code and data are shown without symbols: %s",
			symbolizer_unavailable(ss->attrib.space.sz));
	if (ss->opt.list)
		sample_output_list_end(&ss->out);
	if (ss->opt.nr_keys) {
		sample_report_hot_shares(&ss->report, &ss->hot);
		sample_report_sort(&ss->report);
		sample_output_report(&ss->out, &ss->report);
	}
	if (ss->opt.c2c) {
		c2c_report_sort(&ss->c2c);
		sample_output_c2c(&ss->out, &ss->c2c);
	}
	fflush(ss->opt.out);
}

static void sample_close(struct sink *sink)
{
	sample_sink_free(sink->priv);
	sink->priv = NULL;
}

bool sample_sink_failed(const struct sink *sink)
{
	const struct sample_sink *ss = sink->priv;

	return ss && ss->failed;
}

static const struct sink_ops sample_sink_ops = {
	.name = "samples",
	.open = sample_open,
	.frame = sample_frame,
	.samples = sample_samples,
	.end = sample_end,
	.close = sample_close,
};

int sample_sink_init(struct sink *sink, const struct recording_header *h, const struct sample_sink_options *o,
		     struct ms_error *err)
{
	struct sample_sink *ss = calloc(1, sizeof(*ss));
	int hot_pct;

	memset(sink, 0, sizeof(*sink));
	if (!ss) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	ss->opt = *o;
	/* The run's --damon-hot when it was given, else its default. */
	hot_pct = h->sampling ? json_int_or(h->sampling, "damon_hot_pct", DAMON_DEFAULT_HOT_PCT) : DAMON_DEFAULT_HOT_PCT;
	damon_hot_share_init(&ss->hot, hot_pct >= 1 && hot_pct <= 100 ? (unsigned)hot_pct : DAMON_DEFAULT_HOT_PCT);
	if (build(ss, h, err) < 0) {
		sample_sink_free(ss);
		return -1;
	}
	sink->ops = &sample_sink_ops;
	sink->priv = ss;
	return 0;
}
