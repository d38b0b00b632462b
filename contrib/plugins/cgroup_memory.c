/* cgroup_memory: a memscope plugin reading the memory of cgroups from the
 * kernel's own files, per NUMA node where the kernel splits it.
 *
 * cgroup v2 (Documentation/admin-guide/cgroup-v2.rst): memory.numa_stat
 * ("anon N0=<bytes> N1=<bytes>"), memory.stat, memory.current,
 * memory.events and memory.pressure (Documentation/accounting/psi.rst).
 * The v1 memory controller (Documentation/admin-guide/cgroup-v1/memory.rst),
 * where it is the one mounted: memory.numa_stat in pages ("hierarchical_anon=
 * <total> N0=<pages>"), the total_* keys of memory.stat, memory.usage_in_bytes,
 * memory.oom_control and memory.failcnt. Both count a cgroup with everything
 * below it. The root's pressure is the system's, /proc/pressure/memory.
 *
 * Which cgroups: cgroup=PATH (repeatable), else those of the processes
 * measured (-p, or the command's, which is memscope's until it moves), and
 * with -a the root. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memscope/plugin.h>

enum parse { KEYED, NODE, WHOLE, PSI };

/* Where each series comes from, in each hierarchy. */
struct source_def {
	const char *name;
	enum parse parse;
	const char *v2_file, *v2_key;
	const char *v1_file, *v1_key;   /* NULL: v1 has no such file */
	bool v1_pages;                  /* v1 value in pages */
};

static const struct source_def defs[] = {
	{ "cgroup.memory.anon", NODE, "memory.numa_stat", "anon", "memory.numa_stat", "hierarchical_anon", true },
	{ "cgroup.memory.file", NODE, "memory.numa_stat", "file", "memory.numa_stat", "hierarchical_file", true },
	{ "cgroup.memory.current", WHOLE, "memory.current", NULL, "memory.usage_in_bytes", NULL, false },
	{ "cgroup.memory.pgfault", KEYED, "memory.stat", "pgfault", "memory.stat", "total_pgfault", false },
	{ "cgroup.memory.pgmajfault", KEYED, "memory.stat", "pgmajfault", "memory.stat", "total_pgmajfault", false },
	{ "cgroup.memory.oom_kill", KEYED, "memory.events", "oom_kill", "memory.oom_control", "oom_kill", false },
	{ "cgroup.memory.max", KEYED, "memory.events", "max", "memory.failcnt", NULL, false },
	{ "cgroup.memory.pressure.some_us", PSI, "memory.pressure", "some", NULL, NULL, false },
	{ "cgroup.memory.pressure.full_us", PSI, "memory.pressure", "full", NULL, NULL, false },
};

#define NR_DEFS (sizeof(defs) / sizeof(defs[0]))

static const struct memscope_series_decl series[NR_DEFS] = {
	{ "cgroup.memory.anon", "B", MEMSCOPE_SERIES_GAUGE, "anonymous memory of the cgroup, per node (memory.numa_stat)" },
	{ "cgroup.memory.file", "B", MEMSCOPE_SERIES_GAUGE, "page cache of the cgroup, per node (memory.numa_stat)" },
	{ "cgroup.memory.current", "B", MEMSCOPE_SERIES_GAUGE, "memory charged to the cgroup (memory.current)" },
	{ "cgroup.memory.pgfault", "faults", MEMSCOPE_SERIES_COUNTER, "page faults in the cgroup (memory.stat)" },
	{ "cgroup.memory.pgmajfault", "faults", MEMSCOPE_SERIES_COUNTER, "major page faults (memory.stat)" },
	{ "cgroup.memory.oom_kill", "kills", MEMSCOPE_SERIES_COUNTER, "processes the OOM killer ended (memory.events)" },
	{ "cgroup.memory.max", "events", MEMSCOPE_SERIES_COUNTER,
	  "times usage was about to exceed memory.max (v1: memory.failcnt)" },
	{ "cgroup.memory.pressure.some_us", "us", MEMSCOPE_SERIES_COUNTER,
	  "time some task stalled on memory (memory.pressure; the root: /proc/pressure/memory)" },
	{ "cgroup.memory.pressure.full_us", "us", MEMSCOPE_SERIES_COUNTER,
	  "time every non-idle task stalled on memory (memory.pressure)" },
};

