#include "cli/list_topology.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "host/caches.h"
#include "host/cpulist.h"
#include "host/memory_tiers.h"
#include "util/number_format.h"
#include "util/report.h"

/* The CPUs of topo that satisfy keep(place, key), as a kernel CPU list. */
static void cpus_where(const struct topology *topo, bool (*keep)(const struct cpu_place *, int), int key,
		       char *buf, size_t size)
{
	struct cpulist list = { calloc((size_t)topo->nr_cpus + 1, sizeof(int)), 0 };

	if (!list.cpus) {
		snprintf(buf, size, "?");
		return;
	}
	for (int i = 0; i < topo->nr_cpus; i++)
		if (keep(&topo->cpus[i], key))
			list.cpus[list.nr++] = topo->cpus[i].cpu;
	cpulist_format(&list, buf, size);
	free(list.cpus);
}

static bool on_node(const struct cpu_place *p, int node) { return p->node == node; }
static bool on_socket(const struct cpu_place *p, int socket) { return p->socket == socket; }

/* Sockets of a node, dies and cores of a socket: counted from the CPUs. */
static void node_sockets(const struct topology *topo, int node, char *buf, size_t size)
{
	struct cpulist list = { calloc((size_t)topo->nr_cpus + 1, sizeof(int)), 0 };

	if (!list.cpus) {
		snprintf(buf, size, "?");
		return;
	}
	for (int i = 0; i < topo->nr_cpus; i++) {
		bool seen = false;

		if (topo->cpus[i].node != node)
			continue;
		for (int k = 0; k < list.nr; k++)
			seen |= list.cpus[k] == topo->cpus[i].socket;
		if (!seen)
			list.cpus[list.nr++] = topo->cpus[i].socket;
	}
	/* cpulist_format wants them ascending. */
	for (int a = 0; a < list.nr; a++)
		for (int b = a + 1; b < list.nr; b++)
			if (list.cpus[b] < list.cpus[a]) {
				int t = list.cpus[a];

				list.cpus[a] = list.cpus[b];
				list.cpus[b] = t;
			}
	if (list.nr)
		cpulist_format(&list, buf, size);
	else
		snprintf(buf, size, "-");
	free(list.cpus);
}

static int count_distinct(const struct topology *topo, int socket, bool cores)
{
	int nr = 0;

	for (int i = 0; i < topo->nr_cpus; i++) {
		const struct cpu_place *p = &topo->cpus[i];
		bool first = true;

		if (p->socket != socket)
			continue;
		for (int j = 0; j < i && first; j++) {
			const struct cpu_place *q = &topo->cpus[j];

			if (q->socket == socket && q->die == p->die && (!cores || q->core == p->core))
				first = false;
		}
		nr += first;
	}
	return nr;
}

static int print_nodes(const struct host *host, FILE *out)
{
	const struct topology *topo = &host->topo;
	struct ms_error err = { "" };

	fprintf(out, "\nNUMA nodes\n  %-5s %-24s %-11s %s\n", "node", "cpus", "memory", "sockets");
	for (int i = 0; i < topo->nr_nodes; i++) {
		unsigned long long bytes = 0;
		char cpus[512], memory[32], sockets[128];
		int got = topology_node_memory(host->roots.sys, topo->nodes[i], &bytes, &err);

		if (got < 0) {
			ms_report(&err);
			return -1;
		}
		cpus_where(topo, on_node, topo->nodes[i], cpus, sizeof(cpus));
		if (got)
			number_bytes(memory, sizeof(memory), bytes);
		else
			snprintf(memory, sizeof(memory), "-");
		node_sockets(topo, topo->nodes[i], sockets, sizeof(sockets));
		fprintf(out, "  %-5d %-24s %-11s %s\n", topo->nodes[i], cpus[0] ? cpus : "(no CPUs)", memory, sockets);
	}
	/* As numactl -H prints them. */
	fprintf(out, "\nnode distances:\nnode ");
	for (int to = 0; to < topo->nr_nodes; to++)
		fprintf(out, " %3d", topo->nodes[to]);
	fputc('\n', out);
	for (int from = 0; from < topo->nr_nodes; from++) {
		fprintf(out, "%4d:", topo->nodes[from]);
		for (int to = 0; to < topo->nr_nodes; to++)
			fprintf(out, " %3d", topo->distance[from * topo->nr_nodes + to]);
		fputc('\n', out);
	}
	return 0;
}

static void print_value(long long value, FILE *out)
{
	if (value < 0)
		fprintf(out, " %10s", "-");
	else
		fprintf(out, " %10lld", value);
}

