/* The replay source: counter values for each interval read from a file
 * (format: docs/replay-format.md) instead of from the kernel, so the whole
 * pipeline - resolver, plan, metric engine, output - runs on a fixture
 * machine. It registers exactly the series the perf and procfs sources would
 * register for the same plan (same names and cpu/node/socket labels), and each
 * sample() also sets the frame's time and interval from the file. The file is
 * read and checked completely at open(): an unknown series or a malformed line
 * is an error naming file:line. */
#ifndef MEMSCOPE_REPLAY_SOURCE_H
#define MEMSCOPE_REPLAY_SOURCE_H

#include "util/error.h"
#include "host/host.h"
#include "metrics/metrics.h"
#include "sampler/source.h"

int replay_source_init(struct source *src, const struct host *host, const struct metric_plan *plan,
			 const char *path, struct ms_error *err);

/* Number of frames in the file (valid after open). */
int replay_source_nr_frames(const struct source *src);

#endif
