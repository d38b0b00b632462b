/* Host + catalog -> which metrics are available and how (see resolver.h). */
#include "catalog/resolver.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events/plugin_series.h"
#include "host/cpuid.h"
#include "host/cxl_node.h"
#include "host/privileges.h"
#include "host/sysfs.h"
#include "host/kernel_stats.h"
#include "host/damon_monitor.h"

/* ---- CPU families ---- */

static bool in_ranges(int v, int (*ranges)[2], int nr)
{
	if (nr == 0)
		return true;
	for (int i = 0; i < nr; i++)
		if (v >= ranges[i][0] && v <= ranges[i][1])
			return true;
	return false;
}

bool catalog_cpu_matches(const struct catalog_family *family, const struct cpu_identity *id)
{
	if (family->nr_cpus == 0)
		return true;
	for (int i = 0; i < family->nr_cpus; i++) {
		const struct catalog_cpu_match *m = &family->cpus[i];

		if (m->vendor) {
			if (strcmp(m->vendor, id->vendor) != 0 || !in_ranges(id->family, m->families, m->nr_families) ||
			    !in_ranges(id->model, m->models, m->nr_models))
				continue;
		} else if (id->implementer < 0 || !in_ranges(id->implementer, m->implementers, m->nr_implementers) ||
			   !in_ranges(id->part, m->parts, m->nr_parts)) {
			continue;
		}
		return true;
	}
	return false;
}

/* ---- instances ---- */

static int cpulist_copy(struct cpulist *dst, const int *cpus, int nr)
{
	dst->nr = 0;
	dst->cpus = malloc(sizeof(int) * (size_t)(nr ? nr : 1));
	if (!dst->cpus)
		return -1;
	memcpy(dst->cpus, cpus, sizeof(int) * (size_t)nr);
	dst->nr = nr;
	return 0;
}

static int all_online_cpus(const struct topology *topo, struct cpulist *out)
{
	out->nr = 0;
	out->cpus = malloc(sizeof(int) * (size_t)(topo->nr_cpus ? topo->nr_cpus : 1));
	if (!out->cpus)
		return -1;
	for (int i = 0; i < topo->nr_cpus; i++)
		out->cpus[out->nr++] = topo->cpus[i].cpu;
	return 0;
}

/* Does pmu have the format fields the role requires and none it rejects? If
 * not, name the first field that tells the versions apart in why. */
static bool instance_formats_ok(const struct catalog_role *role, const struct pmu *pmu, char *why, size_t size)
{
	for (int i = 0; i < role->nr_requires_formats; i++)
		if (!pmu_format_find(pmu, role->requires_formats[i])) {
			snprintf(why, size, "without format field %s", role->requires_formats[i]);
			return false;
		}
	for (int i = 0; i < role->nr_rejects_formats; i++)
		if (pmu_format_find(pmu, role->rejects_formats[i])) {
			snprintf(why, size, "with format field %s", role->rejects_formats[i]);
			return false;
		}
	return true;
}

static int add_instance(struct resolved_role *rr, const struct pmu *pmu, const char *name, struct cpulist *cpus)
{
	struct resolved_instance *inst = realloc(rr->inst, sizeof(*inst) * (size_t)(rr->nr_inst + 1));

	if (!inst) {
		cpulist_free(cpus);
		return -1;
	}
	rr->inst = inst;
	inst = &inst[rr->nr_inst++];
	memset(inst, 0, sizeof(*inst));
	inst->pmu = pmu;
	snprintf(inst->name, sizeof(inst->name), "%s", name);
	inst->cpus = *cpus;
	inst->memory_node = -1;
	return 0;
}

/* A CXL memory device's counts belong to the node of the memory it backs; when
 * sysfs does not say which (no region, or a node that is not online), to none. */
static void set_memory_node(const struct host *host, struct resolved_instance *inst)
{
	int node;

	inst->memory_node = -2;
	if (cxl_pmu_memory_node(host->roots.sys, inst->name, &node, inst->memory_node_why,
				sizeof(inst->memory_node_why)) < 0)
		return;
	for (int n = 0; n < host->topo.nr_nodes; n++)
		if (host->topo.nodes[n] == node) {
			inst->memory_node = node;
			return;
		}
	snprintf(inst->memory_node_why, sizeof(inst->memory_node_why), "%s backs node %d, which is not an online "
		 "node (devices/system/node/online)", inst->name, node);
}

/* Roles counted on every CPU (core PMUs) rather than on one CPU per unit. */
static bool per_cpu_scope(const char *scope)
{
	return strcmp(scope, "cpu") == 0 || strcmp(scope, "core") == 0;
}

