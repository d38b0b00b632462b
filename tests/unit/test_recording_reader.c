/* Recordings: what the writer writes the reader gives back exactly (plain and
 * zstd), and damaged files - cut at every byte, bits flipped, wrong types,
 * wrong versions, garbage lines, unknown metrics - end in a precise error or
 * a "cut" notice, never a crash (this test runs under ASan/UBSan in the
 * sanitizer build). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "recording/recording.h"

#define NR_FRAMES 20

static char dir[256];

static void path_in_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void make_table(struct series_table *t)
{
	struct series_labels l;

	memset(t, 0, sizeof(*t));
	series_labels_init(&l);
	series_table_add(t, "page-faults", "", 1.0, SERIES_COUNTER, &l);
	l.cpu = 1;
	l.node = 0;
	l.socket = 0;
	snprintf(l.instance, sizeof(l.instance), "hisi_sccl1_ddrc0");
	series_table_add(t, "hisi_sccl1_ddrc0/flux_rd/", "B", 32.0, SERIES_COUNTER, &l);
	series_labels_init(&l);
	series_table_add(t, "task-clock", "msec", 1e-6, SERIES_COUNTER, &l);
	series_table_add(t, "proc.rss", "", 1.0, SERIES_GAUGE, &l);
	t->series[3].unavailable = strdup("not counted here");
}

/* Frame i: series 1 multiplexed on odd frames, series 2 not read on frame 5. */
static void fill_frame(struct frame *f, int i)
{
	f->time_ns = (uint64_t)(i + 1) * 100000000ull;
	f->interval_ns = 100000000ull;
	for (int s = 0; s < f->nr; s++) {
		f->samples[s].value = (uint64_t)(i * 1000 + s) * 7919ull;
		f->samples[s].enabled_ns = f->samples[s].running_ns = f->interval_ns;
		f->samples[s].valid = true;
	}
	if (i % 2) {
		f->samples[1].enabled_ns = 100000123;
		f->samples[1].running_ns = 25000000;
	}
	if (i == 5)
		f->samples[2].valid = false;
	f->samples[3].valid = false;
}

static int write_recording(const char *path, bool compress, bool close_it)
{
	struct recording_writer_options opt = {
		.path = path, .compress = compress, .flush_frames = 4, .target = "'test'",
		.interval_ns = 100000000ull, .time_origin_ns = 0,
	};
	struct series_table table;
	struct recording_writer *w;
	struct ms_error err = { "" };
	struct frame f;
	int ret = 0;

	make_table(&table);
	frame_init(&f, table.nr);
	if (recording_writer_open(&w, &opt, &table, &err) < 0) {
		fprintf(stderr, "%s\n", err.text);
		return -1;
	}
	for (int i = 0; i < NR_FRAMES && !ret; i++) {
		fill_frame(&f, i);
		ret = recording_writer_frame(w, &f, &err);
		if (i == 3)
			ret |= recording_writer_label(w, 450000000ull, "warm \"up\" done", NULL, &err);
		if (i == 7)
			ret |= recording_writer_label(w, 850000000ull, "solve", "begin", &err);
		if (i == 9)
			ret |= recording_writer_control(w, 1050000000ull, "interval", 50000000ull, &err);
	}
	if (close_it)
		ret |= recording_writer_close(w, "the command exited", &err);
	else
		recording_writer_abandon(w);
	frame_free(&f);
	series_table_free(&table);
	return ret;
}

