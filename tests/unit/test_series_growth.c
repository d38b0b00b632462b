/* Series that appear and end during a run: the table and the frames grow in
 * place (pointers taken earlier stay valid), a retired index goes to a new
 * series only once every reader is done with the frame that retired it, a
 * recording (format v2) keeps series and retire records that replay into the
 * same frames, and a version 1 recording still reads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "metrics/aggregate.h"
#include "recording/recording.h"
#include "sampler/sampler.h"
#include "sampler/target.h"
#include "sources/recording_source.h"

static char dir[256];

static void labels_of(struct series_labels *l, int pid, const char *comm)
{
	series_labels_init(l);
	l->pid = pid;
	snprintf(l->comm, sizeof(l->comm), "%s", comm);
}

static void stable_storage(void)
{
	struct series_table t = { 0 };
	struct frame f;
	struct series_labels l;
	const struct series *first;
	const struct sample *samples;

	labels_of(&l, 7, "seven");
	CHECK_EQ_INT(series_table_add(&t, "proc.faults", "", 1.0, SERIES_COUNTER, NULL), 0);
	CHECK_EQ_INT(frame_init(&f, t.nr), 0);
	first = &t.series[0];
	samples = f.samples;
	/* 200000 series: far beyond any first allocation. */
	for (int i = 0; i < 200000; i++)
		if (series_table_add_live(&t, "proc.faults", "", 1.0, SERIES_COUNTER, &l) != i + 1) {
			CHECK_FAIL("series %d not appended", i + 1);
			break;
		}
	CHECK_EQ_INT(frame_fit(&f, t.nr), 0);
	CHECK(first == &t.series[0]);
	CHECK(samples == f.samples);
	CHECK_EQ_STR(t.series[0].name, "proc.faults");
	CHECK_EQ_STR(t.series[200000].labels.comm, "seven");
	CHECK_EQ_INT(f.nr, 200001);
	CHECK(!f.samples[200000].valid);
	f.samples[200000].value = 5; /* committed and writable */
	CHECK_EQ_INT(t.added.nr, 200000);
	frame_free(&f);
	series_table_free(&t);
}

/* Frames start at different offsets into their reservations (all aligned
 * alike): a queue of frames does not put every frame's first samples on the
 * same cache sets. Each still holds SERIES_TABLE_MAX samples, zeroed. */
static void frames_on_different_cache_sets(void)
{
	enum { N = 16 };
	struct frame f[N];

	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(frame_init(&f[i], 50), 0);
	for (int i = 0; i < N; i++) {
		CHECK_EQ_INT((int)((uintptr_t)f[i].samples % 64), 0);
		for (int k = 0; k < i; k++) {
			CHECK((uintptr_t)f[i].samples % 4096 != (uintptr_t)f[k].samples % 4096);
			CHECK((uintptr_t)f[i].samples % 65536 != (uintptr_t)f[k].samples % 65536);
		}
		CHECK(!f[i].samples[49].valid && f[i].samples[49].value == 0);
		f[i].samples[49].value = 7;
	}
	CHECK_EQ_INT(frame_fit(&f[N - 1], SERIES_TABLE_MAX), 0);
	CHECK(f[N - 1].samples[49].value == 7);
	CHECK(f[N - 1].samples[SERIES_TABLE_MAX - 1].value == 0);
	f[N - 1].samples[SERIES_TABLE_MAX - 1].value = 1; /* committed to the end */
	CHECK_EQ_INT(frame_fit(&f[N - 1], SERIES_TABLE_MAX + 1), -1);
	for (int i = 0; i < N; i++)
		frame_free(&f[i]);
}

