/* The replay reader (docs/replay-format.md) on the Kunpeng 920 fixture with
 * a plan of every metric it can compute, then the frames through the metric
 * engine, as stat --replay runs them. */
#include "catalog/catalog.h"
#include "catalog/resolver.h"
#include "metrics/metrics.h"
#include "sources/replay_source.h"
#include "fuzz_common.h"

static struct host host;
static struct catalog *cat;
static struct resolution *res;
static struct metric_plan *plan;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[1024];
	struct ms_error err = { "" };
	struct name_list names = { NULL, 0 };

	(void)argc;
	(void)argv;
	fuzz_fixture_host(&host, "kunpeng920-2s");
	snprintf(dir, sizeof(dir), "%s/catalog", MEMSCOPE_SOURCE_DIR);
	if (catalog_load(&cat, dir, &err) || resolve(&host, cat, &res, &err))
		goto fail;
	for (int i = 0; i < res->nr_metrics; i++)
		if (res->metrics[i].available && name_list_add(&names, cat->metrics[i].name) < 0)
			goto fail;
	if (metric_plan_build(res, &names, &plan, &err))
		goto fail;
	name_list_free(&names);
	return 0;
fail:
	fprintf(stderr, "fuzz_replay: %s\n", err.text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("input.jsonl", data, size);
	struct series_table table;
	struct metric_engine *engine = NULL;
	struct metric_values *values = NULL;
	struct ms_error err = { "" };
	struct source src = { 0 };
	struct frame f;

	memset(&table, 0, sizeof(table));
	if (replay_source_init(&src, &host, plan, path, &err) < 0)
		return 0;
	if (src.ops->open(&src, &table, &err) < 0) {
		if (!strstr(err.text, path))
			abort();      /* the error names the file (and line) */
		src.ops->close(&src);
		series_table_free(&table);
		return 0;
	}
	if (frame_init(&f, table.nr) < 0 || metric_engine_new(plan, &host, &table, &engine, &err) < 0 ||
	    !(values = metric_values_new(engine)))
		abort();
	while (!src.finished) {
		src.ops->sample(&src, &f);
		metric_engine_compute(engine, &f, values);
	}
	metric_values_free(values);
	metric_engine_free(engine);
	frame_free(&f);
	src.ops->close(&src);
	series_table_free(&table);
	return 0;
}