/* Read everything; count frames and labels. -1 with err on the first error. */
static int read_all(const char *path, int *frames, int *labels, bool *cut, struct ms_error *err)
{
	struct recording_reader *r;
	struct recording_record rec;
	struct frame f;
	char message[600];
	int ret = 0;

	*frames = *labels = 0;
	*cut = false;
	if (recording_reader_open(&r, path, err) < 0)
		return -1;
	frame_init(&f, recording_reader_header(r)->table.nr);
	for (;;) {
		if (recording_reader_next(r, &rec, &f, err) < 0) {
			ret = -1;
			break;
		}
		if (rec.kind == RECORD_EOF)
			break;
		*frames += rec.kind == RECORD_FRAME;
		*labels += rec.kind == RECORD_LABEL;
	}
	if (ret == 0)
		*cut = recording_reader_cut(r, message, sizeof(message));
	frame_free(&f);
	recording_reader_close(r);
	return ret;
}

static void round_trip(const char *name, bool compress)
{
	char path[512], message[600];
	struct recording_reader *r;
	struct recording_record rec;
	struct ms_error err = { "" };
	const struct recording_header *h;
	struct frame f, want;
	int frames = 0, labels = 0, controls = 0, ends = 0;

	path_in_dir(path, sizeof(path), name);
	CHECK_EQ_INT(write_recording(path, compress, true), 0);
	CHECK(recording_file_looks_like(path));
	if (recording_reader_open(&r, path, &err) < 0) {
		CHECK_FAIL("%s", err.text);
		return;
	}
	h = recording_reader_header(r);
	CHECK_EQ_INT(h->version, RECORDING_FORMAT_VERSION);
	CHECK_EQ_STR(h->target, "'test'");
	CHECK_EQ_U64(h->interval_ns, 100000000ull);
	CHECK_EQ_INT(h->table.nr, 4);
	CHECK_EQ_STR(h->table.series[1].name, "hisi_sccl1_ddrc0/flux_rd/");
	CHECK_EQ_STR(h->table.series[1].labels.instance, "hisi_sccl1_ddrc0");
	CHECK_EQ_INT(h->table.series[1].labels.cpu, 1);
	CHECK_EQ_INT(h->table.series[0].labels.cpu, LABEL_NONE);
	CHECK_NEAR(h->table.series[1].scale, 32.0, 0);
	CHECK_NEAR(h->table.series[2].scale, 1e-6, 0);
	CHECK_EQ_STR(h->table.series[2].unit, "msec");
	CHECK(h->table.series[3].kind == SERIES_GAUGE);
	CHECK_EQ_STR(h->table.series[3].unavailable, "not counted here");
	frame_init(&f, h->table.nr);
	frame_init(&want, h->table.nr);
	for (;;) {
		if (recording_reader_next(r, &rec, &f, &err) < 0) {
			CHECK_FAIL("%s", err.text);
			break;
		}
		if (rec.kind == RECORD_EOF)
			break;
		if (rec.kind == RECORD_LABEL) {
			CHECK_EQ_STR(rec.text, labels ? "solve" : "warm \"up\" done");
			CHECK_EQ_STR(rec.phase, labels ? "begin" : "");
			CHECK_EQ_U64(rec.t_ns, labels ? 850000000ull : 450000000ull);
			labels++;
		} else if (rec.kind == RECORD_CONTROL) {
			CHECK_EQ_STR(rec.control, "interval");
			CHECK_EQ_U64(rec.interval_ns, 50000000ull);
			controls++;
		} else if (rec.kind == RECORD_END) {
			CHECK_EQ_STR(rec.reason, "the command exited");
			ends++;
		} else {
			fill_frame(&want, frames);
			CHECK_EQ_U64(f.time_ns, want.time_ns);
			CHECK_EQ_U64(f.interval_ns, want.interval_ns);
			for (int s = 0; s < f.nr; s++) {
				CHECK_EQ_INT(f.samples[s].valid, want.samples[s].valid);
				if (!want.samples[s].valid)
					continue;
				CHECK_EQ_U64(f.samples[s].value, want.samples[s].value);
				CHECK_EQ_U64(f.samples[s].enabled_ns, want.samples[s].enabled_ns);
				CHECK_EQ_U64(f.samples[s].running_ns, want.samples[s].running_ns);
			}
			frames++;
		}
	}
	CHECK_EQ_INT(frames, NR_FRAMES);
	CHECK_EQ_INT(labels, 2);
	CHECK_EQ_INT(controls, 1);
	CHECK_EQ_INT(ends, 1);
	CHECK(!recording_reader_cut(r, message, sizeof(message)));
	frame_free(&f);
	frame_free(&want);
	recording_reader_close(r);
}

