/* The perf source: counters opened with libperf, one group per PMU, read with
 * one read() per group and per (CPU, thread) through PERF_FORMAT_GROUP. */
#ifndef MEMSCOPE_PERF_SOURCE_H
#define MEMSCOPE_PERF_SOURCE_H

#include <stdbool.h>

#include "util/error.h"
#include "sampler/source.h"

struct host;
struct target;
struct event;

struct perf_source_options {
	const struct host *host;
	const struct target *target;
	const struct event *events;
	int nr_events;
	/* Task targets: count per CPU too, so totals can be split by CPU, socket
	 * or node. System-wide targets are always per CPU. */
	bool task_per_cpu;
	/* Counters stay disabled until resumed (stat -D -1): a command's too,
	 * which otherwise start at its exec. */
	bool start_disabled;
	/* stat --per-thread: a series per thread (labels pid, tid, comm) of the
	 * processes, of the command, or with -a of every thread on the system
	 * (perf's --per-thread -a); uncore events stay per CPU. */
	bool per_thread;
};

/* Sets up src; the counters are opened by src->ops->open(). */
int perf_source_init(struct source *src, const struct perf_source_options *opt, struct ms_error *err);

/* A sampling source whose events also count (sources/sample_source.h): an
 * event of src that one of them counts on the same tasks is read from it
 * rather than opened a second time in the process's path (page-faults while
 * page faults are sampled). Call before src opens; sampling must be a
 * sampling source on src's target. Nothing when src is not a perf source. */
void perf_source_count_from(struct source *src, const struct source *sampling);

#endif
