#include "catalog/catalog_list.h"
#include "catalog/catalog_sampling.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_groups.h"
#include "catalog/resolver.h"
#include "events/plugin_series.h"
#include "util/suggest.h"
#include "host/kernel_stats.h"
#include "util/report.h"

static int total_instances(const struct resolved_family *rf)
{
	int n = 0;

	for (int r = 0; r < rf->family->nr_roles; r++)
		n += rf->roles[r].nr_inst;
	return n;
}

static void print_header(const struct resolution *res, FILE *out)
{
	int shown = 0;

	fprintf(out, "CPU: %s\nActive PMU families:", res->cpu.text);
	for (int f = 0; f < res->nr_families; f++) {
		const struct resolved_family *rf = &res->families[f];

		if (!rf->active)
			continue;
		fprintf(out, "%s %s (%d instance%s)", shown++ ? "," : "", rf->family->name, total_instances(rf),
			total_instances(rf) == 1 ? "" : "s");
	}
	fprintf(out, "%s\n", shown ? "" : " none");
}

/* Number of instances the chosen mapping's events are counted on. */
struct count_ctx {
	const struct resolved_family *rf;
	int roles_seen[16];
	int nr_roles;
	int instances;
};

static int count_ref(struct expr *ref, void *ctx)
{
	struct count_ctx *c = ctx;
	int r;

	if (ref->slot < 0)
		return 0;
	r = catalog_slot_role(ref->slot);
	for (int i = 0; i < c->nr_roles; i++)
		if (c->roles_seen[i] == r)
			return 0;
	if (c->nr_roles < 16)
		c->roles_seen[c->nr_roles++] = r;
	c->instances += c->rf->roles[r].nr_inst;
	return 0;
}

/* Is the CPU known and no family written for it? */
static bool cpu_without_family(const struct resolution *res)
{
	if (!res->cpu.known)
		return false;
	for (int f = 0; f < res->nr_families; f++)
		if (res->families[f].family->nr_cpus > 0 && res->families[f].cpu_match)
			return false;
	return true;
}

/* Is metric i unavailable only for want of a family for this CPU (itself or an input)? */
static bool no_family_reason(const struct catalog *cat, const struct resolution *res, int i)
{
	(void)cat;
	return res->metrics[i].no_family;
}

/* Each metric group (-M GROUP) with its metrics; one this host cannot
 * measure is marked "(no)": -M GROUP counts the others and names it. */
static int print_groups(const struct resolution *res, const struct catalog *cat, FILE *out)
{
	const char **groups;
	int nr;

	if (catalog_group_names(cat, &groups, &nr) < 0) {
		ms_warn("out of memory");
		return 1;
	}
	fprintf(out, "\n%-12s %-8s %s\n", "GROUP", "HERE", "METRICS (memscope stat -M GROUP; (no): not on this host)");
	for (int g = 0; g < nr; g++) {
		int members = 0, here = 0;
		char count[32];

		for (int i = 0; i < res->nr_metrics; i++)
			for (int k = 0; k < cat->metrics[i].nr_groups; k++)
				if (!strcmp(cat->metrics[i].groups[k], groups[g])) {
					members++;
					here += res->metrics[i].available;
				}
		snprintf(count, sizeof(count), "%d of %d", here, members);
		fprintf(out, "%-12s %-8s", groups[g], count);
		members = 0;
		for (int i = 0; i < res->nr_metrics; i++)
			for (int k = 0; k < cat->metrics[i].nr_groups; k++)
				if (!strcmp(cat->metrics[i].groups[k], groups[g]))
					fprintf(out, "%s%s%s", members++ ? ", " : " ", cat->metrics[i].name,
						res->metrics[i].available ? "" : " (no)");
		fputc('\n', out);
	}
	free(groups);
	return 0;
}

int cmd_list_groups(const struct host *host, const struct catalog *cat, FILE *out)
{
	struct resolution *res;
	struct ms_error err;
	int status;

	if (resolve(host, cat, &res, &err)) {
		ms_report(&err);
		return 1;
	}
	status = print_groups(res, cat, out);
	resolution_free(res);
	return status;
}

