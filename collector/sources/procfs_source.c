#include "sources/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/kernel_stats.h"
#include "sources/numa_maps.h"

/* One file read per interval (vmstat, or one node's numastat, vmstat or meminfo). */
struct stat_file {
	char path[4300];
	const struct kernel_stat_file *kind;
	int fd;
	int node;                 /* LABEL_NONE for /proc/vmstat */
	int socket;               /* the node's socket, LABEL_NONE when it spans several */
};

/* One series: a key of one file. */
struct stat_series {
	int file;
	char key[64];
	bool gauge;               /* meminfo: the value itself, not a delta */
	uint64_t last;
	bool have_last;
};

struct procfs_source {
	const struct host *host;
	char **names;             /* "vmstat/KEY", "numastat/KEY", "node_vmstat/KEY", "node_meminfo/KEY" */
	int nr_names;
	struct stat_file *files;
	int nr_files;
	struct stat_series *series;
	int nr_series;
	char buf[65536];          /* one file's text, reused: no allocation while sampling */
	uint64_t last_ns;
	/* numa_maps/bytes: the target processes' memory by node, one gauge per
	 * node after the statistics' series. */
	const struct target *target;
	bool numa_maps;           /* numa_maps/bytes: one series per node */
	bool numa_policy;         /* numa_maps/policy_bytes: one per policy and node, after those */
	uint64_t *node_bytes;     /* by node id */
	uint64_t *policy_bytes;   /* by policy, then node id */
	int nr_node_ids;          /* highest node id + 1 */
	bool maps_valid;          /* node_bytes holds a read */
	uint64_t maps_read_ns;    /* when */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int file_index(struct procfs_source *ps, const struct kernel_stat_file *kind, const char *path, int node)
{
	struct stat_file *f;

	for (int i = 0; i < ps->nr_files; i++)
		if (strcmp(ps->files[i].path, path) == 0)
			return i;
	f = realloc(ps->files, sizeof(*f) * (size_t)(ps->nr_files + 1));
	if (!f)
		return -1;
	ps->files = f;
	f = &f[ps->nr_files];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->kind = kind;
	f->fd = -1;
	f->node = node;
	f->socket = LABEL_NONE;
	if (node != LABEL_NONE) {
		const struct topology *topo = &ps->host->topo;

		for (int c = 0; c < topo->nr_cpus; c++) {
			if (topo->cpus[c].node != node)
				continue;
			if (f->socket == LABEL_NONE)
				f->socket = topo->cpus[c].socket;
			else if (f->socket != topo->cpus[c].socket)
				f->socket = -2;
		}
		if (f->socket == -2)
			f->socket = LABEL_NONE;
	}
	return ps->nr_files++;
}

static int add_series(struct procfs_source *ps, struct series_table *table, const char *name,
		      const struct kernel_stat_file *kind, const char *path, int node, const char *key,
		      struct ms_error *err)
{
	struct series_labels labels;
	struct stat_series *s;
	int file = file_index(ps, kind, path, node);

	if (file < 0)
		goto oom;
	s = realloc(ps->series, sizeof(*s) * (size_t)(ps->nr_series + 1));
	if (!s)
		goto oom;
	ps->series = s;
	s = &s[ps->nr_series];
	memset(s, 0, sizeof(*s));
	s->file = file;
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->gauge = kind->gauge;
	series_labels_init(&labels);
	labels.node = node;
	labels.socket = ps->files[file].socket;
	snprintf(labels.instance, sizeof(labels.instance), "%.*s", (int)strlen(kind->prefix) - 1, kind->prefix);
	labels.whole_system = true;
	if (series_table_add(table, name, "", 1.0, kind->gauge ? SERIES_GAUGE : SERIES_COUNTER, &labels) < 0)
		goto oom;
	ps->nr_series++;
	return 0;
oom:
	ms_error_set(err, "procfs source: out of memory");
	return -1;
}

static int procfs_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct procfs_source *ps = src->priv;

