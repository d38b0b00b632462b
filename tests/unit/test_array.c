/* util/array.h: ARRAY_SIZE, and array_grow keeping what the array holds. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "util/array.h"

int main(void)
{
	static const short shorts[7];
	int *items = NULL, cap = 0;
	double *wide = NULL;
	size_t wide_cap = 0;

	CHECK_EQ_INT(ARRAY_SIZE(shorts), 7);
	CHECK_EQ_INT(array_grow_int(&items, &cap, 1, sizeof(*items)), 0);
	CHECK_EQ_INT(cap, 16);
	for (int i = 0; i < 100; i++) {
		CHECK_EQ_INT(array_grow_int(&items, &cap, i + 1, sizeof(*items)), 0);
		items[i] = i * 3;
	}
	CHECK_EQ_INT(cap, 128);   /* 16 doubled three times */
	for (int i = 0; i < 100; i++)
		if (items[i] != i * 3)
			CHECK_FAIL("items[%d] = %d after growing, expected %d", i, items[i], i * 3);
	/* Asking for no more than it holds changes nothing. */
	CHECK_EQ_INT(array_grow_int(&items, &cap, 50, sizeof(*items)), 0);
	CHECK_EQ_INT(cap, 128);
	CHECK_EQ_INT(array_grow_int(&items, &cap, -1, sizeof(*items)), -1);
	/* A size past size_t is refused, the array kept. */
	CHECK_EQ_INT(array_grow(&wide, &wide_cap, 3, sizeof(*wide)), 0);
	CHECK_EQ_INT(wide_cap, 16);
	CHECK_EQ_INT(array_grow(&wide, &wide_cap, SIZE_MAX / 4, sizeof(*wide)), -1);
	CHECK_EQ_INT(wide_cap, 16);
	CHECK(wide != NULL);
	free(items);
	free(wide);
	return check_summary("array");
}
