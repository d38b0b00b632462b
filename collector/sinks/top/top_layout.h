/* Which columns of a table fit a terminal of a given width. A table too wide
 * for the terminal leaves out whole columns, the lowest priority first, so
 * no number and no title is ever cut; a flexible last column (the command
 * name) keeps a minimum width until every column that can go has gone, and
 * only then is cut at the right edge. */
#ifndef MEMSCOPE_TOP_LAYOUT_H
#define MEMSCOPE_TOP_LAYOUT_H

#include <stdbool.h>

/* One column after the row's leading cell: it takes a space and `width`
 * characters. `drop_rank` orders the leaving: the highest goes first; a
 * negative rank never goes. */
struct top_layout_col {
	int width;
	int drop_rank;
};

/* Decide shown[0..n) for a terminal `avail` characters wide, rows starting
 * with a `lead`-wide cell and ending, when flex_min > 0, with a flexible
 * column (a space and at least flex_min characters). Returns how many
 * columns are hidden. */
int top_layout_fit(const struct top_layout_col *cols, int n, int lead, int flex_min, int avail, bool *shown);

#endif
