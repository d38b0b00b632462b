/* resctrl: a memscope plugin reading Linux resctrl memory-bandwidth and
 * cache-occupancy monitoring (Intel RDT MBM/CMT, AMD PQoS), per monitoring
 * group and L3 domain.
 *
 * Layout (Linux Documentation/filesystems/resctrl.rst): the mount's root is
 * the default CTRL_MON group; each other top-level directory (but info) is a
 * CTRL_MON group; MON groups are GROUP/mon_groups/NAME. Every group has
 * mon_data/mon_L3_XX/{mbm_total_bytes,mbm_local_bytes,llc_occupancy}, XX
 * being the L3 cache id (the cpuN/cache/index3/id of its CPUs). A CTRL_MON
 * group's files give the sum of its own tasks and of its MON groups', so a
 * CTRL_MON group and one of its MON groups are never read together (their
 * sum would count twice); by default the plugin reads the root and every
 * CTRL_MON group, which together hold every task once.
 *
 * The byte counts are running totals the kernel keeps in 64 bits: the
 * hardware counters are narrow (24 bits plus a per-CPU offset; 44 on AMD),
 * and the kernel's overflow handler reads them every second
 * (MBM_OVERFLOW_INTERVAL) to extend them. They go down only when reset
 * (changing mbm_*_bytes_config, a counter reassigned on AMD): memscope then
 * shows no value for that interval. A file reading "Unavailable",
 * "Unassigned" or "Error" is a value not read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memscope/plugin.h>

static const struct memscope_series_decl series[] = {
	{ "resctrl.mbm_total_bytes", "B", MEMSCOPE_SERIES_COUNTER,
	  "bytes between the L3 and all memory, for the group's tasks (mbm_total_bytes)" },
	{ "resctrl.mbm_local_bytes", "B", MEMSCOPE_SERIES_COUNTER,
	  "bytes between the L3 and its own node's memory (mbm_local_bytes)" },
	{ "resctrl.llc_occupancy", "B", MEMSCOPE_SERIES_GAUGE, "L3 cache the group's tasks hold (llc_occupancy)" },
};

#define NR_SERIES (sizeof(series) / sizeof(series[0]))

static const struct memscope_arg_decl args[] = {
	{ "group", "a monitoring group to read: / (the default group), NAME (a CTRL_MON group) or "
		   "NAME/mon_groups/MON (repeatable); default: / and every CTRL_MON group" },
	{ "root", "where resctrl is mounted (default: SYSFS/fs/resctrl)" },
};

struct one_file {
	int fd;
	char path[PATH_MAX];
};

struct state {
	char sysfs[PATH_MAX];
	char procfs[PATH_MAX];
	char root[PATH_MAX];
	char **groups;           /* from group= */
	int nr_groups;
	struct one_file *files;  /* one per series added */
	int nr_files;
	char buf[64];
};

static int rc_init(const struct memscope_host *host, void **out, char *why, size_t size)
{
	struct state *st = calloc(1, sizeof(*st));

	if (!st || !(st->groups = calloc(host->nr_args + 1, sizeof(char *)))) {
		free(st);
		snprintf(why, size, "out of memory");
		return -1;
	}
	snprintf(st->sysfs, sizeof(st->sysfs), "%s", host->sysfs_root);
	snprintf(st->procfs, sizeof(st->procfs), "%s", host->procfs_root);
	snprintf(st->root, sizeof(st->root), "%s/fs/resctrl", host->sysfs_root);
	for (uint32_t i = 0; i < host->nr_args; i++) {
		const char *v = host->args[i].value;

		const char *mon = strstr(v, "/mon_groups/");
		/* "/", "NAME", "NAME/mon_groups/MON" or "/mon_groups/MON". */
		bool ok = !strcmp(v, "/") || (v[0] && !strchr(v, '/')) ||
			  (mon && mon[12] && !strchr(mon + 12, '/') && strchr(v, '/') == mon);

		if (!strcmp(host->args[i].key, "root")) {
			snprintf(st->root, sizeof(st->root), "%s", v);
		} else if (!ok || strstr(v, "..")) {
			snprintf(why, size, "group=%s: name / (the default group), a CTRL_MON group NAME, "
				 "NAME/mon_groups/MON, or /mon_groups/MON (a MON group of the default group)", v);
			goto fail;
		} else if (!(st->groups[st->nr_groups++] = strdup(v))) {
			snprintf(why, size, "out of memory");
			goto fail;
		}
	}
	*out = st;
	return 0;
fail:
	for (int i = 0; i < st->nr_groups; i++)
		free(st->groups[i]);
	free(st->groups);
	free(st);
	return -1;
}