static void print_hmat(const struct memory_tiers *tiers, FILE *out)
{
	bool any = false;

	for (int i = 0; i < tiers->nr_nodes; i++)
		any |= tiers->nodes[i].has_access[0] || tiers->nodes[i].has_access[1];
	if (!any) {
		fprintf(out, "  HMAT: no access attributes (nodeN/access0/initiators): the firmware has no HMAT table or "
			     "the kernel was built without CONFIG_ACPI_HMAT\n");
		return;
	}
	fprintf(out, "\nHMAT access (access0: nearest initiator of any kind; access1: nearest CPU)\n"
		     "  %-5s %-8s %10s %10s %10s %10s\n", "node", "class", "read MB/s", "write MB/s", "read ns", "write ns");
	for (int i = 0; i < tiers->nr_nodes; i++)
		for (int class = 0; class < 2; class++) {
			const struct hmat_access *a = &tiers->nodes[i].access[class];

			if (!tiers->nodes[i].has_access[class])
				continue;
			fprintf(out, "  %-5d access%d ", tiers->nodes[i].node, class);
			print_value(a->read_bandwidth, out);
			print_value(a->write_bandwidth, out);
			print_value(a->read_latency, out);
			print_value(a->write_latency, out);
			fputc('\n', out);
		}
}

static int print_tiers(const struct host *host, FILE *out)
{
	struct memory_tiers tiers;
	struct ms_error err = { "" };

	if (memory_tiers_load(&tiers, &host->roots, &host->topo, &err) < 0) {
		ms_report(&err);
		return -1;
	}
	fprintf(out, "\nMemory tiers (a smaller tier number is faster memory)\n");
	if (!tiers.have_tiers)
		fprintf(out, "  the kernel lists no tiers (%s/devices/virtual/memory_tiering: kernels before 6.1)\n",
			host->roots.sys);
	fprintf(out, "  %-5s %-5s %-5s %-16s %s\n", "node", "tier", "CPUs", "kind", "demotes to");
	for (int i = 0; i < tiers.nr_nodes; i++) {
		const struct node_tier *n = &tiers.nodes[i];
		struct cpulist targets = { (int *)n->demotion_targets, n->nr_demotion_targets };
		char tier[16], to[128];

		snprintf(tier, sizeof(tier), n->tier < 0 ? "-" : "%d", n->tier);
		if (targets.nr)
			cpulist_format(&targets, to, sizeof(to));
		else
			snprintf(to, sizeof(to), "-");
		fprintf(out, "  %-5d %-5s %-5s %-16s %s\n", n->node, tier, n->has_cpu ? "yes" : "no",
			memory_kind_name(n->kind), to);
	}
	if (tiers.numa_balancing < 0)
		fprintf(out, "  NUMA balancing: unknown (%s/sys/kernel/numa_balancing cannot be read)\n", host->roots.proc);
	else
		fprintf(out, "  NUMA balancing: %d (%s)\n", tiers.numa_balancing,
			numa_balancing_mode_name(tiers.numa_balancing));
	fprintf(out, "  demotion in reclaim: %s\n", tiers.demotion_enabled < 0 ? "unknown (no kernel/mm/numa/demotion_enabled)"
			: tiers.demotion_enabled ? "enabled" : "disabled (kernel/mm/numa/demotion_enabled = false)");
	fprintf(out, "  demotion targets are not published by the kernel: shown as mm/memory-tiers.c picks them "
		     "(the nearest nodes of the next slower tier)\n");
	print_hmat(&tiers, out);
	memory_tiers_free(&tiers);
	return 0;
}

static void print_sockets(const struct topology *topo, FILE *out)
{
	fprintf(out, "\nSockets\n  %-7s %-5s %-6s %s\n", "socket", "dies", "cores", "cpus");
	for (int i = 0; i < topo->nr_cpus; i++) {
		int socket = topo->cpus[i].socket;
		bool first = true;
		char cpus[512];

		for (int j = 0; j < i && first; j++)
			first = topo->cpus[j].socket != socket;
		if (!first)
			continue;
		cpus_where(topo, on_socket, socket, cpus, sizeof(cpus));
		fprintf(out, "  %-7d %-5d %-6d %s\n", socket, count_distinct(topo, socket, false),
			count_distinct(topo, socket, true), cpus);
	}
}

static int print_caches(const struct host *host, FILE *out)
{
	struct cache_set set;
	struct ms_error err = { "" };

	if (caches_load(&set, &host->roots, &host->topo, &err) < 0) {
		ms_report(&err);
		return -1;
	}
	fprintf(out, "\nCaches\n");
	if (!set.nr_kinds) {
		fprintf(out, "  not described by %s/devices/system/cpu/cpu*/cache\n", host->roots.sys);
		return 0;
	}
	fprintf(out, "  %-6s %-12s %-10s %-5s %-5s %-6s %s\n", "cache", "type", "size", "line", "ways", "count",
		"CPUs of each");
	for (int k = 0; k < set.nr_kinds; k++) {
		const struct cache_kind *kind = &set.kinds[k];
		const struct cache *c = &kind->instances[0];
		char name[16], size[32], line[16], ways[16];

		cache_name(c, name, sizeof(name));
		if (c->size)
			number_bytes(size, sizeof(size), c->size);
		else
			snprintf(size, sizeof(size), "?");
		snprintf(line, sizeof(line), c->line_size ? "%d" : "?", c->line_size);
		snprintf(ways, sizeof(ways), c->ways ? "%d" : "?", c->ways);
		fprintf(out, "  %-6s %-12s %-10s %-5s %-5s %-6d", name, c->type, size, line, ways, kind->nr_instances);
		for (int i = 0; i < kind->nr_instances; i++) {
			char cpus[512];

			cpulist_format(&kind->instances[i].shared, cpus, sizeof(cpus));
			fprintf(out, " %s", cpus);
		}
		fputc('\n', out);
	}
	caches_free(&set);
	return 0;
}

