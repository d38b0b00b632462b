/* Writing a recording: the header, then frames, labels and control events as
 * JSON Lines, plain or through one zstd stream. Records collect in a buffer
 * that goes to the file every few frames and at every label or control event;
 * each flush ends on a line boundary (and, compressed, on a zstd flush), so
 * whatever reached the disk is readable if memscope is killed. */
#include "recording/recording.h"
#include "recording/recording_create.h"
#include "recording/recording_samples.h"
#include "host/memory_tiers.h"
#include "host/page_node.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "config.h"

/* zstd level 3 is its default: fast, and frames of small integers shrink well. */
#define ZSTD_LEVEL 3

struct recording_writer {
	char *path;
	int fd;
	bool failed;                 /* a write failed: nothing more is written */
	bool view_only;              /* no file: only the view of the series table */
	ZSTD_CCtx *zstd;             /* NULL: plain text */
	char *pending;               /* JSON lines not yet written */
	size_t pending_len, pending_cap;
	char *zout;                  /* compressed bytes */
	size_t zout_cap;
	int flush_frames;
	int frames_since_flush;
	uint64_t frames;
	uint64_t bytes;              /* written to the file */
	uint64_t origin_ns;
	const struct series_table *table; /* the series of the frames; grows during the run */
	/* The table as of the frames written (the sampler's may be ahead, on
	 * another thread): its length, and which indices are retired. */
	int known;
	unsigned char *retired;
	int retired_cap;
	json_t *values;              /* reused per frame: the "v" array */
	uint64_t samples;            /* sample records written */
	/* The file's own places (version 5): a frame line holds file_nr values,
	 * and place f holds the series at table index mem_of[f] (-1: free). A
	 * place is free again right after the retire record that ends its
	 * series, not once every consumer of the run is done with it as the
	 * table's indices are, and a series whose whole life is one frame takes
	 * none (a "brief" record), so frame lines stay as short as the series
	 * alive at once. file_of is the way back (-1: no place). */
	int *mem_of, *file_of;
	int file_nr, mem_of_cap, file_of_cap;
	uint64_t briefs;             /* series written brief */
};

/* Samples come between frames, thousands a second: a batch that grows past
 * this is written without waiting for the next frame. */
#define SAMPLE_BATCH_BYTES (1u << 20)

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static int write_all(struct recording_writer *w, const char *buf, size_t len, struct ms_error *err)
{
	while (len) {
		ssize_t n = write(w->fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : ENOSPC;

			w->failed = true;
			if (e == ENOSPC || e == EDQUOT)
				ms_error_set(err, "%s: the disk is full (%s) after %llu frames: the recording is "
					     "readable up to the last complete frame; free space or record to "
					     "another file system (-o)", w->path, strerror(e),
					     (unsigned long long)w->frames);
			else
				ms_error_set(err, "%s: cannot write: %s (after %llu frames; the recording is "
					     "readable up to the last complete frame)", w->path, strerror(e),
					     (unsigned long long)w->frames);
			return -1;
		}
		buf += n;
		len -= (size_t)n;
		w->bytes += (uint64_t)n;
	}
	return 0;
}

/* Push pending lines to the file; compressed, end a zstd block (end: the
 * stream) so everything written so far can be decompressed. */
static int flush_pending(struct recording_writer *w, bool end, struct ms_error *err)
{
	if (w->failed) {
		ms_error_set(err, "%s: an earlier write failed; nothing more is written", w->path);
		return -1;
	}
	w->frames_since_flush = 0;
	if (!w->zstd) {
		int ret = write_all(w, w->pending, w->pending_len, err);

		w->pending_len = 0;
		return ret;
	}
	ZSTD_inBuffer in = { w->pending, w->pending_len, 0 };
	ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_flush;
	size_t left;

	do {
		ZSTD_outBuffer out = { w->zout, w->zout_cap, 0 };

		left = ZSTD_compressStream2(w->zstd, &out, &in, mode);
		if (ZSTD_isError(left)) {
			w->failed = true;
			ms_error_set(err, "%s: zstd: %s", w->path, ZSTD_getErrorName(left));
			return -1;
		}
		if (write_all(w, w->zout, out.pos, err) < 0)
			return -1;
	} while (left > 0 || in.pos < in.size);
	w->pending_len = 0;
	return 0;
}

