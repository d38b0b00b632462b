/* Reading a recording, one line at a time, plain or zstd (told apart by the
 * first bytes, not the name). Every line is checked before it is used: a
 * wrong type, a value out of range or a line that is not JSON is an error
 * naming FILE:LINE and what was expected. A file that ends without its end
 * record was cut (memscope killed, disk full): everything before the cut is
 * read, and recording_reader_cut() says so.
 *
 * What is where: Lines (plain or zstd, next_line, parse_line); Checked
 * members (typed reads that name FILE:LINE); Header (series, topology,
 * catalog, read_header; recording_reader_open); Records (frames, the
 * series that start and retire, labels, control events, samples, the end
 * record; recording_reader_cut, _close). */
#include "recording/recording.h"
#include "recording/recording_samples.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <zstd.h>

#include "catalog/catalog.h"
#include "recording/frame_line.h"
#include "config.h"

/* Longer than any header a real machine produces (thousands of series), and
 * a bound on what garbage without newlines can make us allocate. */
#define MAX_LINE (64u << 20)
#define READ_CHUNK (64u << 10)

static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

struct recording_reader {
	char *path;
	int fd;
	ZSTD_DCtx *zstd;             /* NULL: plain text */
	unsigned char *zin;          /* compressed bytes read, not yet decompressed */
	size_t zin_len, zin_pos;
	size_t zstd_hint;            /* last ZSTD_decompressStream result: 0 = at a frame end */
	uint64_t zin_total;          /* compressed bytes read */
	char *buf;                   /* decoded text; lines are taken from the front */
	size_t start, len, cap;
	bool input_done;             /* the file has been read to its end */
	int line;                    /* number of the last line returned */
	uint64_t frames;
	uint64_t last_t;
	bool ended;                  /* the end record was read */
	bool partial_tail;           /* the file ends inside a line */
	bool tail_is_frame;          /* ... and that line began as a frame */
	json_t *header_json;
	struct recording_header header;
	int *indices;                /* of the last series or retire record */
	int nr_indices, cap_indices;
	/* Version 5: the table's length as the file's frames count it. Brief
	 * series (the "brief" record) take places of the table beyond it for
	 * the one frame they hold a value in. */
	int file_nr;
	int *brief;                  /* brief series of the next frame (indices) ... */
	uint64_t *brief_value;       /* ... and their values */
	int nr_brief, cap_brief;
	bool brief_retire;           /* the last frame held brief series: retire them next */
	uint64_t briefs;             /* brief series read */
	struct sample_item_storage *items;   /* what the last sample record's item points into */
};

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a fractional number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* ---- Lines ---- */

static int read_more_plain(struct recording_reader *r, struct ms_error *err)
{
	ssize_t n;

	do
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		ms_error_set(err, "%s: cannot read: %s", r->path, strerror(errno));
		return -1;
	}
	if (n == 0)
		r->input_done = true;
	r->len += (size_t)n;
	return 0;
}

static int read_more_zstd(struct recording_reader *r, struct ms_error *err)
{
	size_t before = r->len;

	while (r->len == before && !r->input_done) {
		if (r->zin_pos == r->zin_len) {
			ssize_t n;

			do
				n = read(r->fd, r->zin, READ_CHUNK);
			while (n < 0 && errno == EINTR);
			if (n < 0) {
				ms_error_set(err, "%s: cannot read: %s", r->path, strerror(errno));
				return -1;
			}
			if (n == 0) {
				r->input_done = true;
				break;
			}
			r->zin_len = (size_t)n;
			r->zin_pos = 0;
			r->zin_total += (uint64_t)n;
		}
		ZSTD_inBuffer in = { r->zin, r->zin_len, r->zin_pos };
		ZSTD_outBuffer out = { r->buf + r->len, r->cap - r->len, 0 };
		size_t ret = ZSTD_decompressStream(r->zstd, &out, &in);

		if (ZSTD_isError(ret)) {
			ms_error_set(err, "%s: the compressed data is damaged after line %d (zstd: %s); "
				     "%" PRIu64 " frames were read before it", r->path, r->line,
				     ZSTD_getErrorName(ret), r->frames);
			return -1;
		}
		r->zstd_hint = ret;
		r->zin_pos = in.pos;
		r->len += out.pos;
		if (out.pos == out.size)
			break;   /* buffer full: let the caller make room */
	}
	return 0;
}

/* The next line, NUL-terminated, without its newline. 1: a line; 0: end of
 * input (partial_tail set if it ended inside a line); -1: error. */
static int next_line(struct recording_reader *r, char **line, size_t *length, struct ms_error *err)
{
	size_t scanned = 0;

	for (;;) {
		char *nl = memchr(r->buf + r->start + scanned, '\n', r->len - r->start - scanned);

		if (nl) {
			*nl = '\0';
			*line = r->buf + r->start;
			*length = (size_t)(nl - *line);
			r->start += *length + 1;
			r->line++;
			return 1;
		}
		scanned = r->len - r->start;
		if (r->input_done) {
			r->partial_tail = r->len > r->start;
			/* Frames are the lines that start with their time. */
			r->tail_is_frame = r->len - r->start >= 5 && !memcmp(r->buf + r->start, "{\"t\":", 5);
			return 0;
		}
		if (scanned >= MAX_LINE) {
			ms_error_set(err, "%s:%d: the line is longer than %u MiB: this is not a memscope "
				     "recording, or it is damaged", r->path, r->line + 1, MAX_LINE >> 20);
			return -1;
		}
		/* Make room: drop consumed text, then grow. */
		if (r->start) {
			memmove(r->buf, r->buf + r->start, r->len - r->start);
			r->len -= r->start;
			r->start = 0;
		}
		if (r->cap - r->len < READ_CHUNK) {
			char *grown = realloc(r->buf, r->cap * 2 + 1);

			if (!grown) {
				ms_error_set(err, "out of memory");
				return -1;
			}
			r->buf = grown;
			r->cap = r->cap * 2;
		}
		if ((r->zstd ? read_more_zstd(r, err) : read_more_plain(r, err)) < 0)
			return -1;
	}
}