/* "uncore_imc_0..5": runs of names that differ only in a trailing number
 * that counts up by one. */
static size_t stem_length(const char *name)
{
	size_t len = strlen(name);

	while (len && isdigit((unsigned char)name[len - 1]))
		len--;
	return len;
}

static void print_pmu_names(const char **names, int nr, FILE *out)
{
	int col = 4;

	for (int i = 0; i < nr;) {
		size_t stem = stem_length(names[i]);
		int j = i;
		char item[300];

		if (stem < strlen(names[i]))
			while (j + 1 < nr && stem_length(names[j + 1]) == stem && !strncmp(names[j + 1], names[i], stem) &&
			       atol(names[j + 1] + stem) == atol(names[j] + stem) + 1 && names[j + 1][stem] != '0')
				j++;
		if (j > i)
			snprintf(item, sizeof(item), "%s..%s", names[i], names[j] + stem);
		else
			snprintf(item, sizeof(item), "%s", names[i]);
		if (col + (int)strlen(item) + 1 > 100) {
			fprintf(out, "\n   ");
			col = 4;
		}
		fprintf(out, " %s", item);
		col += (int)strlen(item) + 1;
		i = j + 1;
	}
	fputc('\n', out);
}

static bool pmu_on_node(const struct pmu *pmu, const struct topology *topo, int node)
{
	for (int c = 0; c < pmu->cpumask.nr; c++) {
		const struct cpu_place *p = topology_cpu(topo, pmu->cpumask.cpus[c]);

		if (p && p->node == node)
			return true;
	}
	return false;
}

static int print_pmus(const struct host *host, FILE *out)
{
	const struct topology *topo = &host->topo;
	const char **names = calloc((size_t)host->pmus.nr + 1, sizeof(char *));
	int nr = 0;

	if (!names) {
		ms_warn("out of memory");
		return -1;
	}
	fprintf(out, "\nPMUs per node (uncore PMUs by the CPUs of their cpumask)\n");
	for (int i = 0; i < topo->nr_nodes; i++) {
		nr = 0;
		for (int p = 0; p < host->pmus.nr; p++)
			if (host->pmus.pmus[p].has_cpumask && pmu_on_node(&host->pmus.pmus[p], topo, topo->nodes[i]))
				names[nr++] = host->pmus.pmus[p].name;
		fprintf(out, "  node %d:", topo->nodes[i]);
		if (nr)
			print_pmu_names(names, nr, out);
		else
			fprintf(out, " (none)\n");
	}
	nr = 0;
	for (int p = 0; p < host->pmus.nr; p++)
		if (!host->pmus.pmus[p].has_cpumask)
			names[nr++] = host->pmus.pmus[p].name;
	fprintf(out, "  every CPU (core and software PMUs):");
	if (nr)
		print_pmu_names(names, nr, out);
	else
		fprintf(out, " (none)\n");
	free(names);
	return 0;
}

int list_topology(const struct host *host, FILE *out)
{
	const struct topology *topo = &host->topo;

	fprintf(out, "CPU: %s%s%s%s\n", host->cpu.model_name[0] ? host->cpu.model_name : host->cpu.text,
		host->cpu.model_name[0] && host->cpu.text[0] ? " (" : "",
		host->cpu.model_name[0] ? host->cpu.text : "", host->cpu.model_name[0] && host->cpu.text[0] ? ")" : "");
	if (host->roots.is_fixture)
		fprintf(out, "from the tree %s (not this machine)\n", host->roots.sys);
	fprintf(out, "%d socket%s, %d die%s, %d core%s, %d CPU%s, %d NUMA node%s\n", topo->nr_sockets,
		topo->nr_sockets == 1 ? "" : "s", topo->nr_dies, topo->nr_dies == 1 ? "" : "s", topo->nr_cores,
		topo->nr_cores == 1 ? "" : "s", topo->nr_cpus, topo->nr_cpus == 1 ? "" : "s", topo->nr_nodes,
		topo->nr_nodes == 1 ? "" : "s");
	if (print_nodes(host, out) < 0 || print_tiers(host, out) < 0)
		return 1;
	print_sockets(topo, out);
	if (print_caches(host, out) < 0 || print_pmus(host, out) < 0)
		return 1;
	return 0;
}
