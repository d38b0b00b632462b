/* memscope list: what this host can measure, and through which counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/catalog_list.h"
#include "cli/commands.h"
#include "cli/list_topology.h"
#include "cli/validation_store.h"
#include "events/bpf_series.h"
#include "events/event_names.h"
#include "host/host.h"
#include "events/perf_errors.h"
#include "events/pfm.h"
#include "events/plugin_series.h"
#include "sources/plugin_loader.h"
#include "sources/registry.h"
#include "util/report.h"

static const char *word_name(enum pmu_config_word word)
{
	static const char *names[] = { "config", "config1", "config2", "config3" };

	return names[word];
}

static bool wanted(const char *name, char **filters, int nr)
{
	if (nr == 0)
		return true;
	for (int i = 0; i < nr; i++)
		if (!strncmp(name, filters[i], strlen(filters[i])))
			return true;
	return false;
}

static void list_pmus(const struct host *host, char **filters, int nr)
{
	for (int i = 0; i < host->pmus.nr; i++) {
		const struct pmu *pmu = &host->pmus.pmus[i];
		char cpus[256];

		if (!wanted(pmu->name, filters, nr))
			continue;
		cpulist_format(&pmu->cpumask, cpus, sizeof(cpus));
		printf("%s\n  type: %d\n  scope: %s\n", pmu->name, pmu->type,
		       pmu->has_cpumask ? "uncore (system-wide, counted on the cpumask CPUs)" : "core/software (per task or per CPU)");
		if (pmu->has_cpumask)
			printf("  cpumask: %s\n", cpus);
		if (pmu->nr_formats) {
			printf("  format:\n");
			for (int f = 0; f < pmu->nr_formats; f++)
				printf("    %-14s %s mask 0x%016llx (%d bits)\n", pmu->formats[f].name,
				       word_name(pmu->formats[f].word),
				       (unsigned long long)pmu->formats[f].mask, pmu->formats[f].width);
		}
		printf("  events: %d\n\n", pmu->nr_aliases);
	}
}

/* The names the eBPF source and the kernel statistics serve: -e takes them
 * as it takes perf's, so they are listed with them. */
static void list_kernel_series(const struct host *host)
{
	const struct source_registry registry = *source_registry_process();
	const char *const *names = bpf_series_names();
	struct ms_error why = { "" };
	bool here = true;

	for (int i = 0; i < registry.nr; i++)
		if (!strcmp(registry.kinds[i]->name, "bpf") && registry.kinds[i]->present)
			here = registry.kinds[i]->present(registry.kinds[i], host, &why);
	printf("# eBPF probes: the measured processes (-a: every process), see docs/bpf.md%s%s\n",
	       here ? "" : "; not here: ", here ? "" : why.text);
	for (int i = 0; names[i]; i++)
		printf("  %s\n", names[i]);
	printf("# kernel statistics: vmstat/KEY (a line of /proc/vmstat), numastat/KEY (of each node's numastat)\n");
}

static void list_events(const struct host *host, char **filters, int nr)
{
	const struct generic_event *g;

	if (nr == 0) {
		printf("# generic (perf names)\n");
		for (int i = 0; (g = generic_event_at(i)); i++)
			printf("  %-40s %s\n", g->name, g->type == 1 ? "software" : "hardware (needs a CPU PMU)");
	}
	for (int i = 0; i < host->pmus.nr; i++) {
		const struct pmu *pmu = &host->pmus.pmus[i];

		if (!pmu->nr_aliases || !wanted(pmu->name, filters, nr))
			continue;
		printf("# %s (type %d)\n", pmu->name, pmu->type);
		for (int a = 0; a < pmu->nr_aliases; a++) {
			const struct pmu_alias *al = &pmu->aliases[a];
			char name[300];

			snprintf(name, sizeof(name), "%s/%s/", pmu->name, al->name);
			printf("  %-40s %s", name, al->terms);
			if (al->scale != 1.0 || (al->unit && al->unit[0]))
				printf("  (x %g %s)", al->scale, al->unit ? al->unit : "");
			putchar('\n');
		}
	}
	for (int p = 0; nr == 0 && p < plugin_series_count(); p++) {
		const struct plugin_vocabulary *v = plugin_series_at(p);

		printf("# plugin %s (%s)%s%s\n", v->plugin, v->path, v->available ? "" : ", not available here: ",
		       v->available ? "" : v->why);
		for (int s = 0; s < v->nr_series; s++)
			printf("  %-40s %s%s%s\n", v->series[s].name, v->series[s].gauge ? "gauge" : "counter",
			       v->series[s].unit[0] ? ", " : "", v->series[s].unit);
	}
	if (nr == 0)
		list_kernel_series(host);
	if (nr == 0)
		printf("# tracepoints: subsystem:event, see /sys/kernel/tracing/events\n"
		       "# libpfm4: pmu::EVENT:UMASK, see memscope list --libpfm\n");
}

