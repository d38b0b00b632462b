/* touchmem: a predictable memory workload. Touches MB megabytes, one write per
 * 4 KiB page, so it makes MB * 256 page faults (plus a few for startup).
 * Transparent huge pages are disabled for the process so each page is one
 * fault and one allocation.
 *
 *   touchmem MB [--sleep-ms N] [--repeat N] [--hold-ms N] [--threads N]
 *
 * --sleep-ms sleeps before exiting (off-CPU time, or time to attach);
 * --hold-ms keeps each touched region mapped N ms before unmapping it
 *   (memory by node that a reader can see);
 * --repeat touches fresh memory N times (unmapping in between). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: touchmem MB [--sleep-ms N] [--repeat N] [--hold-ms N]\n");
	exit(2);
}

static long parse_count(const char *text)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || *end || value < 0)
		usage();
	return value;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	long mb, sleep_for = 0, repeat = 1, hold = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (argc < 2)
		usage();
	mb = parse_count(argv[1]);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
			sleep_for = parse_count(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = parse_count(argv[++i]);
		else if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc)
			hold = parse_count(argv[++i]);
		else
			usage();
	}
	/* One fault per 4 KiB page only holds without THP. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);

	for (long r = 0; r < repeat; r++) {
		size_t size = (size_t)mb << 20;
		volatile char *mem;

		if (size == 0)
			break;
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED) {
			perror("touchmem: mmap");
			return 1;
		}
		for (size_t off = 0; off < size; off += page)
			mem[off] = 1;
		if (hold)
			sleep_ms(hold);
		munmap((void *)mem, size);
	}
	if (sleep_for)
		sleep_ms(sleep_for);
	return 0;
}