static void reuse_waits_for_readers(void)
{
	struct series_table t = { 0 };
	struct series_labels a, b;
	struct series_changes c;
	struct frame f;

	labels_of(&a, 100, "alpha");
	labels_of(&b, 200, "beta");
	series_table_add(&t, "total", "", 1.0, SERIES_COUNTER, NULL);
	frame_init(&f, t.nr);
	CHECK(!series_table_changes(&t, &c));
	CHECK_EQ_INT(series_table_add_live(&t, "proc.faults", "", 1.0, SERIES_COUNTER, &a), 1);
	frame_fit(&f, t.nr);
	f.samples[1] = (struct sample){ .value = 9, .valid = true };
	CHECK(series_table_changes(&t, &c));
	CHECK_EQ_INT(c.nr_added, 1);
	CHECK_EQ_INT(c.added[0], 1);
	series_table_frame_done(&t, &f, 0);
	series_table_retire(&t, 1);
	CHECK(series_table_changes(&t, &c));
	CHECK_EQ_INT(c.nr_retired, 1);
	CHECK_EQ_INT(series_table_live(&t), 1);
	series_table_frame_done(&t, &f, 1);      /* frame 1 held its last value */
	CHECK(!f.samples[1].valid);
	CHECK_EQ_INT(t.series[1].state, SERIES_RETIRED);
	/* A reader still at frame 1: the index waits, the new series appends. */
	t.horizon = 1;
	CHECK_EQ_INT(series_table_add_live(&t, "proc.faults", "", 1.0, SERIES_COUNTER, &b), 2);
	CHECK_EQ_STR(t.series[1].labels.comm, "alpha");
	series_table_frame_done(&t, &f, 2);
	/* Every reader is past frame 1: the retired index is taken. */
	t.horizon = 2;
	CHECK_EQ_INT(series_table_add_live(&t, "proc.faults", "", 1.0, SERIES_COUNTER, &b), 1);
	CHECK_EQ_STR(t.series[1].labels.comm, "beta");
	CHECK_EQ_INT(t.nr, 3);
	CHECK_EQ_INT(series_table_live(&t), 3);
	frame_free(&f);
	series_table_free(&t);
}

/* A replayed source whose processes come and go:
 *   frame 0: the total only; 1: alpha starts; 2: beta starts;
 *   3: alpha's last frame; 4: gamma starts (takes alpha's indices); 5: the end. */
struct churn {
	struct series_table *table;
	int alpha[2], beta[2], gamma[2];
	int frame;
};

static void add_process(struct churn *c, int *at, int pid, const char *comm)
{
	struct series_labels l;

	labels_of(&l, pid, comm);
	at[0] = series_table_add_live(c->table, "proc.faults", "", 1.0, SERIES_COUNTER, &l);
	at[1] = series_table_add_live(c->table, "proc.threads", "", 1.0, SERIES_GAUGE, &l);
}

static void put(struct frame *f, int index, uint64_t value)
{
	f->samples[index] = (struct sample){ .value = value, .enabled_ns = 1000, .running_ns = 1000, .valid = true };
}

static int churn_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct churn *c = src->priv;

	c->table = table;
	src->first = table->nr;
	src->count = 1;
	return series_table_add(table, "proc.faults", "", 1.0, SERIES_COUNTER, NULL) < 0 ? -1 : 0;
}

static int churn_enable(struct source *src, struct ms_error *err) { return 0; }
static int churn_disable(struct source *src) { return 0; }
static void churn_close(struct source *src) { }

static int churn_sample(struct source *src, struct frame *f)
{
	struct churn *c = src->priv;
	int k = c->frame++;

	if (k == 1)
		add_process(c, c->alpha, 100, "alpha");
	if (k == 2)
		add_process(c, c->beta, 200, "beta");
	if (k == 4)
		add_process(c, c->gamma, 300, "gamma");
	frame_fit(f, c->table->nr);
	put(f, src->first, 1000u * (unsigned)k);
	if (k >= 1 && k <= 3) {
		put(f, c->alpha[0], 10u * (unsigned)k + 1);
		put(f, c->alpha[1], 1);
	}
	if (k >= 2) {
		put(f, c->beta[0], 10u * (unsigned)k + 2);
		put(f, c->beta[1], 2);
	}
	if (k >= 4) {
		put(f, c->gamma[0], 10u * (unsigned)k + 3);
		put(f, c->gamma[1], 3);
	}
	if (k == 3) {
		series_table_retire(c->table, c->alpha[0]);
		series_table_retire(c->table, c->alpha[1]);
	}
	f->time_ns = (uint64_t)(k + 1) * 1000;
	f->interval_ns = 1000;
	src->finished = k == 5;
	return 0;
}