/* The first PMU of the discovery table's generic names (uncore_type_<type>_<box>),
 * which an Intel kernel without support for this CPU registers; NULL if none. */
static const char *generic_discovery_pmu(const struct host *host)
{
	for (int i = 0; i < host->pmus.nr; i++) {
		const char *n = host->pmus.pmus[i].name;

		if (strncmp(n, "uncore_type_", 12) == 0 && n[12] >= '0' && n[12] <= '9')
			return n;
	}
	return NULL;
}

static int find_perf_instances(const struct host *host, const struct catalog_family *family,
			       const struct catalog_role *role, struct resolved_role *rr)
{
	int near_misses = 0, outside = 0;
	const struct pmu *first_outside = NULL;
	char version[96] = "";

	for (int i = 0; i < host->pmus.nr; i++) {
		const struct pmu *pmu = &host->pmus.pmus[i];
		struct cpulist cpus;
		int rc;

		if (regexec(&role->match_re, pmu->name, 0, NULL, 0) != 0)
			continue;
		if (!instance_formats_ok(role, pmu, version, sizeof(version))) {
			near_misses++;
			continue;
		}
		/* stat -C left out every CPU it counts through. */
		if (pmu->outside_cpu_list) {
			if (!outside++)
				first_outside = pmu;
			continue;
		}
		if (pmu->cpumask.nr > 0) {
			rc = cpulist_copy(&cpus, pmu->cpumask.cpus, pmu->cpumask.nr);
		} else if (per_cpu_scope(role->scope)) {
			rc = all_online_cpus(&host->topo, &cpus);
		} else {
			/* An uncore PMU without a cpumask counts the same hardware from any
			 * CPU: the kernel takes a system-wide event on one. Opening it on
			 * every CPU would count it once per CPU. */
			rc = cpulist_copy(&cpus, &host->topo.cpus[0].cpu, 1);
		}
		if (rc || add_instance(rr, pmu, pmu->name, &cpus))
			return -1;
		rr->inst[rr->nr_inst - 1].no_cpumask = pmu->cpumask.nr == 0 && !per_cpu_scope(role->scope);
		if (role->memory_node)
			set_memory_node(host, &rr->inst[rr->nr_inst - 1]);
	}
	if (rr->nr_inst == 0) {
		const char *generic = family->uncore_since && strncmp(role->match, "^uncore_", 8) == 0
					      ? generic_discovery_pmu(host)
					      : NULL;

		if (first_outside) {
			char mask[96];

			cpulist_format(&first_outside->cpumask, mask, sizeof(mask));
			snprintf(rr->why, sizeof(rr->why), "-C leaves out the CPUs its uncore PMUs count through "
				 "(%.40s%s: CPU %.60s); add one to -C", first_outside->name, outside > 1 ? ", ..." : "", mask);
		} else if (generic)
			snprintf(rr->why, sizeof(rr->why), "this kernel predates its uncore support for this CPU (%.120s) "
				 "and shows only the discovery table's generic PMUs (%.40s...): update the kernel",
				 family->uncore_since, generic);
		else if (near_misses)
			snprintf(rr->why, sizeof(rr->why), "%d PMU(s) match '%.100s' but are another version (%.90s)",
				 near_misses, role->match, version);
		else
			snprintf(rr->why, sizeof(rr->why), "no PMU in %.80s/bus/event_source/devices matches '%.120s'",
				 host->roots.sys, role->match);
	}
	return 0;
}

static int find_procfs_instances(const struct host *host, const struct catalog_role *role, struct resolved_role *rr)
{
	const struct kernel_stat_file *kind = role->nr_events > 0 ? kernel_stat_file_of(role->events[0].text) : NULL;
	char path[4300];

	if (!kind || !kind->per_node) {
		struct cpulist cpus;

		sysfs_join(path, sizeof(path), host->roots.proc, "vmstat");
		if (!sysfs_exists(path)) {
			snprintf(rr->why, sizeof(rr->why), "%.200s is missing", path);
			return 0;
		}
		if (all_online_cpus(&host->topo, &cpus) || add_instance(rr, NULL, "vmstat", &cpus))
			return -1;
		return 0;
	}
	/* numastat, node_vmstat, node_meminfo: one instance standing for every
	 * node that has the file; the procfs source gives each node its own series. */
	for (int n = 0; n < host->topo.nr_nodes; n++) {
		kernel_stat_path(kind, &host->roots, host->topo.nodes[n], path, sizeof(path));
		if (sysfs_exists(path)) {
			struct cpulist cpus;
			char name[32];

			snprintf(name, sizeof(name), "%.*s", (int)strlen(kind->prefix) - 1, kind->prefix);
			if (all_online_cpus(&host->topo, &cpus) || add_instance(rr, NULL, name, &cpus))
				return -1;
			return 0;
		}
	}
	snprintf(rr->why, sizeof(rr->why), "no %.150s/devices/system/node/nodeN/%s files", host->roots.sys, kind->file);
	return 0;
}

