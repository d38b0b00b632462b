#include "sinks/recording_sink.h"
#include "util/report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct recording_sink {
	struct recording_writer_options wopt;
	struct recording_writer *writer;
	const struct series_table *table;
	char path[PATH_MAX];
	const char *command_name;
	bool may_stop;               /* record stop: the run goes on without a file */
	/* memscope live: record FILE (from the page, whose token a client may
	 * hold) creates a plain name beneath the directory live started in,
	 * through this descriptor; -1 otherwise. */
	int start_dir;
	bool paused;
	bool failed;                 /* a write failed: no more frames, the run stops */
	struct ms_error err;
	/* record --sample: what went into the file, for the summary. */
	struct sample_item_storage *items;
	uint64_t samples;
	uint64_t lost[SAMPLE_LOST_KINDS];   /* throttled: times */
	/* What attributes the samples - mappings, names, forks, exits,
	 * unreadable maps - as written, so a file continued by `ctl record
	 * FILE` starts with them: its samples are then attributed alone. */
	struct sample_batch **context;
	int nr_context, cap_context;
	bool context_lost;                  /* out of memory keeping it */
};

static int rec_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct recording_sink *r = sink->priv;

	r->command_name = setup->command_name;
	r->table = setup->table;
	/* Frames and events carry times from the start of the run. */
	r->wopt.time_origin_ns = 0;
	r->wopt.path = r->path[0] ? r->path : NULL;
	return recording_writer_open(&r->writer, &r->wopt, setup->table, err);
}

static void fail(struct recording_sink *r, const struct ms_error *err)
{
	r->failed = true;
	r->err = *err;
}

static int rec_frame(struct sink *sink, const struct sink_frame *f)
{
	struct recording_sink *r = sink->priv;
	struct ms_error err = { "" };

	if (r->failed)
		return 1;
	/* A final frame that covers nothing adds nothing to the file. */
	if (f->last && f->frame->interval_ns == 0)
		return 0;
	if (recording_writer_frame(r->writer, f->frame, &err) < 0) {
		fail(r, &err);
		return 1;
	}
	return 0;
}

static bool is_context(const struct sample_item *item)
{
	return item->kind == SAMPLE_ITEM_MAP || item->kind == SAMPLE_ITEM_TASK ||
	       item->kind == SAMPLE_ITEM_MAPS_UNREADABLE;
}

static void keep_context(struct recording_sink *r, const struct sample_item *item)
{
	struct sample_batch *last = r->nr_context ? r->context[r->nr_context - 1] : NULL;

	if (r->context_lost || (last && sample_batch_append(last, item, 0) == 0))
		return;
	if (r->nr_context == r->cap_context) {
		int cap = r->cap_context ? 2 * r->cap_context : 8;
		struct sample_batch **more = realloc(r->context, (size_t)cap * sizeof(*more));

		if (!more) {
			r->context_lost = true;
			return;
		}
		r->context = more;
		r->cap_context = cap;
	}
	if (!(last = sample_batch_new(SAMPLE_BATCH_BYTES)) || sample_batch_append(last, item, 0) < 0) {
		sample_batch_unref(last);
		r->context_lost = true;
		return;
	}
	r->context[r->nr_context++] = last;
}

/* The context so far, at the start of a continued file (time 0: it
 * existed before the file's start). */
