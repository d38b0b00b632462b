/* touchregions: marked phases with known page-fault counts, for memscope
 * report --regions (and an example of regions that repeat, nest, and of one
 * left open).
 *
 *     memscope record -I 100 -o regions.rec -- ./touchregions 64
 *     memscope report --regions regions.rec
 *
 * With MB megabytes and 4 KiB pages (transparent huge pages off, so one
 * fault per page):
 *   all          1 call   encloses the next three
 *   alloc        1 call   MB * 256 faults (touches MB fresh)
 *   touch-again  3 calls  none (touches the same pages again)
 *   fresh        2 calls  MB * 256 in all (MB / 2 fresh each time)
 *   tail         open     MB * 64 (MB / 4 fresh; never ended, begun twice)
 * and an end of a region never begun ("stray"). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "memscope_marker.h"

static volatile char *touch_fresh(size_t size, size_t page)
{
	volatile char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("touchregions: mmap");
		exit(1);
	}
	for (size_t off = 0; off < size; off += page)
		mem[off] = 1;
	return mem;
}

static void mark(int (*call)(const char *), const char *name)
{
	if (call(name) < 0) {
		perror("touchregions: marker");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	size_t size = mb << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *mem;

	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	mark(memscope_phase_begin, "all");
	mark(memscope_phase_begin, "alloc");
	mem = touch_fresh(size, page);
	mark(memscope_phase_end, "alloc");
	for (int i = 0; i < 3; i++) {
		mark(memscope_phase_begin, "touch-again");
		for (size_t off = 0; off < size; off += page)
			mem[off]++;
		mark(memscope_phase_end, "touch-again");
	}
	for (int i = 0; i < 2; i++) {
		volatile char *half;

		mark(memscope_phase_begin, "fresh");
		half = touch_fresh(size / 2, page);
		munmap((void *)half, size / 2);
		mark(memscope_phase_end, "fresh");
	}
	mark(memscope_phase_end, "all");
	mark(memscope_phase_end, "stray");
	mark(memscope_phase_begin, "tail");
	mark(memscope_phase_begin, "tail");
	touch_fresh(size / 4, page);
	return 0;
}