int cmd_list_metrics(const struct host *host, const struct catalog *cat, FILE *out)
{
	struct resolution *res;
	struct ms_error err;
	int available = 0, status;
	bool no_family;

	if (resolve(host, cat, &res, &err)) {
		ms_report(&err);
		return 1;
	}
	no_family = cpu_without_family(res);
	print_header(res, out);
	if (no_family) {
		/* One line instead of a row per hardware metric saying the same. */
		fprintf(out, "No catalog family matches this CPU (%s%s%s%s): memory-controller, cache and "
			"interconnect metrics need one; the kernel and eBPF metrics below and raw events (memscope list "
			"--events) still work; docs/catalog.md says how to add a family.\n", res->cpu.text,
			res->cpu.model_name[0] ? ", " : "", res->cpu.model_name, res->cpu.hypervisor ? ", a VM" : "");
	}
	fprintf(out, "\n%-28s %-10s %-8s %-4s %s\n", "METRIC", "UNIT", "KIND", "OK", "HOW / WHY NOT");
	for (int i = 0; i < res->nr_metrics; i++) {
		const struct catalog_metric *m = &cat->metrics[i];
		const struct resolved_metric *rm = &res->metrics[i];

		if (no_family && !rm->available && no_family_reason(cat, res, i))
			continue;
		fprintf(out, "%-28s %-10s %-8s %-4s ", m->name, m->unit[0] ? m->unit : "-", metric_kind_name(m->kind),
			rm->available ? "yes" : "no");
		available += rm->available;
		if (!rm->available) {
			fprintf(out, "%s", rm->why);
		} else if (m->formula) {
			fprintf(out, "= %s", m->formula_text);
		} else {
			const struct resolved_family *rf = &res->families[rm->family];
			const struct catalog_mapping *map = &rm->fm->mappings[rm->mapping];
			struct count_ctx c = { rf, { 0 }, 0, 0 };

			expr_each_ref(map->formula, count_ref, &c);
			fprintf(out, "%s: %s (%d instance%s)%s%s%s", rf->family->name, map->formula_text, c.instances,
				c.instances == 1 ? "" : "s", map->fidelity != FIDELITY_EXACT ? " [" : "",
				map->fidelity != FIDELITY_EXACT ? mapping_fidelity_name(map->fidelity) : "",
				map->fidelity != FIDELITY_EXACT ? "]" : "");
		}
		if (m->formerly)
			fprintf(out, "  (formerly %s, still accepted)", m->formerly);
		fputc('\n', out);
	}
	fprintf(out, "\n%d of %d metrics available. Details: memscope list --explain METRIC\n", available,
		res->nr_metrics);
	status = print_groups(res, cat, out);
	resolution_free(res);
	return status;
}

static void print_scope_of(const struct host *host, const struct resolved_instance *inst, FILE *out)
{
	int shown = 0;

	for (int c = 0; c < inst->cpus.nr && shown < 4; c++, shown++) {
		const struct cpu_place *place = topology_cpu(&host->topo, inst->cpus.cpus[c]);

		if (place)
			fprintf(out, "%scpu %d (node %d, socket %d)", shown ? ", " : "", place->cpu, place->node,
				place->socket);
		else
			fprintf(out, "%scpu %d (offline)", shown ? ", " : "", inst->cpus.cpus[c]);
	}
	if (inst->cpus.nr > 4)
		fprintf(out, " ... %d CPUs in all", inst->cpus.nr);
	if (inst->memory_node >= 0)
		fprintf(out, "; counted on node %d, the node of the memory it backs", inst->memory_node);
	else if (inst->memory_node == -2)
		fprintf(out, "; counted on no node: %s", inst->memory_node_why);
}

struct explain_ctx {
	const struct resolution *res;
	const struct resolved_family *rf;
	FILE *out;
	int seen[64];
	int nr_seen;
};

/* The plugin serving a plugin event, and where it was loaded from. */
static void print_plugin_event(const struct catalog_event *ev, FILE *out)
{
	const struct plugin_vocabulary *v = plugin_series_owner(ev->text);

	fprintf(out, "plugin series %s", ev->text);
	if (v)
		fprintf(out, " (plugin %s, %s)", v->plugin, v->path);
	else
		fprintf(out, " (no loaded plugin serves it)");
}

