/* Recording files: the frames of a run, kept to be reported later, here or on
 * another machine. Format v5 (docs/recording-format.md; v1 to v4 files still read):
 * JSON Lines, the first line a header that describes everything needed to
 * read the rest (the host, the series table, the interval, the wall-clock
 * start, optionally the metric plan), then one record per line: a frame, the
 * series that start with the next frame or ended with the last (processes
 * coming and going), a label, a control event (pause, resume, interval), and
 * an end record on a clean finish. A file
 * whose name ends in ".zst" (or written with compression asked for) is one
 * zstd stream, flushed at the same points as the plain file, so a killed
 * recorder leaves it readable too.
 *
 * Writer: recording_writer_*; reader: recording_reader_*. Both use jansson;
 * the reader takes frame lines in the writer's form by a direct scan
 * (recording/frame_line.h). */
#ifndef MEMSCOPE_RECORDING_H
#define MEMSCOPE_RECORDING_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"
#include "sampler/frame.h"
#include "host/host.h"
#include "host/topology.h"
#include "sampler/sample_item.h"

#define RECORDING_FORMAT_NAME "memscope-recording"
#define RECORDING_FORMAT_VERSION 5
/* perf record writes perf.data; memscope record writes this. */
#define RECORDING_DEFAULT_FILE "memscope.rec"
/* Frames are written to the file in batches of this many (and at every
 * label, control event and at the end): a SIGKILL loses at most these. */
#define RECORDING_FLUSH_FRAMES 8

/* ---- Writing ---- */

struct recording_writer_options {
	/* NULL: no file, only the view of the series table the frames give
	 * (a run that may start recording later: its continues). */
	const char *path;
	/* path is a plain name created beneath the open directory dir_fd (the
	 * directory memscope live started in), never resolved from "/". */
	bool at_dir;
	int dir_fd;
	bool compress;              /* zstd even when the name does not end in .zst */
	int flush_frames;           /* 0: RECORDING_FLUSH_FRAMES */
	const struct host *host;    /* topology and PMUs of the machine; NULL: none recorded */
	const char *target;         /* what is measured, for people: "'touchmem 50'" */
	bool system_wide;           /* the target is the whole system (-a), not a command or PIDs */
	uint64_t interval_ns;
	/* Frame times are stored relative to this CLOCK_MONOTONIC instant (0 when
	 * the frames already carry times relative to the start, as replays do). */
	uint64_t time_origin_ns;
	/* The metric plan (documented optional "catalog" member), or NULL. The
	 * writer takes a reference of its own. */
	json_t *catalog;
	/* recording_host_snapshot() of the host, so metrics can be recomputed
	 * on another machine; NULL: none. The writer takes a reference. */
	json_t *host_files;
	/* The writer of the previous file of this run (ctl record FILE): the
	 * new header lists the series as its frames left them. NULL: the run
	 * starts with this file, with the table as it is at open. */
	const struct recording_writer *continues;
	/* The sampling events (documented optional "sampling" member), or NULL.
	 * The writer takes a reference. */
	json_t *sampling;
};

struct recording_writer;

/* Create the file safely (recording_create.h: never through a link, an
 * existing recording kept as PATH.old unless another memscope is writing it)
 * and write the header. The file stays locked until the writer is closed.
 * table is kept: frames that list added series (frame.changes) are described
 * from it. */
int recording_writer_open(struct recording_writer **out, const struct recording_writer_options *opt,
			  const struct series_table *table, struct ms_error *err);
/* The next frame. Frames are buffered and flushed every few frames. */
int recording_writer_frame(struct recording_writer *w, const struct frame *frame, struct ms_error *err);
/* A label (phase: NULL, "begin" or "end") at CLOCK_MONOTONIC instant now_ns. */
int recording_writer_label(struct recording_writer *w, uint64_t now_ns, const char *text, const char *phase,
			   struct ms_error *err);
/* A control event: "pause", "resume", or "interval" (with the new interval). */
int recording_writer_control(struct recording_writer *w, uint64_t now_ns, const char *what,
			     uint64_t interval_ns, struct ms_error *err);
/* A sample, a mapping, a process event or a loss, as the sampling source
 * handed it over; written in the next batch (a large batch is written at once). */