/* The eBPF probes load when the kernel has BTF (CO-RE relocations) and this
 * process may load tracing programs. One instance: the probes count for the
 * measured processes, not per PMU. */
static int find_bpf_instances(const struct host *host, struct resolved_role *rr)
{
	const char *btf = getenv("MEMSCOPE_BPF_BTF");
	char path[4300];
	struct cpulist cpus;

	/* A recording holds the probes' series or it does not (the metric engine
	 * then says which are not in it); the recorded host's BTF, which no
	 * snapshot keeps, and this process's rights say nothing about that. */
	if (host->roots.is_recorded)
		return all_online_cpus(&host->topo, &cpus) || add_instance(rr, NULL, "bpf", &cpus) ? -1 : 0;
	if (btf && *btf)
		snprintf(path, sizeof(path), "%s", btf);
	else
		sysfs_join(path, sizeof(path), host->roots.sys, "kernel/btf/vmlinux");
	if (!sysfs_exists(path)) {
		snprintf(rr->why, sizeof(rr->why), "no kernel BTF at %.200s (a kernel built with "
			 "CONFIG_DEBUG_INFO_BTF=y has it): the eBPF probes cannot load", path);
		return 0;
	}
	/* A fixture describes another machine: this process's rights say nothing about it. */
	if (!host->roots.is_fixture) {
		struct privileges priv;

		privileges_read(&priv);
		if (!privileges_allow_bpf(&priv)) {
			snprintf(rr->why, sizeof(rr->why), "the eBPF probes need root, or CAP_BPF and CAP_PERFMON "
				 "(" PRIVILEGES_SETCAP ")");
			return 0;
		}
	}
	if (all_online_cpus(&host->topo, &cpus) || add_instance(rr, NULL, "bpf", &cpus))
		return -1;
	return 0;
}

/* The damon source: one instance, when a physical-address kdamond runs or
 * memscope can start its own (root, no kdamond configured: active mode);
 * host/damon_monitor.h says why not. */
static int find_damon_instances(const struct host *host, struct resolved_role *rr)
{
	struct damon_monitor mon;
	enum damon_absent reason;
	struct ms_error err;
	struct cpulist cpus;

	if (!host->roots.is_recorded) {
		if (host->roots.is_fixture) {
			snprintf(rr->why, sizeof(rr->why), "the tree at %.200s describes another machine: its kdamond "
				 "cannot be read from here", host->roots.sys);
			return 0;
		}
		if (damon_monitor_find(&host->roots, &mon, &reason, &err) < 0) {
			if (reason != DAMON_NONE_RUNNING || mon.nr_kdamonds != 0 || geteuid() != 0) {
				snprintf(rr->why, sizeof(rr->why), "%.250s", err.text);
				return 0;
			}
		} else if (strcmp(mon.ops, "paddr") != 0) {
			snprintf(rr->why, sizeof(rr->why), "kdamond %d monitors virtual addresses (%s), which have no node",
				 mon.index, mon.ops);
			return 0;
		}
	}
	if (all_online_cpus(&host->topo, &cpus) || add_instance(rr, NULL, "damon", &cpus))
		return -1;
	return 0;
}

/* A plugin role: one instance, the loaded plugin serving its series, when
 * that plugin can read on this host. */
static int find_plugin_instances(const struct host *host, const struct catalog_role *role, struct resolved_role *rr)
{
	const struct plugin_vocabulary *v = role->nr_events ? plugin_series_owner(role->events[0].text) : NULL;
	struct cpulist cpus;

	if (!v) {
		snprintf(rr->why, sizeof(rr->why), "no loaded plugin serves '%.100s' (load the plugin that does: "
			 "memscope --plugin PATH.so; memscope list --plugins)", role->nr_events ? role->events[0].text : "");
		return 0;
	}
	if (!v->available) {
		snprintf(rr->why, sizeof(rr->why), "plugin %.40s: %.200s", v->plugin, v->why);
		return 0;
	}
	if (all_online_cpus(&host->topo, &cpus) || add_instance(rr, NULL, v->plugin, &cpus))
		return -1;
	return 0;
}

/* ---- event checks ---- */

