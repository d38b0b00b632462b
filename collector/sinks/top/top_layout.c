/* Whole columns leave a narrow terminal, lowest priority first (top_layout.h). */
#include "sinks/top/top_layout.h"

int top_layout_fit(const struct top_layout_col *cols, int n, int lead, int flex_min, int avail, bool *shown)
{
	int used = lead + (flex_min > 0 ? 1 + flex_min : 0), hidden = 0;

	for (int i = 0; i < n; i++) {
		shown[i] = true;
		used += 1 + cols[i].width;
	}
	while (used > avail) {
		int drop = -1;

		/* The shown column of the highest rank; among equal ranks the
		 * rightmost, so a group (one per node) leaves from its end. */
		for (int i = 0; i < n; i++)
			if (shown[i] && cols[i].drop_rank >= 0 && (drop < 0 || cols[i].drop_rank >= cols[drop].drop_rank))
				drop = i;
		if (drop < 0)
			break;
		shown[drop] = false;
		used -= 1 + cols[drop].width;
		hidden++;
	}
	return hidden;
}