int recording_writer_sample_item(struct recording_writer *w, const struct sample_item *item, struct ms_error *err);
uint64_t recording_writer_samples(const struct recording_writer *w);   /* samples written so far */
/* Write the end record (reason: "the command exited", "SIGINT"...), flush and
 * close. Always frees w; -1 when anything could not be written. */
int recording_writer_close(struct recording_writer *w, const char *reason, struct ms_error *err);
/* Close after a write error: no end record, nothing more is tried. */
void recording_writer_abandon(struct recording_writer *w);

const char *recording_writer_path(const struct recording_writer *w);
uint64_t recording_writer_frames(const struct recording_writer *w);
uint64_t recording_writer_bytes(const struct recording_writer *w);   /* bytes in the file so far */
bool recording_writer_compressed(const struct recording_writer *w);

/* ---- Reading ---- */

struct recording_header {
	int version;
	char memscope_version[32];
	char target[256];
	bool system_wide;           /* the target was the whole system (-a), not a command or PIDs */
	char start_text[40];        /* wall-clock start, ISO 8601 UTC */
	int64_t start_unix_ns;
	uint64_t interval_ns;
	char hostname[128];
	char kernel[128];
	char arch[32];
	bool has_topology;
	struct topology topo;       /* of the recording machine, when has_topology */
	struct series_table table;  /* the series of the frames, in order; grows as series records are read */
	json_t *catalog;            /* the optional metric plan, or NULL (borrowed from the reader) */
	json_t *host_files;         /* the host's sysfs/procfs snapshot, or NULL (borrowed) */
	json_t *sampling;           /* the sampling events, or NULL (borrowed) */
	/* host.memory_ranges: [["start", "end", node], ...] (hexadecimal byte
	 * addresses), each node's merged memory blocks, or NULL (borrowed) */
	json_t *memory_ranges;
};

enum recording_record_kind {
	RECORD_FRAME,
	RECORD_LABEL,
	RECORD_CONTROL,
	RECORD_END,
	RECORD_SERIES,              /* series that start with the next frame (v2; v5 brief series too) */
	RECORD_RETIRE,              /* series whose last values were in the previous frame (v2; v5: brief ones too) */
	RECORD_SAMPLE_ITEM,         /* a sample, mapping, process event or loss: see item */
	RECORD_EOF,                 /* no more records (see recording_reader_cut) */
};

struct recording_record {
	enum recording_record_kind kind;
	uint64_t t_ns;              /* since the recording started */
	int line;                   /* where it is in the file (1-based) */
	/* RECORD_LABEL */
	char text[256];
	char phase[8];              /* "", "begin" or "end" */
	/* RECORD_CONTROL: "pause", "resume", "interval" */
	char control[16];
	uint64_t interval_ns;       /* RECORD_CONTROL "interval" */
	/* RECORD_END: why the recording ended */
	char reason[128];
	/* RECORD_SERIES, RECORD_RETIRE: indices in header->table (valid until
	 * the next call); the table already holds the added series */
	const int *indices;
	int nr_indices;
	/* RECORD_SAMPLE_ITEM: its pointers stay valid until the next record is read */
	struct sample_item item;
};

struct recording_reader;

/* Open and check the header. Errors name FILE:LINE and what is wrong. */
int recording_reader_open(struct recording_reader **out, const char *path, struct ms_error *err);
const struct recording_header *recording_reader_header(const struct recording_reader *r);
/* The next record. A frame fills `frame` (made with frame_init; it grows to
 * the table's length); its time is relative to the start.
 * Returns 0, or -1 with err on a broken record (FILE:LINE: ...). */
int recording_reader_next(struct recording_reader *r, struct recording_record *rec, struct frame *frame,
			  struct ms_error *err);
/* After RECORD_EOF: true when the file ends without its end record (the
 * recorder was killed or the disk filled); message says where and how many
 * frames were read. */
bool recording_reader_cut(const struct recording_reader *r, char *message, size_t size);
uint64_t recording_reader_frames(const struct recording_reader *r);
/* The file being read, as opened (live --input serves its bytes to the page). */
int recording_reader_fd(const struct recording_reader *r);
void recording_reader_close(struct recording_reader *r);

/* Is `path` a recording (by its first bytes)? */
bool recording_file_looks_like(const char *path);

#endif
