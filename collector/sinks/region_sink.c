#include "sinks/region_sink.h"

#include <stdlib.h>
#include <string.h>

#include "sinks/stat_table.h"
#include "util/csv.h"
#include "util/number_format.h"
#include "util/report.h"

/* The scopes a region is shown for: the whole system, then each node and
 * socket the recording's series or metrics have. */
enum { SCOPE_TOTAL, SCOPE_NODES, SCOPE_SOCKETS, NR_SCOPES };
static const enum aggr_mode scope_modes[NR_SCOPES] = { AGGR_TOTAL, AGGR_NODE, AGGR_SOCKET };

struct region {
	char name[256];
	bool open;
	uint64_t begin_ns;         /* of the open call */
	uint64_t time_ns;          /* of the closed calls, summed */
	long calls;                /* closed calls (begin .. end) */
	long frames;               /* frames counted in it */
	long ignored_begins;       /* begins while already open */
	long ignored_ends;         /* ends while not open */
	struct frame total;        /* its frames added up: the metrics' input */
	struct aggr_cell *cells[NR_SCOPES];
};

struct region_sink {
	struct region_sink_options opt;
	const struct sink_setup *setup;
	struct aggregation aggr[NR_SCOPES];
	struct stat_table table[NR_SCOPES];
	bool shown[NR_SCOPES];     /* a table of this scope is printed */
	bool inited[NR_SCOPES];
	struct metric_values *values;
	struct region *regions;
	int nr_regions, cap_regions;
	uint64_t last_frame_ns;    /* time of the latest frame */
	bool failed;               /* out of memory: said at the end */
};

static int region_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct region_sink *rs = sink->priv;

	rs->setup = setup;
	for (int k = 0; k < NR_SCOPES; k++) {
		if (aggregation_init(&rs->aggr[k], setup->table, scope_modes[k], setup->topo) < 0)
			goto oom;
		rs->inited[k] = true;
		if (stat_table_init(&rs->table[k], &rs->aggr[k], NULL, 0, setup->plan, setup->engine, NULL, NULL,
				    0) < 0)
			goto oom;
		if (setup->topo && stat_table_set_row_cpus(&rs->table[k], setup->topo) < 0)
			goto oom;
		/* A node or socket table of one row with no key: the recording
		 * has nothing per node (socket). */
		rs->shown[k] = k == SCOPE_TOTAL || !(rs->table[k].nr_rows == 1 && rs->table[k].row_keys[0] < 0);
	}
	if (setup->engine && !(rs->values = metric_values_new(setup->engine)))
		goto oom;
	return 0;
oom:
	ms_error_set(err, "out of memory");
	return -1;
}

static struct region *find_region(struct region_sink *rs, const char *name)
{
	struct region *r;