void resolved_event_text(const struct catalog_role *role, const struct catalog_event *ev,
			 const struct resolved_instance *inst, char *buf, size_t size)
{
	(void)role;
	if (ev->how == EVENT_HOW_CONFIG)
		snprintf(buf, size, "%s/%s/", inst->name, ev->text);
	else
		snprintf(buf, size, "%s", ev->text);
}

/* Does the kernel statistics file at path have key? */
static bool stat_file_has(const struct kernel_stat_file *kind, const char *path, const char *key)
{
	char line[512];
	bool found = false;
	uint64_t value;
	FILE *fp = fopen(path, "r");

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp))
		found = kernel_stat_find(kind, line, key, &value);
	fclose(fp);
	return found;
}

/* Versions of one PMU can give an alias name other codes (HiSilicon PA v2
 * rx_req 0x40, PA v3 rx_req 0x7): an instance whose alias encodes otherwise
 * than the catalog's terms is another version, and the event is not its. */
static bool alias_agrees(const struct catalog_event *ev, const struct resolved_instance *inst,
			 const struct perf_event_attr *attr, char *why, size_t size)
{
	const struct pmu_alias *alias = ev->alias ? pmu_alias_find(inst->pmu, ev->alias) : NULL;
	struct perf_event_attr published;
	struct ms_error err = { "" };

	memset(&published, 0, sizeof(published));
	/* An alias with fields left to the user ("wp_val=?") cannot be compared. */
	if (!alias || strchr(alias->terms, '?') || pmu_encode_terms(inst->pmu, alias->terms, &published, &err) < 0)
		return true;
	if (published.config == attr->config && published.config1 == attr->config1 &&
	    published.config2 == attr->config2)
		return true;
	snprintf(why, size, "%.40s: %.60s publishes '%.40s' as %.80s, not %.80s: another version of this PMU",
		 ev->name, inst->name, ev->alias, alias->terms, ev->text);
	return false;
}

/* Can ev be counted on every instance of rr? If not, say why in why. */
static bool event_usable(const struct host *host, const struct catalog_role *role, const struct catalog_event *ev,
			 const struct resolved_role *rr, char *why, size_t size)
{
	if (rr->nr_inst == 0) {
		snprintf(why, size, "%s.%s: %s", role->name, ev->name, rr->why);
		return false;
	}
	for (int i = 0; i < rr->nr_inst; i++) {
		const struct resolved_instance *inst = &rr->inst[i];
		char path[4300];

		if (ev->how == EVENT_HOW_CONFIG) {
			struct perf_event_attr attr;
			struct ms_error err = { "" };

			/* Drivers such as arm-cmn hide the aliases of node types the hardware lacks. */
			if (ev->alias && inst->pmu->nr_aliases > 0 && !pmu_alias_find(inst->pmu, ev->alias)) {
				snprintf(why, size, "%s.%s: %s publishes no event '%s' (the driver hides events this "
					 "hardware does not have)", role->name, ev->name, inst->name, ev->alias);
				return false;
			}
			memset(&attr, 0, sizeof(attr));
			if (pmu_encode_terms(inst->pmu, ev->text, &attr, &err) < 0) {
				snprintf(why, size, "%s.%s: cannot encode '%s' on %s: %s", role->name, ev->name, ev->text,
					 inst->name, err.text);
				return false;
			}
			if (!alias_agrees(ev, inst, &attr, why, size))
				return false;
		} else if (ev->how == EVENT_HOW_PLUGIN) {
			const struct plugin_vocabulary *v = plugin_series_owner(ev->text);

			if (!v || strcmp(v->plugin, inst->name) != 0) {
				snprintf(why, size, "%s.%s: plugin %s serves no series '%s'", role->name, ev->name,
					 inst->name, ev->text);
				return false;
			}
		} else if (ev->how == EVENT_HOW_PROCFS) {
			const char *key = strchr(ev->text, '/') + 1;
			const struct kernel_stat_file *kind = kernel_stat_file_of(ev->text);

			/* The first node with the file: a CPU-less node has it as well. */
			kernel_stat_path(kind, &host->roots, host->topo.nodes[0], path, sizeof(path));
			for (int n = 1; kind->per_node && !sysfs_exists(path) && n < host->topo.nr_nodes; n++)
				kernel_stat_path(kind, &host->roots, host->topo.nodes[n], path, sizeof(path));
			if (!stat_file_has(kind, path, key)) {
				snprintf(why, size, "%s.%s: %s has no '%s' (kernel without this statistic)", role->name,
					 ev->name, path, key);
				return false;
			}
		}
	}
	return true;
}

struct mapping_check {
	const struct host *host;
	const struct catalog_family *family;
	const struct resolved_family *rf;
	char *why;
	size_t size;
};