static const struct memscope_arg_decl args[] = {
	{ "cgroup", "a cgroup to read, as a path in the memory hierarchy (/ the root; repeatable); default: the "
		    "cgroups of the measured processes, or the root with -a" },
	{ "root", "where the memory hierarchy is mounted (default: from /proc/self/mountinfo)" },
};

/* One file of one cgroup, opened once, read with pread. */
struct file {
	char path[PATH_MAX];
	int fd;
};

struct one_series {
	const struct source_def *def;
	int file;
	int node;                 /* NODE: which N<node>= */
};

struct state {
	char procfs[PATH_MAX];
	char mount[PATH_MAX];     /* the memory hierarchy's mount point, "" when none */
	char mount_root[PATH_MAX];/* the mount's root within the hierarchy ("/" normally) */
	int version;              /* 1 or 2; 0 when no memory hierarchy */
	char why[512];            /* version 0: why */
	char **cgroups;           /* from cgroup= */
	int nr_cgroups;
	/* Open: */
	char (*opened)[PATH_MAX]; /* the cgroups read (paths in the hierarchy), each a label */
	int nr_opened;
	struct file *files;
	int nr_files;
	struct one_series *series;
	int nr_series, max_series;
	long page_size;
	char buf[65536];          /* one file's text: read() allocates nothing */
};

static bool is_v2_memory(const char *mount)
{
	char path[PATH_MAX + 32], text[1024] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mount);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	for (char *w = strtok(text, " \n"); w; w = strtok(NULL, " \n"))
		if (!strcmp(w, "memory"))
			return true;
	return false;
}

/* The v1 memory controller's mount, else cgroup2 when it has the memory
 * controller: the two cannot both have it. */
static void find_hierarchy(struct state *st)
{
	char path[PATH_MAX + 32], line[4096], v2[PATH_MAX] = "", v2_root[PATH_MAX] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/self/mountinfo", st->procfs);
	f = fopen(path, "r");
	if (!f) {
		snprintf(st->why, sizeof(st->why), "cannot read %s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], point[PATH_MAX], fstype[64], super[1024];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0]) {
			snprintf(v2, sizeof(v2), "%s", point);
			snprintf(v2_root, sizeof(v2_root), "%s", root);
		} else if (!strcmp(fstype, "cgroup")) {
			for (char *w = strtok(super, ","); w; w = strtok(NULL, ","))
				if (!strcmp(w, "memory")) {
					snprintf(st->mount, sizeof(st->mount), "%s", point);
					snprintf(st->mount_root, sizeof(st->mount_root), "%s", root);
					st->version = 1;
				}
		}
	}
	fclose(f);
	if (st->version)
		return;
	if (v2[0] && is_v2_memory(v2)) {
		snprintf(st->mount, sizeof(st->mount), "%s", v2);
		snprintf(st->mount_root, sizeof(st->mount_root), "%s", v2_root);
		st->version = 2;
		return;
	}
	snprintf(st->why, sizeof(st->why), v2[0] ? "the cgroup2 hierarchy at %s has no memory controller and no "
		 "cgroup v1 memory controller is mounted" : "no cgroup memory controller is mounted (mount -t cgroup2 "
		 "none /sys/fs/cgroup)%s", v2);
}

static int cg_init(const struct memscope_host *host, void **out, char *why, size_t size)
{
	struct state *st = calloc(1, sizeof(*st));
	const char *root = NULL;

	if (!st) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	snprintf(st->procfs, sizeof(st->procfs), "%s", host->procfs_root);
	st->page_size = sysconf(_SC_PAGESIZE);
	st->cgroups = calloc(host->nr_args + 1, sizeof(char *));
	for (uint32_t i = 0; st->cgroups && i < host->nr_args; i++) {
		const char *v = host->args[i].value;

		if (!strcmp(host->args[i].key, "root")) {
			root = v;
			continue;
		}
		if (v[0] != '/') {
			snprintf(why, size, "cgroup=%s: give the cgroup's path in the memory hierarchy, starting with "
				 "'/' (e.g. cgroup=/system.slice)", v);
			goto fail;
		}
		if (strstr(v, "/..") || strstr(v, "//")) {
			snprintf(why, size, "cgroup=%s: write the path without '..' or '//'", v);
			goto fail;
		}
		st->cgroups[st->nr_cgroups++] = strdup(v);
	}
	if (!st->cgroups) {
		snprintf(why, size, "out of memory");
		goto fail;
	}
	if (root) {
		char test[PATH_MAX + 32];

		snprintf(st->mount, sizeof(st->mount), "%s", root);
		snprintf(st->mount_root, sizeof(st->mount_root), "/");
		snprintf(test, sizeof(test), "%s/memory.stat", root);
		st->version = is_v2_memory(root) ? 2 : access(test, R_OK) == 0 ? 1 : 0;
		if (!st->version)
			snprintf(st->why, sizeof(st->why), "root=%s is not a cgroup memory hierarchy (no cgroup.controllers "
				 "listing memory, no memory.stat)", root);
	} else {
		find_hierarchy(st);
	}
	*out = st;
	return 0;
fail:
	for (int i = 0; i < st->nr_cgroups; i++)
		free(st->cgroups[i]);
	free(st->cgroups);
	free(st);
	return -1;
}

