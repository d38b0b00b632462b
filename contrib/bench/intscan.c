/* The floor for reading a recording's numbers: read a file in 64 KiB blocks
 * and add up every decimal integer in it, nothing else (no structure, no
 * checks). read_rate.py runs it next to memscope on the same file.
 * Usage: intscan FILE; prints the count and the sum. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	uint64_t sum = 0, count = 0, v = 0;
	int in_number = 0;
	ssize_t n;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: intscan FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			unsigned digit = (unsigned)(buf[i] - '0');

			if (digit < 10) {
				v = v * 10 + digit;
				in_number = 1;
			} else if (in_number) {
				sum += v;
				count++;
				v = 0;
				in_number = 0;
			}
		}
	}
	if (n < 0) {
		perror(argv[1]);
		return 1;
	}
	if (in_number) {
		sum += v;
		count++;
	}
	printf("%" PRIu64 " integers, sum %" PRIu64 "\n", count, sum);
	close(fd);
	return 0;
}