static json_t *parse_line(struct recording_reader *r, const char *line, size_t length, struct ms_error *err)
{
	json_error_t jerr;
	json_t *v = json_loadb(line, length, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);

	if (!v)
		ms_error_set(err, "%s:%d:%d: not JSON (%s); each line of a recording is one JSON object",
			     r->path, r->line, jerr.column, jerr.text);
	else if (!json_is_object(v)) {
		ms_error_set(err, "%s:%d: the line is %s; each line of a recording is one JSON object",
			     r->path, r->line, type_name(v));
		json_decref(v);
		v = NULL;
	}
	return v;
}

/* ---- Checked members ---- */

static int get_u64(struct recording_reader *r, const json_t *obj, const char *key, bool required,
		   uint64_t *out, struct ms_error *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!v) {
		if (!required)
			return 0;
		ms_error_set(err, "%s:%d: \"%s\" is missing", r->path, r->line, key);
		return -1;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		ms_error_set(err, "%s:%d: \"%s\" is %s; expected a non-negative integer", r->path, r->line, key,
			     json_is_integer(v) ? "negative" : type_name(v));
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_string(struct recording_reader *r, const json_t *obj, const char *key, bool required,
		      char *out, size_t size, struct ms_error *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!v) {
		if (!required)
			return 0;
		ms_error_set(err, "%s:%d: \"%s\" is missing", r->path, r->line, key);
		return -1;
	}
	if (!json_is_string(v)) {
		ms_error_set(err, "%s:%d: \"%s\" is %s; expected a string", r->path, r->line, key, type_name(v));
		return -1;
	}
	if (json_string_length(v) >= size) {
		ms_error_set(err, "%s:%d: \"%s\" is %zu bytes long; at most %zu fit", r->path, r->line, key,
			     json_string_length(v), size - 1);
		return -1;
	}
	snprintf(out, size, "%s", json_string_value(v));
	return 0;
}

static int get_int_label(struct recording_reader *r, const json_t *obj, const char *key, int index, int *out,
			 struct ms_error *err)
{
	const json_t *v = json_object_get(obj, key);

	*out = LABEL_NONE;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX) {
		ms_error_set(err, "%s:%d: series %d: \"%s\" is %s; expected a non-negative integer", r->path,
			     r->line, index, key, json_is_integer(v) ? "out of range" : type_name(v));
		return -1;
	}
	*out = (int)json_integer_value(v);
	return 0;
}

/* ---- Header ---- */

/* "system_wide": was the target the whole system? Files written before the
 * member say it in their target text ("system wide", "'cmd' (system wide)"). */
static int read_system_wide(struct recording_reader *r, struct recording_header *h, struct ms_error *err)
{
	const json_t *v = json_object_get(r->header_json, "system_wide");
	size_t len = strlen(h->target);
	const char *suffix = "(system wide)";

	if (v && !json_is_boolean(v)) {
		ms_error_set(err, "%s:1: \"system_wide\" is %s; expected true or false", r->path, type_name(v));
		return -1;
	}
	h->system_wide = v ? json_is_true(v)
			   : !h->target[0] || !strcmp(h->target, "system wide") ||
				     (len >= strlen(suffix) && !strcmp(h->target + len - strlen(suffix), suffix));
	return 0;
}

/* One entry of "series" (header) or of a series record (index: its "i"). */
struct series_entry {
	char name[512], kind[16], unit[32], unavailable[1024];
	char cgroup[4096];            /* labels.cgroup points here when the entry has one */
	struct series_labels labels;
	double scale;
	bool retired;
	int64_t index;
};

static int read_series_entry(struct recording_reader *r, const json_t *o, int position, bool need_index,
			     struct series_entry *e, struct ms_error *err)
{
	const json_t *scale = json_object_get(o, "scale"), *retired = json_object_get(o, "retired");
	const json_t *index = json_object_get(o, "i"), *whole = json_object_get(o, "whole_system");

	memset(e, 0, sizeof(*e));
	snprintf(e->kind, sizeof(e->kind), "counter");
	if (!json_is_object(o)) {
		ms_error_set(err, "%s:%d: series %d is %s; expected an object", r->path, r->line, position,
			     type_name(o));
		return -1;
	}
	series_labels_init(&e->labels);
	if (get_string(r, o, "name", true, e->name, sizeof(e->name), err) < 0 ||
	    get_string(r, o, "kind", false, e->kind, sizeof(e->kind), err) < 0 ||
	    get_string(r, o, "unit", false, e->unit, sizeof(e->unit), err) < 0 ||
	    get_string(r, o, "instance", false, e->labels.instance, sizeof(e->labels.instance), err) < 0 ||
	    get_string(r, o, "comm", false, e->labels.comm, sizeof(e->labels.comm), err) < 0 ||
	    get_string(r, o, "unavailable", false, e->unavailable, sizeof(e->unavailable), err) < 0 ||
	    get_string(r, o, "cgroup", false, e->cgroup, sizeof(e->cgroup), err) < 0 ||
	    get_int_label(r, o, "cpu", position, &e->labels.cpu, err) < 0 ||
	    get_int_label(r, o, "node", position, &e->labels.node, err) < 0 ||
	    get_int_label(r, o, "socket", position, &e->labels.socket, err) < 0 ||
	    get_int_label(r, o, "pid", position, &e->labels.pid, err) < 0 ||
	    get_int_label(r, o, "tid", position, &e->labels.tid, err) < 0) {
		ms_error_append(err, " (series %d)", position);
		return -1;
	}
	if (strcmp(e->kind, "counter") && strcmp(e->kind, "gauge")) {
		ms_error_set(err, "%s:%d: series %d ('%s'): kind '%s' is not 'counter' or 'gauge'", r->path,
			     r->line, position, e->name, e->kind);
		return -1;
	}
	if (scale && !json_is_number(scale)) {
		ms_error_set(err, "%s:%d: series %d ('%s'): \"scale\" is %s; expected a number", r->path,
			     r->line, position, e->name, type_name(scale));
		return -1;
	}
	if (retired && !json_is_boolean(retired)) {
		ms_error_set(err, "%s:%d: series %d ('%s'): \"retired\" is %s; expected true or false", r->path,
			     r->line, position, e->name, type_name(retired));
		return -1;
	}
	if (whole && !json_is_boolean(whole)) {
		ms_error_set(err, "%s:%d: series %d ('%s'): \"whole_system\" is %s; expected true or false", r->path,
			     r->line, position, e->name, type_name(whole));
		return -1;
	}
	/* Files written before the member: kernel statistics are the procfs source's. */
	e->labels.whole_system = whole ? json_is_true(whole)
				       : !strcmp(e->labels.instance, "vmstat") || !strcmp(e->labels.instance, "numastat");
	if (need_index && (!json_is_integer(index) || json_integer_value(index) < 0)) {
		ms_error_set(err, "%s:%d: series %d ('%s'): \"i\" is %s; expected the series' index in the "
			     "frames, a non-negative integer", r->path, r->line, position, e->name,
			     !index ? "missing" : json_is_integer(index) ? "negative" : type_name(index));
		return -1;
	}
	/* Optional: only the series of a plugin about one cgroup have it. */
	if (json_object_get(o, "cgroup"))
		e->labels.cgroup = e->cgroup;
	e->scale = scale ? json_number_value(scale) : 1.0;
	e->retired = retired && json_is_true(retired);
	e->index = index && json_is_integer(index) ? json_integer_value(index) : -1;
	return 0;
}

