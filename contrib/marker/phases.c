/* Example: a program that marks its phases in a memscope recording.
 *
 *     memscope record -I 100 -o phases.rec -- ./phases 64
 *     memscope stat --input phases.rec -I 100     (the labels are in phases.rec)
 *
 * Phase "fill" touches N MiB (page faults), phase "scan" reads it back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope_marker.h"

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	size_t size = mib << 20;
	volatile unsigned char *buf;
	unsigned long sum = 0;

	memscope_phase_begin("fill");
	buf = malloc(size);
	if (!buf) {
		perror("malloc");
		return 1;
	}
	for (size_t i = 0; i < size; i += 4096)
		buf[i] = (unsigned char)i;
	memscope_phase_end("fill");

	memscope_phase_begin("scan");
	for (size_t i = 0; i < size; i += 64)
		sum += buf[i];
	memscope_phase_end("scan");
	if (memscope_label("done") < 0)
		perror("memscope_label");
	printf("%lu\n", sum);
	free((void *)buf);
	return 0;
}
