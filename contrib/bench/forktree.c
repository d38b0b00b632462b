/* forktree: a chain of processes, each forking the next, the last one
 * touching memory; tests that followers of a process see its descendants.
 *
 *   forktree DEPTH MB     DEPTH >= 1 processes below this one; the deepest
 *                         writes one byte per page of MB megabytes
 * Transparent huge pages are disabled so each page is one fault. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int touch(long mb)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (size_t)mb << 20;
	char *mem = mmap(NULL, size ? size : page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("forktree: mmap");
		return 1;
	}
	for (size_t off = 0; off < size; off += page)
		mem[off] = 1;
	return 0;
}

int main(int argc, char **argv)
{
	long depth, mb;

	if (argc != 3 || (depth = atol(argv[1])) < 1 || (mb = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: forktree DEPTH MB\n");
		return 2;
	}
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	for (long level = 0; level < depth; level++) {
		pid_t child = fork();
		int status;

		if (child < 0) {
			perror("forktree: fork");
			return 1;
		}
		if (child > 0) {
			if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status))
				return 1;
			return WEXITSTATUS(status);
		}
	}
	return touch(mb);
}