static int check_ref(struct expr *ref, void *ctx)
{
	struct mapping_check *c = ctx;
	int r, e;

	if (catalog_slot_builtin(ref->slot))
		return 0;
	r = catalog_slot_role(ref->slot);
	e = catalog_slot_event(ref->slot);
	return event_usable(c->host, &c->family->roles[r], &c->family->roles[r].events[e], &c->rf->roles[r], c->why,
			    c->size)
		       ? 0
		       : 1;
}

/* ---- metrics ---- */

/* Whole pieces only: a reason cut in the middle of a formula reads as a
 * different formula, so one that does not fit becomes "; ...". */
static void append(char *buf, size_t size, const char *fmt, const char *a, const char *b, const char *c)
{
	size_t len = strlen(buf);
	int need;

	if (len + 1 >= size)
		return;
	need = snprintf(buf + len, size - len, fmt, a, b, c);
	if (need >= 0 && (size_t)need < size - len)
		return;
	buf[len] = '\0';
	if (len + 6 < size && (len < 5 || strcmp(buf + len - 5, "; ...") != 0))
		snprintf(buf + len, size - len, "%s...", len ? "; " : "");
}

/* A role's PMU name for messages: '^amd_umc_([0-9]+)$' -> "amd_umc_N"; the
 * role's own name when the regex is more than literals and numbers. */
static void role_pmu_name(const struct catalog_role *role, char *out, size_t size)
{
	size_t len = 0;
	const char *re = role->match ? role->match : "";

	for (const char *p = re; *p && len + 2 < size;) {
		if (strncmp(p, "([0-9]+)", 8) == 0 || strncmp(p, "[0-9]+", 6) == 0) {
			out[len++] = 'N';
			p += *p == '(' ? 8 : 6;
		} else if (strncmp(p, "(_[0-9]+)?", 10) == 0) {
			p += 10;
		} else if (*p == '^' || *p == '$') {
			p++;
		} else if (strchr("()[]{}|?*+.\\", *p)) {
			snprintf(out, size, "%s", role->name);
			return;
		} else {
			out[len++] = *p++;
		}
	}
	out[len] = '\0';
	if (!len)
		snprintf(out, size, "%s", role->name);
}

static const struct catalog_family_metric *family_maps(const struct catalog_family *family, int metric)
{
	for (int i = 0; i < family->nr_metrics; i++)
		if (family->metrics[i].metric == metric)
			return &family->metrics[i];
	return NULL;
}

/* The family maps the metric by itself: not only with mappings that add to
 * another family's (adds: true), which never make it available alone. */
static const struct catalog_family_metric *family_maps_alone(const struct catalog_family *family, int metric)
{
	const struct catalog_family_metric *fm = family_maps(family, metric);

	for (int m = 0; fm && m < fm->nr_mappings; m++)
		if (!fm->mappings[m].adds)
			return fm;
	return NULL;
}

static const char *family_unavailable(const struct catalog_family *family, int metric)
{
	for (int i = 0; i < family->nr_unavailable; i++)
		if (family->unavailable[i].metric == metric)
			return family->unavailable[i].reason;
	return NULL;
}

/* "no amd_umc_N/amd_df PMU": the PMUs the family's mappings of fm use that this host lacks. */
static void missing_pmus(const struct resolved_family *rf, const struct catalog_family_metric *fm, char *out,
			 size_t size)
{
	bool seen[64] = { false };
	size_t len = 0;

	out[0] = '\0';
	for (int m = 0; m < fm->nr_mappings; m++) {
		struct expr *stack[64];
		int top = 0;

		stack[top++] = fm->mappings[m].formula;
		while (top > 0) {
			struct expr *e = stack[--top];

			if (e->op == EXPR_REF && e->slot >= 0) {
				int r = catalog_slot_role(e->slot);
				char name[96];

				if (r < 64 && !seen[r] && rf->roles[r].nr_inst == 0) {
					seen[r] = true;
					role_pmu_name(&rf->family->roles[r], name, sizeof(name));
					if (len + 1 < size)
						len += (size_t)snprintf(out + len, size - len, "%s%s", len ? "/" : "", name);
				}
				continue;
			}
			if (e->b && top < 64)
				stack[top++] = e->b;
			if (e->a && top < 64)
				stack[top++] = e->a;
			if (e->cond && top < 64)
				stack[top++] = e->cond;
		}
	}
}

/* The first reason recorded for family in detail ("family mapping 1 (...): reason"). */
static void first_reason_of(const char *detail, const char *family, char *out, size_t size)
{
	const char *at = strstr(detail, family);
	const char *colon = at ? strstr(at, "): ") : NULL;
	size_t len;

	out[0] = '\0';
	if (!colon)
		return;
	colon += 3;
	len = strcspn(colon, ";");
	snprintf(out, size, "%.*s", (int)len, colon);
}