static const struct source_ops churn_ops = {
	.name = "churn", .open = churn_open, .enable = churn_enable, .disable = churn_disable,
	.sample = churn_sample, .close = churn_close,
};

/* What a frame says, by (name, pid): "proc.faults/100=31 proc.threads/100=1 ...", plus its changes. */
static void describe(const struct series_table *t, const struct frame *f, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < f->nr; i++)
		if (f->samples[i].valid)
			len += (size_t)snprintf(out + len, size - len, "%s/%d/%s=%llu ", t->series[i].name,
						t->series[i].labels.pid, t->series[i].labels.comm,
						(unsigned long long)f->samples[i].value);
	if (f->changes) {
		len += (size_t)snprintf(out + len, size - len, "+");
		for (int i = 0; i < f->changes->nr_added; i++)
			len += (size_t)snprintf(out + len, size - len, "%s/%d ", t->series[f->changes->added[i]].name,
						t->series[f->changes->added[i]].labels.pid);
		len += (size_t)snprintf(out + len, size - len, "-");
		for (int i = 0; i < f->changes->nr_retired; i++)
			len += (size_t)snprintf(out + len, size - len, "%s/%d ",
						t->series[f->changes->retired[i]].name,
						t->series[f->changes->retired[i]].labels.pid);
	}
}

struct run {
	struct sampler *sampler;
	struct recording_writer *writer;
	const char *rotate_to;   /* before frame 4, go on in this file (ctl record FILE) */
	char seen[8][1024];
	int frames;
	int nr_at_end;
};

static int on_frame(const struct frame *f, bool last, void *ctx)
{
	struct run *r = ctx;
	struct ms_error err;

	if (r->frames < 8)
		describe(&r->sampler->table, f, r->seen[r->frames], sizeof(r->seen[0]));
	if (r->rotate_to && r->frames == 4) {
		struct recording_writer_options opt = { .path = r->rotate_to, .interval_ns = 1000, .continues = r->writer };
		struct recording_writer *next;

		CHECK_EQ_INT(recording_writer_open(&next, &opt, &r->sampler->table, &err), 0);
		CHECK_EQ_INT(recording_writer_close(r->writer, "continued in another file", &err), 0);
		r->writer = next;
	}
	r->frames++;
	r->nr_at_end = f->nr;
	if (r->writer && recording_writer_frame(r->writer, f, &err) < 0)
		CHECK_FAIL("%s", err.text);
	return 0;
}

static const char *const expected[6] = {
	"proc.faults/-1/=0 ",
	"proc.faults/-1/=1000 proc.faults/100/alpha=11 proc.threads/100/alpha=1 +proc.faults/100 proc.threads/100 -",
	"proc.faults/-1/=2000 proc.faults/100/alpha=21 proc.threads/100/alpha=1 proc.faults/200/beta=22 "
	"proc.threads/200/beta=2 +proc.faults/200 proc.threads/200 -",
	"proc.faults/-1/=3000 proc.faults/100/alpha=31 proc.threads/100/alpha=1 proc.faults/200/beta=32 "
	"proc.threads/200/beta=2 +-proc.faults/100 proc.threads/100 ",
	"proc.faults/-1/=4000 proc.faults/300/gamma=43 proc.threads/300/gamma=3 proc.faults/200/beta=42 "
	"proc.threads/200/beta=2 +proc.faults/300 proc.threads/300 -",
	"proc.faults/-1/=5000 proc.faults/300/gamma=53 proc.threads/300/gamma=3 proc.faults/200/beta=52 "
	"proc.threads/200/beta=2 ",
};