static int explain_ref(struct expr *ref, void *ctx)
{
	struct explain_ctx *c = ctx;
	const struct catalog_role *role;
	const struct catalog_event *ev;
	const struct resolved_role *rr;
	int r, e;

	if (catalog_slot_builtin(ref->slot)) {
		for (int i = 0; i < c->nr_seen; i++)
			if (c->seen[i] == ref->slot)
				return 0;
		if (c->nr_seen < 64)
			c->seen[c->nr_seen++] = ref->slot;
		fprintf(c->out, "    %s\n", ref->slot == CATALOG_SLOT_SECONDS ? "seconds = length of the interval in seconds"
			: ref->slot == CATALOG_SLOT_SMT_ON ? "smt_on = 1 when a core has more than one online CPU (perf's #SMT_on)"
			: "core_wide = 1 when every CPU of each counted core is counted (perf's #core_wide)");
		return 0;
	}
	for (int i = 0; i < c->nr_seen; i++)
		if (c->seen[i] == ref->slot)
			return 0;
	if (c->nr_seen < 64)
		c->seen[c->nr_seen++] = ref->slot;
	r = catalog_slot_role(ref->slot);
	e = catalog_slot_event(ref->slot);
	role = &c->rf->family->roles[r];
	ev = &role->events[e];
	rr = &c->rf->roles[r];
	fprintf(c->out, "    %s.%s = ", role->name, ev->name);
	if (ev->how == EVENT_HOW_CONFIG)
		fprintf(c->out, "%s", ev->text);
	else if (ev->how == EVENT_HOW_PLUGIN)
		print_plugin_event(ev, c->out);
	else
		fprintf(c->out, "%s %s", ev->how == EVENT_HOW_PERF ? "perf event" : ev->how == EVENT_HOW_BPF ? "eBPF series"
					 : ev->how == EVENT_HOW_DAMON ? "DAMON series" : "kernel statistic", ev->text);
	if (ev->alias)
		fprintf(c->out, " (sysfs alias %s)", ev->alias);
	if (ev->pfm)
		fprintf(c->out, " (libpfm4 %s)", ev->pfm);
	fprintf(c->out, "\n      PMU role %s: ", role->name);
	if (role->match)
		fprintf(c->out, "PMUs matching '%s', ", role->match);
	fprintf(c->out, "scope %s", role->scope);
	if (rr->counters)
		fprintf(c->out, ", %d counters%s%s%s", rr->counters, rr->counters_from_cpuid ? " (CPUID " : "",
			rr->counters_from_cpuid ? role->counters_cpuid : "", rr->counters_from_cpuid ? ")" : "");
	if (role->width)
		fprintf(c->out, " of %d bits", role->width);
	fprintf(c->out, "\n");
	if (ev->description)
		fprintf(c->out, "      %s\n", ev->description);
	if (ev->upstream_differs)
		fprintf(c->out, "      differs from perf's event table: %s\n", ev->upstream_differs);
	for (int i = 0; i < rr->nr_inst; i++) {
		const struct resolved_instance *inst = &rr->inst[i];
		char text[512];

		resolved_event_text(role, ev, inst, text, sizeof(text));
		fprintf(c->out, "      %-30s", text);
		if (ev->how == EVENT_HOW_CONFIG && inst->pmu) {
			struct perf_event_attr attr;
			struct ms_error err;

			memset(&attr, 0, sizeof(attr));
			if (pmu_encode_terms(inst->pmu, ev->text, &attr, &err) == 0) {
				fprintf(c->out, " type=%d config=0x%llx", inst->pmu->type, (unsigned long long)attr.config);
				if (attr.config1)
					fprintf(c->out, " config1=0x%llx", (unsigned long long)attr.config1);
				if (attr.config2)
					fprintf(c->out, " config2=0x%llx", (unsigned long long)attr.config2);
			}
		}
		fprintf(c->out, "  on ");
		if (inst->pmu && inst->pmu->has_cpumask) {
			print_scope_of(c->res->host, inst, c->out);
		} else if (inst->no_cpumask) {
			print_scope_of(c->res->host, inst, c->out);
			fprintf(c->out, ": %s has no cpumask file, so it is opened system-wide on one CPU (the first "
				"online), as the kernel takes an uncore event; counts go to that CPU's node and socket",
				inst->name);
		}
		else if (ev->how == EVENT_HOW_PROCFS && kernel_stat_file_of(ev->text)->per_node)
			fprintf(c->out, "each node (one series per node)");
		else if (ev->how == EVENT_HOW_PROCFS)
			fprintf(c->out, "the whole system (no node split)");
		else if (ev->how == EVENT_HOW_BPF && strcmp(role->scope, "node") == 0)
			fprintf(c->out, "the measured processes (-a: every process), one series per node (its node label)");
		else if (ev->how == EVENT_HOW_BPF)
			fprintf(c->out, "the measured processes (-a: every process), no node split");
		else if (ev->how == EVENT_HOW_DAMON)
			fprintf(c->out, "the whole machine's physical memory as the running kdamond sees it, one series "
				"per node (its node label)");
		else if (ev->how == EVENT_HOW_PLUGIN)
			fprintf(c->out, "what plugin %s reads, %s", inst->name,
				strcmp(role->scope, "instance") ? "each series counted toward its node and socket labels"
				: "one row per instance or cgroup label (stat --per-instance), and its node and socket");
		else
			fprintf(c->out, "every CPU (%d), each counted toward its node and socket", inst->cpus.nr);
		fprintf(c->out, "\n");
	}
	return 0;
}

