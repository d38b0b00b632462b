/* Drawing with the benchmark suite's plot.py (matplotlib), for the two
 * programs that draw: memscope (report --damon-heatmap --plot) and
 * memscope-bench. libc only: memscope-bench links it unsanitized and it
 * cross-builds for aarch64 with the suite. */
#ifndef MEMSCOPE_PLOT_LAUNCH_H
#define MEMSCOPE_PLOT_LAUNCH_H

#include <stddef.h>

/* plot.py: $MEMSCOPE_BENCH_PLOT, else source_dir's contrib/bench/suite/plot.py
 * (a build not installed), else data_dir's bench/plot.py; NULL when none is a
 * file. buf holds the path built. */
const char *plot_script_path(const char *source_dir, const char *data_dir, char *buf, size_t size);

/* Run plot.py JSON PREFIX FORMATS with the first Python that has matplotlib
 * ($MEMSCOPE_PYTHON or python3, then /usr/bin/python3; plot.py exits 3 when
 * it has none). 0, or -1 with why (no script, no matplotlib, plot.py failed). */
int plot_draw(const char *source_dir, const char *data_dir, const char *json_path, const char *prefix,
	      const char *formats, char *why, size_t whysize);

#endif