/* One line (without its newline) onto the lines waiting to be written. */
static int pend_line(struct recording_writer *w, const char *line, size_t len, struct ms_error *err)
{
	if (w->pending_len + len + 1 > w->pending_cap) {
		size_t cap = (w->pending_len + len + 1) * 2;
		char *grown = realloc(w->pending, cap);

		if (!grown) {
			ms_error_set(err, "%s: out of memory", w->path);
			return -1;
		}
		w->pending = grown;
		w->pending_cap = cap;
	}
	memcpy(w->pending + w->pending_len, line, len);
	w->pending[w->pending_len + len] = '\n';
	w->pending_len += len + 1;
	return 0;
}

static int append_line(struct recording_writer *w, json_t *record, struct ms_error *err)
{
	char *text = json_dumps(record, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	int ret;

	if (!text) {
		ms_error_set(err, "%s: out of memory", w->path);
		return -1;
	}
	ret = pend_line(w, text, strlen(text), err);
	free(text);
	return ret;
}

int recording_writer_append(struct recording_writer *w, const char *line, size_t len, bool sample,
			    struct ms_error *err)
{
	if (w->view_only)
		return 0;
	if (pend_line(w, line, len, err) < 0)
		return -1;
	w->samples += sample;
	if (w->pending_len >= SAMPLE_BATCH_BYTES)
		return flush_pending(w, false, err);
	return 0;
}

uint64_t recording_writer_origin(const struct recording_writer *w)
{
	return w->origin_ns;
}

uint64_t recording_writer_samples(const struct recording_writer *w)
{
	return w->samples;
}

static uint64_t relative(const struct recording_writer *w, uint64_t now_ns)
{
	return now_ns > w->origin_ns ? now_ns - w->origin_ns : 0;
}

static void set_label(json_t *obj, const char *key, int value)
{
	if (value != LABEL_NONE)
		json_object_set_new(obj, key, json_integer(value));
}

/* A process names itself: its comm may be any bytes. JSON text is UTF-8, so
 * bytes that do not make UTF-8 are written as '?'. */
static json_t *json_name(const char *text)
{
	json_t *v = json_string(text);
	char copy[64];

	if (v)
		return v;
	snprintf(copy, sizeof(copy), "%s", text);
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
			*c = '?';
	return json_string(copy);
}

static json_t *one_series_json(const struct series *s, int index)
{
	json_t *o = json_object();

	if (index >= 0)
		json_object_set_new(o, "i", json_integer(index));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "kind", json_string(s->kind == SERIES_GAUGE ? "gauge" : "counter"));
	if (s->unit[0])
		json_object_set_new(o, "unit", json_string(s->unit));
	if (s->scale != 1.0)
		json_object_set_new(o, "scale", json_real(s->scale));
	set_label(o, "cpu", s->labels.cpu);
	set_label(o, "node", s->labels.node);
	set_label(o, "socket", s->labels.socket);
	set_label(o, "pid", s->labels.pid);
	set_label(o, "tid", s->labels.tid);
	if (s->labels.comm[0])
		json_object_set_new(o, "comm", json_name(s->labels.comm));
	if (s->labels.instance[0])
		json_object_set_new(o, "instance", json_string(s->labels.instance));
	if (s->labels.cgroup)
		json_object_set_new(o, "cgroup", json_string(s->labels.cgroup));
	if (s->labels.whole_system)
		json_object_set_new(o, "whole_system", json_true());
	if (s->unavailable)
		json_object_set_new(o, "unavailable", json_string(s->unavailable));
	return o;
}

/* The header's table: every index the frames hold so far. A retired one
 * (a file continued mid-run) is only a place: its entry may be reused by
 * the sampler at any moment, so it is not read. */