static char *slurp(const char *path, size_t *size)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	*size = (size_t)read(fd, buf, (size_t)st.st_size);
	close(fd);
	return buf;
}

static void spit(const char *path, const char *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (write(fd, buf, size) != (ssize_t)size)
		CHECK_FAIL("cannot write %s", path);
	close(fd);
}

/* Cut at every byte: the header cut is an error; after it, frames read grow
 * with the cut and the reader says the tail was cut. */
static void truncated(const char *name, bool compress)
{
	char path[512], cut_path[512];
	size_t size, header_end;
	char *full;
	int last_frames = 0, errors = 0;

	path_in_dir(path, sizeof(path), name);
	path_in_dir(cut_path, sizeof(cut_path), "cut.rec");
	CHECK_EQ_INT(write_recording(path, compress, true), 0);
	full = slurp(path, &size);
	header_end = compress ? 0 : (size_t)(strchr(full, '\n') - full) + 1;
	for (size_t len = 0; len < size; len++) {
		struct ms_error err = { "" };
		int frames, labels;
		bool cut;

		spit(cut_path, full, len);
		if (read_all(cut_path, &frames, &labels, &cut, &err) < 0) {
			errors++;
			if (!compress && len < header_end)
				CHECK(strstr(err.text, len ? "header is cut" : "empty") != NULL);
			continue;
		}
		CHECK(cut);
		CHECK(frames >= last_frames);
		last_frames = frames;
	}
	CHECK(!compress || errors > 0);
	CHECK(last_frames >= NR_FRAMES - 1);
	{
		/* The message names the frame where it stopped. */
		struct recording_reader *r;
		struct recording_record rec;
		struct ms_error err = { "" };
		struct frame f;
		char message[600];

		if (!compress) {
			spit(cut_path, full, size - 30);
			CHECK_EQ_INT(recording_reader_open(&r, cut_path, &err), 0);
			frame_init(&f, recording_reader_header(r)->table.nr);
			do
				CHECK_EQ_INT(recording_reader_next(r, &rec, &f, &err), 0);
			while (rec.kind != RECORD_EOF && !err.text[0]);
			CHECK(recording_reader_cut(r, message, sizeof(message)));
			CHECK_CONTAINS(message, "ends in the middle of line 25, after frame 20");
			CHECK_CONTAINS(message, "20 frames read");
			frame_free(&f);
			recording_reader_close(r);
			/* Cut inside the last frame. */
			spit(cut_path, full, size - 60);
			CHECK_EQ_INT(recording_reader_open(&r, cut_path, &err), 0);
			frame_init(&f, recording_reader_header(r)->table.nr);
			do
				CHECK_EQ_INT(recording_reader_next(r, &rec, &f, &err), 0);
			while (rec.kind != RECORD_EOF && !err.text[0]);
			CHECK(recording_reader_cut(r, message, sizeof(message)));
			CHECK_CONTAINS(message, "ends in the middle of frame 20 (line 24)");
			CHECK_CONTAINS(message, "19 frames read");
			frame_free(&f);
			recording_reader_close(r);
		}
	}
	free(full);
}