struct group_count {
	int slots[64];
	int nr;
};

static int count_group_ref(struct expr *ref, void *ctx)
{
	struct group_count *g = ctx;

	if (catalog_slot_builtin(ref->slot))
		return 0;
	for (int i = 0; i < g->nr; i++)
		if (g->slots[i] == ref->slot)
			return 0;
	if (g->nr < 64)
		g->slots[g->nr++] = ref->slot;
	return 0;
}

/* How a mapping's events of each PMU role share the counters: one group when
 * they fit (every ratio from the same cycles), else groups that take turns
 * (perf's --metric-no-group), each count scaled and the value marked mixed. */
static void explain_grouping(const struct resolved_family *rf, const struct catalog_mapping *map, FILE *out)
{
	struct group_count g = { .nr = 0 };

	expr_each_ref(map->formula, count_group_ref, &g);
	for (int r = 0; r < rf->family->nr_roles; r++) {
		const struct catalog_role *role = &rf->family->roles[r];
		int n = 0, counters = rf->roles[r].counters;

		int fixed = 0;

		for (int i = 0; i < g.nr; i++)
			if (catalog_slot_role(g.slots[i]) == r) {
				n++;
				fixed += role->events[catalog_slot_event(g.slots[i])].fixed;
			}
		if (n < 2 || role->source != ROLE_PERF || counters <= 0)
			continue;
		if (n - fixed <= counters)
			fprintf(out, "  grouping: its %d %s events open as one group on each instance (%d of %d counters%s): "
				     "every ratio comes from the same cycles (events it shares with a metric asked for "
				     "before it stay in that metric's group)\n", n, role->name, n - fixed, counters,
				fixed ? ", the others on fixed counters" : "");
		else
			fprintf(out, "  grouping: its %d %s events do not fit one group of %d counters%s: they open in %d "
				     "groups that take turns (perf's --metric-no-group); each count is scaled by "
				     "enabled/running, the value shows the smallest coverage and is marked mixed\n",
				n, role->name, counters, fixed ? " and the fixed ones" : "",
				(n - fixed + counters - 1) / counters);
	}
}

