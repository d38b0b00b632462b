/* The recording reader (plain JSON Lines or one zstd stream, told apart by
 * the first bytes): header, frames, labels, control, series and retire
 * records, cut and damaged files. Property: an error always names FILE:LINE
 * (or the file), and reading stops there. */
#include "recording/recording.h"
#include "fuzz_common.h"

#define MAX_RECORDS 100000

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("input.rec", data, size);
	struct recording_reader *r;
	struct recording_record rec;
	struct ms_error err = { "" };
	char message[600];
	struct frame f;

	if (recording_reader_open(&r, path, &err) < 0) {
		if (strncmp(err.text, path, strlen(path)) != 0 && !strstr(err.text, path))
			abort();      /* the error names the file */
		return 0;
	}
	if (frame_init(&f, recording_reader_header(r)->table.nr) < 0)
		abort();
	for (int i = 0; i < MAX_RECORDS; i++) {
		if (recording_reader_next(r, &rec, &f, &err) < 0) {
			if (!strstr(err.text, path))
				abort();
			break;
		}
		if (rec.kind == RECORD_EOF) {
			recording_reader_cut(r, message, sizeof(message));
			break;
		}
	}
	frame_free(&f);
	recording_reader_close(r);
	return 0;
}
