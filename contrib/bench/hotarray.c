/* hotarray: a known hot function writing a known array, for sampling tests.
 *
 *   hotarray [MIB] [--malloc] [--lib] [--delay MS | --wait] [--time]
 *
 * fill_table() writes one byte in every page of `table` (a global array of
 * MIB MiB, 64 by default), so each page faults once, at the line marked
 * HOT-LINE. A little other work (a 1 MiB heap buffer, touched by
 * other_work()) comes before it, so the hot function and array must stand
 * out from the rest. --malloc: the array is malloc'd instead (an anonymous
 * mapping, named by its address and size). --lib: the pages are written by
 * hotlib_fill() in libhotlib.so instead. --delay: wait MS milliseconds first;
 * --wait: until a byte or end of file on standard input (to be sampled by a
 * memscope started after it). --time: print the fill's wall time and the
 * process's CPU time as JSON (for overhead measurements). Built with frame
 * pointers so call chains can be walked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hotlib.h"

#define TABLE_MAX_MIB 256

/* Page-aligned: no page of it is shared with other data (touched before). */
char table[(size_t)TABLE_MAX_MIB << 20] __attribute__((aligned(4096)));

__attribute__((noinline)) static void fill_table(char *p, size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < bytes; i += (size_t)page)
		p[i] = (char)i; /* HOT-LINE */
}

__attribute__((noinline)) static void other_work(void)
{
	char *buf = malloc(1 << 20);

	if (!buf)
		exit(1);
	memset(buf, 1, 1 << 20);
	free(buf);
}

int main(int argc, char **argv)
{
	size_t mib = 64;
	int use_malloc = 0, use_lib = 0;
	long delay_ms = 0;
	int report_time = 0, wait_input = 0;
	struct timespec t0, t1;
	struct rusage ru;
	char *p = table;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--malloc"))
			use_malloc = 1;
		else if (!strcmp(argv[i], "--lib"))
			use_lib = 1;
		else if (!strcmp(argv[i], "--time"))
			report_time = 1;
		else if (!strcmp(argv[i], "--wait"))
			wait_input = 1;
		else if (!strcmp(argv[i], "--delay") && i + 1 < argc)
			delay_ms = strtol(argv[++i], NULL, 10);
		else
			mib = strtoul(argv[i], NULL, 10);
	}
	if (mib == 0 || mib > TABLE_MAX_MIB) {
		fprintf(stderr, "usage: hotarray [MIB (1-%d)] [--malloc] [--lib] [--delay MS | --wait] [--time]\n",
			TABLE_MAX_MIB);
		return 2;
	}
	/* One fault per 4 KiB page only holds without THP. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000);
	if (wait_input)
		(void)getchar();
	other_work();
	if (use_malloc && !(p = malloc(mib << 20)))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (use_lib)
		hotlib_fill(p, mib << 20);
	else
		fill_table(p, mib << 20);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (report_time) {
		getrusage(RUSAGE_SELF, &ru);
		printf("{\"fill_ms\": %.3f, \"cpu_ms\": %.3f}\n",
		       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
		       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
		return 0;
	}
	printf("%zu MiB at %p\n", mib, (void *)p);
	return 0;
}
