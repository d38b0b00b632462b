/* The catalog loader (YAML, keys, formulas, references) and the resolver
 * on a fixture machine. The input is metrics.yaml, then a line "%%", then
 * a PMU family file (pmu/fuzz.yaml). */
#include "catalog/catalog.h"
#include "catalog/resolver.h"
#include "fuzz_common.h"

static struct host host;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char pmu[600];

	(void)argc;
	(void)argv;
	fuzz_fixture_host(&host, "kunpeng920-2s");
	snprintf(pmu, sizeof(pmu), "%s/pmu", fuzz_dir());
	mkdir(pmu, 0700);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *split = NULL;
	struct catalog *cat = NULL;
	struct resolution *res = NULL;
	struct ms_error err = { "" };

	for (size_t i = 0; i + 4 <= size; i++)
		if (!memcmp(data + i, "\n%%\n", 4)) {
			split = data + i;
			break;
		}
	fuzz_file("metrics.yaml", data, split ? (size_t)(split - data) + 1 : size);
	fuzz_file("pmu/fuzz.yaml", split ? split + 4 : (const uint8_t *)"", split ? size - (size_t)(split + 4 - data) : 0);
	if (catalog_load(&cat, fuzz_dir(), &err) == 0) {
		if (resolve(&host, cat, &res, &err) == 0)
			resolution_free(res);
		catalog_free(cat);
	} else if (!err.text[0]) {
		abort();          /* a refusal always says why */
	}
	return 0;
}
