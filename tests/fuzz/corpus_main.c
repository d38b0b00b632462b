/* Runs a harness over the files of its seed corpus, once each, without
 * libFuzzer: every build (gcc, with the sanitizers) compiles the harnesses and
 * replays what fuzzing found, so a change that breaks a harness or brings back
 * a finding fails `meson test` rather than the next fuzzing run. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(data = malloc((size_t)size + 1)) || fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "%s: cannot read\n", path);
		if (f)
			fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int a = 1; a < argc; a++) {
		struct dirent **names;
		int n = scandir(argv[a], &names, NULL, alphasort);

		if (n < 0) {
			fprintf(stderr, "%s: not a corpus directory\n", argv[a]);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			char path[4096];

			if (names[i]->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[a], names[i]->d_name);
				if (run_file(path) < 0)
					return 1;
				files++;
			}
			free(names[i]);
		}
		free(names);
	}
	printf("%d inputs replayed\n", files);
	return files ? 0 : 1;
}