/* A metric a plugin's family maps (metrics.yaml `plugin:`), that plugin not
 * loaded: say so after what rm->why already holds. False when it has no plugin. */
static bool plugin_not_loaded(const struct resolution *res, struct resolved_metric *rm, const char *joint)
{
	const char *plugin = res->cat->metrics[rm->metric].plugin;
	size_t len = strlen(rm->why);

	if (!plugin)
		return false;
	if (*joint)
		snprintf(rm->why + len, sizeof(rm->why) - len, "%splugin %s (not loaded)", joint, plugin);
	else
		snprintf(rm->why + len, sizeof(rm->why) - len, "a metric of plugin %s, which is not loaded "
			 "(memscope --plugin %s.so; memscope list --plugins)", plugin, plugin);
	return true;
}

/* One line for an unavailable base metric: the family written for this CPU
 * and what it lacks; a family for any CPU (kernel, eBPF) and its reason; or
 * that no family matches this CPU. The full story stays in detail. */
static void one_line_reason(const struct resolution *res, struct resolved_metric *rm)
{
	const struct resolved_family *pick = NULL, *generic = NULL;
	bool cpu_has_family = false;
	char reason[400];

	for (int f = 0; f < res->nr_families; f++) {
		const struct resolved_family *rf = &res->families[f];
		bool mentions = family_maps(rf->family, rm->metric) || family_unavailable(rf->family, rm->metric);

		if (rf->family->nr_cpus == 0) {
			/* One that only adds to another family's mapping has no reason of its own. */
			mentions = family_maps_alone(rf->family, rm->metric) || family_unavailable(rf->family, rm->metric);
			if (mentions && !generic)
				generic = rf;
			continue;
		}
		if (!rf->cpu_match)
			continue;
		cpu_has_family |= res->cpu.known || rf->active;
		/* Without a CPU identity every family "matches": prefer one whose PMUs are here. */
		if (mentions && (!pick || (rf->active && !pick->active)))
			pick = rf;
	}
	if (pick && (res->cpu.known || pick->active)) {
		const struct catalog_family *fam = pick->family;
		const struct catalog_family_metric *fm = family_maps(fam, rm->metric);
		const char *unavail = family_unavailable(fam, rm->metric);

		if (!fm) {
			snprintf(rm->why, sizeof(rm->why), "%s: %.440s", fam->name, unavail);
		} else if (!pick->active) {
			missing_pmus(pick, fm, reason, sizeof(reason));
			snprintf(rm->why, sizeof(rm->why), "%s%s: no %.300s PMU (memscope doctor says more)", fam->name,
				 res->cpu.hypervisor ? " in a VM" : "", reason);
		} else {
			first_reason_of(rm->detail, fam->name, reason, sizeof(reason));
			snprintf(rm->why, sizeof(rm->why), "%s: %.440s", fam->name, reason[0] ? reason : "not usable here");
		}
		/* A family for any CPU maps it too (a plugin the user loaded, the
		 * kernel's): its reason is as true, and often the one asked about. */
		if (generic && family_maps_alone(generic->family, rm->metric)) {
			size_t len = strlen(rm->why);

			first_reason_of(rm->detail, generic->family->name, reason, sizeof(reason));
			snprintf(rm->why + len, sizeof(rm->why) - len, "; %s: %.300s", generic->family->name, reason);
		} else {
			plugin_not_loaded(res, rm, "; also ");
		}
	} else if (generic) {
		if (family_maps_alone(generic->family, rm->metric)) {
			first_reason_of(rm->detail, generic->family->name, reason, sizeof(reason));
			snprintf(rm->why, sizeof(rm->why), "%s: %.440s", generic->family->name, reason);
		} else {
			snprintf(rm->why, sizeof(rm->why), "%s: %.440s", generic->family->name,
				 family_unavailable(generic->family, rm->metric));
		}
	} else if (plugin_not_loaded(res, rm, "")) {
		/* A plugin's metric: not the CPU's to map. */
	} else if (!cpu_has_family) {
		snprintf(rm->why, sizeof(rm->why), "no catalog family matches this CPU (%s)", res->cpu.text);
		rm->no_family = true;
	} else {
		snprintf(rm->why, sizeof(rm->why), "no catalog family for this CPU (%s) maps it", res->cpu.text);
		rm->no_family = true;
	}
}

/* The first mapping marked adds of another active family that this host can
 * count: its value is added to the chosen mapping's (metrics.c). */