static void list_libpfm(const struct host *host)
{
	struct pfm_pmu_view view;
	int cursor = 0, openable = 0, claimed = 0;

	printf("%-28s %-8s %-7s %-22s %s\n", "libpfm4 PMU", "libpfm4", "kind", "kernel PMU", "openable here");
	while (pfm_pmu_iterate(&cursor, &view)) {
		const struct pmu *core = host_core_pmu(host);
		bool present_in_kernel;

		/* Core PMUs count through the kernel's CPU PMU, whatever libpfm4 calls them. */
		if (!view.uncore && !view.kernel_pmu[0])
			snprintf(view.kernel_pmu, sizeof(view.kernel_pmu), "%s", core ? core->name : "cpu");
		present_in_kernel = pmu_find(&host->pmus, view.kernel_pmu) != NULL;

		/* Only PMUs libpfm4 believes present, or that the kernel has, are of interest. */
		if (!view.libpfm_present && !present_in_kernel)
			continue;
		claimed += view.libpfm_present;
		openable += present_in_kernel;
		printf("%-28s %-8s %-7s %-22s %s\n", view.name, view.libpfm_present ? "present" : "-",
		       view.uncore ? "uncore" : "core", view.kernel_pmu[0] ? view.kernel_pmu : "?",
		       present_in_kernel ? "yes" :
		       view.libpfm_present ? "no: the kernel has no such PMU (libpfm4 guessed from CPUID)" : "no");
	}
	printf("\n%d libpfm4 PMUs claim this CPU; %d can be opened through the kernel's PMUs.\n", claimed, openable);
}

/* The metrics a plugin's catalog family maps. */
static void print_plugin_family(const struct catalog *cat, const struct loaded_plugin *p)
{
	for (int f = 0; cat && f < cat->nr_families; f++) {
		const struct catalog_family *family = &cat->families[f];

		if (!family->plugin || strcmp(family->plugin, p->desc->name) != 0)
			continue;
		printf("  catalog family: %s (%s), maps:", family->name, family->file);
		for (int m = 0; m < family->nr_metrics; m++)
			printf("%s %s", m ? "," : "", cat->metrics[family->metrics[m].metric].name);
		printf("\n");
		return;
	}
	if (p->catalog_why[0])
		printf("  catalog family: not accepted: %s\n", p->catalog_why);
	else
		printf("  catalog family: none\n");
}