static bool file_has_word(const char *path, const char *const *words)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		for (char *w = strtok(line, " \t\n"); w && !found; w = strtok(NULL, " \t\n"))
			for (const char *const *x = words; *x && !found; x++)
				found = !strcmp(w, *x);
	fclose(f);
	return found;
}

static int rc_available(void *state, char *why, size_t size)
{
	static const char *const fs[] = { "resctrl", NULL };
	static const char *const flags[] = { "cqm_llc", "cqm_occup_llc", "cqm_mbm_total", "cqm_mbm_local", NULL };
	struct state *st = state;
	char path[PATH_MAX + 64];
	bool kernel, cpu;

	snprintf(path, sizeof(path), "%s/info/L3_MON/mon_features", st->root);
	if (access(path, R_OK) == 0)
		return 1;
	snprintf(path, sizeof(path), "%s/info", st->root);
	if (access(path, F_OK) == 0) {
		snprintf(why, size, "resctrl is mounted at %s but offers no monitoring (no info/L3_MON): this CPU has "
			 "resource allocation only, or monitoring is off (rdt= kernel parameter)", st->root);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/filesystems", st->procfs);
	kernel = file_has_word(path, fs);
	snprintf(path, sizeof(path), "%s/cpuinfo", st->procfs);
	cpu = file_has_word(path, flags);
	if (kernel && cpu)
		snprintf(why, size, "resctrl is not mounted at %s (mount -t resctrl resctrl /sys/fs/resctrl)", st->root);
	else
		snprintf(why, size, "resctrl is not mounted at %s, and cannot be here:%s%s%s", st->root,
			 kernel ? "" : " this kernel has no resctrl file system (not in /proc/filesystems: "
				       "CONFIG_X86_CPU_RESCTRL)",
			 kernel || cpu ? "" : ";",
			 cpu ? "" : " this CPU reports no resource monitoring (no cqm_llc or cqm_mbm_* flag in "
				    "/proc/cpuinfo: Intel RDT or AMD PQoS is needed)");
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat s;

	return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

/* The directory of a group ("/", "/mon_groups/m1", "p1", "p1/mon_groups/m1"). */
static void group_dir(const struct state *st, const char *group, char *out, size_t size)
{
	if (group[0] == '/')
		snprintf(out, size, "%s%s", st->root, strcmp(group, "/") ? group : "");
	else
		snprintf(out, size, "%s/%s", st->root, group);
}

/* The row name of a group in one domain: "p1@L3_00", "/@L3_01". */
static void instance_name(const char *group, const char *domain, char *out, size_t size)
{
	const char *id = strncmp(domain, "mon_", 4) ? domain : domain + 4;
	const char *mon = strstr(group, "/mon_groups/");
	char short_group[PATH_MAX];

	if (mon)
		snprintf(short_group, sizeof(short_group), "%.*s/%s", (int)(mon - group), group, mon + 12);
	else
		snprintf(short_group, sizeof(short_group), "%s", group);
	snprintf(out, size, "%s@%s", short_group, id);
}

/* Is cpu in a cpulist file ("0-3,8-11")? */
static bool in_cpulist(const char *path, int cpu)
{
	char text[4096], *p = text;
	FILE *f = fopen(path, "r");
	bool found = false;

	if (!f)
		return false;
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	while (*p && !found) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		found = cpu >= lo && cpu <= hi;
		p = *end == ',' ? end + 1 : end;
		if (*p == '\n')
			break;
	}
	return found;
}

/* CPUs of L3 cache id: their node and socket when all share one. */
static void domain_labels(const struct state *st, int cache_id, struct memscope_labels *labels)
{
	char path[PATH_MAX + 128];
	bool any = false;

	/* CPU numbers may have gaps (offline, never present): stop after a run of 256 missing. */
	for (int cpu = 0, missing = 0; missing < 256; cpu++) {
		long long id = -1, level = -1, socket = -1;
		int node = -1;
		FILE *f;

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d", st->sysfs, cpu);
		if (!is_dir(path)) {
			missing++;
			continue;
		}
		missing = 0;
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index3/level", st->sysfs, cpu);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%lld", &level) != 1)
				level = -1;
			fclose(f);
		}
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index3/id", st->sysfs, cpu);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%lld", &id) != 1)
				id = -1;
			fclose(f);
		}
		if (level != 3 || id != cache_id)
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/physical_package_id", st->sysfs, cpu);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%lld", &socket) != 1)
				socket = -1;
			fclose(f);
		}
		for (int n = 0, absent = 0; absent < 64 && node < 0; n++) {
			snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist", st->sysfs, n);
			absent = access(path, R_OK) == 0 ? 0 : absent + 1;
			if (!absent && in_cpulist(path, cpu))
				node = n;
		}
		if (!any) {
			labels->node = node;
			labels->socket = (int32_t)socket;
		} else {
			if (labels->node != node)
				labels->node = MEMSCOPE_LABEL_NONE;
			if (labels->socket != socket)
				labels->socket = MEMSCOPE_LABEL_NONE;
		}
		any = true;
	}
	if (labels->node < 0)
		labels->node = MEMSCOPE_LABEL_NONE;
	if (labels->socket < 0)
		labels->socket = MEMSCOPE_LABEL_NONE;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