static json_t *series_json(const struct recording_writer *w)
{
	json_t *list = json_array();

	for (int i = 0; list && i < w->known; i++)
		json_array_append_new(list, i < w->retired_cap && w->retired[i]
					    ? json_pack("{s:s, s:b}", "name", "retired", "retired", 1)
					    : one_series_json(&w->table->series[i], -1));
	return list;
}

static int mark(struct recording_writer *w, int index, unsigned char retired)
{
	if (index >= w->retired_cap) {
		int cap = w->retired_cap ? w->retired_cap : 256;
		unsigned char *grown;

		while (cap <= index)
			cap *= 2;
		grown = realloc(w->retired, (size_t)cap);
		if (!grown)
			return -1;
		memset(grown + w->retired_cap, 0, (size_t)(cap - w->retired_cap));
		w->retired = grown;
		w->retired_cap = cap;
	}
	w->retired[index] = retired;
	if (index >= w->known)
		w->known = index + 1;
	return 0;
}

static int grow_ints(int **list, int *cap, int need)
{
	int n = *cap ? *cap : 256;
	int *grown;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(grown = realloc(*list, sizeof(int) * (size_t)n)))
		return -1;
	for (int i = *cap; i < n; i++)
		grown[i] = -1;
	*list = grown;
	*cap = n;
	return 0;
}

/* Give table index m the lowest free place of the file, or a new one. */
static int place(struct recording_writer *w, int m)
{
	int f = 0;

	while (f < w->file_nr && w->mem_of[f] >= 0)
		f++;
	if (grow_ints(&w->mem_of, &w->mem_of_cap, f + 1) < 0 || grow_ints(&w->file_of, &w->file_of_cap, m + 1) < 0)
		return -1;
	if (f == w->file_nr)
		w->file_nr++;
	w->mem_of[f] = m;
	w->file_of[m] = f;
	return f;
}

static bool in_list(const int *list, int nr, int value)
{
	for (int k = 0; k < nr; k++)
		if (list[k] == value)
			return true;
	return false;
}

/* A series written brief: a process's or thread's that starts and ends with
 * this frame, with one plain value (read, the whole interval counted). */
static bool is_brief(const struct recording_writer *w, const struct frame *frame, int m)
{
	const struct series_changes *c = frame->changes;
	const struct sample *s = m < frame->nr ? &frame->samples[m] : NULL;

	return series_is_per_task(&w->table->series[m]) && in_list(c->retired, c->nr_retired, m) && s &&
	       s->valid && s->value <= (uint64_t)INT64_MAX && s->running_ns == s->enabled_ns;
}

/* Each node's tier, CPUs and kind, NUMA balancing's mode and demotion: what a
 * report needs to say why pages moved. Left out when the kernel's files are
 * malformed (`memscope list --topology` names the file). */
static json_t *tiers_json(const struct host *host)
{
	struct memory_tiers tiers;
	struct ms_error err = { "" };
	json_t *t, *nodes;

	if (memory_tiers_load(&tiers, &host->roots, &host->topo, &err) < 0)
		return NULL;
	t = json_object();
	nodes = json_array();
	for (int i = 0; i < tiers.nr_nodes; i++) {
		const struct node_tier *n = &tiers.nodes[i];
		json_t *row = json_pack("{s:i, s:b, s:s}", "node", n->node, "cpus", n->has_cpu, "kind",
					memory_kind_name(n->kind));

		json_object_set_new(row, "tier", n->tier < 0 ? json_null() : json_integer(n->tier));
		json_array_append_new(nodes, row);
	}
	json_object_set_new(t, "nodes", nodes);
	json_object_set_new(t, "numa_balancing",
			    tiers.numa_balancing < 0 ? json_null() : json_integer(tiers.numa_balancing));
	json_object_set_new(t, "demotion_enabled",
			    tiers.demotion_enabled < 0 ? json_null() : json_boolean(tiers.demotion_enabled));
	memory_tiers_free(&tiers);
	return t;
}