	for (int i = 0; i < rs->nr_regions; i++)
		if (!strcmp(rs->regions[i].name, name))
			return &rs->regions[i];
	if (rs->nr_regions == rs->cap_regions) {
		int cap = rs->cap_regions ? rs->cap_regions * 2 : 8;
		struct region *grown = realloc(rs->regions, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return NULL;
		rs->regions = grown;
		rs->cap_regions = cap;
	}
	r = &rs->regions[rs->nr_regions];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	if (frame_init(&r->total, 0) < 0)
		return NULL;
	for (int k = 0; k < NR_SCOPES; k++) {
		size_t cells = (size_t)(rs->aggr[k].nr_rows * rs->aggr[k].nr_columns);

		if (!(r->cells[k] = calloc(cells + 1, sizeof(struct aggr_cell)))) {
			for (int j = 0; j < k; j++)
				free(r->cells[j]);
			frame_free(&r->total);
			return NULL;
		}
		aggregation_clear(&rs->aggr[k], r->cells[k]);
	}
	rs->nr_regions++;
	return r;
}

static void region_add_frame(struct region_sink *rs, struct region *r, const struct frame *f)
{
	int before = r->total.nr;

	if (frame_fit(&r->total, f->nr) < 0) {
		rs->failed = true;
		return;
	}
	/* A series that starts inside the region counts from its start. */
	if (r->frames > 0)
		for (int i = before; i < r->total.nr; i++)
			r->total.samples[i] = (struct sample){ .valid = true };
	frame_accumulate(&r->total, f, rs->setup->table);
	for (int k = 0; k < NR_SCOPES; k++)
		aggregation_add(&rs->aggr[k], f, r->cells[k]);
	r->frames++;
}

static int region_frame(struct sink *sink, const struct sink_frame *f)
{
	struct region_sink *rs = sink->priv;

	for (int i = 0; i < rs->nr_regions; i++)
		if (rs->regions[i].open)
			region_add_frame(rs, &rs->regions[i], f->frame);
	rs->last_frame_ns = f->frame->time_ns;
	return 0;
}

static int region_event(struct sink *sink, const struct sink_event *ev)
{
	struct region_sink *rs = sink->priv;
	struct region *r;

	if (ev->kind != SINK_EVENT_PHASE_BEGIN && ev->kind != SINK_EVENT_PHASE_END)
		return 0;
	if (!(r = find_region(rs, ev->text))) {
		rs->failed = true;
		return 0;
	}
	if (ev->kind == SINK_EVENT_PHASE_BEGIN) {
		if (r->open) {
			r->ignored_begins++;
			return 0;
		}
		r->open = true;
		r->begin_ns = ev->time_ns;
	} else {
		if (!r->open) {
			r->ignored_ends++;
			return 0;
		}
		r->open = false;
		r->calls++;
		r->time_ns += ev->time_ns > r->begin_ns ? ev->time_ns - r->begin_ns : 0;
	}
	return 0;
}

/* A region's time: its closed calls, and an open one up to the last frame. */
static double region_seconds(const struct region_sink *rs, const struct region *r)
{
	uint64_t t = r->time_ns;

	if (r->open && rs->last_frame_ns > r->begin_ns)
		t += rs->last_frame_ns - r->begin_ns;
	return (double)t / 1e9;
}

static void fill_tables(struct region_sink *rs, struct region *r)
{
	const struct sink_setup *setup = rs->setup;

	/* The engine reads every series of the table (at the end, its length
	 * is final): those the region never saw are not counted. */
	if (setup->engine && frame_fit(&r->total, setup->table->nr) == 0)
		metric_engine_compute(setup->engine, &r->total, rs->values);
	for (int k = 0; k < NR_SCOPES; k++) {
		if (!rs->shown[k])
			continue;
		/* No frame inside: nothing was read for it, which is not a zero. */
		if (r->frames == 0)
			for (int i = 0; i < rs->aggr[k].nr_rows * rs->aggr[k].nr_columns; i++)
				r->cells[k][i].valid = false;
		stat_table_set_events(&rs->table[k], &rs->aggr[k], r->cells[k]);
		if (setup->engine)
			stat_table_set_metrics(&rs->table[k], setup->plan, setup->engine, rs->values);
	}
}

/* What a region's line says besides its numbers. */
static void region_notes(const struct region *r, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (r->open)
		n += (size_t)snprintf(buf + n, size - n, "; still open at the end (no 'phase end %s'): counted up to "
				      "the last frame", r->name);
	if (n < size && r->ignored_begins)
		n += (size_t)snprintf(buf + n, size - n, "; %ld begin%s while already open ignored", r->ignored_begins,
				      r->ignored_begins == 1 ? "" : "s");
	if (n < size && r->ignored_ends)
		n += (size_t)snprintf(buf + n, size - n, "; %ld end%s while not open ignored", r->ignored_ends,
				      r->ignored_ends == 1 ? "" : "s");
	if (n < size && r->frames == 0 && (r->calls || r->open))
		snprintf(buf + n, size - n, "; no frame ended inside it (record it with memscope record, which "
			 "reads the counters at each phase marker)");
}

/* ---- Text: LIKWID's layout, events then metrics by scope ---- */

struct text_layout {
	int name_width;
	int nr_columns;            /* scope columns over every shown table */
	int width[64];
	const struct stat_table *table[64];
	int row[64];
};

static void rule(FILE *out, const struct text_layout *l)
{
	fputc('+', out);
	for (int i = 0; i < l->name_width + 2; i++)
		fputc('-', out);
	for (int c = 0; c < l->nr_columns; c++) {
		fputc('+', out);
		for (int i = 0; i < l->width[c] + 2; i++)
			fputc('-', out);
	}
	fputs("+\n", out);
}

static void column_name(const struct stat_table *t, int c, char *buf, size_t size)
{
	if (t->units[c][0])
		snprintf(buf, size, "%s (%s)", t->names[c], t->units[c]);
	else
		snprintf(buf, size, "%s", t->names[c]);
}

static void text_block(FILE *out, const struct text_layout *l, const char *title, int from, int to)
{
	const struct stat_table *t0 = l->table[0];

	if (from >= to)
		return;
	fprintf(out, "| %-*s ", l->name_width, title);
	for (int c = 0; c < l->nr_columns; c++) {
		char label[64];

		stat_table_row_label(l->table[c], l->row[c], label, sizeof(label));
		fprintf(out, "| %*s ", l->width[c], label);
	}
	fputs("|\n", out);
	rule(out, l);
	for (int col = from; col < to; col++) {
		char name[320];

		column_name(t0, col, name, sizeof(name));
		fprintf(out, "| %-*s ", l->name_width, name);
		for (int c = 0; c < l->nr_columns; c++) {
			const struct stat_table *t = l->table[c];
			char cell[128];

			stat_cell_text(&t->cells[l->row[c] * t->nr_columns + col], cell, sizeof(cell));
			fprintf(out, "| %*s ", l->width[c], cell);
		}
		fputs("|\n", out);
	}
	rule(out, l);
}

static void text_region(struct region_sink *rs, const struct region *r)
{
	FILE *out = rs->opt.out;
	const struct stat_table *t0 = &rs->table[SCOPE_TOTAL];
	struct text_layout l = { .name_width = 6 };
	char notes[1024];

	for (int k = 0; k < NR_SCOPES; k++) {
		const struct stat_table *t = &rs->table[k];

		if (!rs->shown[k] || t->nr_columns != t0->nr_columns)
			continue;
		for (int row = 0; row < t->nr_rows && l.nr_columns < 64; row++) {
			char label[64];
			int w;

			stat_table_row_label(t, row, label, sizeof(label));
			w = (int)strlen(label);
			for (int col = 0; col < t->nr_columns; col++) {
				char cell[128];
				int cw;

				stat_cell_text(&t->cells[row * t->nr_columns + col], cell, sizeof(cell));
				cw = (int)strlen(cell);
				w = cw > w ? cw : w;
			}
			l.width[l.nr_columns] = w < 12 ? 12 : w;
			l.table[l.nr_columns] = t;
			l.row[l.nr_columns++] = row;
		}
	}
	for (int col = 0; col < t0->nr_columns; col++) {
		char name[320];
		int w;

		column_name(t0, col, name, sizeof(name));
		w = (int)strlen(name);
		l.name_width = w > l.name_width ? w : l.name_width;
	}
	region_notes(r, notes, sizeof(notes));
	fprintf(out, "Region %s: %ld call%s, %.6f s, %ld frame%s%s\n", r->name, r->calls, r->calls == 1 ? "" : "s",
		region_seconds(rs, r), r->frames, r->frames == 1 ? "" : "s", notes);
	rule(out, &l);
	text_block(out, &l, "Event", 0, t0->nr_event_columns);
	text_block(out, &l, "Metric", t0->nr_event_columns, t0->nr_columns);
	fputc('\n', out);
}

/* ---- CSV: one line per region, scope and event or metric ---- */

static void csv_region(struct region_sink *rs, const struct region *r, bool header)
{
	char calls[32], seconds[64], frames[32];

	if (header) {
		const char *h[] = { "region", "calls", "time", "frames", "open", "scope", "kind", "name", "value",
				    "unit", "coverage" };

		csv_write_row(rs->opt.out, ",", h, 11);
	}
	snprintf(calls, sizeof(calls), "%ld", r->calls);
	number_plain(seconds, sizeof(seconds), region_seconds(rs, r));
	snprintf(frames, sizeof(frames), "%ld", r->frames);
	for (int k = 0; k < NR_SCOPES; k++) {
		const struct stat_table *t = &rs->table[k];

		if (!rs->shown[k])
			continue;
		for (int row = 0; row < t->nr_rows; row++) {
			char label[64];

			stat_table_row_label(t, row, label, sizeof(label));
			for (int col = 0; col < t->nr_columns; col++) {
				const struct stat_cell *cell = &t->cells[row * t->nr_columns + col];
				char value[64], coverage[32] = "";
				const char *f[] = { r->name, calls, seconds, frames, r->open ? "yes" : "no", label,
						    col < t->nr_event_columns ? "event" : "metric", t->names[col], value,
						    t->units[col], coverage };

				if (cell->status != CELL_OK) {
					snprintf(value, sizeof(value), "%s", stat_cell_status_text(cell->status));
				} else {
					if (cell->integer)
						snprintf(value, sizeof(value), "%llu", (unsigned long long)cell->raw);
					else
						number_plain(value, sizeof(value), cell->value);
					snprintf(coverage, sizeof(coverage), "%.4f", cell->coverage);
				}
				csv_write_row(rs->opt.out, ",", f, 11);
			}
		}
	}
}

/* ---- JSON: one object per region ---- */

static void json_region(struct region_sink *rs, const struct region *r)
{
	json_t *obj = json_object(), *rows = json_array();
	char *text;

	json_object_set_new(obj, "type", json_string("region"));
	json_object_set_new(obj, "region", json_string(r->name));
	json_object_set_new(obj, "calls", json_integer(r->calls));
	json_object_set_new(obj, "time", json_real(region_seconds(rs, r)));
	json_object_set_new(obj, "frames", json_integer(r->frames));
	json_object_set_new(obj, "open", json_boolean(r->open));
	json_object_set_new(obj, "ignored_begins", json_integer(r->ignored_begins));
	json_object_set_new(obj, "ignored_ends", json_integer(r->ignored_ends));
	for (int k = 0; k < NR_SCOPES; k++) {
		json_t *part;

		if (!rs->shown[k])
			continue;
		part = stat_json_rows(&rs->table[k]);
		json_array_extend(rows, part);
		json_decref(part);
	}
	json_object_set_new(obj, "rows", rows);
	text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(NUMBER_DIGITS));
	if (text) {
		fprintf(rs->opt.out, "%s\n", text);
		free(text);
	}
	json_decref(obj);
}