/* Put the entry at index (the table's end, or a retired index). */
static int put_series(struct recording_reader *r, int index, const struct series_entry *e, struct ms_error *err)
{
	struct series_table *t = &r->header.table;
	struct series *s;
	char *name, *unavailable = NULL, *cgroup;

	if (index == t->nr) {
		if (series_table_add(t, e->name, e->unit, e->scale, strcmp(e->kind, "gauge") ? SERIES_COUNTER :
				     SERIES_GAUGE, &e->labels) < 0) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		s = &t->series[index];
	} else {
		s = &t->series[index];
		name = strdup(e->name);
		cgroup = e->labels.cgroup ? strdup(e->labels.cgroup) : NULL;
		if (!name || (e->labels.cgroup && !cgroup)) {
			free(name);
			free(cgroup);
			ms_error_set(err, "out of memory");
			return -1;
		}
		free(s->name);
		free(s->unavailable);
		free(s->labels.cgroup);
		memset(s, 0, sizeof(*s));
		s->name = name;
		snprintf(s->unit, sizeof(s->unit), "%s", e->unit);
		s->scale = e->scale;
		s->kind = strcmp(e->kind, "gauge") ? SERIES_COUNTER : SERIES_GAUGE;
		s->labels = e->labels;
		s->labels.cgroup = cgroup;
		t->nr_retired--;
	}
	if (e->unavailable[0] && !(unavailable = strdup(e->unavailable))) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	s->unavailable = unavailable;
	s->state = e->retired ? SERIES_RETIRED : SERIES_LIVE;
	t->nr_retired += e->retired;
	return 0;
}

static int read_series(struct recording_reader *r, const json_t *list, struct ms_error *err)
{
	size_t i;
	const json_t *o;
	struct series_entry e;

	if (!json_is_array(list)) {
		ms_error_set(err, "%s:%d: \"series\" is %s; expected the array of series", r->path, r->line,
			     list ? type_name(list) : "missing");
		return -1;
	}
	json_array_foreach(list, i, o) {
		if (read_series_entry(r, o, (int)i, false, &e, err) < 0 ||
		    put_series(r, r->header.table.nr, &e, err) < 0)
			return -1;
	}
	return 0;
}

static int bad_topology(struct recording_reader *r, const char *what, struct ms_error *err)
{
	ms_error_set(err, "%s:%d: \"host\": %s", r->path, r->line, what);
	return -1;
}

static int contains(const int *list, int nr, int value)
{
	for (int i = 0; i < nr; i++)
		if (list[i] == value)
			return 1;
	return 0;
}

/* The recording machine's topology, so reports can group by its nodes and
 * sockets wherever they run. */
static int read_topology(struct recording_reader *r, const json_t *host, struct ms_error *err)
{
	struct topology *t = &r->header.topo;
	const json_t *cpus = json_object_get(host, "cpus"), *nodes = json_object_get(host, "nodes");
	const json_t *dist = json_object_get(host, "distance");
	int *seen;
	size_t i;
	const json_t *v;

	if (!cpus && !nodes)
		return 0;
	if (!json_is_array(cpus) || !json_is_array(nodes) || (dist && !json_is_array(dist)))
		return bad_topology(r, "\"cpus\", \"nodes\" and \"distance\" must be arrays", err);
	t->cpus = calloc(json_array_size(cpus) + 1, sizeof(*t->cpus));
	t->nodes = calloc(json_array_size(nodes) + 1, sizeof(int));
	seen = calloc(json_array_size(cpus) * 3 + 1, sizeof(int));
	if (!t->cpus || !t->nodes || !seen) {
		free(seen);
		ms_error_set(err, "out of memory");
		return -1;
	}
	json_array_foreach(cpus, i, v) {
		int f[5];

		for (int k = 0; k < 5; k++) {
			const json_t *x = json_array_get(v, (size_t)k);

			if (!json_is_array(v) || json_array_size(v) != 5 || !json_is_integer(x) ||
			    json_integer_value(x) < 0 || json_integer_value(x) > 1 << 20) {
				free(seen);
				return bad_topology(r, "each of \"cpus\" must be [cpu, core, die, socket, node] "
						    "(non-negative integers)", err);
			}
			f[k] = (int)json_integer_value(x);
		}
		if (t->nr_cpus && f[0] <= t->cpus[t->nr_cpus - 1].cpu) {
			free(seen);
			return bad_topology(r, "\"cpus\" must be in ascending CPU order", err);
		}
		t->cpus[t->nr_cpus] = (struct cpu_place){ .cpu = f[0], .core = f[1], .die = f[2], .socket = f[3], .node = f[4] };
		t->nr_cpus++;
		t->max_cpu = f[0] + 1;
		/* Distinct sockets, (socket, die) and (socket, die, core), encoded
		 * in one int each; enough for counting them. */
		if (!contains(seen, t->nr_sockets, f[3]))
			seen[t->nr_sockets++] = f[3];
	}
	t->nr_dies = t->nr_sockets;
	t->nr_cores = t->nr_cpus;
	free(seen);
	json_array_foreach(nodes, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1 << 20)
			return bad_topology(r, "\"nodes\" must hold node numbers", err);
		t->nodes[t->nr_nodes++] = (int)json_integer_value(v);
	}
	if (dist && json_array_size(dist) == (size_t)t->nr_nodes && t->nr_nodes) {
		t->distance = calloc((size_t)t->nr_nodes * (size_t)t->nr_nodes, sizeof(int));
		if (!t->distance) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		json_array_foreach(dist, i, v) {
			if (!json_is_array(v) || json_array_size(v) != (size_t)t->nr_nodes)
				return bad_topology(r, "\"distance\" must be a nodes x nodes table", err);
			for (int j = 0; j < t->nr_nodes; j++) {
				const json_t *x = json_array_get(v, (size_t)j);

				if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 255)
					return bad_topology(r, "\"distance\" entries must be integers 0..255", err);
				t->distance[i * (size_t)t->nr_nodes + (size_t)j] = (int)json_integer_value(x);
			}
		}
	}
	r->header.has_topology = true;
	return 0;
}

