#include "util/array.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int array_grow(void *items, size_t *cap, size_t need, size_t size)
{
	size_t next = *cap ? *cap : 16;
	void *array, *grown;

	if (need <= *cap)
		return 0;
	while (next < need) {
		if (next > SIZE_MAX / 2)
			return -1;
		next *= 2;
	}
	if (size && next > SIZE_MAX / size)
		return -1;
	memcpy(&array, items, sizeof(array));
	if (!(grown = realloc(array, next * size)))
		return -1;
	memcpy(items, &grown, sizeof(grown));
	*cap = next;
	return 0;
}

int array_grow_int(void *items, int *cap, int need, size_t size)
{
	size_t wide = (size_t)(*cap < 0 ? 0 : *cap);

	if (need < 0)
		return -1;
	if (array_grow(items, &wide, (size_t)need, size) < 0)
		return -1;
	if (wide > INT_MAX)
		wide = (size_t)need;   /* the doubled capacity does not fit: keep what was asked for */
	*cap = (int)wide;
	return 0;
}
