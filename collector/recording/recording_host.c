#include "recording/recording_host.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the topology, PMU and resolver code read, as globs under the sysfs
 * ("sys/") and procfs ("proc/") roots. */
static const char *const snapshot_globs[] = {
	"sys/devices/system/cpu/online",
	"sys/devices/system/cpu/possible",
	"sys/devices/system/cpu/present",
	"sys/devices/system/cpu/cpu[0-9]*/topology/core_id",
	"sys/devices/system/cpu/cpu[0-9]*/topology/die_id",
	"sys/devices/system/cpu/cpu[0-9]*/topology/cluster_id",
	"sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id",
	"sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
	"sys/devices/system/node/online",
	"sys/devices/system/node/possible",
	"sys/devices/system/node/has_cpu",
	"sys/devices/system/node/has_memory",
	"sys/devices/system/node/node[0-9]*/cpulist",
	"sys/devices/system/node/node[0-9]*/distance",
	"sys/devices/system/node/node[0-9]*/numastat",
	"sys/devices/system/node/node[0-9]*/meminfo",
	"sys/devices/system/node/node[0-9]*/vmstat",
	"sys/devices/system/node/node[0-9]*/access[01]/initiators/*_bandwidth",
	"sys/devices/system/node/node[0-9]*/access[01]/initiators/*_latency",
	"sys/devices/virtual/memory_tiering/memory_tier[0-9]*/nodelist",
	"sys/bus/dax/drivers/kmem/dax*/target_node",
	"sys/bus/cxl/devices/dax_region*/dax*/target_node",
	"sys/kernel/mm/numa/demotion_enabled",
	"proc/sys/kernel/numa_balancing",
	"sys/bus/event_source/devices/*/type",
	"sys/bus/event_source/devices/*/cpumask",
	"sys/bus/event_source/devices/*/format/*",
	"sys/bus/event_source/devices/*/events/*",
	"proc/vmstat",
};

/* sysfs attributes are at most a page; vmstat is a few KiB. */
#define MAX_SNAPSHOT_FILE 16384

static int read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* Only the first CPU's block of cpuinfo: it identifies the CPU, and a
 * machine's CPUs are alike. */
static void add_cpuinfo(json_t *files, const struct sysfs_roots *roots, char *buf)
{
	char path[4200];
	char *blank;

	snprintf(path, sizeof(path), "%s/cpuinfo", roots->proc);
	if (read_small_file(path, buf, MAX_SNAPSHOT_FILE) <= 0)
		return;
	blank = strstr(buf, "\n\n");
	if (blank)
		blank[1] = '\0';
	json_object_set_new(files, "proc/cpuinfo", json_string(buf));
}

json_t *recording_host_snapshot(const struct sysfs_roots *roots)
{
	json_t *files = json_object();
	char *buf = malloc(MAX_SNAPSHOT_FILE);

	if (!files || !buf) {
		free(buf);
		json_decref(files);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(snapshot_globs) / sizeof(snapshot_globs[0]); i++) {
		const char *pattern = snapshot_globs[i];
		const char *root = !strncmp(pattern, "sys/", 4) ? roots->sys : roots->proc;
		size_t root_len = strlen(root);
		char full[4300];
		glob_t g;

		snprintf(full, sizeof(full), "%s/%s", root, strchr(pattern, '/') + 1);
		if (glob(full, 0, NULL, &g) != 0)
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++) {
			const char *rel = g.gl_pathv[k] + root_len + 1;
			char key[4300];
			int n = read_small_file(g.gl_pathv[k], buf, MAX_SNAPSHOT_FILE);
			json_t *text;

			/* A binary attribute is not UTF-8 text: json_stringn refuses it. */
			if (n < 0 || !(text = json_stringn(buf, (size_t)n)))
				continue;
			snprintf(key, sizeof(key), "%.*s%s", (int)(strchr(pattern, '/') - pattern + 1), pattern, rel);
			json_object_set_new(files, key, text);
		}
		globfree(&g);
	}
	add_cpuinfo(files, roots, buf);
	free(buf);
	return files;
}

static int make_parents(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

void recording_host_remove(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_tree(const json_t *snapshot, const char *dir, struct ms_error *err)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)snapshot, key, value) {
		char path[4300];
		FILE *fp;

		/* The names come from a file: keep them inside the tree. */
		if ((strncmp(key, "sys/", 4) && strncmp(key, "proc/", 5)) || strstr(key, "..") ||
		    !json_is_string(value)) {
			ms_error_set(err, "the recording's host files hold an entry '%.200s' that is not a sysfs or "
				     "procfs file name with text", key);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, key);
		if (make_parents(path) < 0 || !(fp = fopen(path, "w"))) {
			ms_error_set(err, "cannot write %s: %s", path, strerror(errno));
			return -1;
		}
		fwrite(json_string_value(value), 1, json_string_length(value), fp);
		if (fclose(fp) != 0) {
			ms_error_set(err, "cannot write %s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int recording_host_load(const json_t *snapshot, struct host *host, char *dir, size_t size, struct ms_error *err)
{
	const char *tmp = getenv("TMPDIR");

	memset(host, 0, sizeof(*host));
	snprintf(dir, size, "%s/memscope-host-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!json_is_object(snapshot)) {
		dir[0] = '\0';
		ms_error_set(err, "the recording's \"host\".\"files\" is not an object of file names and texts");
		return -1;
	}
	if (!mkdtemp(dir)) {
		ms_error_set(err, "cannot create a temporary directory %s: %s (set TMPDIR to a writable one)", dir,
			     strerror(errno));
		dir[0] = '\0';
		return -1;
	}
	if (write_tree(snapshot, dir, err) < 0)
		return -1;
	/* The same loaders as host_load(), on the recorded tree. */
	snprintf(host->roots.sys, sizeof(host->roots.sys), "%s/sys", dir);
	snprintf(host->roots.proc, sizeof(host->roots.proc), "%s/proc", dir);
	host->roots.is_fixture = true;
	host->roots.is_recorded = true;
	if (topology_load(&host->topo, host->roots.sys, err) < 0) {
		ms_error_prefix(err, "the recorded host");
		return -1;
	}
	if (pmu_set_load(&host->pmus, host->roots.sys, err) < 0) {
		ms_error_prefix(err, "the recorded host");
		topology_free(&host->topo);
		return -1;
	}
	return 0;
}