/* The documented optional "catalog" member names the metrics the recording
 * was planned for: each must be one this build knows, or the report would
 * silently lack it. */
static int check_catalog(struct recording_reader *r, const json_t *catalog, struct ms_error *err)
{
	const json_t *metrics = json_object_get(catalog, "metrics"), *m;
	struct catalog *cat = NULL;
	size_t i;
	int ret = 0;

	if (!json_is_object(catalog) || (metrics && !json_is_array(metrics))) {
		ms_error_set(err, "%s:%d: \"catalog\" must be an object whose \"metrics\" is an array", r->path,
			     r->line);
		return -1;
	}
	if (!metrics || !json_array_size(metrics))
		return 0;
	if (catalog_load_default(&cat, err) < 0) {
		ms_error_prefix(err, "%s: the recording names metrics, and this memscope's catalog cannot be "
				"loaded to check them", r->path);
		return -1;
	}
	json_array_foreach(metrics, i, m) {
		const json_t *name = json_object_get(m, "name");

		if (!json_is_string(name)) {
			ms_error_set(err, "%s:%d: \"catalog\".metrics[%zu].name is %s; expected a metric name",
				     r->path, r->line, i, name ? type_name(name) : "missing");
			ret = -1;
			break;
		}
		if (catalog_metric_index(cat, json_string_value(name)) < 0) {
			ms_error_set(err, "%s:%d: the recording's catalog names metric '%s', which this memscope "
				     "(%s) does not know; report it with the memscope that recorded it (%s)",
				     r->path, r->line, json_string_value(name), MEMSCOPE_VERSION,
				     r->header.memscope_version);
			ret = -1;
			break;
		}
	}
	catalog_free(cat);
	return ret;
}

static int read_header(struct recording_reader *r, struct ms_error *err)
{
	struct recording_header *h = &r->header;
	const json_t *format, *version, *start, *host;
	char *line;
	size_t length;
	int got = next_line(r, &line, &length, err);

	if (got < 0)
		return -1;
	if (got == 0) {
		if (r->partial_tail)
			ms_error_set(err, "%s:1: the header is cut: the recording stopped before its first "
				     "line was complete (memscope killed while starting, or disk full)", r->path);
		else if (r->zstd)
			ms_error_set(err, "%s: the compressed recording is cut: its %" PRIu64 " bytes of zstd data end "
				     "before its first line is whole (memscope killed while starting, disk full, or "
				     "an incomplete copy)", r->path, r->zin_total);
		else
			ms_error_set(err, "%s: the file is empty: not a memscope recording", r->path);
		return -1;
	}
	r->header_json = parse_line(r, line, length, err);
	if (!r->header_json) {
		ms_error_append(err, ": this is not a memscope recording");
		return -1;
	}
	format = json_object_get(r->header_json, "format");
	if (!json_is_string(format) || strcmp(json_string_value(format), RECORDING_FORMAT_NAME)) {
		bool replay = json_is_string(format) && !strcmp(json_string_value(format), "memscope-replay");

		ms_error_set(err, "%s:1: not a memscope recording: \"format\" is %s%s%s; expected '%s'%s",
			     r->path, json_is_string(format) ? "'" : (format ? type_name(format) : "missing"),
			     json_is_string(format) ? json_string_value(format) : "",
			     json_is_string(format) ? "'" : "", RECORDING_FORMAT_NAME,
			     replay ? " (this is a replay file of counter values: use --replay)" : "");
		return -1;
	}
	version = json_object_get(r->header_json, "version");
	if (!json_is_integer(version) || json_integer_value(version) < 1) {
		ms_error_set(err, "%s:1: \"version\" is %s; expected the format version, an integer >= 1",
			     r->path, version ? type_name(version) : "missing");
		return -1;
	}
	if (json_integer_value(version) > RECORDING_FORMAT_VERSION) {
		ms_error_set(err, "%s:1: recording format version %lld is newer than this memscope reads "
			     "(up to %d): read it with a newer memscope", r->path,
			     (long long)json_integer_value(version), RECORDING_FORMAT_VERSION);
		return -1;
	}
	h->version = (int)json_integer_value(version);
	if (get_string(r, r->header_json, "memscope", true, h->memscope_version, sizeof(h->memscope_version),
		       err) < 0 ||
	    get_string(r, r->header_json, "target", false, h->target, sizeof(h->target), err) < 0 ||
	    get_u64(r, r->header_json, "interval_ns", true, &h->interval_ns, err) < 0)
		return -1;
	if (read_system_wide(r, h, err) < 0)
		return -1;
	start = json_object_get(r->header_json, "start");
	if (start) {
		uint64_t unix_ns = 0;

		if (!json_is_object(start)) {
			ms_error_set(err, "%s:1: \"start\" is %s; expected an object", r->path, type_name(start));
			return -1;
		}
		if (get_string(r, start, "time", false, h->start_text, sizeof(h->start_text), err) < 0 ||
		    get_u64(r, start, "unix_ns", false, &unix_ns, err) < 0)
			return -1;
		h->start_unix_ns = (int64_t)unix_ns;
	}
	host = json_object_get(r->header_json, "host");
	if (host) {
		if (!json_is_object(host)) {
			ms_error_set(err, "%s:1: \"host\" is %s; expected an object", r->path, type_name(host));
			return -1;
		}
		if (get_string(r, host, "hostname", false, h->hostname, sizeof(h->hostname), err) < 0 ||
		    get_string(r, host, "kernel", false, h->kernel, sizeof(h->kernel), err) < 0 ||
		    get_string(r, host, "arch", false, h->arch, sizeof(h->arch), err) < 0 ||
		    read_topology(r, host, err) < 0)
			return -1;
		h->memory_ranges = json_object_get(host, "memory_ranges");
		if (h->memory_ranges && !json_is_array(h->memory_ranges)) {
			ms_error_set(err, "%s:1: \"host\".\"memory_ranges\" is %s; expected an array of [\"start\", "
				     "\"end\", node]", r->path, type_name(h->memory_ranges));
			return -1;
		}
		h->host_files = json_object_get(host, "files");
		if (h->host_files && !json_is_object(h->host_files)) {
			ms_error_set(err, "%s:1: \"host\".\"files\" is %s; expected an object of file names and "
				     "texts", r->path, type_name(h->host_files));
			return -1;
		}
	}
	if (read_series(r, json_object_get(r->header_json, "series"), err) < 0)
		return -1;
	r->file_nr = r->header.table.nr;
	h->catalog = json_object_get(r->header_json, "catalog");
	h->sampling = json_object_get(r->header_json, "sampling");
	if (h->catalog && check_catalog(r, h->catalog, err) < 0)
		return -1;
	return 0;
}

