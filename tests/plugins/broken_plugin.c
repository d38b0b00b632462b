/* Plugins that must be refused, one per way of being wrong: built from this
 * file with one BROKEN_* macro each (tests/plugins/meson.build). The loader's
 * tests check that memscope names the file and the cause, and counts on. */
#include <stdio.h>
#include <stdlib.h>

#include <memscope/plugin.h>

static const struct memscope_series_decl series[] = {
	{ "broken.value", "", MEMSCOPE_SERIES_GAUGE, "never read" },
};

static int init(const struct memscope_host *host, void **state, char *why, size_t size)
{
	(void)host;
	*state = NULL;
#ifdef BROKEN_INIT
	snprintf(why, size, "the widget is not plugged in");
	return -1;
#else
	(void)why;
	(void)size;
	return 0;
#endif
}

static int open_series(void *state, const struct memscope_target *t, char *why, size_t size)
{
	(void)state, (void)t, (void)why, (void)size;
	return 0;
}

static int read_values(void *state, uint64_t *values, uint8_t *valid, uint32_t nr)
{
	(void)state, (void)values, (void)valid, (void)nr;
	return 0;
}

static void nothing(void *state)
{
	(void)state;
}

#ifdef BROKEN_ABI
#define ABI_SKEW 1
#else
#define ABI_SKEW 0
#endif
#ifdef BROKEN_SIZE
#define SIZE_SKEW 8
#else
#define SIZE_SKEW 0
#endif

#ifdef BROKEN_NO_DESCRIPTOR
#define DESCRIPTOR_NAME not_the_descriptor
#else
#define DESCRIPTOR_NAME memscope_plugin
#endif

MEMSCOPE_PLUGIN_EXPORT const struct memscope_plugin DESCRIPTOR_NAME = {
#if defined(BROKEN_ABI) || defined(BROKEN_SIZE)
	/* As a plugin built against another plugin.h would say. */
	.abi_version = MEMSCOPE_PLUGIN_ABI_VERSION + ABI_SKEW,
	.size = sizeof(struct memscope_plugin),
	.series_decl_size = sizeof(struct memscope_series_decl),
	.arg_decl_size = sizeof(struct memscope_arg_decl),
	.labels_size = sizeof(struct memscope_labels) + SIZE_SKEW,
#else
	MEMSCOPE_PLUGIN_HEADER,
#endif
	.name = "broken",
	.series = series,
	.nr_series = 1,
	.init = init,
	.open = open_series,
	.read = read_values,
	.close = nothing,
	.fini = nothing,
};
