/* holdmem: touches MB megabytes of anonymous memory (one write per page),
 * says "ready" on stdout, and holds the memory until its stdin closes. The
 * cgroup plugin's tests compare memscope's figures with the kernel's files
 * while it holds. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mb = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	size_t size = (size_t)mb << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	char *p, c;

	if (mb <= 0) {
		fprintf(stderr, "usage: holdmem MB\n");
		return 2;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("holdmem: mmap");
		return 1;
	}
	madvise(p, size, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < size; off += page)
		p[off] = 1;
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	munmap(p, size);
	return 0;
}