static void region_end(struct sink *sink, const struct sink_end *end)
{
	struct region_sink *rs = sink->priv;
	FILE *out = rs->opt.out;

	(void)end;
	flockfile(out);
	if (rs->failed)
		ms_warn("out of memory: the regions below may miss frames");
	if (rs->nr_regions == 0 && rs->opt.format == STAT_TEXT)
		fprintf(out, "No regions: the recording has no phase markers (the marker API's memscope_phase_begin/"
			"end, memscope ctl phase begin|end NAME, or 'phase begin NAME' on the FIFO)\n");
	for (int i = 0; i < rs->nr_regions; i++) {
		struct region *r = &rs->regions[i];

		fill_tables(rs, r);
		if (rs->opt.format == STAT_JSON)
			json_region(rs, r);
		else if (rs->opt.format == STAT_CSV)
			csv_region(rs, r, i == 0);
		else
			text_region(rs, r);
	}
	fflush(out);
	funlockfile(out);
}

static void region_close(struct sink *sink)
{
	struct region_sink *rs = sink->priv;

	if (!rs)
		return;
	for (int i = 0; i < rs->nr_regions; i++) {
		frame_free(&rs->regions[i].total);
		for (int k = 0; k < NR_SCOPES; k++)
			free(rs->regions[i].cells[k]);
	}
	free(rs->regions);
	for (int k = 0; k < NR_SCOPES; k++)
		if (rs->inited[k]) {
			aggregation_free(&rs->aggr[k]);
			stat_table_free(&rs->table[k]);
		}
	metric_values_free(rs->values);
	free(rs);
	sink->priv = NULL;
}

static const struct sink_ops region_sink_ops = {
	.name = "regions",
	.open = region_open,
	.frame = region_frame,
	.event = region_event,
	.end = region_end,
	.close = region_close,
};

int region_sink_init(struct sink *sink, const struct region_sink_options *opt, struct ms_error *err)
{
	struct region_sink *rs = calloc(1, sizeof(*rs));

	memset(sink, 0, sizeof(*sink));
	if (!rs) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	rs->opt = *opt;
	sink->ops = &region_sink_ops;
	sink->priv = rs;
	sink->queue_length = 32;
	return 0;
}
