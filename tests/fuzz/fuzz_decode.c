/* The sampling decode tables (catalog/sampling, docs/sampling.md): the
 * loader of a vendor table next to the shipped data-src.yaml, then the
 * table run on a raw sample. The input is the table (sampling/fuzz.yaml), a
 * line "%%", then the raw bytes of one sample (AMD IBS registers or an Arm
 * SPE record) whose first four bytes choose the CPU. */
#include "catalog/sample_decode.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char cmd[1400];

	(void)argc;
	(void)argv;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sampling && cp %s/catalog/sampling/data-src.yaml %s/sampling/",
		 fuzz_dir(), MEMSCOPE_SOURCE_DIR, fuzz_dir());
	if (system(cmd) != 0)
		abort();
	return 0;
}

static void run_table(const struct sample_decoders *dec, const struct decode_table *t, const uint8_t *raw,
		      size_t size)
{
	struct decode_input in;
	struct decode_cpu cpu = { -1, -1, -1, -1 };
	struct ms_error err = { "" };
	struct mem_access access;
	uint64_t data_src = 0, weight = 0;
	bool has_weight = false;
	char text[512];

	if (size >= 4) {
		/* x86 family/model, Arm implementer/part: the values the tables name. */
		cpu = (struct decode_cpu){ 0x10 + raw[0] % 0x10, raw[1], raw[2], raw[3] | (raw[0] & 0xf) << 8 };
		raw += 4;
		size -= 4;
	}
	if (decode_input_from_raw(t, raw, size, &in, &err) < 0) {
		if (!err.text[0])
			abort();          /* a refusal always says why */
		return;
	}
	decode_table_run(t, &in, &cpu, &data_src, &weight, &has_weight);
	sample_decode_access(dec, data_src, &access);
	sample_decode_describe(dec, data_src, text, sizeof(text));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "fuzz", "amd-ibs-op", "arm-spe" };
	const uint8_t *split = NULL;
	struct sample_decoders *dec = NULL;
	struct ms_error err = { "" };
	const uint8_t *raw = (const uint8_t *)"";
	size_t raw_size = 0;

	for (size_t i = 0; i + 4 <= size; i++)
		if (!memcmp(data + i, "\n%%\n", 4)) {
			split = data + i;
			break;
		}
	if (split) {
		raw = split + 4;
		raw_size = size - (size_t)(raw - data);
	}
	fuzz_file("sampling/fuzz.yaml", data, split ? (size_t)(split - data) + 1 : size);
	if (sample_decoders_load(&dec, fuzz_dir(), &err) < 0) {
		/* A refusal says why, and where: the file and its line. */
		if (!strstr(err.text, "yaml"))
			abort();
		return 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct decode_table *t = sample_decoders_find(dec, names[i]);

		if (t)
			run_table(dec, t, raw, raw_size);
	}
	sample_decoders_free(dec);
	return 0;
}
