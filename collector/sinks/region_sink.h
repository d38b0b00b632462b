/* The regions sink: memscope report --regions. Totals of every counter and
 * metric per marked region (a phase of the program: phase begin/end from the
 * marker API, memscope ctl or the FIFO), as LIKWID's marker API reports
 * them: each region's calls (begin/end pairs, summed), time, each event's
 * total and each metric computed over those totals, for the whole system and
 * each node and socket the recording has.
 *
 * A frame counts in every region open when it arrives: the frames between a
 * region's begin and its end. memscope record takes a frame at each phase
 * marker (session_control_read_at_phases), so a region holds exactly what
 * its phase counted; without that (a replay) a boundary falls on the next
 * frame's edge. Regions nest and overlap freely, each counted on its own
 * (an outer region includes its inner ones); a begin of a region already
 * open and an end of one not open are ignored and reported; a region still
 * open at the end is counted up to the last frame and reported as open. */
#ifndef MEMSCOPE_REGION_SINK_H
#define MEMSCOPE_REGION_SINK_H

#include <stdio.h>

#include "sinks/sink.h"
#include "sinks/stat_output.h"
#include "util/error.h"

struct region_sink_options {
	enum stat_format format;   /* text: LIKWID-like tables; csv; json: one object per region */
	FILE *out;
};

int region_sink_init(struct sink *sink, const struct region_sink_options *opt, struct ms_error *err);

#endif
