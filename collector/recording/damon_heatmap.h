/* memscope report --heatmap: the DAMON region records of a recording as a
 * map of time x physical address, the access rate as intensity: as text
 * (a character ramp, one row per time bucket) or drawn by the plot script
 * memscope bench draws with (contrib/bench/suite/plot.py) into PNG or SVG. */
#ifndef MEMSCOPE_DAMON_HEATMAP_H
#define MEMSCOPE_DAMON_HEATMAP_H

#include <stdio.h>

#include "util/error.h"

#define HEATMAP_COLUMNS 64      /* address buckets */
#define HEATMAP_MAX_ROWS 48     /* time buckets: aggregations are grouped beyond this many */

/* Read the recording at path and print the text map to out: of the regions
 * on node's memory (the address range they span), or of all (node -1); with
 * plot_path (NAME.png or NAME.svg) also draw it there. 0, or 1 with err. */
int damon_heatmap_report(const char *path, int node, FILE *out, const char *plot_path, struct ms_error *err);

#endif
