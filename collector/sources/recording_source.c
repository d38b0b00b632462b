#include "sources/recording_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct recording_source {
	char *path;
	struct recording_reader *reader;
	struct frame next;                 /* read ahead, so the last frame is known as last */
	bool have_next;
	recording_record_fn on_record;
	void *on_record_ctx;
	struct ms_error error;
	bool failed;
};

/* The next frame into rs->next, passing labels and control events on. A
 * broken record ends the replay; recording_source_error() then says where. */
static void read_ahead(struct recording_source *rs)
{
	struct recording_record rec;

	rs->have_next = false;
	if (rs->failed)
		return;
	for (;;) {
		if (recording_reader_next(rs->reader, &rec, &rs->next, &rs->error) < 0) {
			rs->failed = true;
			return;
		}
		if (rec.kind == RECORD_FRAME) {
			rs->have_next = true;
			return;
		}
		/* Past the end record too: anything after it is damage. */
		if (rec.kind == RECORD_EOF)
			return;
		if (rec.kind == RECORD_END)
			continue;
		if (rs->on_record)
			rs->on_record(&rec, rs->on_record_ctx);
	}
}

static int rec_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct recording_source *rs = src->priv;
	const struct series_table *recorded = &recording_reader_header(rs->reader)->table;

	src->first = table->nr;
	src->count = recorded->nr;
	for (int i = 0; i < recorded->nr; i++) {
		const struct series *s = &recorded->series[i];
		int at = series_table_add(table, s->name, s->unit, s->scale, s->kind, &s->labels);

		if (at < 0 || (s->unavailable && !(table->series[at].unavailable = strdup(s->unavailable)))) {
			ms_error_set(err, "out of memory");
			return -1;
		}
	}
	if (frame_init(&rs->next, recorded->nr) < 0) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	return 0;
}

static int rec_enable(struct source *src, struct ms_error *err)
{
	read_ahead(src->priv);
	return 0;
}

static int rec_disable(struct source *src)
{
	return 0;
}

static int rec_sample(struct source *src, struct frame *frame)
{
	struct recording_source *rs = src->priv;

	if (!rs->have_next) {
		/* No frame at all (an empty recording): an empty last frame. */
		for (int i = 0; i < src->count; i++)
			frame->samples[src->first + i].valid = false;
		frame->interval_ns = 0;
		src->finished = true;
		return 0;
	}
	memcpy(frame->samples + src->first, rs->next.samples, sizeof(struct sample) * (size_t)src->count);
	frame->time_ns = rs->next.time_ns;
	frame->interval_ns = rs->next.interval_ns;
	read_ahead(rs);
	if (!rs->have_next)
		src->finished = true;
	return 0;
}

static void rec_close(struct source *src)
{
	struct recording_source *rs = src->priv;

	if (!rs)
		return;
	recording_reader_close(rs->reader);
	frame_free(&rs->next);
	free(rs->path);
	free(rs);
	src->priv = NULL;
}

static const struct source_ops recording_source_ops = {
	.name = "recording",
	.open = rec_open,
	.enable = rec_enable,
	.disable = rec_disable,
	.sample = rec_sample,
	.close = rec_close,
};

int recording_source_create(struct source *src, const char *path, struct ms_error *err)
{
	struct recording_source *rs = calloc(1, sizeof(*rs));

	memset(src, 0, sizeof(*src));
	if (!rs || !(rs->path = strdup(path))) {
		free(rs);
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (recording_reader_open(&rs->reader, path, err) < 0) {
		free(rs->path);
		free(rs);
		return -1;
	}
	src->ops = &recording_source_ops;
	src->priv = rs;
	src->replay = true;
	return 0;
}

const struct recording_header *recording_source_header(const struct source *src)
{
	const struct recording_source *rs = src->priv;

	return recording_reader_header(rs->reader);
}

void recording_source_on_record(struct source *src, recording_record_fn fn, void *ctx)
{
	struct recording_source *rs = src->priv;

	rs->on_record = fn;
	rs->on_record_ctx = ctx;
}

bool recording_source_cut(const struct source *src, char *message, size_t size)
{
	const struct recording_source *rs = src->priv;

	return !rs->failed && recording_reader_cut(rs->reader, message, size);
}


const char *recording_source_error(const struct source *src)
{
	const struct recording_source *rs = src->priv;

	return rs->failed ? rs->error.text : NULL;
}
