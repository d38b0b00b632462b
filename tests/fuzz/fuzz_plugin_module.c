/* The plugin fuzz_plugin loads (built beside the harness): its descriptor's
 * name, series, arguments and catalog file, and the series and labels its
 * open adds, come from the file $MEMSCOPE_FUZZ_PLUGIN_INPUT, read when the
 * object is loaded. One line each, fields split by tabs:
 *   n NAME                     the plugin's name (else "fuzz")
 *   s NAME UNIT KIND           a declared series (KIND a number)
 *   k KEY                      a declared argument
 *   c PATH                     its catalog family file
 *   l NAME NODE SOCKET CPU PID INSTANCE CGROUP   an add_series in open ("-": NULL)
 * Made-up values, counting up, are read for every series added. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memscope/plugin.h>

#define MAX_ITEMS 16
#define FIELD 128

static char name[FIELD] = "fuzz", catalog[FIELD];
static char series_text[MAX_ITEMS][3][FIELD], arg_text[MAX_ITEMS][FIELD];
static struct memscope_series_decl series[MAX_ITEMS];
static struct memscope_arg_decl args[MAX_ITEMS];
static char label_text[MAX_ITEMS][3][FIELD];
static struct memscope_labels labels[MAX_ITEMS];
static int nr_labels, nr_added;
static uint64_t reads;

static int init(const struct memscope_host *host, void **state, char *why, size_t why_size)
{
	(void)host;
	(void)why;
	(void)why_size;
	*state = &reads;
	return 0;
}

static int available(void *state, char *why, size_t why_size)
{
	(void)state;
	(void)why;
	(void)why_size;
	return 1;
}

static int open_series(void *state, const struct memscope_target *target, char *why, size_t why_size)
{
	(void)state;
	(void)why;
	(void)why_size;
	nr_added = 0;
	for (int i = 0; i < nr_labels; i++)
		if (target->add_series(target->ctx, label_text[i][0][0] == '-' ? NULL : label_text[i][0], &labels[i]) >= 0)
			nr_added++;
	return 0;
}

static int read_values(void *state, uint64_t *values, uint8_t *valid, uint32_t nr)
{
	(void)state;
	reads++;
	for (uint32_t i = 0; i < nr && i < (uint32_t)nr_added; i++) {
		values[i] = reads * (i + 1);
		valid[i] = (uint8_t)((reads + i) % 3 != 0);
	}
	return 0;
}

static void close_series(void *state)
{
	(void)state;
}

static void fini(void *state)
{
	(void)state;
}

MEMSCOPE_PLUGIN_EXPORT struct memscope_plugin memscope_plugin = {
	MEMSCOPE_PLUGIN_HEADER,
	.name = name,
	.version = "1",
	.description = "fuzz",
	.series = series,
	.args = args,
	.init = init,
	.available = available,
	.open = open_series,
	.read = read_values,
	.close = close_series,
	.fini = fini,
};

/* The fields of line (tabs), each cut to FIELD - 1 bytes; returns how many. */
static int split(char *line, char fields[][FIELD], int max)
{
	int n = 0;

	for (char *f = line; n < max; n++) {
		char *tab = strchr(f, '\t');

		snprintf(fields[n], FIELD, "%.*s", (int)(tab ? tab - f : (long)strlen(f)), f);
		if (!tab)
			return n + 1;
		f = tab + 1;
	}
	return n;
}

static int32_t number(const char *text)
{
	return text[0] == '-' && !text[1] ? MEMSCOPE_LABEL_NONE : (int32_t)strtol(text, NULL, 0);
}

__attribute__((constructor)) static void read_input(void)
{
	const char *path = getenv("MEMSCOPE_FUZZ_PLUGIN_INPUT");
	FILE *f = path ? fopen(path, "r") : NULL;
	char line[2048];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char fields[8][FIELD] = { { 0 } };
		int n;

		line[strcspn(line, "\n")] = '\0';
		n = split(line, fields, 8);
		if (!strcmp(fields[0], "n") && n > 1) {
			snprintf(name, sizeof(name), "%s", fields[1]);
		} else if (!strcmp(fields[0], "c") && n > 1) {
			snprintf(catalog, sizeof(catalog), "%s", fields[1]);
			memscope_plugin.catalog = catalog;
		} else if (!strcmp(fields[0], "s") && memscope_plugin.nr_series < MAX_ITEMS) {
			uint32_t i = memscope_plugin.nr_series++;

			for (int k = 0; k < 3; k++)
				memcpy(series_text[i][k], fields[k + 1], FIELD);
			series[i] = (struct memscope_series_decl){ n > 1 ? series_text[i][0] : NULL, series_text[i][1],
								   (uint32_t)strtoul(fields[3], NULL, 0), series_text[i][2] };
		} else if (!strcmp(fields[0], "k") && memscope_plugin.nr_args < MAX_ITEMS) {
			uint32_t i = memscope_plugin.nr_args++;

			memcpy(arg_text[i], fields[1], FIELD);
			args[i] = (struct memscope_arg_decl){ n > 1 ? arg_text[i] : NULL, "an argument" };
		} else if (!strcmp(fields[0], "l") && nr_labels < MAX_ITEMS) {
			int i = nr_labels++;

			memcpy(label_text[i][0], fields[1], FIELD);
			memcpy(label_text[i][1], fields[6], FIELD);
			memcpy(label_text[i][2], fields[7], FIELD);
			labels[i] = (struct memscope_labels){
				number(fields[2]), number(fields[3]), number(fields[4]), number(fields[5]),
				n > 7 && strcmp(fields[7], "-") ? label_text[i][2] : NULL,
				n > 6 && strcmp(fields[6], "-") ? label_text[i][1] : NULL,
			};
		}
	}
	fclose(f);
}