bool recording_file_looks_like(const char *path)
{
	char head[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n >= 4 && !memcmp(head, zstd_magic, 4))
		return true;
	return n > 0 && strstr(head, "\"" RECORDING_FORMAT_NAME "\"") != NULL;
}

int recording_reader_open(struct recording_reader **out, const char *path, struct ms_error *err)
{
	struct recording_reader *r = calloc(1, sizeof(*r));
	unsigned char magic[4];
	ssize_t n;

	*out = NULL;
	if (!r || !(r->path = strdup(path)) || !(r->buf = malloc(READ_CHUNK * 2 + 1))) {
		if (r)
			free(r->path);
		free(r);
		ms_error_set(err, "out of memory");
		return -1;
	}
	r->cap = READ_CHUNK * 2;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		ms_error_set(err, "cannot open %s: %s%s", path, strerror(errno),
			     errno == ENOENT ? " (record one with 'memscope record', or name the file)" : "");
		goto fail;
	}
	n = pread(r->fd, magic, sizeof(magic), 0);
	if (n == (ssize_t)sizeof(magic) && !memcmp(magic, zstd_magic, sizeof(magic))) {
		r->zstd = ZSTD_createDCtx();
		r->zin = malloc(READ_CHUNK);
		if (!r->zstd || !r->zin) {
			ms_error_set(err, "out of memory");
			goto fail;
		}
	}
	if (read_header(r, err) < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	recording_reader_close(r);
	return -1;
}

const struct recording_header *recording_reader_header(const struct recording_reader *r)
{
	return &r->header;
}

/* ---- Records ---- */

/* The places of the table beyond the file's frame line hold no value but the
 * brief series' (their one value, the whole interval counted); the brief
 * series are retired before the next record. */
static void fill_brief(struct recording_reader *r, struct frame *frame, uint64_t d)
{
	for (int i = r->file_nr; i < r->header.table.nr; i++)
		memset(&frame->samples[i], 0, sizeof(frame->samples[i]));
	for (int k = 0; k < r->nr_brief; k++) {
		struct sample *s = &frame->samples[r->brief[k]];

		s->value = r->brief_value[k];
		s->enabled_ns = s->running_ns = d;
		s->valid = true;
	}
	r->brief_retire = r->nr_brief > 0;
}

static int read_frame(struct recording_reader *r, const json_t *rec, struct frame *frame, struct ms_error *err)
{
	const json_t *values = json_object_get(rec, "v"), *mux = json_object_get(rec, "m"), *v;
	uint64_t t, d;
	int nr = r->file_nr;
	size_t i;

	if (get_u64(r, rec, "t", true, &t, err) < 0 || get_u64(r, rec, "d", true, &d, err) < 0)
		goto bad;
	if (t < r->last_t) {
		ms_error_set(err, "%s:%d: \"t\" goes back in time (%" PRIu64 " ns after %" PRIu64 " ns)",
			     r->path, r->line, t, r->last_t);
		goto bad;
	}
	/* Version 5 leaves trailing nulls out: a line may be shorter, never longer. */
	if (!json_is_array(values) || json_array_size(values) > (size_t)nr ||
	    (r->header.version < 5 && json_array_size(values) != (size_t)nr)) {
		if (json_is_array(values))
			ms_error_set(err, "%s:%d: \"v\" holds %zu values; the series table has %d here (the "
				     "header's series and those series records added)", r->path, r->line,
				     json_array_size(values), nr);
		else
			ms_error_set(err, "%s:%d: \"v\" is %s; expected an array of %d values", r->path, r->line,
				     type_name(values), nr);
		goto bad;
	}
	if (frame_fit(frame, r->header.table.nr) < 0) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	json_array_foreach(values, i, v) {
		struct sample *s = &frame->samples[i];

		if (json_is_null(v)) {
			memset(s, 0, sizeof(*s));
			continue;
		}
		if (r->header.table.series[i].state == SERIES_RETIRED) {
			ms_error_set(err, "%s:%d: \"v\"[%zu] holds a value, but series %zu ('%s') was retired; a "
				     "retired series holds null until a series record gives its index to a new one",
				     r->path, r->line, i, i, r->header.table.series[i].name);
			goto bad;
		}
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			ms_error_set(err, "%s:%d: \"v\"[%zu] (series '%s') is %s; expected a non-negative integer "
				     "or null", r->path, r->line, i, r->header.table.series[i].name,
				     json_is_integer(v) ? "negative" : type_name(v));
			goto bad;
		}
		s->value = (uint64_t)json_integer_value(v);
		s->enabled_ns = s->running_ns = d;
		s->valid = true;
	}
	for (i = json_array_size(values); i < (size_t)nr; i++)
		memset(&frame->samples[i], 0, sizeof(frame->samples[i]));
	if (mux && !json_is_array(mux)) {
		ms_error_set(err, "%s:%d: \"m\" is %s; expected [[series, enabled_ns, running_ns], ...]", r->path,
			     r->line, type_name(mux));
		goto bad;
	}
	json_array_foreach(mux, i, v) {
		json_int_t index, enabled, running;

		if (json_unpack((json_t *)v, "[III!]", &index, &enabled, &running) < 0 || index < 0 || index >= nr ||
		    enabled < 0 || running < 0 || running > enabled || !frame->samples[index].valid) {
			ms_error_set(err, "%s:%d: \"m\"[%zu] must be [series, enabled_ns, running_ns]: a series "
				     "index below %d with a value, and 0 <= running_ns <= enabled_ns", r->path,
				     r->line, i, nr);
			goto bad;
		}
		frame->samples[index].enabled_ns = (uint64_t)enabled;
		frame->samples[index].running_ns = (uint64_t)running;
	}
	fill_brief(r, frame, d);
	frame->seq = r->frames;
	frame->time_ns = t;
	frame->interval_ns = d;
	r->last_t = t;
	r->frames++;
	return 0;
