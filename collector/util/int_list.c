#include "util/int_list.h"

#include <stdlib.h>

int util_int_list_push(struct int_list *l, int x)
{
	if (l->nr == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		int *grown = realloc(l->v, sizeof(int) * (size_t)cap);

		if (!grown)
			return -1;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->nr++] = x;
	return 0;
}