static void list_plugins(void)
{
	const struct plugin_set *set = plugins_process();
	struct catalog *cat = NULL;
	struct ms_error err = { "" };

	printf("plugin directories:");
	for (int d = 0; d < set->nr_dirs; d++)
		printf("%s %s", d ? "," : "", set->dirs[d]);
	printf("\n");
	if (set->nr == 0) {
		printf("no plugins: name one with memscope --plugin PATH.so COMMAND, or put it in a plugin directory "
		       "(docs/plugins.md)\n");
		return;
	}
	if (catalog_load_default(&cat, &err) < 0)
		printf("(the catalog did not load: %s)\n", err.text);
	for (int i = 0; i < set->nr; i++) {
		const struct loaded_plugin *p = set->plugins[i];
		const struct plugin_vocabulary *v;

		printf("\n%s (%s)\n", p->path, p->named ? "named with --plugin" : "found in a plugin directory");
		if (!p->loaded) {
			printf("  not loaded: %s\n", p->why);
			continue;
		}
		v = plugin_series_plugin(p->desc->name);
		printf("  loaded: plugin %s%s%s%s%s\n", p->desc->name, p->desc->version ? " " : "",
		       p->desc->version ? p->desc->version : "", p->desc->description ? ": " : "",
		       p->desc->description ? p->desc->description : "");
		if (v && v->available)
			printf("  available here: yes\n");
		else
			printf("  available here: no: %s\n", v ? v->why : "unknown");
		printf("  series:\n");
		for (uint32_t s = 0; s < p->desc->nr_series; s++) {
			const struct memscope_series_decl *d = &p->desc->series[s];

			printf("    %-36s %-7s %-6s %s\n", d->name, d->kind == MEMSCOPE_SERIES_GAUGE ? "gauge" : "counter",
			       d->unit && d->unit[0] ? d->unit : "-", d->description ? d->description : "");
		}
		if (p->desc->nr_args) {
			printf("  arguments (--plugin %s:KEY=VAL,...):\n", p->path);
			for (uint32_t a = 0; a < p->desc->nr_args; a++)
				printf("    %-16s %s\n", p->desc->args[a].key,
				       p->desc->args[a].description ? p->desc->args[a].description : "");
		}
		for (int a = 0; a < p->nr_args; a++)
			printf("  given: %s=%s\n", p->args[a].key, p->args[a].value);
		print_plugin_family(cat, p);
	}
	catalog_free(cat);
}

static int list_catalog(const struct host *host, const char *explain, bool groups)
{
	struct catalog *cat = NULL;
	struct ms_error err = { "" };
	int status = 0;

	if (catalog_load_default(&cat, &err) < 0) {
		ms_report(&err);
		return 1;
	}
	if (explain) {
		if (cmd_list_explain(host, cat, explain, stdout, &err) != 0) {
			ms_report(&err);
			status = 1;
		} else {
			validation_explain(explain, stdout);
		}
	} else if ((groups ? cmd_list_groups : cmd_list_metrics)(host, cat, stdout) != 0) {
		status = 1;
	}
	catalog_free(cat);
	return status;
}

/* Each registered kind of source, in the order names are routed to them. */
static void list_sources(const struct host *host)
{
	/* The built-in kinds and the plugins loaded (--plugin, the plugin directories). */
	const struct source_registry registry = *source_registry_process();

	printf("%-14s %-5s %s\n", "SOURCE", "HERE", "READS");
	for (int i = 0; i < registry.nr; i++) {
		const struct source_kind *kind = registry.kinds[i];
		struct ms_error why = { "" };
		bool present = !kind->present || kind->present(kind, host, &why);

		printf("%-14s %-5s %s\n", kind->name, present ? "yes" : "no", kind->description);
		if (!present)
			printf("%-14s %-5s why not: %s\n", "", "", why.text);
	}
}

enum list_what { LIST_EVENTS, LIST_PMUS, LIST_LIBPFM, LIST_METRICS, LIST_EXPLAIN, LIST_PLUGINS, LIST_SOURCES,
	LIST_TOPOLOGY, LIST_GROUPS };

struct list_args {
	int what;                /* enum list_what */
	const char *explain;
};

#define LIST_TO(mode) CLI_TO_SET(0, struct list_args, what, mode)