bad:
	ms_error_append(err, " (frame %" PRIu64 ")", r->frames + 1);
	return -1;
}

/* Frames as the writer writes them, without a JSON tree (recording/frame_line.h).
 * False: read the line with jansson, which also explains what is wrong. */
static bool fast_frame(struct recording_reader *r, const char *line, size_t length, struct frame *frame)
{
	uint64_t t, d;

	if (length < 5 || memcmp(line, "{\"t\":", 5) || frame_fit(frame, r->header.table.nr) < 0 ||
	    !frame_line_parse(line, length, &r->header.table, r->file_nr, r->header.version >= 5, frame, &t, &d) ||
	    t < r->last_t)
		return false;
	fill_brief(r, frame, d);
	frame->seq = r->frames;
	frame->time_ns = t;
	frame->interval_ns = d;
	r->last_t = t;
	r->frames++;
	return true;
}

static int push_index(struct recording_reader *r, int index, struct ms_error *err)
{
	if (r->nr_indices == r->cap_indices) {
		int cap = r->cap_indices ? r->cap_indices * 2 : 64;
		int *grown = realloc(r->indices, sizeof(int) * (size_t)cap);

		if (!grown) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		r->indices = grown;
		r->cap_indices = cap;
	}
	r->indices[r->nr_indices++] = index;
	return 0;
}

static int need_v2(struct recording_reader *r, const char *what, struct ms_error *err)
{
	if (r->header.version >= 2)
		return 0;
	ms_error_set(err, "%s:%d: a %s record in a version %d recording; they exist from version 2 on: the "
		     "header's \"version\" is wrong or the file is damaged", r->path, r->line, what, r->header.version);
	return -1;
}

/* {"series":[{"i":N, "name":...}, ...], "t":T}: series that start with the next frame. */
static int read_series_record(struct recording_reader *r, const json_t *rec, struct recording_record *out,
			      struct ms_error *err)
{
	const json_t *list = json_object_get(rec, "series"), *o;
	struct series_table *t = &r->header.table;
	struct series_entry e;
	size_t i;

	out->kind = RECORD_SERIES;
	if (need_v2(r, "series", err) < 0 || get_u64(r, rec, "t", true, &out->t_ns, err) < 0)
		return -1;
	if (!json_is_array(list)) {
		ms_error_set(err, "%s:%d: \"series\" is %s; expected an array of series", r->path, r->line,
			     type_name(list));
		return -1;
	}
	json_array_foreach(list, i, o) {
		if (read_series_entry(r, o, (int)i, true, &e, err) < 0)
			return -1;
		/* The file's next index; the table may be longer (brief series' places, retired). */
		if (e.index > r->file_nr || (e.index < t->nr && t->series[e.index].state != SERIES_RETIRED) ||
		    e.retired) {
			ms_error_set(err, "%s:%d: series %zu ('%s') has \"i\" %lld; a new series takes the next index "
				     "(%d) or one a retire record freed%s", r->path, r->line, i, e.name,
				     (long long)e.index, r->file_nr,
				     e.index < t->nr && !e.retired ? ", and that one is in use" : "");
			return -1;
		}
		if (e.index >= SERIES_TABLE_MAX) {
			ms_error_set(err, "%s:%d: more than %d series", r->path, r->line, SERIES_TABLE_MAX);
			return -1;
		}
		if (put_series(r, (int)e.index, &e, err) < 0 || push_index(r, (int)e.index, err) < 0)
			return -1;
		if (e.index >= r->file_nr)
			r->file_nr = (int)e.index + 1;
	}
	return 0;
}

/* The place of a brief series: a retired index beyond the file's places, else
 * the table's end. (A later series record of the file may take that place as
 * its next index, once the brief series is retired.) */
static int brief_place(struct recording_reader *r)
{
	const struct series_table *t = &r->header.table;
	int index = r->file_nr;

	while (index < t->nr && t->series[index].state != SERIES_RETIRED)
		index++;
	return index;
}

/* {"brief":[{"name":..., "pid":..., "v":N}, ...], "t":T} (version 5): series
 * of processes or threads whose whole life was the next frame, with their one
 * value. Each is given a place beyond the places the file's frames hold, holds
 * its value in the next frame and is retired right after it: readers see what
 * a series record, a value in the frame and a retire record would have said. */
static int read_brief_record(struct recording_reader *r, const json_t *rec, struct recording_record *out,
			     struct ms_error *err)
{
	const json_t *list = json_object_get(rec, "brief"), *o;
	struct series_entry e;
	size_t i;