/* A recorder killed before its end record: readable, and said to be cut. */
static void killed(bool compress)
{
	char path[512];
	int frames, labels;
	bool cut;
	struct ms_error err = { "" };

	path_in_dir(path, sizeof(path), compress ? "killed.rec.zst" : "killed.rec");
	CHECK_EQ_INT(write_recording(path, compress, false), 0);
	CHECK_EQ_INT(read_all(path, &frames, &labels, &cut, &err), 0);
	CHECK(cut);
	/* Flushed every 4 frames and at each label/control event: after the
	 * control event of frame 10, frames 11-14 and 15-18 were flushed; the
	 * last two were still in memory when the writer was "killed". */
	CHECK_EQ_INT(frames, 18);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Flip bits, delete and duplicate bytes: every outcome is an error message
 * or a successful read; ASan/UBSan catch the rest. */
static void mutated(const char *name, bool compress, int rounds)
{
	char path[512], bad_path[512];
	size_t size;
	char *full;
	int errors = 0;

	path_in_dir(path, sizeof(path), name);
	path_in_dir(bad_path, sizeof(bad_path), "mutated.rec");
	CHECK_EQ_INT(write_recording(path, compress, true), 0);
	full = slurp(path, &size);
	for (int round = 0; round < rounds; round++) {
		char *copy = malloc(size + 16);
		size_t len = size;
		struct ms_error err = { "" };
		int frames, labels, flips = 1 + (int)(next_random() % 3);
		bool cut;

		memcpy(copy, full, size);
		for (int k = 0; k < flips; k++) {
			size_t at = (size_t)(next_random() % len);

			switch (next_random() % 3) {
			case 0:
				copy[at] ^= (char)(1u << (next_random() % 8));
				break;
			case 1:
				memmove(copy + at, copy + at + 1, len - at - 1);
				len--;
				break;
			default:
				memmove(copy + at + 1, copy + at, len - at);
				len++;
				break;
			}
		}
		spit(bad_path, copy, len);
		if (read_all(bad_path, &frames, &labels, &cut, &err) < 0) {
			errors++;
			CHECK(err.text[0] != '\0');
			CHECK(strstr(err.text, "mutated.rec") != NULL);
		}
		free(copy);
	}
	/* Most mutations must be noticed (a flip inside a digit is not). */
	CHECK(errors > rounds / 4);
	free(full);
}

static void expect_error(const char *content, const char *needle)
{
	char path[512];
	int frames, labels;
	bool cut;
	struct ms_error err = { "" };

	path_in_dir(path, sizeof(path), "bad.rec");
	spit(path, content, strlen(content));
	if (read_all(path, &frames, &labels, &cut, &err) == 0) {
		CHECK_FAIL("no error for: %s", content);
		return;
	}
	CHECK_CONTAINS(err.text, needle);
}

#define HEADER "{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.1.0\",\"interval_ns\":1000," \
	"\"series\":[{\"name\":\"a\",\"kind\":\"counter\"},{\"name\":\"b\",\"kind\":\"gauge\"}]}\n"

static void bad_inputs(void)
{
	expect_error("", "the file is empty");
	expect_error("hello\n", "bad.rec:1:5: not JSON");
	expect_error("[1,2]\n", "bad.rec:1: the line is an array");
	expect_error("{\"format\":\"memscope-replay\",\"version\":1}\n", "use --replay");
	expect_error("{\"format\":\"memscope-recording\",\"version\":6,\"memscope\":\"9\"}\n",
		     "format version 6 is newer than this memscope reads (up to 5)");
	expect_error("{\"format\":\"memscope-recording\",\"version\":\"1\"}\n", "\"version\" is a string");
	expect_error("{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.1.0\",\"interval_ns\":-5,"
		     "\"series\":[]}\n", "\"interval_ns\" is negative");
	expect_error("{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.1.0\",\"interval_ns\":1,"
		     "\"series\":{}}\n", "\"series\" is an object");
	expect_error("{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.1.0\",\"interval_ns\":1,"
		     "\"series\":[{\"name\":\"a\",\"cpu\":\"0\"}]}\n", "series 0: \"cpu\" is a string");
	expect_error("{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.1.0\",\"interval_ns\":1,"
		     "\"series\":[{\"name\":\"a\",\"kind\":\"histogram\"}]}\n", "kind 'histogram'");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,\"2\"]}\n", "bad.rec:2: \"v\"[1] (series 'b') is a string");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1]}\n", "bad.rec:2: \"v\" holds 1 values; the series table has 2");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,-2]}\n", "is negative");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,2.5]}\n", "is a fractional number");
	expect_error(HEADER "{\"t\":5,\"d\":1,\"v\":[1,2]}\n{\"t\":4,\"d\":1,\"v\":[1,2]}\n", "goes back in time");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,5,9]]}\n", "0 <= running_ns <= enabled_ns");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[7,9,5]]}\n", "\"m\"[0]");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,2]}\nxx garbage\n{\"t\":2,\"d\":1,\"v\":[1,2]}\n",
		     "bad.rec:3:2: not JSON");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,2]}\n{\"what\":1}\n", "bad.rec:3: not a record");
	expect_error(HEADER "{\"label\":5,\"t\":1}\n", "\"label\" is an integer; expected a string");
	expect_error(HEADER "{\"control\":\"explode\",\"t\":1}\n", "control event 'explode'");
	expect_error(HEADER "{\"t\":1,\"d\":1,\"v\":[1,2]}\n{\"end\":\"x\",\"frames\":3}\n", "counts 3 frames");
	expect_error(HEADER "{\"end\":\"x\",\"frames\":0}\n{\"t\":1,\"d\":1,\"v\":[1,2]}\n", "after the end record");
	expect_error("{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.9.0\",\"interval_ns\":1,"
		     "\"series\":[],\"catalog\":{\"metrics\":[{\"name\":\"mem.teleport_bw\"}]}}\n",
		     "names metric 'mem.teleport_bw', which this memscope");
	expect_error("{\"format\":\"memscope-recording\",\"version\":1,\"memscope\":\"0.1.0\",\"interval_ns\":1,"
		     "\"series\":[],\"host\":{\"cpus\":[[0,0,0]],\"nodes\":[0]}}\n", "[cpu, core, die, socket, node]");
}