static int is_domain(const struct dirent *e)
{
	return !strncmp(e->d_name, "mon_L3_", 7);
}

static bool contains(const char *outer, const char *inner)
{
	size_t len = strlen(outer);

	if (!strcmp(outer, "/"))
		return !strncmp(inner, "/mon_groups/", 12);
	return !strncmp(inner, outer, len) && !strncmp(inner + len, "/mon_groups/", 12);
}

static int add_group(struct state *st, const struct memscope_target *t, const char *group, char *why, size_t size)
{
	char dir[PATH_MAX * 2], mon[PATH_MAX * 2 + 16];
	struct dirent **domains = NULL;
	int n, ret = 0;

	group_dir(st, group, dir, sizeof(dir));
	snprintf(mon, sizeof(mon), "%s/mon_data", dir);
	if (!is_dir(dir))
		return snprintf(why, size, "group %s: %s is not a directory (resctrl groups: memscope list "
				"--plugins; ls %s)", group, dir, st->root), -1;
	n = scandir(mon, &domains, is_domain, by_name);
	if (n <= 0) {
		free(domains);
		return snprintf(why, size, "group %s: %s has no mon_L3_XX domains (monitoring is off?)", group, mon), -1;
	}
	for (int d = 0; d < n && !ret; d++) {
		for (uint32_t k = 0; k < t->nr_names && !ret; k++) {
			struct memscope_labels labels = { MEMSCOPE_LABEL_NONE, MEMSCOPE_LABEL_NONE, MEMSCOPE_LABEL_NONE,
							  MEMSCOPE_LABEL_NONE, NULL, NULL };
			const char *event = strchr(t->names[k], '.') + 1;
			char path[PATH_MAX * 3], instance[64];
			struct one_file *grown;

			snprintf(path, sizeof(path), "%s/%s/%s", mon, domains[d]->d_name, event);
			instance_name(group, domains[d]->d_name, instance, sizeof(instance));
			labels.instance = instance;
			domain_labels(st, atoi(domains[d]->d_name + 7), &labels);
			grown = realloc(st->files, sizeof(*grown) * (size_t)(st->nr_files + 1));
			if (!grown) {
				ret = (snprintf(why, size, "out of memory"), -1);
				break;
			}
			st->files = grown;
			snprintf(st->files[st->nr_files].path, PATH_MAX, "%.4095s", path);
			st->files[st->nr_files].fd = open(path, O_RDONLY | O_CLOEXEC);
			if (st->files[st->nr_files].fd < 0) {
				ret = (snprintf(why, size, "%s: cannot open %s: %s%s", t->names[k], path, strerror(errno),
						errno == ENOENT ? " (this machine does not monitor it: see "
								  "info/L3_MON/mon_features)" : ""), -1);
				break;
			}
			st->nr_files++;
			if (t->add_series(t->ctx, t->names[k], &labels) < 0)
				ret = (snprintf(why, size, "out of memory"), -1);
		}
	}
	for (int d = 0; d < n; d++)
		free(domains[d]);
	free(domains);
	return ret;
}