/* Each node's physical memory ranges (merged memory blocks), so that a
 * DAMON heat map shows where each node's memory is, not only the span of
 * the regions that happened to be seen; NULL when sysfs has no blocks. */
static json_t *memory_ranges_json(const struct host *host)
{
	struct phys_node_map map;
	struct ms_error err;
	json_t *a;

	if (phys_node_map_load(&map, &host->roots, &err) < 0)
		return NULL;
	a = map.nr ? json_array() : NULL;
	for (int i = 0; a && i < map.nr; i++) {
		char start[24], end[24];

		snprintf(start, sizeof(start), "%" PRIx64, map.ranges[i].start);
		snprintf(end, sizeof(end), "%" PRIx64, map.ranges[i].end);
		json_array_append_new(a, json_pack("[ssi]", start, end, map.ranges[i].node));
	}
	phys_node_map_free(&map);
	return a;
}

static json_t *host_json(const struct host *host, json_t *files)
{
	const struct topology *t = &host->topo;
	json_t *h = json_object(), *cpus = json_array(), *nodes = json_array(), *dist = json_array();
	json_t *pmus = json_array(), *tiers;
	struct utsname u;
	char name[256] = "";

	/* A fixture tree describes another machine: this one's names would lie. */
	if (host->roots.is_fixture)
		json_object_set_new(h, "fixture", json_true());
	else if (gethostname(name, sizeof(name) - 1) == 0)
		json_object_set_new(h, "hostname", json_string(name));
	if (!host->roots.is_fixture && uname(&u) == 0) {
		json_object_set_new(h, "kernel", json_string(u.release));
		json_object_set_new(h, "arch", json_string(u.machine));
	}
	/* [cpu, core, die, socket, node]: compact, one entry per online CPU. */
	for (int i = 0; i < t->nr_cpus; i++)
		json_array_append_new(cpus, json_pack("[iiiii]", t->cpus[i].cpu, t->cpus[i].core, t->cpus[i].die,
						      t->cpus[i].socket, t->cpus[i].node));
	for (int i = 0; i < t->nr_nodes; i++) {
		json_t *row = json_array();

		json_array_append_new(nodes, json_integer(t->nodes[i]));
		for (int j = 0; t->distance && j < t->nr_nodes; j++)
			json_array_append_new(row, json_integer(t->distance[i * t->nr_nodes + j]));
		json_array_append_new(dist, row);
	}
	for (int i = 0; i < host->pmus.nr; i++)
		json_array_append_new(pmus, json_string(host->pmus.pmus[i].name));
	json_object_set_new(h, "cpus", cpus);
	json_object_set_new(h, "nodes", nodes);
	json_object_set_new(h, "distance", dist);
	json_object_set_new(h, "pmus", pmus);
	if ((tiers = tiers_json(host)))
		json_object_set_new(h, "tiers", tiers);
	if ((tiers = memory_ranges_json(host)))
		json_object_set_new(h, "memory_ranges", tiers);
	if (files)
		json_object_set(h, "files", files);
	return h;
}

static json_t *header_json(const struct recording_writer_options *opt, const struct recording_writer *w)
{
	json_t *h = json_object(), *start = json_object();
	struct timespec now;
	struct tm tm;
	char text[64], stamp[80];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp, sizeof(stamp), "%s.%03ldZ", text, now.tv_nsec / 1000000);
	json_object_set_new(h, "format", json_string(RECORDING_FORMAT_NAME));
	json_object_set_new(h, "version", json_integer(RECORDING_FORMAT_VERSION));
	json_object_set_new(h, "memscope", json_string(MEMSCOPE_VERSION));
	json_object_set_new(start, "time", json_string(stamp));
	json_object_set_new(start, "unix_ns", json_integer((json_int_t)now.tv_sec * 1000000000 + now.tv_nsec));
	json_object_set_new(h, "start", start);
	json_object_set_new(h, "interval_ns", json_integer((json_int_t)opt->interval_ns));
	json_object_set_new(h, "target", json_string(opt->target ? opt->target : ""));
	json_object_set_new(h, "system_wide", json_boolean(opt->system_wide));
	if (opt->host)
		json_object_set_new(h, "host", host_json(opt->host, opt->host_files));
	json_object_set_new(h, "series", series_json(w));
	if (opt->catalog)
		json_object_set(h, "catalog", opt->catalog);
	if (opt->sampling)
		json_object_set(h, "sampling", opt->sampling);
	return h;
}