static int write_context(struct recording_sink *r, struct ms_error *err)
{
	struct sample_item item;

	for (int i = 0; i < r->nr_context; i++) {
		size_t at = 0;

		while (sample_batch_next(r->context[i], &at, r->items, &item)) {
			item.time_ns = 0;
			if (recording_writer_sample_item(r->writer, &item, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* Samples, mappings, process events and losses, as they were read. */
static int rec_samples(struct sink *sink, const struct sample_batch *batch)
{
	struct recording_sink *r = sink->priv;
	struct ms_error err = { "" };
	struct sample_item item;
	size_t at = 0;

	if (r->failed)
		return 1;
	while (sample_batch_next(batch, &at, r->items, &item)) {
		if (item.kind == SAMPLE_ITEM_SAMPLE)
			r->samples++;
		else if (item.kind == SAMPLE_ITEM_LOST)
			r->lost[item.lost_kind] += item.lost_kind == LOST_THROTTLED ? 1 : item.lost;
		if (recording_writer_sample_item(r->writer, &item, &err) < 0) {
			fail(r, &err);
			return 1;
		}
		if (is_context(&item))
			keep_context(r, &item);
	}
	return 0;
}

/* "N samples; M lost because ..." after a recording with --sample. */
static void sampling_summary(const struct recording_sink *r)
{
	const char *name = r->command_name;

	if (!r->wopt.sampling || !json_array_size(json_object_get(r->wopt.sampling, "events")))
		return;
	fprintf(stderr, "memscope %s: %llu samples", name, (unsigned long long)r->samples);
	if (r->lost[LOST_RING_FULL])
		fprintf(stderr, "; %llu lost because the ring buffer was full (raise --mmap-pages, or sample less "
			"often with -c or -F)", (unsigned long long)r->lost[LOST_RING_FULL]);
	if (r->lost[LOST_UNDELIVERED])
		fprintf(stderr, "; %llu counted by the kernel but never delivered (the ring buffer was still full when "
			"sampling stopped: raise --mmap-pages)", (unsigned long long)r->lost[LOST_UNDELIVERED]);
	if (r->lost[LOST_BY_KERNEL])
		fprintf(stderr, "; %llu dropped by the kernel or the hardware before the ring buffer",
			(unsigned long long)r->lost[LOST_BY_KERNEL]);
	if (r->lost[LOST_BEHIND])
		fprintf(stderr, "; %llu read but not written: the recording fell behind (sample less often with -c or "
			"-F)", (unsigned long long)r->lost[LOST_BEHIND]);
	if (r->lost[LOST_THROTTLED])
		fprintf(stderr, "; the kernel throttled sampling %llu times (samples above "
			"/proc/sys/kernel/perf_event_max_sample_rate are not taken: sample less often)",
			(unsigned long long)r->lost[LOST_THROTTLED]);
	fprintf(stderr, "\n");
}

static double seconds(const struct recording_sink *r, uint64_t t_ns)
{
	return t_ns > r->wopt.time_origin_ns ? (double)(t_ns - r->wopt.time_origin_ns) / 1e9 : 0.0;
}

/* Why name cannot be a file record FILE creates, or NULL. Blank names and
 * names with spaces at either end are never what was meant ("record  "). */
static const char *bad_name(const char *name, bool plain)
{
	size_t len = strlen(name);

	if (!len || strspn(name, " \t") == len)
		return "record needs a file name";
	if (isspace((unsigned char)name[0]) || isspace((unsigned char)name[len - 1]))
		return "a file name that starts or ends with a space is refused (quote nothing: record NAME)";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return "a file name with a control character is refused";
	if (plain && strchr(name, '/'))
		return "memscope live records into the directory it was started in: give a plain file name, "
		       "without '/' (record NAME.rec)";
	if (plain && (!strcmp(name, ".") || !strcmp(name, "..") || name[0] == '.'))
		return "memscope live records into the directory it was started in: give a plain file name that "
		       "does not start with '.' (record NAME.rec)";
	return NULL;
}

/* memscope ctl sends the path it was given made absolute: when its
 * directory is the one live started in (the same directory, by device and
 * inode of what opens, not by name), the file is its last component there.
 * Nothing is created or written through the path. NULL otherwise. */
static const char *in_start_dir(const struct recording_sink *r, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat here, there;
	int fd;
	bool same;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return NULL;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	same = fstat(fd, &there) == 0 && fstat(r->start_dir, &here) == 0 && here.st_dev == there.st_dev &&
	       here.st_ino == there.st_ino;
	close(fd);
	return same ? slash + 1 : NULL;
}

/* record FILE: the next frames go to a new file; the old one is closed. */
static void rotate(struct recording_sink *r, const char *path, uint64_t now, const struct series_table *table,
		   char *reply, size_t size)
{
	struct recording_writer *old = r->writer;
	char old_path[PATH_MAX];
	unsigned long long old_frames = recording_writer_frames(old);
	struct recording_writer_options wopt = r->wopt;
	struct ms_error err = { "" };

	const char *why;

	if (r->start_dir >= 0 && strchr(path, '/') && in_start_dir(r, path))
		path = in_start_dir(r, path);
	why = bad_name(path, r->start_dir >= 0);

	if (why || strlen(path) >= sizeof(r->path)) {
		snprintf(reply, size, "error: %s%s", why ? why : "the file name is too long",
			 r->may_stop ? " (or record stop)" : "");
		return;
	}
	snprintf(old_path, sizeof(old_path), "%s", r->path);
	if (!strcmp(old_path, path)) {
		snprintf(reply, size, "error: already recording to %s", path);
		return;
	}
	wopt.path = path;
	wopt.at_dir = r->start_dir >= 0;
	wopt.dir_fd = r->start_dir;
	wopt.time_origin_ns = now;
	wopt.continues = old;
	if (recording_writer_open(&r->writer, &wopt, table, &err) < 0) {
		r->writer = old;
		if (old_path[0])
			snprintf(reply, size, "error: %s (still recording to %s)", err.text, old_path);
		else
			snprintf(reply, size, "error: %s", err.text);
		return;
	}
	if (write_context(r, &err) < 0) {
		recording_writer_abandon(r->writer);
		r->writer = old;
		snprintf(reply, size, "error: %s (still recording to %s)", err.text, old_path);
		return;
	}
	if (r->context_lost)
		ms_warn("%s misses some mappings of the processes sampled before it (out of "
			"memory keeping them): their samples may be attributed as unknown", path);
	r->wopt.time_origin_ns = now;
	snprintf(r->path, sizeof(r->path), "%s", path);
	if (r->paused)
		recording_writer_control(r->writer, now, "pause", 0, &err);
	if (!old_path[0]) {
		recording_writer_close(old, NULL, &err);
		snprintf(reply, size, "ok: recording to %s", path);
	} else if (recording_writer_close(old, "continued in another file", &err) < 0)
		snprintf(reply, size, "error: recording to %s now, but closing %s failed: %s", path, old_path,
			 err.text);
	else
		snprintf(reply, size, "ok: recording to %s; %s closed with %llu frames", path, old_path, old_frames);
}

/* record stop (memscope live): the file ends; frames go on to the other
 * sinks, and a later record FILE starts another. */
static void stop(struct recording_sink *r, uint64_t now, char *reply, size_t size)
{
	struct recording_writer *old = r->writer;
	unsigned long long frames = recording_writer_frames(old);
	struct recording_writer_options wopt = r->wopt;
	struct ms_error err = { "" };

	if (!r->may_stop) {
		snprintf(reply, size, "error: memscope %s records until the run ends (record FILE goes on in "
			 "another file)", r->command_name);
		return;
	}
	if (!r->path[0]) {
		snprintf(reply, size, "error: not recording (record FILE starts)");
		return;
	}
	wopt.path = NULL;
	wopt.time_origin_ns = now;
	wopt.continues = old;
	if (recording_writer_open(&r->writer, &wopt, r->table, &err) < 0) {
		r->writer = old;
		snprintf(reply, size, "error: %s (still recording to %s)", err.text, r->path);
		return;
	}
	if (recording_writer_close(old, "record stop", &err) < 0)
		snprintf(reply, size, "error: stopped, but closing %s failed: %s", r->path, err.text);
	else
		snprintf(reply, size, "ok: %s closed with %llu frames", r->path, frames);
	r->path[0] = '\0';
}

static void status(const struct recording_sink *r, char *reply, size_t size)
{
	if (!r->path[0]) {
		snprintf(reply, size, "ok: not recording (record FILE starts), interval %llu ms, %s, pid %d",
			 (unsigned long long)(r->wopt.interval_ns / 1000000ull), r->paused ? "paused" : "running",
			 (int)getpid());
		return;
	}
	snprintf(reply, size, "ok: recording %s to %s: %llu frames, %llu bytes%s, interval %llu ms, %s, pid %d",
		 r->wopt.target ? r->wopt.target : "", r->path,
		 (unsigned long long)recording_writer_frames(r->writer),
		 (unsigned long long)recording_writer_bytes(r->writer),
		 recording_writer_compressed(r->writer) ? " (zstd)" : "",
		 (unsigned long long)(r->wopt.interval_ns / 1000000ull), r->paused ? "paused" : "running",
		 (int)getpid());
}

static int rec_event(struct sink *sink, const struct sink_event *ev)
{
	struct recording_sink *r = sink->priv;
	char scratch[SINK_REPLY_MAX];
	char *reply = ev->reply ? ev->reply->text : scratch;
	size_t size = ev->reply ? sizeof(ev->reply->text) : sizeof(scratch);
	struct ms_error err = { "" };
	int ret = 0;

	if (r->failed) {
		snprintf(reply, size, "error: the recording has stopped: %s", r->err.text);
		return 1;
	}
	switch (ev->kind) {
	case SINK_EVENT_LABEL:
		ret = recording_writer_label(r->writer, ev->time_ns, ev->text, NULL, &err);
		snprintf(reply, size, "ok: label '%s' at %.3f s%s%s", ev->text, seconds(r, ev->time_ns),
			 r->path[0] ? " in " : "", r->path);
		break;
	case SINK_EVENT_PHASE_BEGIN:
	case SINK_EVENT_PHASE_END: {
		bool begin = ev->kind == SINK_EVENT_PHASE_BEGIN;

		ret = recording_writer_label(r->writer, ev->time_ns, ev->text, begin ? "begin" : "end", &err);
		snprintf(reply, size, "ok: phase '%s' %s at %.3f s", ev->text, begin ? "begins" : "ends",
			 seconds(r, ev->time_ns));
		break;
	}
	case SINK_EVENT_PAUSE:
	case SINK_EVENT_RESUME:
		r->paused = ev->kind == SINK_EVENT_PAUSE;
		ret = recording_writer_control(r->writer, ev->time_ns, r->paused ? "pause" : "resume", 0, &err);
		if (r->paused)
			snprintf(reply, size, "ok: paused at %.3f s: no frames are %s until resume",
				 seconds(r, ev->time_ns), r->path[0] ? "written" : "handed on");
		else
			snprintf(reply, size, "ok: resumed at %.3f s", seconds(r, ev->time_ns));
		break;
	case SINK_EVENT_INTERVAL:
		r->wopt.interval_ns = ev->interval_ns;
		ret = recording_writer_control(r->writer, ev->time_ns, "interval", ev->interval_ns, &err);
		snprintf(reply, size, "ok: interval %llu ms from %.3f s",
			 (unsigned long long)(ev->interval_ns / 1000000ull), seconds(r, ev->time_ns));
		break;
	case SINK_EVENT_REQUEST:
		if (!strcmp(ev->text, "status"))
			status(r, reply, size);
		else if (!strcmp(ev->text, "record stop"))
			stop(r, ev->time_ns, reply, size);
		else if (!strncmp(ev->text, "record", 6) && (!ev->text[6] || ev->text[6] == ' '))
			rotate(r, ev->text[6] ? ev->text + 7 : "", ev->time_ns, r->table,
			       reply, size);
		else
			snprintf(reply, size, "error: the recording does not know '%s'", ev->text);
		break;
	default:
		break;
	}
	if (ret < 0) {
		fail(r, &err);
		snprintf(reply, size, "error: %s", err.text);
		return 1;
	}
	return 0;
}

/* Write the end record and say what was written, as perf record does. */
static void rec_end(struct sink *sink, const struct sink_end *end)
{
	struct recording_sink *r = sink->priv;
	unsigned long long frames;
	struct ms_error err = { "" };
	struct stat st;

	if (r->failed || !r->writer) {
		ms_warn("%s", r->err.text);
		return;
	}
	if (!r->path[0]) {
		recording_writer_close(r->writer, NULL, &err);
		r->writer = NULL;
		return;
	}
	/* Samples this sink was too far behind to take: the file says how many. */
	if (end->samples_dropped) {
		struct sample_item lost = { .kind = SAMPLE_ITEM_LOST, .lost_kind = LOST_BEHIND, .event = -1,
					    .lost = end->samples_dropped };

		r->lost[LOST_BEHIND] += end->samples_dropped;
		if (recording_writer_sample_item(r->writer, &lost, &err) < 0) {
			fail(r, &err);
			ms_report(&err);
			return;
		}
	}
	sampling_summary(r);
	frames = recording_writer_frames(r->writer);
	if (recording_writer_close(r->writer, end->reason_text, &err) < 0) {
		r->writer = NULL;
		fail(r, &err);
		ms_report(&err);
		return;
	}
	r->writer = NULL;
	ms_warn("wrote %llu frames%s (%lld bytes) to %s", frames,
		r->samples ? " and the samples" : "",
		stat(r->path, &st) == 0 ? (long long)st.st_size : -1LL, r->path);
}

static void rec_close(struct sink *sink)
{
	struct recording_sink *r = sink->priv;

	if (!r)
		return;
	/* Not ended (the run failed), or a write failed: no end record. */
	recording_writer_abandon(r->writer);
	for (int i = 0; i < r->nr_context; i++)
		sample_batch_unref(r->context[i]);
	free(r->context);
	free(r->items);
	if (r->start_dir >= 0)
		close(r->start_dir);
	free(r);
	sink->priv = NULL;
}

static const struct sink_ops recording_sink_ops = {
	.name = "recording",
	.open = rec_open,
	.frame = rec_frame,
	.event = rec_event,
	.samples = rec_samples,
	.end = rec_end,
	.close = rec_close,
};

int recording_sink_init(struct sink *sink, const struct recording_writer_options *opt, struct ms_error *err)
{
	struct recording_sink *r = calloc(1, sizeof(*r));

	memset(sink, 0, sizeof(*sink));
	if (r && !(r->items = malloc(sizeof(*r->items)))) {
		free(r);
		r = NULL;
	}
	if (!r) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	r->wopt = *opt;
	r->start_dir = -1;
	snprintf(r->path, sizeof(r->path), "%s", opt->path ? opt->path : "");
	sink->ops = &recording_sink_ops;
	sink->priv = r;
	sink->queue_length = RECORDING_SINK_QUEUE;
	sink->answers = true;
	return 0;
}

int recording_sink_init_stoppable(struct sink *sink, const struct recording_writer_options *opt,
				  struct ms_error *err)
{
	struct recording_sink *r;

	if (recording_sink_init(sink, opt, err) < 0)
		return -1;
	r = sink->priv;
	r->may_stop = true;
	/* The directory as it is now: a later rename or link of its name
	 * changes nothing about where record FILE creates. */
	r->start_dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->start_dir < 0) {
		ms_error_set(err, "the directory memscope live was started in (where record FILE creates files): "
			     "%s", strerror(errno));
		rec_close(sink);
		return -1;
	}
	return 0;
}

const char *recording_sink_error(const struct sink *sink)
{
	const struct recording_sink *r = sink->priv;

	return r && r->failed ? r->err.text : NULL;
}