	out->kind = RECORD_SERIES;
	if (r->header.version < 5) {
		ms_error_set(err, "%s:%d: a \"brief\" series record in a version %d recording; they exist from "
			     "version 5 on: the header's \"version\" is wrong or the file is damaged", r->path, r->line,
			     r->header.version);
		return -1;
	}
	if (get_u64(r, rec, "t", true, &out->t_ns, err) < 0)
		return -1;
	if (!json_is_array(list)) {
		ms_error_set(err, "%s:%d: \"brief\" is %s; expected an array of series with their value \"v\"",
			     r->path, r->line, type_name(list));
		return -1;
	}
	json_array_foreach(list, i, o) {
		const json_t *v = json_object_get(o, "v");
		int index;

		if (read_series_entry(r, o, (int)i, false, &e, err) < 0)
			return -1;
		if (e.labels.pid == LABEL_NONE && e.labels.tid == LABEL_NONE) {
			ms_error_set(err, "%s:%d: brief series %zu ('%s') has no \"pid\" or \"tid\"; only a process's "
				     "or thread's series is written brief", r->path, r->line, i, e.name);
			return -1;
		}
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			ms_error_set(err, "%s:%d: brief series %zu ('%s'): \"v\" is %s; expected its value in the next "
				     "frame, a non-negative integer", r->path, r->line, i, e.name,
				     !v ? "missing" : json_is_integer(v) ? "negative" : type_name(v));
			return -1;
		}
		if ((index = brief_place(r)) >= SERIES_TABLE_MAX) {
			ms_error_set(err, "%s:%d: more than %d series", r->path, r->line, SERIES_TABLE_MAX);
			return -1;
		}
		if (r->nr_brief == r->cap_brief) {
			int cap = r->cap_brief ? r->cap_brief * 2 : 16;
			int *grown = realloc(r->brief, sizeof(int) * (size_t)cap);
			uint64_t *values = grown ? realloc(r->brief_value, sizeof(uint64_t) * (size_t)cap) : NULL;

			if (grown)
				r->brief = grown;
			if (!values) {
				ms_error_set(err, "out of memory");
				return -1;
			}
			r->brief_value = values;
			r->cap_brief = cap;
		}
		if (put_series(r, index, &e, err) < 0 || push_index(r, index, err) < 0)
			return -1;
		r->brief[r->nr_brief] = index;
		r->brief_value[r->nr_brief++] = (uint64_t)json_integer_value(v);
		r->briefs++;
	}
	return 0;
}

/* After the frame that held brief series: they end, as a retire record would say. */
static int retire_brief(struct recording_reader *r, struct recording_record *out, struct ms_error *err)
{
	struct series_table *t = &r->header.table;

	out->kind = RECORD_RETIRE;
	out->t_ns = r->last_t;
	out->line = r->line;
	r->nr_indices = 0;
	for (int k = 0; k < r->nr_brief; k++) {
		t->series[r->brief[k]].state = SERIES_RETIRED;
		t->nr_retired++;
		if (push_index(r, r->brief[k], err) < 0)
			return -1;
	}
	r->nr_brief = 0;
	r->brief_retire = false;
	out->indices = r->indices;
	out->nr_indices = r->nr_indices;
	return 0;
}

/* {"retire":[N, ...], "t":T}: series whose last values were in the previous frame. */
static int read_retire_record(struct recording_reader *r, const json_t *rec, struct recording_record *out,
			      struct ms_error *err)
{
	const json_t *list = json_object_get(rec, "retire"), *v;
	struct series_table *t = &r->header.table;
	size_t i;

	out->kind = RECORD_RETIRE;
	if (need_v2(r, "retire", err) < 0 || get_u64(r, rec, "t", true, &out->t_ns, err) < 0)
		return -1;
	if (!json_is_array(list)) {
		ms_error_set(err, "%s:%d: \"retire\" is %s; expected an array of series indices", r->path, r->line,
			     type_name(list));
		return -1;
	}
	json_array_foreach(list, i, v) {
		json_int_t index = json_is_integer(v) ? json_integer_value(v) : -1;

		if (index < 0 || index >= r->file_nr || t->series[index].state != SERIES_LIVE) {
			ms_error_set(err, "%s:%d: \"retire\"[%zu] is %s; expected the index of a live series (below %d)",
				     r->path, r->line, i, json_is_integer(v) ? "not a live series" : type_name(v),
				     r->file_nr);
			return -1;
		}
		t->series[index].state = SERIES_RETIRED;
		t->nr_retired++;
		if (push_index(r, (int)index, err) < 0)
			return -1;
	}
	return 0;
}

