/* Arrays: the element count of a fixed array, and one way to grow a heap one. */
#ifndef MEMSCOPE_ARRAY_H
#define MEMSCOPE_ARRAY_H

#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Make *items (an array of elements of size bytes, *cap of them allocated)
 * hold at least need: the capacity doubles from 16 until it does. 0, or -1
 * with *items and *cap unchanged when memory or size_t runs out. items is the
 * address of the array pointer (T **). */
int array_grow(void *items, size_t *cap, size_t need, size_t size);
/* The same for an int capacity (need below 0 is refused). */
int array_grow_int(void *items, int *cap, int need, size_t size);

#endif