static void check_run(const struct run *r, const char *what)
{
	CHECK_EQ_INT(r->frames, 6);
	/* Gamma took alpha's indices: five series, not seven. */
	CHECK_EQ_INT(r->nr_at_end, 5);
	for (int i = 0; i < 6 && i < r->frames; i++)
		if (strcmp(r->seen[i], expected[i]))
			CHECK_FAIL("%s frame %d:\n  got  %s\n  want %s", what, i, r->seen[i], expected[i]);
}

static void record_and_replay(const char *name)
{
	struct churn churn = { 0 };
	struct source src = { .ops = &churn_ops, .priv = &churn, .replay = true };
	struct sampler s;
	struct target target;
	struct run run = { 0 };
	struct ms_error err = { "" };
	char path[512];
	struct recording_writer_options opt = { .interval_ns = 1000 };
	struct source replayed;

	memset(&target, 0, sizeof(target));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	opt.path = path;
	CHECK_EQ_INT(sampler_open(&s, &src, 1, &err), 0);
	run.sampler = &s;
	CHECK_EQ_INT(recording_writer_open(&run.writer, &opt, &s.table, &err), 0);
	CHECK_EQ_INT(sampler_run(&s, &target, 0, on_frame, &run, &err), 0);
	CHECK_EQ_INT(recording_writer_close(run.writer, "the end", &err), 0);
	check_run(&run, "live");
	sampler_close(&s);

	/* The file, line by line: series records before the frame they start
	 * with, retire records after the frame with the last values. */
	{
		struct recording_reader *rd;
		struct recording_record rec;
		struct frame f;
		char kinds[64] = "";
		size_t n = 0;

		CHECK_EQ_INT(recording_reader_open(&rd, path, &err), 0);
		CHECK_EQ_INT(recording_reader_header(rd)->version, RECORDING_FORMAT_VERSION);
		frame_init(&f, 0);
		while (recording_reader_next(rd, &rec, &f, &err) == 0 && rec.kind != RECORD_EOF && n < sizeof(kinds) - 1) {
			kinds[n++] = "FLCESR"[rec.kind];
			if (rec.kind == RECORD_RETIRE) {
				CHECK_EQ_INT(rec.nr_indices, 2);
				CHECK_EQ_INT(rec.indices[0], 1);
			}
			if (rec.kind == RECORD_SERIES && n > 5) {
				CHECK_EQ_INT(rec.indices[0], 1);  /* gamma reuses alpha's index */
				CHECK_EQ_STR(recording_reader_header(rd)->table.series[1].labels.comm, "gamma");
			}
		}
		CHECK_EQ_STR(kinds, "FSFSFFRSFFE");
		frame_free(&f);
		recording_reader_close(rd);
	}

	/* Replayed through the recording source: the same frames and changes. */
	memset(&run, 0, sizeof(run));
	CHECK_EQ_INT(recording_source_init(&replayed, path, &err), 0);
	CHECK_EQ_INT(sampler_open(&s, &replayed, 1, &err), 0);
	run.sampler = &s;
	CHECK_EQ_INT(sampler_run(&s, &target, 0, on_frame, &run, &err), 0);
	check_run(&run, "replayed");
	CHECK(recording_source_error(&replayed) == NULL);
	sampler_close(&s);
}

/* Processes whose whole life is one frame (format v5): frame k = 1, 2, 4
 * starts and ends pid 100+k, written as "brief" series with their value;
 * frame 3's process was multiplexed (times of its own), so it gets a place
 * of its own in the file (series and retire records). pid 50 lives throughout. */
struct flash {
	struct series_table *table;
	int frame, total, longer;
};

static int flash_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct flash *c = src->priv;

	c->table = table;
	src->first = table->nr;
	src->count = 1;
	c->total = series_table_add(table, "proc.faults", "", 1.0, SERIES_COUNTER, NULL);
	return c->total < 0 ? -1 : 0;
}