/* ---- Frame lines: the direct scan and the JSON library agree ---- */

/* Read HEADER + line + end record; on success the frame's samples go to out
 * (2 series). Returns 0 or -1 with err. */
static int read_one_frame(const char *line, struct sample out[2], uint64_t *t, uint64_t *d, struct ms_error *err)
{
	char path[512], text[8192];
	struct recording_reader *r;
	struct recording_record rec;
	struct frame f;
	int ret = -1, frames = 0;

	path_in_dir(path, sizeof(path), "one.rec");
	snprintf(text, sizeof(text), "%s%s\n{\"end\":\"x\",\"frames\":1}\n", HEADER, line);
	spit(path, text, strlen(text));
	if (recording_reader_open(&r, path, err) < 0)
		return -1;
	frame_init(&f, 2);
	for (;;) {
		if (recording_reader_next(r, &rec, &f, err) < 0)
			break;
		if (rec.kind == RECORD_FRAME) {
			memcpy(out, f.samples, 2 * sizeof(*out));
			*t = f.time_ns;
			*d = f.interval_ns;
			frames++;
		}
		if (rec.kind == RECORD_EOF) {
			ret = frames == 1 ? 0 : -1;
			break;
		}
	}
	frame_free(&f);
	recording_reader_close(r);
	return ret;
}