int recording_writer_open(struct recording_writer **out, const struct recording_writer_options *opt,
			  const struct series_table *table, struct ms_error *err)
{
	struct recording_writer *w = calloc(1, sizeof(*w));
	json_t *header;
	int ret;

	*out = NULL;
	if (!w || !(w->path = strdup(opt->path ? opt->path : ""))) {
		free(w);
		ms_error_set(err, "out of memory");
		return -1;
	}
	w->fd = -1;
	w->flush_frames = opt->flush_frames > 0 ? opt->flush_frames : RECORDING_FLUSH_FRAMES;
	w->origin_ns = opt->time_origin_ns;
	w->table = table;
	/* Continuing a run: the indices as the previous file's frames had them. */
	if (opt->continues) {
		const struct recording_writer *old = opt->continues;

		for (int i = 0; i < old->known; i++)
			if (mark(w, i, i < old->retired_cap && old->retired[i]) < 0) {
				ms_error_set(err, "out of memory");
				goto fail;
			}
	} else {
		w->known = table->nr;
	}
	/* No file yet: the view of the table is kept from the frames, so a
	 * file started later (continues) lists the series as they are then. */
	if (!opt->path) {
		w->view_only = true;
		*out = w;
		return 0;
	}
	/* The header lists the table as it stands: place i is index i, retired ones free. */
	if (grow_ints(&w->mem_of, &w->mem_of_cap, w->known + 1) < 0 ||
	    grow_ints(&w->file_of, &w->file_of_cap, w->known + 1) < 0) {
		ms_error_set(err, "out of memory");
		goto fail;
	}
	for (int i = 0; i < w->known; i++)
		if (!(i < w->retired_cap && w->retired[i]))
			w->mem_of[i] = w->file_of[i] = i;
	w->file_nr = w->known;
	w->values = json_array();
	if (opt->compress || ends_with(opt->path, ".zst")) {
		w->zstd = ZSTD_createCCtx();
		w->zout_cap = ZSTD_CStreamOutSize();
		w->zout = malloc(w->zout_cap);
		if (!w->zstd || !w->zout) {
			ms_error_set(err, "out of memory");
			goto fail;
		}
		ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_compressionLevel, ZSTD_LEVEL);
		/* A checksum lets the reader tell a damaged file from a cut one. */
		ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_checksumFlag, 1);
	}
	if (!w->values || (w->fd = opt->at_dir ? recording_file_open_at(opt->dir_fd, w->path, w->path, err)
					      : recording_file_open(w->path, err)) < 0)
		goto fail;
	header = header_json(opt, w);
	ret = header ? append_line(w, header, err) : -1;
	json_decref(header);
	if (ret < 0 || flush_pending(w, false, err) < 0)
		goto fail;
	*out = w;
	return 0;
fail:
	recording_writer_abandon(w);
	return -1;
}

/* Series that start with this frame, before it: {"series":[{"i":N,...}],"t":T}
 * with N their places in the file; then those whose whole life is this frame,
 * with their value: {"brief":[{...,"v":V}],"t":T}. */