static int is_ctrl_group(const struct dirent *e)
{
	return e->d_name[0] != '.' && strcmp(e->d_name, "info") && strcmp(e->d_name, "mon_groups") &&
	       strcmp(e->d_name, "mon_data");
}

static void close_all(struct state *st)
{
	for (int i = 0; i < st->nr_files; i++)
		if (st->files[i].fd >= 0)
			close(st->files[i].fd);
	free(st->files);
	st->files = NULL;
	st->nr_files = 0;
}

static int rc_open(void *state, const struct memscope_target *t, char *why, size_t size)
{
	struct state *st = state;
	int ret = 0;

	for (int i = 0; i < st->nr_groups; i++)
		for (int j = 0; j < st->nr_groups; j++)
			if (i != j && contains(st->groups[i], st->groups[j]))
				return snprintf(why, size, "group %s is counted within group %s too (a CTRL_MON group's "
						"numbers include its MON groups): name one of them", st->groups[j],
						st->groups[i]), -1;
	if (st->nr_groups) {
		for (int i = 0; i < st->nr_groups && !ret; i++)
			ret = add_group(st, t, st->groups[i], why, size);
	} else {
		struct dirent **names = NULL;
		int n = scandir(st->root, &names, is_ctrl_group, by_name);

		ret = add_group(st, t, "/", why, size);
		for (int i = 0; i < n; i++) {
			char dir[PATH_MAX * 2];

			snprintf(dir, sizeof(dir), "%s/%s/mon_data", st->root, names[i]->d_name);
			if (!ret && is_dir(dir))
				ret = add_group(st, t, names[i]->d_name, why, size);
			free(names[i]);
		}
		free(names);
	}
	if (ret)
		close_all(st);
	return ret;
}

static int rc_read(void *state, uint64_t *values, uint8_t *valid, uint32_t nr)
{
	struct state *st = state;

	for (int i = 0; i < st->nr_files && i < (int)nr; i++) {
		ssize_t n = pread(st->files[i].fd, st->buf, sizeof(st->buf) - 1, 0);
		char *end;

		valid[i] = 0;
		if (n <= 0)
			continue;
		st->buf[n] = '\0';
		/* "Unavailable", "Unassigned", "Error": not a number, not read. */
		if (st->buf[0] < '0' || st->buf[0] > '9')
			continue;
		errno = 0;
		values[i] = strtoull(st->buf, &end, 10);
		valid[i] = !errno && end != st->buf;
	}
	return 0;
}

static void rc_close(void *state)
{
	close_all(state);
}

static void rc_fini(void *state)
{
	struct state *st = state;

	close_all(st);
	for (int i = 0; i < st->nr_groups; i++)
		free(st->groups[i]);
	free(st->groups);
	free(st);
}

MEMSCOPE_PLUGIN_EXPORT const struct memscope_plugin memscope_plugin = {
	MEMSCOPE_PLUGIN_HEADER,
	.name = "resctrl",
	.version = "1.0",
	.description = "resctrl memory bandwidth and L3 occupancy per monitoring group and L3 domain (Intel RDT, AMD PQoS)",
	.series = series,
	.nr_series = NR_SERIES,
	.args = args,
	.nr_args = sizeof(args) / sizeof(args[0]),
	.catalog = "resctrl.yaml",
	.init = rc_init,
	.available = rc_available,
	.open = rc_open,
	.read = rc_read,
	.close = rc_close,
	.fini = rc_fini,
};