/* Every malformed shape of a frame line is an error naming FILE:LINE. */
static void malformed_frame_lines(void)
{
	static const struct { const char *line, *needle; } cases[] = {
		{ "{\"t\":1,\"d\":1,\"v\":[1,2]", "bad.rec:2:" },                       /* no closing brace */
		{ "{\"t\":1,\"d\":1,\"v\":[1,2]}}", "bad.rec:2:" },                     /* one too many */
		{ "{\"t\":1,\"d\":1,\"v\":[1,2]}x", "bad.rec:2:" },                     /* trailing garbage */
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],}", "bad.rec:2:" },                     /* trailing comma */
		{ "{\"t\":1,\"d\":1,\"v\":[1,2,]}", "bad.rec:2:" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,,2]}", "bad.rec:2:" },
		{ "{\"t\":1,\"d\":1,\"v\":[1 2]}", "bad.rec:2:" },
		{ "{\"t\":01,\"d\":1,\"v\":[1,2]}", "bad.rec:2:" },                     /* leading zero */
		{ "{\"t\":1,\"d\":1,\"v\":[01,2]}", "bad.rec:2:" },
		{ "{\"t\":-1,\"d\":1,\"v\":[1,2]}", "bad.rec:2: \"t\" is negative" },
		{ "{\"t\":1.5,\"d\":1,\"v\":[1,2]}", "bad.rec:2: \"t\" is a fractional number" },
		{ "{\"t\":1,\"d\":1e3,\"v\":[1,2]}", "bad.rec:2: \"d\" is a fractional number" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2E1]}", "bad.rec:2: \"v\"[1] (series 'b') is a fractional number" },
		{ "{\"t\":1,\"d\":1,\"v\":[9223372036854775808,2]}", "bad.rec:2:" },    /* INT64_MAX + 1 */
		{ "{\"t\":1,\"d\":1,\"v\":[1,123456789012345678901234]}", "bad.rec:2:" },
		{ "{\"t\":\"1\",\"d\":1,\"v\":[1,2]}", "bad.rec:2: \"t\" is a string" },
		{ "{\"t\":1,\"v\":[1,2]}", "bad.rec:2: \"d\" is missing" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,true]}", "bad.rec:2: \"v\"[1] (series 'b') is a boolean" },
		{ "{\"t\":1,\"d\":1,\"v\":[nul,2]}", "bad.rec:2:" },
		{ "{\"t\":1,\"d\":1,\"v\":[nullx,2]}", "bad.rec:2:" },
		{ "{\"t\":1,\"d\":1,\"v\":[[1],2]}", "bad.rec:2: \"v\"[0] (series 'a') is an array" },
		{ "{\"t\":1,\"d\":1,\"v\":[]}", "bad.rec:2: \"v\" holds 0 values" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2,3]}", "bad.rec:2: \"v\" holds 3 values" },
		{ "{\"t\":1,\"d\":1,\"v\":{}}", "bad.rec:2: \"v\" is an object" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"t\":2}", "bad.rec:2:" },               /* duplicate key */
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,5]]}", "bad.rec:2: \"m\"[0]" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,5,9]]}", "0 <= running_ns <= enabled_ns" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[2,9,5]]}", "bad.rec:2: \"m\"[0]" },
		{ "{\"t\":1,\"d\":1,\"v\":[null,2],\"m\":[[0,9,5]]}", "bad.rec:2: \"m\"[0]" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,9,5],]}", "bad.rec:2:" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,9,5]]", "bad.rec:2:" },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":5}", "bad.rec:2: \"m\" is an integer" },
	};
	char text[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s%s\n", HEADER, cases[i].line);
		expect_error(text, cases[i].needle);
	}
	/* A NUL inside a line. */
	{
		static const char nul[] = HEADER "{\"t\":1,\"d\":1,\"v\":[1,\0 2]}\n";
		char path[512];
		int frames, labels;
		bool cut;
		struct ms_error err = { "" };

		path_in_dir(path, sizeof(path), "bad.rec");
		spit(path, nul, sizeof(nul) - 1);
		CHECK_EQ_INT(read_all(path, &frames, &labels, &cut, &err), -1);
		CHECK_CONTAINS(err.text, "bad.rec:2:");
	}
}

