#include "sources/recording_source.h"
#include "sources/registry.h"
#include "util/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct recording_source {
	char *path;
	struct recording_reader *reader;
	struct frame next;                 /* read ahead, so the last frame is known as last */
	bool have_next;
	/* Series records (format v2): the recorded index of a series -> its
	 * index in the session's table (which may reuse indices differently). */
	struct series_table *table;
	int *map;
	int map_cap;
	int *pending;                      /* recorded indices that start with the next frame */
	int nr_pending, pending_cap;
	int *retiring;                     /* recorded indices whose last frame is the one delivered */
	int nr_retiring, retiring_cap;
	recording_record_fn on_record;
	void *on_record_ctx;
	/* Labels and control records read ahead: they are passed on when the
	 * frame before them has gone out (at the next sample, or at the end). */
	struct recording_record *held;
	int nr_held, held_cap;
	struct ms_error error;
	bool failed;
};

static int push(int **list, int *nr, int *cap, int value)
{
	if (array_grow_int(list, cap, *nr + 1, sizeof(**list)) < 0)
		return -1;
	(*list)[(*nr)++] = value;
	return 0;
}

static int map_to(struct recording_source *rs, int recorded, int index)
{
	if (recorded >= rs->map_cap) {
		int cap = rs->map_cap ? rs->map_cap : 64;
		int *grown;

		while (cap <= recorded)
			cap *= 2;
		grown = realloc(rs->map, sizeof(int) * (size_t)cap);
		if (!grown)
			return -1;
		for (int i = rs->map_cap; i < cap; i++)
			grown[i] = -1;
		rs->map = grown;
		rs->map_cap = cap;
	}
	rs->map[recorded] = index;
	return 0;
}

/* Series and retire records met while reading ahead: added series wait for
 * the frame they start with; retired ones end with the frame just read. */
static int note_changes(struct recording_source *rs, const struct recording_record *rec)
{
	for (int i = 0; i < rec->nr_indices; i++) {
		int ret = rec->kind == RECORD_SERIES
				  ? push(&rs->pending, &rs->nr_pending, &rs->pending_cap, rec->indices[i])
				  : push(&rs->retiring, &rs->nr_retiring, &rs->retiring_cap, rec->indices[i]);

		if (ret < 0) {
			ms_error_set(&rs->error, "%s: out of memory", rs->path);
			return -1;
		}
	}
	return 0;
}

static int hold(struct recording_source *rs, const struct recording_record *rec)
{
	if (rs->nr_held == rs->held_cap) {
		int cap = rs->held_cap ? 2 * rs->held_cap : 8;
		struct recording_record *grown = realloc(rs->held, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		rs->held = grown;
		rs->held_cap = cap;
	}
	rs->held[rs->nr_held++] = *rec;
	return 0;
}

/* Labels and control records between the frame that went out and the next. */
static void pass_held(struct recording_source *rs)
{
	for (int i = 0; i < rs->nr_held; i++)
		rs->on_record(&rs->held[i], rs->on_record_ctx);
	rs->nr_held = 0;
}

/* The next frame into rs->next, holding labels and control events met. A
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
		if (rec.kind == RECORD_SERIES || rec.kind == RECORD_RETIRE) {
			if (note_changes(rs, &rec) < 0) {
				rs->failed = true;
				return;
			}
			continue;
		}
		/* Sample items point into the reader's storage, which the next
		 * record overwrites: passed on at once (the pipeline keeps them
		 * in order after the frame that went out before them). */
		if (rec.kind == RECORD_SAMPLE_ITEM) {
			if (rs->on_record)
				rs->on_record(&rec, rs->on_record_ctx);
			continue;
		}
		if (rs->on_record && hold(rs, &rec) < 0) {
			ms_error_set(&rs->error, "%s: out of memory", rs->path);
			rs->failed = true;
			return;
		}
	}
}