static int write_added(struct recording_writer *w, const struct frame *frame, struct ms_error *err)
{
	const struct series_changes *c = frame->changes;
	json_t *list = json_array(), *brief = json_array(), *rec;
	int ret = 0, nr_brief = 0;

	if (!list || !brief)
		goto oom;
	for (int k = 0; k < c->nr_added; k++) {
		int m = c->added[k], f;
		json_t *o;

		if (is_brief(w, frame, m)) {
			if (!(o = one_series_json(&w->table->series[m], -1)))
				goto oom;
			/* Most are counters: a brief entry leaves that kind, the default, out. */
			if (w->table->series[m].kind == SERIES_COUNTER)
				json_object_del(o, "kind");
			json_object_set_new(o, "v", json_integer((json_int_t)frame->samples[m].value));
			json_array_append_new(brief, o);
			nr_brief++;
			continue;
		}
		if ((f = place(w, m)) < 0)
			goto oom;
		json_array_append_new(list, one_series_json(&w->table->series[m], f));
	}
	if (json_array_size(list)) {
		if (!(rec = json_pack("{s:O, s:I}", "series", list, "t", (json_int_t)relative(w, frame->time_ns))))
			goto oom;
		ret = append_line(w, rec, err);
		json_decref(rec);
	}
	if (ret == 0 && nr_brief) {
		if (!(rec = json_pack("{s:O, s:I}", "brief", brief, "t", (json_int_t)relative(w, frame->time_ns))))
			goto oom;
		ret = append_line(w, rec, err);
		json_decref(rec);
		w->briefs += (uint64_t)nr_brief;
	}
	json_decref(list);
	json_decref(brief);
	return ret;
oom:
	json_decref(list);
	json_decref(brief);
	ms_error_set(err, "%s: out of memory", w->path);
	return -1;
}

/* Series whose last values were in this frame, after it: {"retire":[N,...],"t":T}
 * with N their places, free from now on (a brief series has none). */
static int write_retired(struct recording_writer *w, const struct frame *frame, struct ms_error *err)
{
	const struct series_changes *c = frame->changes;
	json_t *list = json_array(), *rec;
	int ret;

	for (int k = 0; list && k < c->nr_retired; k++) {
		int m = c->retired[k], f = m < w->file_of_cap ? w->file_of[m] : -1;

		if (f < 0)
			continue;
		json_array_append_new(list, json_integer(f));
		w->mem_of[f] = w->file_of[m] = -1;
	}
	if (list && !json_array_size(list)) {
		json_decref(list);
		return 0;
	}
	rec = json_pack("{s:o, s:I}", "retire", list, "t", (json_int_t)relative(w, frame->time_ns));
	if (!rec) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	ret = append_line(w, rec, err);
	json_decref(rec);
	return ret;
}

int recording_writer_frame(struct recording_writer *w, const struct frame *frame, struct ms_error *err)
{
	json_t *rec, *mux = NULL;
	int ret;

	if (w->view_only) {
		for (int k = 0; frame->changes && k < frame->changes->nr_added; k++)
			if (mark(w, frame->changes->added[k], 0) < 0) {
				ms_error_set(err, "out of memory");
				return -1;
			}
		for (int k = 0; frame->changes && k < frame->changes->nr_retired; k++)
			mark(w, frame->changes->retired[k], 1);
		return 0;
	}
	if (frame->changes && frame->changes->nr_added) {
		for (int k = 0; k < frame->changes->nr_added; k++)
			if (mark(w, frame->changes->added[k], 0) < 0) {
				ms_error_set(err, "%s: out of memory", w->path);
				return -1;
			}
		if (write_added(w, frame, err) < 0)
			return -1;
	}
	rec = json_object();
	if (!rec) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	json_array_clear(w->values);
	for (int i = 0; i < w->file_nr; i++) {
		int m = w->mem_of[i];
		const struct sample *s = m >= 0 && m < frame->nr ? &frame->samples[m] : NULL;

		/* A free place, not read this time, or beyond what a JSON integer
		 * holds: null, never a wrong number. */
		if (!s || !s->valid || s->value > (uint64_t)INT64_MAX) {
			json_array_append_new(w->values, json_null());
			continue;
		}
		json_array_append_new(w->values, json_integer((json_int_t)s->value));
		/* Times only for multiplexed counters: the rest ran the whole interval. */
		if (s->running_ns != s->enabled_ns) {
			if (!mux)
				mux = json_array();
			json_array_append_new(mux, json_pack("[iII]", i, (json_int_t)s->enabled_ns,
							     (json_int_t)s->running_ns));
		}
	}
	/* Trailing nulls are left out (version 5): a line holds up to its last value,
	 * not every place a peak of processes alive at once left behind. */
	while (json_array_size(w->values) && json_is_null(json_array_get(w->values, json_array_size(w->values) - 1)))
		json_array_remove(w->values, json_array_size(w->values) - 1);
	json_object_set_new(rec, "t", json_integer((json_int_t)relative(w, frame->time_ns)));
	json_object_set_new(rec, "d", json_integer((json_int_t)frame->interval_ns));
	json_object_set(rec, "v", w->values);
	if (mux)
		json_object_set_new(rec, "m", mux);
	ret = append_line(w, rec, err);
	json_decref(rec);
	if (ret < 0)
		return -1;
	if (frame->changes && frame->changes->nr_retired) {
		if (write_retired(w, frame, err) < 0)
			return -1;
		for (int k = 0; k < frame->changes->nr_retired; k++)
			mark(w, frame->changes->retired[k], 1);
	}
	w->frames++;
	if (++w->frames_since_flush >= w->flush_frames)
		return flush_pending(w, false, err);
	return 0;
}