static int flash_sample(struct source *src, struct frame *f)
{
	struct flash *c = src->priv;
	struct series_labels l;
	int k = c->frame++, brief = -1;

	if (k == 0) {
		labels_of(&l, 50, "long");
		c->longer = series_table_add_live(c->table, "proc.faults", "", 1.0, SERIES_COUNTER, &l);
	}
	if (k >= 1 && k <= 4) {
		labels_of(&l, 100 + k, "flash");
		brief = series_table_add_live(c->table, "proc.faults", "", 1.0, SERIES_COUNTER, &l);
	}
	frame_fit(f, c->table->nr);
	put(f, c->total, 1000u * (unsigned)k);
	put(f, c->longer, 7u * (unsigned)k);
	if (brief >= 0) {
		put(f, brief, 10u * (unsigned)k + 5);
		if (k == 3)
			f->samples[brief].running_ns = 500;
		series_table_retire(c->table, brief);
	}
	f->time_ns = (uint64_t)(k + 1) * 1000;
	f->interval_ns = 1000;
	src->finished = k == 5;
	return 0;
}

static const struct source_ops flash_ops = {
	.name = "flash", .open = flash_open, .enable = churn_enable, .disable = churn_disable,
	.sample = flash_sample, .close = churn_close,
};

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* describe(), its values and changes each sorted: the same run whatever
 * indices the series had. */
static void describe_sorted(const struct series_table *t, const struct frame *f, char *out, size_t size)
{
	char text[1024], *tokens[64], *save = NULL;
	int n = 0;
	size_t len = 0;

	describe(t, f, text, sizeof(text));
	for (char *tok = strtok_r(text, " ", &save); tok && n < 64; tok = strtok_r(NULL, " ", &save))
		tokens[n++] = tok;
	qsort(tokens, (size_t)n, sizeof(tokens[0]), by_text);
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, size - len, "%s ", tokens[i]);
}

struct flash_run {
	struct sampler *sampler;
	struct recording_writer *writer;
	char seen[8][1024];
	int frames;
};

static int flash_frame(const struct frame *f, bool last, void *ctx)
{
	struct flash_run *r = ctx;
	struct ms_error err;

	if (r->frames < 8)
		describe_sorted(&r->sampler->table, f, r->seen[r->frames], sizeof(r->seen[0]));
	r->frames++;
	if (r->writer && recording_writer_frame(r->writer, f, &err) < 0)
		CHECK_FAIL("%s", err.text);
	return 0;
}

static void brief_series(void)
{
	struct flash flash = { 0 };
	struct source src = { .ops = &flash_ops, .priv = &flash, .replay = true }, replayed;
	struct sampler s;
	struct target target;
	struct flash_run live = { 0 }, again = { 0 };
	struct ms_error err = { "" };
	char path[512], line[4096], last_frame[4096] = "";
	struct recording_writer_options opt = { .interval_ns = 1000 };
	int briefs = 0, series_lines = 0, retire_lines = 0;
	FILE *in;

	memset(&target, 0, sizeof(target));
	snprintf(path, sizeof(path), "%s/brief.rec", dir);
	opt.path = path;
	CHECK_EQ_INT(sampler_open(&s, &src, 1, &err), 0);
	live.sampler = &s;
	CHECK_EQ_INT(recording_writer_open(&live.writer, &opt, &s.table, &err), 0);
	CHECK_EQ_INT(sampler_run(&s, &target, 0, flash_frame, &live, &err), 0);
	CHECK_EQ_INT(recording_writer_close(live.writer, "the end", &err), 0);
	sampler_close(&s);
	CHECK_EQ_INT(live.frames, 6);
	CHECK_EQ_STR(live.seen[2], "+proc.faults/102 -proc.faults/102 proc.faults/-1/=2000 proc.faults/102/flash=25 "
				   "proc.faults/50/long=14 ");

	/* The file: three brief series with their values, one series and
	 * retire record (frame 3's, multiplexed) besides pid 50's series record,
	 * and frame lines as long as the series alive at once (trailing nulls left out). */
	in = fopen(path, "r");
	CHECK(in != NULL);
	while (in && fgets(line, sizeof(line), in)) {
		if (!strncmp(line, "{\"brief\":", 9)) {
			briefs++;
			CHECK(strstr(line, "\"comm\":\"flash\",\"v\":") != NULL && !strstr(line, "\"kind\""));
		}
		series_lines += !strncmp(line, "{\"series\":", 10);
		retire_lines += !strncmp(line, "{\"retire\":", 10);
		if (!strncmp(line, "{\"t\":", 5))
			snprintf(last_frame, sizeof(last_frame), "%s", line);
		if (!strncmp(line, "{\"end\":", 7))
			CHECK_CONTAINS(line, "\"frames\":6,\"brief_series\":3}");
	}
	if (in)
		fclose(in);
	CHECK_EQ_INT(briefs, 3);
	CHECK_EQ_INT(series_lines, 2);
	CHECK_EQ_INT(retire_lines, 1);
	/* Frame 3's place is free again: a trailing null, left out. */
	CHECK_CONTAINS(last_frame, "\"v\":[5000,35]}");

	/* Replayed: every frame says what the live one did. */
	CHECK_EQ_INT(recording_source_init(&replayed, path, &err), 0);
	CHECK_EQ_INT(sampler_open(&s, &replayed, 1, &err), 0);
	again.sampler = &s;
	CHECK_EQ_INT(sampler_run(&s, &target, 0, flash_frame, &again, &err), 0);
	CHECK(recording_source_error(&replayed) == NULL);
	sampler_close(&s);
	CHECK_EQ_INT(again.frames, 6);
	for (int i = 0; i < 6; i++)
		if (strcmp(again.seen[i], live.seen[i]))
			CHECK_FAIL("replayed frame %d:\n  got  %s\n  want %s", i, again.seen[i], live.seen[i]);
}