static int rec_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct recording_source *rs = src->priv;
	const struct series_table *recorded = &recording_reader_header(rs->reader)->table;

	src->first = table->nr;
	src->count = recorded->nr;
	rs->table = table;
	for (int i = 0; i < recorded->nr; i++) {
		const struct series *s = &recorded->series[i];
		int at = series_table_add(table, s->name, s->unit, s->scale, s->kind, &s->labels);

		if (at < 0 || (s->unavailable && !(table->series[at].unavailable = strdup(s->unavailable))) ||
		    map_to(rs, i, at) < 0) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		/* A file continued mid-run lists indices that were waiting for reuse. */
		if (s->state == SERIES_RETIRED &&
		    push(&rs->retiring, &rs->nr_retiring, &rs->retiring_cap, i) < 0) {
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
	/* Those after the last frame. */
	pass_held(src->priv);
	return 0;
}

/* The series that start with this frame join the session's table. */
static int add_pending(struct recording_source *rs, struct frame *frame)
{
	const struct series_table *recorded = &recording_reader_header(rs->reader)->table;

	for (int i = 0; i < rs->nr_pending; i++) {
		const struct series *s = &recorded->series[rs->pending[i]];
		int at = series_table_add_live(rs->table, s->name, s->unit, s->scale, s->kind, &s->labels);

		if (at < 0 || map_to(rs, rs->pending[i], at) < 0) {
			ms_error_set(&rs->error, "%s: %s", rs->path, at < 0 ? "the series table is full or memory ran "
				     "out" : "out of memory");
			rs->failed = true;
			return -1;
		}
	}
	rs->nr_pending = 0;
	return frame_fit(frame, rs->table->nr);
}

static int rec_sample(struct source *src, struct frame *frame)
{
	struct recording_source *rs = src->priv;

	/* What came before this frame, after the one before it went out. */
	pass_held(rs);
	if (!rs->have_next) {
		/* No frame at all (an empty recording): an empty last frame. */
		for (int i = 0; i < rs->map_cap; i++)
			if (rs->map[i] >= 0)
				frame->samples[rs->map[i]].valid = false;
		frame->interval_ns = 0;
		src->finished = true;
		return 0;
	}
	if (rs->nr_pending && add_pending(rs, frame) < 0) {
		src->finished = true;
		return -1;
	}
	for (int i = 0; i < rs->next.nr; i++) {
		int at = i < rs->map_cap ? rs->map[i] : -1;

		if (at >= 0)
			frame->samples[at] = rs->next.samples[i];
	}
	frame->time_ns = rs->next.time_ns;
	frame->interval_ns = rs->next.interval_ns;
	read_ahead(rs);
	/* Retire records after this frame: its values were their last. */
	for (int i = 0; i < rs->nr_retiring; i++) {
		int recorded = rs->retiring[i];

		if (recorded < rs->map_cap && rs->map[recorded] >= 0) {
			series_table_retire(rs->table, rs->map[recorded]);
			rs->map[recorded] = -1;
		}
	}
	rs->nr_retiring = 0;
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
	free(rs->map);
	free(rs->pending);
	free(rs->retiring);
	free(rs->held);
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

int recording_source_init(struct source *src, const char *path, struct ms_error *err)
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

int recording_source_fd(const struct source *src)
{
	const struct recording_source *rs = src->priv;

	return recording_reader_fd(rs->reader);
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

/* ---- The registry kind: whole recordings (--input), not names ---- */

static bool recording_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	(void)name;
	return false;    /* chosen by --input FILE; it brings its own series */
}

static int recording_kind_create(const struct source_kind *kind, struct source *src,
				 const struct source_request *req, struct ms_error *err)
{
	if (recording_source_init(src, req->path, err) < 0)
		return -1;
	src->kind = kind;
	return 0;
}

const struct source_kind recording_source_kind = {
	.name = "recording",
	.description = "the frames of a recording (--input FILE, report; docs/recording-format.md)",
	.mode = SOURCE_RECORDING,
	.claims = recording_claims,
	.create = recording_kind_create,
};