static int cg_available(void *state, char *why, size_t size)
{
	struct state *st = state;

	if (st->version)
		return 1;
	snprintf(why, size, "%s", st->why);
	return 0;
}

/* The cgroup of pid in the memory hierarchy, from /proc/PID/cgroup. */
static int cgroup_of(struct state *st, int pid, char *out, size_t size)
{
	char path[PATH_MAX + 64], line[PATH_MAX + 64];
	FILE *f;
	int found = -1;

	snprintf(path, sizeof(path), "%s/%d/cgroup", st->procfs, pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* Lines are "ID:CONTROLLERS:PATH"; v2's is "0::PATH". */
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char *controllers, *where;

		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		controllers = c1 + 1;
		where = c2 + 1;
		where[strcspn(where, "\n")] = '\0';
		if (st->version == 2 && !strcmp(line, "0") && !controllers[0]) {
			snprintf(out, size, "%s", where);
			found = 0;
		} else if (st->version == 1) {
			for (char *w = strtok(controllers, ","); w; w = strtok(NULL, ","))
				if (!strcmp(w, "memory")) {
					snprintf(out, size, "%s", where);
					found = 0;
				}
		}
	}
	fclose(f);
	/* Inside a container the mount's root is the container's cgroup. */
	if (!found && strcmp(st->mount_root, "/") != 0) {
		size_t len = strlen(st->mount_root);

		if (!strncmp(out, st->mount_root, len) && (out[len] == '/' || !out[len]))
			memmove(out, out + len, strlen(out + len) + 1);
		if (!out[0])
			snprintf(out, size, "/");
	}
	return found;
}

static bool inside(const char *child, const char *parent)
{
	size_t len = strlen(parent);

	if (!strcmp(parent, "/"))
		return strcmp(child, "/") != 0;
	return !strncmp(child, parent, len) && child[len] == '/';
}

static int add_cgroup(struct state *st, const char *path, char *why, size_t size)
{
	for (int i = 0; i < st->nr_opened; i++) {
		if (!strcmp(st->opened[i], path))
			return 0;
		if (inside(path, st->opened[i]) || inside(st->opened[i], path)) {
			const char *in = inside(path, st->opened[i]) ? path : st->opened[i];

			snprintf(why, size, "cgroup %s is inside %s, whose numbers already include it: their sum would "
				 "count it twice; name one of them", in, in == path ? st->opened[i] : path);
			return -1;
		}
	}
	snprintf(st->opened[st->nr_opened++], PATH_MAX, "%s", path);
	return 0;
}

static int open_file(struct state *st, const char *path)
{
	for (int i = 0; i < st->nr_files; i++)
		if (!strcmp(st->files[i].path, path))
			return i;
	snprintf(st->files[st->nr_files].path, PATH_MAX, "%s", path);
	st->files[st->nr_files].fd = open(path, O_RDONLY | O_CLOEXEC);
	if (st->files[st->nr_files].fd < 0)
		return -1;
	return st->nr_files++;
}

/* "N0=" tokens of the line for key: the nodes the kernel lists. */
static const char *find_line(const char *text, const char *key, char after)
{
	size_t len = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == after)
			return p + len;
	return NULL;
}