	src->first = table->nr;
	for (int i = 0; i < ps->nr_names; i++) {
		const char *name = ps->names[i];
		const char *key = strchr(name, '/') + 1;
		const struct kernel_stat_file *kind = kernel_stat_file_of(name);
		char path[4300];

		if (!kind) {
			*(strcmp(name, "numa_maps/bytes") ? &ps->numa_policy : &ps->numa_maps) = true;
			continue;
		}
		if (!kind->per_node) {
			kernel_stat_path(kind, &ps->host->roots, LABEL_NONE, path, sizeof(path));
			if (add_series(ps, table, name, kind, path, LABEL_NONE, key, err))
				return -1;
			continue;
		}
		/* one series per node that has the file */
		for (int n = 0; n < ps->host->topo.nr_nodes; n++) {
			int node = ps->host->topo.nodes[n];

			kernel_stat_path(kind, &ps->host->roots, node, path, sizeof(path));
			if (sysfs_exists(path) && add_series(ps, table, name, kind, path, node, key, err))
				return -1;
		}
	}
	if (ps->numa_maps || ps->numa_policy) {
		ps->nr_node_ids = ps->host->topo.nr_nodes ? ps->host->topo.nodes[ps->host->topo.nr_nodes - 1] + 1 : 0;
		ps->node_bytes = calloc((size_t)ps->nr_node_ids + 1, sizeof(uint64_t));
		ps->policy_bytes = calloc((size_t)(NUMA_POLICY_NR * ps->nr_node_ids) + 1, sizeof(uint64_t));
		if (!ps->node_bytes || !ps->policy_bytes) {
			ms_error_set(err, "procfs source: out of memory");
			return -1;
		}
	}
	/* The bytes per node, then per policy and node (instance: the policy). */
	for (int policy = ps->numa_maps ? -1 : 0; ps->numa_policy ? policy < NUMA_POLICY_NR : policy < 0; policy++)
		for (int n = 0; n < ps->host->topo.nr_nodes; n++) {
			struct series_labels labels;

			series_labels_init(&labels);
			labels.node = ps->host->topo.nodes[n];
			snprintf(labels.instance, sizeof(labels.instance), "%s",
				 policy < 0 ? "numa_maps" : numa_policy_name((enum numa_policy)policy));
			if (series_table_add(table, policy < 0 ? "numa_maps/bytes" : "numa_maps/policy_bytes", "B", 1.0,
					     SERIES_GAUGE, &labels) < 0) {
				ms_error_set(err, "procfs source: out of memory");
				return -1;
			}
		}
	src->count = table->nr - src->first;
	for (int f = 0; f < ps->nr_files; f++) {
		ps->files[f].fd = open(ps->files[f].path, O_RDONLY | O_CLOEXEC);
		if (ps->files[f].fd < 0) {
			ms_error_set(err, "%s: cannot open: %s", ps->files[f].path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void read_all(struct procfs_source *ps, struct frame *frame, uint64_t interval_ns, bool baseline)
{
	for (int f = 0; f < ps->nr_files; f++) {
		ssize_t n = pread(ps->files[f].fd, ps->buf, sizeof(ps->buf) - 1, 0);

		ps->buf[n > 0 ? n : 0] = '\0';
		for (int i = 0; i < ps->nr_series; i++) {
			struct stat_series *s = &ps->series[i];
			struct sample *out = frame ? &frame->samples[i] : NULL;
			uint64_t v;
			bool ok;

			if (s->file != f)
				continue;
			ok = n > 0 && kernel_stat_find(ps->files[f].kind, ps->buf, s->key, &v);
			if (out && s->gauge) {
				out->valid = ok && !baseline;
				out->value = out->valid ? v : 0;
				out->enabled_ns = out->running_ns = interval_ns;
			} else if (out) {
				out->valid = ok && s->have_last && !baseline;
				out->value = out->valid && v >= s->last ? v - s->last : 0;
				out->enabled_ns = out->running_ns = interval_ns;
			}
			if (ok) {
				s->last = v;
				s->have_last = true;
			}
		}
	}
}

/* Reading numa_maps makes the kernel walk the page tables of every mapping:
 * about 0.6 ms of kernel time for a small process (contrib/bench/tier_cost.py),
 * so the files are read at most this often and the last read is shown between. */
#define NUMA_MAPS_PERIOD_NS 5000000000ull

/* Each target process's numa_maps, summed by node: processes that have gone
 * (or were never readable) add nothing; no process read, no value. */
static void read_numa_maps(struct procfs_source *ps, struct sample *out, uint64_t now)
{
	const struct topology *topo = &ps->host->topo;
	struct numa_maps_sums sums = { ps->node_bytes, ps->policy_bytes, ps->nr_node_ids, 0 };
	int at = 0;

	if (!ps->maps_read_ns || now - ps->maps_read_ns >= NUMA_MAPS_PERIOD_NS) {
		ps->maps_valid = false;
		ps->maps_read_ns = now;
		memset(ps->node_bytes, 0, sizeof(uint64_t) * (size_t)ps->nr_node_ids);
		memset(ps->policy_bytes, 0, sizeof(uint64_t) * (size_t)(NUMA_POLICY_NR * ps->nr_node_ids));
		for (int i = 0; i < ps->target->nr_pids; i++)
			ps->maps_valid |= numa_maps_add_bytes(ps->host->roots.proc, ps->target->pids[i], ps->buf,
							      sizeof(ps->buf), &sums) == 0;
	}
	for (int policy = ps->numa_maps ? -1 : 0; ps->numa_policy ? policy < NUMA_POLICY_NR : policy < 0; policy++)
		for (int n = 0; n < topo->nr_nodes; n++, at++) {
			int id = topo->nodes[n];

			out[at].valid = ps->maps_valid;
			out[at].value = policy < 0 ? ps->node_bytes[id] : ps->policy_bytes[policy * ps->nr_node_ids + id];
			out[at].enabled_ns = out[at].running_ns = 1;
		}
}

static int procfs_enable(struct source *src, struct ms_error *err)
{
	struct procfs_source *ps = src->priv;

	read_all(ps, NULL, 0, true);
	ps->last_ns = now_ns();
	return 0;
}

static int procfs_disable(struct source *src)
{
	return 0;
}

static int procfs_sample(struct source *src, struct frame *frame)
{
	struct procfs_source *ps = src->priv;
	uint64_t now = now_ns();
	struct frame view = *frame;

	view.samples = frame->samples + src->first;
	read_all(ps, &view, now - ps->last_ns, false);
	if (ps->numa_maps || ps->numa_policy)
		read_numa_maps(ps, view.samples + ps->nr_series, now);
	ps->last_ns = now;
	return 0;
}

static void procfs_close(struct source *src)
{
	struct procfs_source *ps = src->priv;

	if (!ps)
		return;
	for (int f = 0; f < ps->nr_files; f++)
		if (ps->files[f].fd >= 0)
			close(ps->files[f].fd);
	free(ps->files);
	free(ps->series);
	free(ps->node_bytes);
	free(ps->policy_bytes);
	for (int i = 0; i < ps->nr_names; i++)
		free(ps->names[i]);
	free(ps->names);
	free(ps);
	src->priv = NULL;
}

static const struct source_ops procfs_ops = {
	.name = "procfs",
	.open = procfs_open,
	.enable = procfs_enable,
	.disable = procfs_disable,
	.sample = procfs_sample,
	.close = procfs_close,
};

/* ---- The registry kind: vmstat/KEY, numastat/KEY, node_vmstat/KEY, node_meminfo/KEY ---- */

static bool procfs_claims(const struct source_kind *kind, const char *name)
{
	(void)kind;
	return kernel_stat_file_of(name) != NULL || !strcmp(name, "numa_maps/bytes") ||
	       !strcmp(name, "numa_maps/policy_bytes");
}

static int procfs_check(const struct source_kind *kind, const struct host *host, const char *name,
			struct ms_error *err)
{
	(void)kind;
	(void)host;
	if (strchr(name, '/')[1])
		return 0;
	ms_error_set(err, "'%s': name a statistic after the '/', e.g. vmstat/pgfault, numastat/numa_hit, "
		     "node_vmstat/pgpromote_success or node_meminfo/MemFree", name);
	return -1;
}

static int procfs_kind_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			      struct ms_error *err)
{
	struct procfs_source *ps;

	memset(src, 0, sizeof(*src));
	for (int i = 0; i < req->nr_names; i++)
		if (!strncmp(req->names[i], "numa_maps/", 10) &&
		    (!req->target || req->target->kind == TARGET_SYSTEM || req->target->system_wide)) {
			ms_error_set(err, "%s reads the memory by node of the measured processes "
				     "(-p PID or -- CMD); with -a it would walk every process's page tables each "
				     "interval: name the processes", req->names[i]);
			return -1;
		}
	ps = calloc(1, sizeof(*ps));
	if (!ps || !(ps->names = calloc((size_t)req->nr_names, sizeof(char *)))) {
		free(ps);
		ms_error_set(err, "procfs source: out of memory");
		return -1;
	}
	src->ops = &procfs_ops;
	src->priv = ps;
	src->kind = kind;
	ps->host = req->host;
	ps->target = req->target;
	for (; ps->nr_names < req->nr_names; ps->nr_names++) {
		if (!(ps->names[ps->nr_names] = strdup(req->names[ps->nr_names]))) {
			ms_error_set(err, "procfs source: out of memory");
			return -1;
		}
	}
	return 0;
}

static bool procfs_present(const struct source_kind *kind, const struct host *host, struct ms_error *why)
{
	char path[4096];

	(void)kind;
	sysfs_join(path, sizeof(path), host->roots.proc, "vmstat");
	if (access(path, R_OK) < 0) {
		ms_error_set(why, "cannot read %s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

const struct source_kind procfs_source_kind = {
	.name = "procfs",
	.description = "kernel statistics: /proc/vmstat and each node's numastat, vmstat and meminfo",
	.mode = SOURCE_LIVE,
	.claims = procfs_claims,
	.present = procfs_present,
	.check = procfs_check,
	.create = procfs_kind_create,
};