/* Totals leave out the per-process series that repeat them. */
static void totals_skip_per_task(void)
{
	struct series_table t = { 0 };
	struct series_labels l, node1;
	struct aggregation a;
	struct aggr_cell cells[4];
	struct frame f;

	series_labels_init(&node1);
	node1.node = 1;
	series_table_add(&t, "proc.faults", "", 1.0, SERIES_COUNTER, NULL);
	series_table_add(&t, "proc.pages_alloc", "", 1.0, SERIES_COUNTER, &node1);
	labels_of(&l, 42, "p");
	series_table_add(&t, "proc.faults", "", 1.0, SERIES_COUNTER, &l);
	l.node = 1;
	series_table_add(&t, "proc.pages_alloc", "", 1.0, SERIES_COUNTER, &l);
	frame_init(&f, t.nr);
	put(&f, 0, 100);
	put(&f, 1, 30);
	put(&f, 2, 60);
	put(&f, 3, 20);
	for (int mode = AGGR_TOTAL; mode <= AGGR_NODE; mode += AGGR_NODE) {
		CHECK_EQ_INT(aggregation_init(&a, &t, mode, NULL), 0);
		CHECK_EQ_INT(a.nr_columns, 2);
		aggregation_clear(&a, cells);
		aggregation_add(&a, &f, cells);
		CHECK_EQ_U64(cells[0].raw, mode == AGGR_TOTAL ? 100 : 0);
		CHECK_EQ_U64(cells[a.nr_rows * a.nr_columns - 1].raw, 30);
		aggregation_free(&a);
	}
	frame_free(&f);
	series_table_free(&t);
}

/* ctl record FILE after frame 3: the new file's header lists alpha's indices
 * as retired places (not their old contents), and gamma takes them. */