/* 0: both read the frame alike; -1: both refused it. */
static int same_result(const char *a, const char *b)
{
	struct sample sa[2], sb[2];
	uint64_t ta = 0, da = 0, tb = 0, db = 0;
	struct ms_error ea = { "" }, eb = { "" };
	int ra = read_one_frame(a, sa, &ta, &da, &ea), rb = read_one_frame(b, sb, &tb, &db, &eb);

	if (ra != rb) {
		CHECK_FAIL("'%s' %s but '%s' %s", a, ra ? ea.text : "reads", b, rb ? eb.text : "reads");
		return ra;
	}
	if (ra)
		return ra;
	CHECK_EQ_U64(ta, tb);
	CHECK_EQ_U64(da, db);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(sa[i].valid, sb[i].valid);
		CHECK_EQ_U64(sa[i].value, sb[i].value);
		CHECK_EQ_U64(sa[i].enabled_ns, sb[i].enabled_ns);
		CHECK_EQ_U64(sa[i].running_ns, sb[i].running_ns);
	}
	return 0;
}

/* A frame line the writer's way and the same frame another valid way (spaces,
 * another member order) read the same; mutated lines are accepted or refused
 * alike by the direct scan and by the JSON library (a leading space sends a
 * line to the library). */
static void frame_lines_agree(int rounds)
{
	static const char *pairs[][2] = {
		{ "{\"t\":5,\"d\":2,\"v\":[7,null]}", "{ \"v\" : [7, null], \"d\": 2, \"t\": 5 }" },
		{ "{\"t\":5,\"d\":2,\"v\":[7,8],\"m\":[[1,9,4]]}", "{\"m\":[[1,9,4]],\"t\":5,\"d\":2,\"v\":[7,8]}" },
		{ "{\"t\":0,\"d\":0,\"v\":[0,9223372036854775807]}", "{\"t\":0,\"d\":0,\"v\":[0,9223372036854775807]} " },
		{ "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,3,3],[1,5,1],[0,9,2]]}",
		  "{\"t\":1,\"d\":1,\"v\":[1,2],\"m\":[[0,3,3],[1,5,1],[0,9,2]]}\r" },
	};
	static const char base[] = "{\"t\":12345,\"d\":100,\"v\":[7001,null],\"m\":[[0,100,25]]}";
	static const char alphabet[] = "0123456789,[]{}\":.-+eEnul tdvm";

	int read = 0;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		CHECK_EQ_INT(same_result(pairs[i][0], pairs[i][1]), 0);
	for (int round = 0; round < rounds; round++) {
		char line[256], spaced[260];
		size_t len = sizeof(base) - 1;
		int edits = 1 + (int)(next_random() % 3);

		memcpy(line, base, len + 1);
		for (int k = 0; k < edits; k++) {
			size_t at = (size_t)(next_random() % len);
			char c = alphabet[next_random() % (sizeof(alphabet) - 1)];

			switch (next_random() % 3) {
			case 0:
				line[at] = c;
				break;
			case 1:
				memmove(line + at, line + at + 1, len - at);
				len--;
				break;
			default:
				if (len + 2 >= sizeof(line))
					break;
				memmove(line + at + 1, line + at, len - at + 1);
				line[at] = c;
				len++;
				break;
			}
		}
		snprintf(spaced, sizeof(spaced), " %s", line);
		read += same_result(line, spaced) == 0;
	}
	/* Both outcomes were exercised: many mutations keep a valid frame
	 * (a digit for a digit), most do not. */
	CHECK(read > rounds / 20 && read < rounds / 2);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	/* Thousands of small files are written: memory-backed when possible. */
	if (!tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/memscope-test-recording-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	round_trip("plain.rec", false);
	round_trip("compressed.rec.zst", true);
	round_trip("compressed-by-flag.rec", true);
	truncated("whole.rec", false);
	truncated("whole.rec.zst", true);
	killed(false);
	killed(true);
	mutated("tofuzz.rec", false, 3000);
	mutated("tofuzz.rec.zst", true, 1000);
	bad_inputs();
	malformed_frame_lines();
	frame_lines_agree(4000);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return check_summary("recording_reader");
}
