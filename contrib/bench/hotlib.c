#include "hotlib.h"

#include <unistd.h>

void hotlib_fill(char *p, size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < bytes; i += (size_t)page)
		p[i] = (char)(i >> 12); /* HOT-LINE */
}