static void continued_file(void)
{
	struct churn churn = { 0 };
	struct source src = { .ops = &churn_ops, .priv = &churn, .replay = true };
	struct sampler s;
	struct target target;
	struct run run = { 0 };
	struct ms_error err = { "" };
	char first[512], second[512];
	struct recording_writer_options opt = { .interval_ns = 1000 };
	struct recording_reader *rd;
	struct recording_record rec;
	struct frame f;
	int frames = 0;

	memset(&target, 0, sizeof(target));
	snprintf(first, sizeof(first), "%s/first.rec", dir);
	snprintf(second, sizeof(second), "%s/second.rec", dir);
	opt.path = first;
	run.rotate_to = second;
	CHECK_EQ_INT(sampler_open(&s, &src, 1, &err), 0);
	run.sampler = &s;
	CHECK_EQ_INT(recording_writer_open(&run.writer, &opt, &s.table, &err), 0);
	CHECK_EQ_INT(sampler_run(&s, &target, 0, on_frame, &run, &err), 0);
	CHECK_EQ_INT(recording_writer_close(run.writer, "the end", &err), 0);
	sampler_close(&s);
	if (recording_reader_open(&rd, second, &err) < 0) {
		CHECK_FAIL("%s", err.text);
		return;
	}
	const struct series_table *h = &recording_reader_header(rd)->table;

	CHECK_EQ_INT(h->nr, 5);
	CHECK_EQ_INT(h->series[1].state, SERIES_RETIRED);
	CHECK_EQ_INT(h->series[2].state, SERIES_RETIRED);
	CHECK_EQ_STR(h->series[3].labels.comm, "beta");
	frame_init(&f, 0);
	while (recording_reader_next(rd, &rec, &f, &err) == 0 && rec.kind != RECORD_EOF)
		frames += rec.kind == RECORD_FRAME;
	CHECK_EQ_STR(err.text, "");
	CHECK_EQ_INT(frames, 2);
	CHECK_EQ_STR(h->series[1].labels.comm, "gamma");
	frame_free(&f);
	recording_reader_close(rd);
}

/* A recording made before series could appear (format 1) reads as before. */
static void reads_version_1(void)
{
	char path[600];
	const char *fixtures = getenv("MEMSCOPE_TEST_FIXTURES");
	struct recording_reader *r;
	struct recording_record rec;
	struct ms_error err = { "" };
	struct frame f;
	uint64_t sums[5] = { 0 };
	int frames = 0;

	snprintf(path, sizeof(path), "%s/../recordings/v1-touchmem.rec", fixtures ? fixtures : "tests/fixtures/sysfs");
	if (recording_reader_open(&r, path, &err) < 0) {
		CHECK_FAIL("%s", err.text);
		return;
	}
	CHECK_EQ_INT(recording_reader_header(r)->version, 1);
	CHECK_EQ_INT(recording_reader_header(r)->table.nr, 5);
	CHECK_EQ_STR(recording_reader_header(r)->table.series[3].name, "page-faults");
	frame_init(&f, 0);
	while (recording_reader_next(r, &rec, &f, &err) == 0 && rec.kind != RECORD_EOF) {
		if (rec.kind != RECORD_FRAME)
			continue;
		frames++;
		for (int i = 0; i < 5; i++)
			sums[i] += f.samples[i].valid ? f.samples[i].value : 0;
	}
	/* Totals of the file, summed independently when it was added. */
	CHECK_EQ_INT(frames, 9);
	CHECK_EQ_U64(sums[0], 51252);
	CHECK_EQ_U64(sums[1], 51362);
	CHECK_EQ_U64(sums[3], 51250);
	CHECK_EQ_U64(sums[4], 167462879);
	CHECK(!recording_reader_cut(r, path, sizeof(path)));
	frame_free(&f);
	recording_reader_close(r);
}

static void expect_error(const char *content, const char *needle)
{
	char path[512];
	struct recording_reader *r;
	struct recording_record rec;
	struct ms_error err = { "" };
	struct frame f;
	int ret = 0;
	FILE *out;

	snprintf(path, sizeof(path), "%s/bad.rec", dir);
	out = fopen(path, "w");
	fputs(content, out);
	fclose(out);
	if (recording_reader_open(&r, path, &err) < 0) {
		CHECK_CONTAINS(err.text, needle);
		return;
	}
	frame_init(&f, 0);
	while ((ret = recording_reader_next(r, &rec, &f, &err)) == 0 && rec.kind != RECORD_EOF)
		;
	if (ret == 0)
		CHECK_FAIL("no error for: %s", content);
	else
		CHECK_CONTAINS(err.text, needle);
	frame_free(&f);
	recording_reader_close(r);
}