static const struct cli_option list_options[] = {
	{ LIST_PMUS + CLI_LONG_ONLY, "pmus", NULL, "kernel PMUs: type, cpumask, format fields", CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_PMUS) },
	{ LIST_EVENTS + CLI_LONG_ONLY, "events", NULL, "every event name accepted by -e: generic names, PMU aliases, the eBPF probes' proc.*\n"
	  "series and the kernel statistics (the default)",
	  CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_EVENTS) },
	{ LIST_LIBPFM + CLI_LONG_ONLY, "libpfm", NULL, "libpfm4's PMUs and whether the kernel can really open them here",
	  CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_LIBPFM) },
	{ LIST_METRICS + CLI_LONG_ONLY, "metrics", NULL, "portable metrics: which this host has, through which counters, and why not",
	  CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_METRICS) },
	{ LIST_GROUPS + CLI_LONG_ONLY, "groups", NULL, "metric groups (stat -M GROUP, as perf's -M TopdownL1): each one's\n"
	  "metrics and which this host has (also at the end of --metrics)", CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_GROUPS) },
	{ LIST_EXPLAIN + CLI_LONG_ONLY, "explain", "METRIC", "formula, raw events per instance, scale and caveats of one metric;\n"
	  "sample.mem: the memory sampling event record --sample mem uses here, and why",
	  CLI_COMPLETE_METRICS, NULL, 0 },
	{ LIST_PLUGINS + CLI_LONG_ONLY, "plugins", NULL,
	  "each plugin named with --plugin or found in the plugin directories: loaded or why\n"
	  "not, whether it can run here, its series, arguments and catalog family", CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_PLUGINS) },
	{ LIST_SOURCES + CLI_LONG_ONLY, "sources", NULL,
	  "every kind of source, what it reads, and whether it can run here (why not)", CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_SOURCES) },
	{ LIST_TOPOLOGY + CLI_LONG_ONLY, "topology", NULL,
	  "NUMA nodes with their CPUs, memory and distances, sockets, caches and the PMUs of each node",
	  CLI_COMPLETE_NONE, NULL, 0, LIST_TO(LIST_TOPOLOGY) },
	{ 0 },
};

static const struct cli_group list_groups[] = {
	{ "What to list (one of)", list_options },
	{ NULL, NULL },
};

const struct cli_command list_command = {
	.name = "list",
	.summary = "what this host can measure: PMUs, events, metrics, plugins, sources, topology",
	.usage = "[--pmus | --events | --libpfm | --metrics | --groups | --explain METRIC | --plugins |\n"
		 "--sources | --topology] [PMU...]",
	.groups = list_groups,
	.epilog = "PMU... keeps the PMUs (of --pmus and --events) whose names begin with one of them.\n",
	.operands = CLI_COMPLETE_WORDS,
	.operand_words = "@pmus",
};

static int list_option(void *ctx, int key, const char *arg)
{
	struct list_args *a = ctx;

	/* The other rows set what to list themselves (LIST_TO). */
	if (key != LIST_EXPLAIN + CLI_LONG_ONLY)
		return -1;
	a->what = LIST_EXPLAIN;
	a->explain = arg;
	return 0;
}

int cmd_list(int argc, char **argv)
{
	struct list_args a = { LIST_EVENTS, NULL };
	void *const dest[] = { &a };
	struct host host;
	struct ms_error err = { "" };
	int status = 0, first = cli_parse_into(&list_command, argc, argv, list_option, &a, dest, &status);

	if (first < 0)
		return status;
	if (a.what == LIST_PLUGINS) {
		list_plugins();
		return 0;
	}
	if (host_load(&host, &err) < 0) {
		ms_report(&err);
		return 1;
	}
	switch (a.what) {
	case LIST_PMUS: list_pmus(&host, argv + first, argc - first); break;
	case LIST_LIBPFM: list_libpfm(&host); break;
	case LIST_SOURCES: list_sources(&host); break;
	case LIST_METRICS:
	case LIST_EXPLAIN:
	case LIST_GROUPS:
		status = list_catalog(&host, a.explain, a.what == LIST_GROUPS);
		break;
	case LIST_TOPOLOGY: status = list_topology(&host, stdout); break;
	default: list_events(&host, argv + first, argc - first); break;
	}
	host_free(&host);
	return status;
}