static void find_addition(struct resolution *res, struct resolved_metric *rm)
{
	for (int f = 0; f < res->nr_families; f++) {
		const struct resolved_family *rf = &res->families[f];
		const struct catalog_family *family = rf->family;

		if (f == rm->family || !rf->active)
			continue;
		for (int i = 0; i < family->nr_metrics; i++) {
			const struct catalog_family_metric *fm = &family->metrics[i];

			if (fm->metric != rm->metric)
				continue;
			for (int m = 0; m < fm->nr_mappings; m++) {
				char why[512] = "";
				struct mapping_check check = { res->host, family, rf, why, sizeof(why) };

				if (fm->mappings[m].adds && expr_each_ref(fm->mappings[m].formula, check_ref, &check) == 0) {
					rm->add_family = f;
					rm->add_mapping = m;
					rm->add_fm = fm;
					return;
				}
			}
		}
	}
}

static void resolve_base(struct resolution *res, struct resolved_metric *rm)
{
	const struct catalog *cat = res->cat;
	char mapped_by[512] = "";

	for (int f = 0; f < res->nr_families; f++) {
		const struct resolved_family *rf = &res->families[f];
		const struct catalog_family *family = rf->family;
		const struct catalog_family_metric *fm = NULL;

		for (int i = 0; i < family->nr_metrics; i++)
			if (family->metrics[i].metric == rm->metric)
				fm = &family->metrics[i];
		for (int i = 0; !fm && i < family->nr_unavailable; i++)
			if (family->unavailable[i].metric == rm->metric && rf->active)
				append(rm->detail, sizeof(rm->detail), "%s%s: %s", rm->detail[0] ? "; " : "", family->name,
				       family->unavailable[i].reason);
		if (!fm)
			continue;
		/* A family for any CPU is inactive only for want of its sources (no
		 * PMU, no kernel BTF...): its mappings below say which. */
		if (!rf->active && family->nr_cpus > 0 && (!rf->cpu_match || !res->cpu.known)) {
			append(mapped_by, sizeof(mapped_by), "%s%s%s", mapped_by[0] ? ", " : "", family->name, "");
			continue;
		}
		for (int m = 0; m < fm->nr_mappings; m++) {
			struct mapping_check check = { res->host, family, rf, NULL, 0 };
			char why[512] = "";
			char label[1024];

			if (fm->mappings[m].adds)
				continue;
			check.why = why;
			check.size = sizeof(why);
			if (expr_each_ref(fm->mappings[m].formula, check_ref, &check) == 0) {
				rm->available = true;
				rm->family = f;
				rm->mapping = m;
				rm->fm = fm;
				find_addition(res, rm);
				return;
			}
			snprintf(label, sizeof(label), "%s mapping %d (%s)", family->name, m + 1,
				 fm->mappings[m].formula_text);
			append(rm->detail, sizeof(rm->detail), "%s%s: %s", rm->detail[0] ? "; " : "", label, why);
		}
	}
	if (!rm->detail[0]) {
		if (mapped_by[0])
			snprintf(rm->detail, sizeof(rm->detail), "mapped only by PMU families not active on this host (%s); "
				 "this host is %s", mapped_by, res->cpu.text);
		else
			snprintf(rm->detail, sizeof(rm->detail), "no PMU family in %s maps '%s'%s", cat->dir,
				 cat->metrics[rm->metric].name, plugin_series_count() ? ""
				 : " (plugins can: memscope list --plugins)");
	}
	one_line_reason(res, rm);
}

static int resolve_metric(struct resolution *res, int idx, int *state);

struct derived_check {
	struct resolution *res;
	int *state;
	struct resolved_metric *rm;
};

static int check_derived_ref(struct expr *ref, void *ctx)
{
	struct derived_check *c = ctx;
	const struct resolved_metric *dep;

	if (catalog_slot_builtin(ref->slot))
		return 0;
	resolve_metric(c->res, ref->slot, c->state);
	dep = &c->res->metrics[ref->slot];
	if (!dep->available && !strstr(c->rm->detail, c->res->cat->metrics[ref->slot].name)) {
		char reason[sizeof(dep->detail) + 4];

		snprintf(reason, sizeof(reason), " (%s)", dep->detail);
		append(c->rm->detail, sizeof(c->rm->detail), "%sneeds %s, which is not available%s",
		       c->rm->detail[0] ? "; " : "", c->res->cat->metrics[ref->slot].name, reason);
		/* One line: the first input missing, and its own one-line reason. */
		if (!c->rm->why[0]) {
			snprintf(c->rm->why, sizeof(c->rm->why), "needs %s, not available: %.420s",
				 c->res->cat->metrics[ref->slot].name,
				 dep->why);
			c->rm->no_family = dep->no_family;
		}
	}
	if (!dep->available)
		c->rm->available = false;
	return 0;
}