#define HEADER(v) "{\"format\":\"memscope-recording\",\"version\":" #v ",\"memscope\":\"0.1.0\",\"interval_ns\":1," \
	"\"series\":[{\"name\":\"a\"}]}\n"

static void bad_records(void)
{
	expect_error(HEADER(1) "{\"series\":[{\"i\":1,\"name\":\"b\"}],\"t\":1}\n",
		     "bad.rec:2: a series record in a version 1 recording");
	expect_error(HEADER(2) "{\"series\":[{\"name\":\"b\"}],\"t\":1}\n", "series 0 ('b'): \"i\" is missing");
	expect_error(HEADER(2) "{\"series\":[{\"i\":3,\"name\":\"b\"}],\"t\":1}\n",
		     "bad.rec:2: series 0 ('b') has \"i\" 3; a new series takes the next index (1)");
	expect_error(HEADER(2) "{\"series\":[{\"i\":0,\"name\":\"b\"}],\"t\":1}\n", "and that one is in use");
	expect_error(HEADER(2) "{\"retire\":[1],\"t\":1}\n", "\"retire\"[0] is not a live series");
	expect_error(HEADER(2) "{\"retire\":[\"0\"],\"t\":1}\n", "\"retire\"[0] is a string");
	expect_error(HEADER(2) "{\"t\":1,\"d\":1,\"v\":[1]}\n{\"retire\":[0],\"t\":1}\n{\"t\":2,\"d\":1,\"v\":[4]}\n",
		     "bad.rec:4: \"v\"[0] holds a value, but series 0 ('a') was retired");
	expect_error(HEADER(2) "{\"series\":[{\"i\":1,\"name\":\"b\"}],\"t\":1}\n{\"t\":1,\"d\":1,\"v\":[1]}\n",
		     "bad.rec:3: \"v\" holds 1 values; the series table has 2 here");
	expect_error(HEADER(2) "{\"series\":[{\"i\":1,\"name\":\"b\",\"pid\":-4}],\"t\":1}\n",
		     "\"pid\" is out of range");
	expect_error(HEADER(4) "{\"brief\":[{\"name\":\"b\",\"pid\":4,\"v\":1}],\"t\":1}\n",
		     "bad.rec:2: a \"brief\" series record in a version 4 recording; they exist from version 5 on");
	expect_error(HEADER(5) "{\"brief\":[{\"name\":\"b\",\"v\":1}],\"t\":1}\n",
		     "bad.rec:2: brief series 0 ('b') has no \"pid\" or \"tid\"");
	expect_error(HEADER(5) "{\"brief\":[{\"name\":\"b\",\"pid\":4}],\"t\":1}\n",
		     "bad.rec:2: brief series 0 ('b'): \"v\" is missing");
	expect_error(HEADER(5) "{\"brief\":[{\"name\":\"b\",\"pid\":4,\"v\":2}],\"t\":1}\n{\"t\":1,\"d\":1,\"v\":[1]}\n"
		     "{\"retire\":[1],\"t\":1}\n", "bad.rec:4: \"retire\"[0] is not a live series");
	expect_error(HEADER(5) "{\"brief\":[{\"name\":\"b\",\"pid\":4,\"v\":2}],\"t\":1}\n{\"t\":1,\"d\":1,\"v\":[1,2]}\n",
		     "bad.rec:3: \"v\" holds 2 values; the series table has 1 here");
	expect_error(HEADER(5) "{\"brief\":[{\"name\":\"b\",\"pid\":4,\"v\":2}],\"t\":1}\n{\"t\":1,\"d\":1,\"v\":[1]}\n"
		     "{\"end\":\"x\",\"frames\":1,\"brief_series\":2}\n",
		     "bad.rec:4: the end record counts 2 brief series, but the file holds 1");
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/memscope-test-series-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	stable_storage();
	frames_on_different_cache_sets();
	reuse_waits_for_readers();
	record_and_replay("churn.rec");
	record_and_replay("churn.rec.zst");
	reads_version_1();
	continued_file();
	brief_series();
	bad_records();
	totals_skip_per_task();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return check_summary("series_growth");
}