static int read_other(struct recording_reader *r, const json_t *rec, struct recording_record *out,
		      struct ms_error *err)
{
	if (json_object_get(rec, "series") || json_object_get(rec, "retire") || json_object_get(rec, "brief")) {
		int ret;

		r->nr_indices = 0;
		ret = json_object_get(rec, "series") ? read_series_record(r, rec, out, err)
		      : json_object_get(rec, "brief") ? read_brief_record(r, rec, out, err)
						      : read_retire_record(r, rec, out, err);
		out->indices = r->indices;
		out->nr_indices = r->nr_indices;
		return ret;
	}
	if (json_object_get(rec, "label")) {
		out->kind = RECORD_LABEL;
		if (get_string(r, rec, "label", true, out->text, sizeof(out->text), err) < 0 ||
		    get_string(r, rec, "phase", false, out->phase, sizeof(out->phase), err) < 0 ||
		    get_u64(r, rec, "t", true, &out->t_ns, err) < 0)
			return -1;
		if (out->phase[0] && strcmp(out->phase, "begin") && strcmp(out->phase, "end")) {
			ms_error_set(err, "%s:%d: \"phase\" is '%s'; expected 'begin' or 'end'", r->path, r->line,
				     out->phase);
			return -1;
		}
		return 0;
	}
	if (json_object_get(rec, "control")) {
		out->kind = RECORD_CONTROL;
		if (get_string(r, rec, "control", true, out->control, sizeof(out->control), err) < 0 ||
		    get_u64(r, rec, "t", true, &out->t_ns, err) < 0)
			return -1;
		if (!strcmp(out->control, "interval"))
			return get_u64(r, rec, "interval_ns", true, &out->interval_ns, err);
		if (strcmp(out->control, "pause") && strcmp(out->control, "resume")) {
			ms_error_set(err, "%s:%d: control event '%s' is not pause, resume or interval", r->path,
				     r->line, out->control);
			return -1;
		}
		return 0;
	}
	if (json_object_get(rec, "end")) {
		uint64_t frames = 0;

		out->kind = RECORD_END;
		if (get_string(r, rec, "end", true, out->reason, sizeof(out->reason), err) < 0 ||
		    get_u64(r, rec, "frames", true, &frames, err) < 0)
			return -1;
		if (frames != r->frames) {
			ms_error_set(err, "%s:%d: the end record counts %" PRIu64 " frames, but the file holds %"
				     PRIu64 ": frames are missing", r->path, r->line, frames, r->frames);
			return -1;
		}
		if (r->nr_brief) {
			ms_error_set(err, "%s:%d: the end record comes after a \"brief\" record without the frame "
				     "that holds its series: the file is damaged", r->path, r->line);
			return -1;
		}
		/* Version 5: the series written brief, counted: none may be missing. */
		if (json_object_get(rec, "brief_series")) {
			uint64_t briefs;

			if (get_u64(r, rec, "brief_series", true, &briefs, err) < 0)
				return -1;
			if (briefs != r->briefs) {
				ms_error_set(err, "%s:%d: the end record counts %" PRIu64 " brief series, but the file "
					     "holds %" PRIu64 ": records are missing", r->path, r->line, briefs,
					     r->briefs);
				return -1;
			}
		}
		r->ended = true;
		return 0;
	}
	if (!r->items && !(r->items = malloc(sizeof(*r->items)))) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	switch (recording_sample_item_read(r->path, r->line, rec, r->items, &out->item, err)) {
	case 1:
		if (need_v2(r, "sample", err) < 0)
			return -1;
		if (out->item.kind == SAMPLE_ITEM_DAMON_REGION && r->header.version < 3) {
			ms_error_set(err, "%s:%d: a \"damon\" region record in a version %d recording; they exist from "
				     "version 3 on: the header's \"version\" is wrong or the file is damaged", r->path,
				     r->line, r->header.version);
			return -1;
		}
		if (out->item.kind == SAMPLE_ITEM_DAMON_REGION && out->item.damon->pid && r->header.version < 4) {
			ms_error_set(err, "%s:%d: a \"damon\" region record with a \"pid\" (a process's virtual region) in "
				     "a version %d recording; they exist from version 4 on: the header's \"version\" is "
				     "wrong or the file is damaged", r->path, r->line, r->header.version);
			return -1;
		}
		if (out->item.kind == SAMPLE_ITEM_DAMON_REGION && out->item.damon->placed && r->header.version < 5) {
			ms_error_set(err, "%s:%d: a \"damon\" region record with \"placed\" (a process's pages placed in "
				     "physical regions) in a version %d recording; they exist from version 5 on: the header's "
				     "\"version\" is wrong or the file is damaged", r->path, r->line, r->header.version);
			return -1;
		}
		out->kind = RECORD_SAMPLE_ITEM;
		out->t_ns = out->item.time_ns;
		return 0;
	case -1:
		return -1;
	}
	ms_error_set(err, "%s:%d: not a record of a recording: expected a frame (\"t\", \"d\", \"v\"), "
		     "\"series\", \"retire\", a \"label\", a \"control\" event, a sample record (\"s\", \"map\", "
		     "\"comm\", \"fork\", \"exit\", \"lost\", \"maps_unreadable\", \"alloc\", \"free\"), a \"damon\" region, "
		     "\"brief\" series or the \"end\"", r->path, r->line);
	return -1;
}

int recording_reader_next(struct recording_reader *r, struct recording_record *rec, struct frame *frame,
			  struct ms_error *err)
{
	char *line;
	size_t length;
	json_t *obj;
	int got, ret;

	memset(rec, 0, sizeof(*rec));
	if (r->brief_retire)
		return retire_brief(r, rec, err);
	got = next_line(r, &line, &length, err);
	if (got < 0)
		return -1;
	if (got == 0) {
		rec->kind = RECORD_EOF;
		rec->line = r->line;
		return 0;
	}
	rec->line = r->line;
	if (r->ended) {
		ms_error_set(err, "%s:%d: a record after the end record: the file was appended to or damaged",
			     r->path, r->line);
		return -1;
	}
	if (fast_frame(r, line, length, frame)) {
		rec->kind = RECORD_FRAME;
		rec->t_ns = frame->time_ns;
		return 0;
	}
	obj = parse_line(r, line, length, err);
	if (!obj) {
		ms_error_append(err, " (after %" PRIu64 " frames)", r->frames);
		return -1;
	}
	if (json_object_get(obj, "v")) {
		rec->kind = RECORD_FRAME;
		ret = read_frame(r, obj, frame, err);
		rec->t_ns = frame->time_ns;
	} else {
		ret = read_other(r, obj, rec, err);
	}
	json_decref(obj);
	return ret;
}

bool recording_reader_cut(const struct recording_reader *r, char *message, size_t size)
{
	/* A compressed stream left open is cut too, even when its last line is whole. */
	bool stream_open = r->zstd && r->zstd_hint != 0;

	if (r->ended && !r->partial_tail && !stream_open)
		return false;
	/* memscope record holds an exclusive lock while it writes: not cut, unfinished. */
	if (r->fd >= 0 && flock(r->fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		snprintf(message, size, "%s is still being written (a memscope record holds its lock): %" PRIu64
			 " frames read so far; report it again once that recording has ended", r->path, r->frames);
		return true;
	}
	if (r->fd >= 0)
		flock(r->fd, LOCK_UN);
	if (r->partial_tail && r->tail_is_frame)
		snprintf(message, size, "%s: the recording ends in the middle of frame %" PRIu64 " (line %d): it "
			 "was cut (memscope killed or disk full); %" PRIu64 " frames read", r->path,
			 r->frames + 1, r->line + 1, r->frames);
	else if (r->partial_tail)
		snprintf(message, size, "%s: the recording ends in the middle of line %d, after frame %" PRIu64
			 ": it was cut (memscope killed or disk full); %" PRIu64 " frames read", r->path,
			 r->line + 1, r->frames, r->frames);
	else
		snprintf(message, size, "%s: the recording ends after frame %" PRIu64 " (line %d) without its "
			 "end record: it was cut (memscope killed or disk full); %" PRIu64 " frames read",
			 r->path, r->frames, r->line, r->frames);
	return true;
}

uint64_t recording_reader_frames(const struct recording_reader *r)
{
	return r->frames;
}

void recording_reader_close(struct recording_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->zstd);
	free(r->zin);
	free(r->indices);
	free(r->brief);
	free(r->brief_value);
	free(r->buf);
	free(r->items);
	free(r->path);
	series_table_free(&r->header.table);
	topology_free(&r->header.topo);
	json_decref(r->header_json);
	free(r);
}

int recording_reader_fd(const struct recording_reader *r)
{
	return r->fd;
}