static ssize_t read_file(struct state *st, int file)
{
	ssize_t n = pread(st->files[file].fd, st->buf, sizeof(st->buf) - 1, 0);

	st->buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Room for one more series (open only: read never allocates). */
static int grow_series(struct state *st)
{
	struct one_series *grown;

	if (st->nr_series < st->max_series)
		return 0;
	grown = realloc(st->series, sizeof(*grown) * (size_t)(st->max_series * 2 + 16));
	if (!grown)
		return -1;
	st->series = grown;
	st->max_series = st->max_series * 2 + 16;
	return 0;
}

static int add_node_series(struct state *st, const struct memscope_target *t, const struct source_def *def,
			   const char *cgroup, int file, char *why, size_t size)
{
	const char *key = st->version == 2 ? def->v2_key : def->v1_key;
	const char *line;
	int added = 0;

	if (read_file(st, file) <= 0 || !(line = find_line(st->buf, key, st->version == 2 ? ' ' : '='))) {
		snprintf(why, size, "%s has no '%s' line (a kernel without this statistic)", st->files[file].path, key);
		return -1;
	}
	for (const char *p = strstr(line, " N"); p && p < line + strcspn(line, "\n"); p = strstr(p + 1, " N")) {
		struct memscope_labels labels = { MEMSCOPE_LABEL_NONE, MEMSCOPE_LABEL_NONE, MEMSCOPE_LABEL_NONE,
						  MEMSCOPE_LABEL_NONE, cgroup, NULL };
		int node;

		if (sscanf(p, " N%d=", &node) != 1)
			continue;
		labels.node = node;
		if (grow_series(st) < 0 || t->add_series(t->ctx, def->name, &labels) < 0)
			goto oom;
		st->series[st->nr_series].def = def;
		st->series[st->nr_series].file = file;
		st->series[st->nr_series++].node = node;
		added++;
	}
	if (!added) {
		snprintf(why, size, "%s lists no nodes on its '%s' line", st->files[file].path, key);
		return -1;
	}
	return 0;
oom:
	snprintf(why, size, "out of memory");
	return -1;
}

static int add_one(struct state *st, const struct memscope_target *t, const struct source_def *def,
		   const char *cgroup, char *why, size_t size)
{
	const char *name = st->version == 2 ? def->v2_file : def->v1_file;
	char path[PATH_MAX * 2 + 32];
	int file;

	if (def->parse == PSI && !strcmp(cgroup, "/"))
		snprintf(path, sizeof(path), "%s/pressure/memory", st->procfs);
	else if (!name)
		return snprintf(why, size, "%s: cgroup v1 has no %s for cgroup %s (cgroup v2 has; for the whole system "
				"use cgroup=/)", def->name, def->v2_file, cgroup), -1;
	else
		snprintf(path, sizeof(path), "%s%s/%s", st->mount, strcmp(cgroup, "/") ? cgroup : "", name);
	file = open_file(st, path);
	if (file < 0)
		return snprintf(why, size, "%s: cannot open %s: %s%s", def->name, path, strerror(errno),
				!strcmp(cgroup, "/") ? " (the root cgroup has fewer files: name a cgroup below it)" : ""),
		       -1;
	if (def->parse == NODE)
		return add_node_series(st, t, def, cgroup, file, why, size);
	{
		struct memscope_labels labels = { MEMSCOPE_LABEL_NONE, MEMSCOPE_LABEL_NONE, MEMSCOPE_LABEL_NONE,
						  MEMSCOPE_LABEL_NONE, cgroup, NULL };

		if (grow_series(st) < 0 || t->add_series(t->ctx, def->name, &labels) < 0)
			return snprintf(why, size, "out of memory"), -1;
	}
	st->series[st->nr_series].def = def;
	st->series[st->nr_series].file = file;
	st->series[st->nr_series++].node = -1;
	return 0;
}

static void close_all(struct state *st)
{
	for (int i = 0; i < st->nr_files; i++)
		if (st->files[i].fd >= 0)
			close(st->files[i].fd);
	free(st->files);
	free(st->series);
	free(st->opened);
	st->files = NULL;
	st->series = NULL;
	st->opened = NULL;
	st->nr_files = st->nr_series = st->max_series = st->nr_opened = 0;
}

static int cg_open(void *state, const struct memscope_target *t, char *why, size_t size)
{
	struct state *st = state;
	int want = st->nr_cgroups ? st->nr_cgroups : t->nr_pids ? (int)t->nr_pids : 1;
	size_t most;

	st->opened = calloc((size_t)want, PATH_MAX);
	if (!st->opened)
		return snprintf(why, size, "out of memory"), -1;
	for (int i = 0; i < st->nr_cgroups; i++)
		if (add_cgroup(st, st->cgroups[i], why, size) < 0)
			goto fail;
	/* -a: the whole system, whatever command runs meanwhile. */
	for (uint32_t i = 0; !st->nr_cgroups && !t->system_wide && i < t->nr_pids; i++) {
		char path[PATH_MAX];

		if (cgroup_of(st, t->pids[i], path, sizeof(path)) < 0) {
			snprintf(why, size, "cannot find the memory cgroup of process %d in %s/%d/cgroup", t->pids[i],
				 st->procfs, t->pids[i]);
			goto fail;
		}
		if (add_cgroup(st, path, why, size) < 0)
			goto fail;
	}
	if (!st->nr_opened && add_cgroup(st, "/", why, size) < 0)
		goto fail;
	/* At most every file of every cgroup, and /proc/pressure/memory. */
	most = (size_t)st->nr_opened * NR_DEFS + 1;
	st->files = calloc(most, sizeof(*st->files));
	if (!st->files) {
		snprintf(why, size, "out of memory");
		goto fail;
	}
	for (int c = 0; c < st->nr_opened; c++)
		for (uint32_t n = 0; n < t->nr_names; n++)
			for (size_t d = 0; d < NR_DEFS; d++)
				if (!strcmp(defs[d].name, t->names[n]) && add_one(st, t, &defs[d], st->opened[c], why, size) < 0)
					goto fail;
	return 0;
fail:
	close_all(st);
	return -1;
}

static bool parse_value(struct state *st, const struct one_series *s, uint64_t *value)
{
	const struct source_def *def = s->def;
	const char *key = st->version == 2 ? def->v2_key : def->v1_key;
	const char *p = st->buf;
	char *end;

	switch (def->parse) {
	case WHOLE:
		break;
	case KEYED:
		if (key && !(p = find_line(st->buf, key, ' ')))
			return false;
		break;
	case PSI:
		if (!(p = find_line(st->buf, def->v2_key, ' ')) || !(p = strstr(p, "total=")))
			return false;
		p += 6;
		break;
	case NODE: {
		char token[32];
		const char *line = find_line(st->buf, key, st->version == 2 ? ' ' : '=');

		snprintf(token, sizeof(token), " N%d=", s->node);
		if (!line || !(p = strstr(line, token)) || p > line + strcspn(line, "\n"))
			return false;
		p += strlen(token);
		break;
	}
	}
	errno = 0;
	*value = strtoull(p, &end, 10);
	if (end == p || errno)
		return false;
	if (def->parse == NODE && st->version == 1)
		*value *= (uint64_t)st->page_size;
	return true;
}

static int cg_read(void *state, uint64_t *values, uint8_t *valid, uint32_t nr)
{
	struct state *st = state;

	for (int f = 0; f < st->nr_files; f++) {
		bool ok = read_file(st, f) > 0;

		for (int i = 0; i < st->nr_series && i < (int)nr; i++)
			if (st->series[i].file == f)
				valid[i] = ok && parse_value(st, &st->series[i], &values[i]);
	}
	return 0;
}

static void cg_close(void *state)
{
	close_all(state);
}

static void cg_fini(void *state)
{
	struct state *st = state;

	close_all(st);
	for (int i = 0; i < st->nr_cgroups; i++)
		free(st->cgroups[i]);
	free(st->cgroups);
	free(st);
}

MEMSCOPE_PLUGIN_EXPORT const struct memscope_plugin memscope_plugin = {
	MEMSCOPE_PLUGIN_HEADER,
	.name = "cgroup_memory",
	.version = "1.0",
	.description = "memory of cgroups per NUMA node, faults, OOM events and pressure (cgroup v2 or v1 memory)",
	.series = series,
	.nr_series = NR_DEFS,
	.args = args,
	.nr_args = sizeof(args) / sizeof(args[0]),
	.catalog = "cgroup_memory.yaml",
	.init = cg_init,
	.available = cg_available,
	.open = cg_open,
	.read = cg_read,
	.close = cg_close,
	.fini = cg_fini,
};
