/* A source plugin's series and labels, as memscope takes them: the
 * descriptor's checks (names, kinds, duplicates, arguments) and its
 * vocabulary, then a source made of it, whose open adds series with any
 * labels (names not declared or not asked for, out-of-range numbers, long
 * instances, cgroups), enabled and read twice. The plugin is
 * fuzz_plugin_module.so; the input is its description (see there). A
 * plugin that is not loaded has its reason. */
#include "events/plugin_series.h"
#include "sampler/frame.h"
#include "sources/plugin_loader.h"
#include "fuzz_common.h"

static char input_path[600], module[PATH_MAX];
static struct host host;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_fixture_host(&host, "kunpeng920-2s");
	snprintf(input_path, sizeof(input_path), "%s/plugin.txt", fuzz_dir());
	setenv("MEMSCOPE_FUZZ_PLUGIN_INPUT", input_path, 1);
	/* No plugins of the user's own directory. */
	setenv("XDG_DATA_HOME", fuzz_dir(), 1);
	snprintf(module, sizeof(module), "%s", FUZZ_PLUGIN_MODULE);
	return 0;
}

static void run_source(const struct loaded_plugin *p)
{
	const char *names[16];
	struct source_request req = { 0 };
	struct series_table table = { 0 };
	struct ms_error err = { "" };
	struct source src;
	struct frame frame;
	int nr = 0;

	for (uint32_t i = 0; i < p->desc->nr_series && nr < 16; i++)
		names[nr++] = p->desc->series[i].name;
	req.host = &host;
	req.names = names;
	req.nr_names = nr;
	req.notes = stderr;
	req.command_name = "fuzz";
	if (p->kind.create(&p->kind, &src, &req, &err) != 0) {
		if (!err.text[0])
			abort();
		return;
	}
	if (src.ops->open(&src, &table, &err) == 0 && frame_init(&frame, table.nr) == 0) {
		if (src.ops->enable(&src, &err) == 0) {
			src.ops->sample(&src, &frame);
			src.ops->sample(&src, &frame);
		}
		frame_free(&frame);
	}
	src.ops->close(&src);
	series_table_free(&table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *specs[] = { module };
	struct plugin_set set = { 0 };
	struct source_registry registry;

	fuzz_file("plugin.txt", data, size);
	source_registry_init(&registry);
	if (plugins_load(&set, specs, 1, &registry) < 0)
		abort();
	for (int i = 0; i < set.nr; i++) {
		const struct loaded_plugin *p = set.plugins[i];

		if (strcmp(p->path, module))
			continue;
		if (!p->loaded && !p->why[0])
			abort();          /* a refusal always says why */
		if (p->loaded)
			run_source(p);
	}
	plugins_unload(&set);
	return 0;
}