static void explain_metric(const struct resolution *res, int idx, FILE *out, int depth)
{
	const struct catalog *cat = res->cat;
	const struct catalog_metric *m = &cat->metrics[idx];
	const struct resolved_metric *rm = &res->metrics[idx];

	fprintf(out, "%s%s (%s, unit %s): %s\n", depth ? "\n" : "", m->name, metric_kind_name(m->kind),
		m->unit[0] ? m->unit : "none", m->description);
	fprintf(out, "  defined at %s:%d\n", m->pos.file, m->pos.line);
	if (m->formerly)
		fprintf(out, "  formerly %s: the old name, still accepted (-m, --explain, Lua, catalogs)\n", m->formerly);
	for (int i = 0; i < m->nr_groups; i++)
		fprintf(out, "%s%s%s", i ? ", " : "  groups: ", m->groups[i], i == m->nr_groups - 1 ? "\n" : "");
	if (m->formula) {
		fprintf(out, "  formula: %s   (evaluated per scope: system, each node, each socket)\n", m->formula_text);
		if (!rm->available)
			fprintf(out, "  NOT AVAILABLE: %s\n  every reason: %s\n", rm->why, rm->detail);
		for (int i = 0; i < m->nr_vendors; i++)
			fprintf(out, "  on %s: %s\n", m->vendors[i].vendor, m->vendors[i].text);
		/* then each input, once */
		{
			struct expr *stack[64];
			int top = 0, seen[64], nr_seen = 0;

			stack[top++] = m->formula;
			while (top > 0) {
				struct expr *e = stack[--top];

				if (e->op == EXPR_REF && e->slot >= 0) {
					bool dup = false;

					for (int i = 0; i < nr_seen; i++)
						dup |= seen[i] == e->slot;
					if (!dup && nr_seen < 64) {
						seen[nr_seen++] = e->slot;
						explain_metric(res, e->slot, out, depth + 1);
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
		return;
	}
	for (int i = 0; i < m->nr_vendors; i++)
		fprintf(out, "  on %s: %s\n", m->vendors[i].vendor, m->vendors[i].text);
	if (!rm->available) {
		fprintf(out, "  NOT AVAILABLE on this host: %s\n  every reason: %s\n", rm->why, rm->detail);
		return;
	}
	{
		const struct resolved_family *rf = &res->families[rm->family];
		const struct catalog_mapping *map = &rm->fm->mappings[rm->mapping];
		struct explain_ctx c = { res, rf, out, { 0 }, 0 };

		fprintf(out, "  computed by family %s (%s), mapping %d of %d, %s:%d\n", rf->family->name,
			rf->family->description, rm->mapping + 1, rm->fm->nr_mappings, map->pos.file, map->pos.line);
		fprintf(out, "  formula: %s\n", map->formula_text);
		fprintf(out, "  fidelity: %s%s%s\n", mapping_fidelity_name(map->fidelity), map->caveat ? " - " : "",
			map->caveat ? map->caveat : "");
		fprintf(out, "  source: %s\n", map->source);
		if (map->upstream_differs)
			fprintf(out, "  differs from perf's metric: %s\n", map->upstream_differs);
		fprintf(out, "  raw events (summed over the instances in each scope; multiplexed counts are scaled by "
			     "enabled/running):\n");
		expr_each_ref(map->formula, explain_ref, &c);
		explain_grouping(rf, map, out);
		if (rm->detail[0])
			fprintf(out, "  preferred mappings not usable here: %s\n", rm->detail);
		for (int k = rm->mapping + 1; k < rm->fm->nr_mappings; k++)
			if (!rm->fm->mappings[k].adds)
				fprintf(out, "  fallback %d (not used): %s [%s]\n", k + 1, rm->fm->mappings[k].formula_text,
					rm->fm->mappings[k].source);
	}
	if (rm->add_family >= 0) {
		const struct resolved_family *rf = &res->families[rm->add_family];
		const struct catalog_mapping *map = &rm->add_fm->mappings[rm->add_mapping];
		struct explain_ctx c = { res, rf, out, { 0 }, 0 };

		fprintf(out, "  plus, in the scopes it has counters in, family %s (%s), %s:%d\n", rf->family->name,
			rf->family->description, map->pos.file, map->pos.line);
		fprintf(out, "  formula: %s\n", map->formula_text);
		fprintf(out, "  fidelity: %s%s%s\n", mapping_fidelity_name(map->fidelity), map->caveat ? " - " : "",
			map->caveat ? map->caveat : "");
		fprintf(out, "  source: %s\n", map->source);
		fprintf(out, "  raw events:\n");
		expr_each_ref(map->formula, explain_ref, &c);
	}
}

int cmd_list_explain(const struct host *host, const struct catalog *cat, const char *metric, FILE *out,
		     struct ms_error *err)
{
	struct resolution *res;
	int idx = catalog_metric_index(cat, metric);

	/* sample.NAME: the sampling event `record --sample NAME` opens here. */
	if (idx < 0 && !strncmp(metric, "sample.", 7)) {
		int ret;

		if (resolve(host, cat, &res, err))
			return 1;
		ret = sampling_explain(res, metric + 7, out, err) < 0;
		resolution_free(res);
		return ret;
	}
	if (idx < 0) {
		struct suggestions sug;
		char hint[600];

		suggestions_init(&sug, metric);
		for (int m = 0; m < cat->nr_metrics; m++)
			suggestions_offer(&sug, cat->metrics[m].name);
		suggestions_format(&sug, hint, sizeof(hint));
		ms_error_set(err, "unknown metric '%s'%s (memscope list --metrics lists them)", metric, hint);
		return 1;
	}
	if (resolve(host, cat, &res, err))
		return 1;
	print_header(res, out);
	fprintf(out, "\n");
	explain_metric(res, idx, out, 0);
	resolution_free(res);
	return 0;
}