int recording_writer_label(struct recording_writer *w, uint64_t now_ns, const char *text, const char *phase,
			   struct ms_error *err)
{
	json_t *rec;
	int ret;

	if (w->view_only)
		return 0;
	rec = json_pack("{s:s, s:I}", "label", text, "t", (json_int_t)relative(w, now_ns));
	if (!rec) {
		ms_error_set(err, "a label must be UTF-8 text");
		return -1;
	}
	if (phase && phase[0])
		json_object_set_new(rec, "phase", json_string(phase));
	ret = append_line(w, rec, err);
	json_decref(rec);
	return ret < 0 ? -1 : flush_pending(w, false, err);
}

int recording_writer_control(struct recording_writer *w, uint64_t now_ns, const char *what,
			     uint64_t interval_ns, struct ms_error *err)
{
	json_t *rec;
	int ret;

	if (w->view_only)
		return 0;
	rec = json_pack("{s:s, s:I}", "control", what, "t", (json_int_t)relative(w, now_ns));
	if (!rec) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (!strcmp(what, "interval"))
		json_object_set_new(rec, "interval_ns", json_integer((json_int_t)interval_ns));
	ret = append_line(w, rec, err);
	json_decref(rec);
	return ret < 0 ? -1 : flush_pending(w, false, err);
}

static void free_writer(struct recording_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->zstd);
	json_decref(w->values);
	free(w->retired);
	free(w->mem_of);
	free(w->file_of);
	free(w->zout);
	free(w->pending);
	free(w->path);
	free(w);
}

int recording_writer_close(struct recording_writer *w, const char *reason, struct ms_error *err)
{
	json_t *rec;
	int ret = -1;

	if (!w)
		return 0;
	if (w->view_only) {
		free_writer(w);
		return 0;
	}
	if (w->failed) {
		ms_error_set(err, "%s: an earlier write failed", w->path);
		free_writer(w);
		return -1;
	}
	rec = json_pack("{s:s, s:I, s:I}", "end", reason ? reason : "", "frames", (json_int_t)w->frames, "brief_series",
			(json_int_t)w->briefs);
	if (rec && append_line(w, rec, err) == 0 && flush_pending(w, true, err) == 0)
		ret = 0;
	json_decref(rec);
	if (w->fd >= 0 && close(w->fd) < 0 && ret == 0) {
		ms_error_set(err, "%s: %s", w->path, strerror(errno));
		ret = -1;
	}
	w->fd = -1;
	free_writer(w);
	return ret;
}

void recording_writer_abandon(struct recording_writer *w)
{
	if (w)
		free_writer(w);
}

const char *recording_writer_path(const struct recording_writer *w) { return w->path; }
uint64_t recording_writer_frames(const struct recording_writer *w) { return w->frames; }
uint64_t recording_writer_bytes(const struct recording_writer *w) { return w->bytes; }
bool recording_writer_compressed(const struct recording_writer *w) { return w->zstd != NULL; }