static int resolve_metric(struct resolution *res, int idx, int *state)
{
	struct resolved_metric *rm = &res->metrics[idx];
	const struct catalog_metric *metric = &res->cat->metrics[idx];

	if (state[idx])
		return 0;
	state[idx] = 1;
	rm->metric = idx;
	rm->family = -1;
	rm->mapping = -1;
	rm->add_family = -1;
	rm->add_mapping = -1;
	if (metric->formula) {
		struct derived_check c = { res, state, rm };

		rm->available = true;
		expr_each_ref(metric->formula, check_derived_ref, &c);
	} else {
		resolve_base(res, rm);
	}
	return 0;
}

/* Counters per instance: what CPUID says where the catalog names the field
 * (a count that differs by part, such as AMD's data fabric), else the catalog's. */
static void role_counters(const struct host *host, const struct catalog_role *role, struct resolved_role *rr)
{
	unsigned regs[4];

	rr->counters = role->counters;
	if (!role->counters_cpuid || cpuid_read(&host->roots, role->cpuid_leaf, 0, regs) < 0)
		return;
	{
		unsigned width = (unsigned)(role->cpuid_hi - role->cpuid_lo + 1);
		unsigned value = (regs[role->cpuid_reg] >> role->cpuid_lo) & (width >= 32 ? ~0u : (1u << width) - 1);

		if (value > 0 && value <= 64) {
			rr->counters = (int)value;
			rr->counters_from_cpuid = true;
		}
	}
}

int resolve(const struct host *host, const struct catalog *cat, struct resolution **out, struct ms_error *err)
{
	struct resolution *res = calloc(1, sizeof(*res));
	int *state = NULL;

	*out = NULL;
	if (!res)
		goto oom;
	res->cat = cat;
	res->host = host;
	res->cpu = host->cpu;
	if (!res->cpu.text[0])
		cpu_identity_read(&host->roots, &res->cpu);
	res->families = calloc((size_t)cat->nr_families + 1, sizeof(*res->families));
	res->metrics = calloc((size_t)cat->nr_metrics + 1, sizeof(*res->metrics));
	state = calloc((size_t)cat->nr_metrics + 1, sizeof(int));
	if (!res->families || !res->metrics || !state)
		goto oom;
	for (int f = 0; f < cat->nr_families; f++) {
		const struct catalog_family *family = &cat->families[f];
		struct resolved_family *rf = &res->families[f];

		res->nr_families++;
		rf->family = family;
		/* An unknown CPU (fixture or container without cpuinfo) is judged by its PMUs alone. */
		rf->cpu_match = !res->cpu.known || catalog_cpu_matches(family, &res->cpu);
		rf->roles = calloc((size_t)family->nr_roles + 1, sizeof(*rf->roles));
		if (!rf->roles)
			goto oom;
		for (int r = 0; r < family->nr_roles; r++) {
			const struct catalog_role *role = &family->roles[r];
			int rc = role->source == ROLE_PROCFS ? find_procfs_instances(host, role, &rf->roles[r])
				 : role->source == ROLE_BPF  ? find_bpf_instances(host, &rf->roles[r])
				 : role->source == ROLE_PLUGIN ? find_plugin_instances(host, role, &rf->roles[r])
				 : role->source == ROLE_DAMON ? find_damon_instances(host, &rf->roles[r])
							     : find_perf_instances(host, family, role, &rf->roles[r]);

			if (rc)
				goto oom;
			role_counters(host, role, &rf->roles[r]);
			if (rf->roles[r].nr_inst > 0 && rf->cpu_match)
				rf->active = true;
		}
	}
	res->nr_metrics = cat->nr_metrics;
	for (int i = 0; i < cat->nr_metrics; i++)
		resolve_metric(res, i, state);
	free(state);
	*out = res;
	return 0;
oom:
	free(state);
	resolution_free(res);
	ms_error_set(err, "resolving the catalog: out of memory");
	return -1;
}

void resolution_free(struct resolution *res)
{
	if (!res)
		return;
	for (int f = 0; f < res->nr_families; f++) {
		struct resolved_family *rf = &res->families[f];

		for (int r = 0; rf->roles && r < rf->family->nr_roles; r++) {
			for (int i = 0; i < rf->roles[r].nr_inst; i++)
				cpulist_free(&rf->roles[r].inst[i].cpus);
			free(rf->roles[r].inst);
		}
		free(rf->roles);
	}
	free(res->families);
	free(res->metrics);
	free(res);
}
