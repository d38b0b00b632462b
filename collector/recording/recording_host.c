#include "recording/recording_host.h"
#include "util/array.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
	for (size_t i = 0; i < ARRAY_SIZE(snapshot_globs); i++) {
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

/* The directory for `key`'s file under the tree, made where missing, each
 * opened from the one before (never through a link): an fd, or -1. */
static int open_parents(int tree, char *key, char **leaf)
{
	int dirfd = fcntl(tree, F_DUPFD_CLOEXEC, 0);
	char *name = key, *slash;

	while (dirfd >= 0 && (slash = strchr(name, '/'))) {
		int next;

		*slash = '\0';
		if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
			next = -1;
		else
			next = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		*slash = '/';
		close(dirfd);
		dirfd = next;
		name = slash + 1;
	}
	*leaf = name;
	return dirfd;
}

/* Each entry of the directory open as dirfd, depth first, by descriptor:
 * nothing below it is ever reached by a name that could lead elsewhere. */
static void remove_below(int dirfd)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *e;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((e = readdir(d))) {
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0 || errno != EISDIR)
			continue;
		sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			remove_below(sub);
		unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

void recording_host_remove(struct recorded_host_tree *tree)
{
	if (tree->fd >= 0) {
		remove_below(openat(tree->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		close(tree->fd);
	}
	/* Our own directory, if it is still the one at its name (else an
	 * empty one left behind, or nothing: never another's files). */
	if (tree->parent_fd >= 0) {
		unlinkat(tree->parent_fd, tree->name, AT_REMOVEDIR);
		close(tree->parent_fd);
	}
	tree->fd = tree->parent_fd = -1;
}

static bool valid_key(const char *key)
{
	if (strncmp(key, "sys/", 4) && strncmp(key, "proc/", 5))
		return false;
	/* No "..", ".", or empty component: the names stay inside the tree. */
	for (const char *c = key; *c; c += strcspn(c, "/") + (c[strcspn(c, "/")] == '/')) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return key[strlen(key) - 1] != '/';
}

static int write_tree(const json_t *snapshot, const struct recorded_host_tree *tree, struct ms_error *err)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)snapshot, key, value) {
		char name[4096], *leaf;
		int dirfd, fd = -1;
		size_t len = json_is_string(value) ? json_string_length(value) : 0;

		/* The names come from a file: keep them inside the tree. */
		if (!valid_key(key) || !json_is_string(value) || strlen(key) >= sizeof(name)) {
			ms_error_set(err, "the recording's host files hold an entry '%.200s' that is not a sysfs or "
				     "procfs file name with text", key);
			return -1;
		}
		snprintf(name, sizeof(name), "%s", key);
		dirfd = open_parents(tree->fd, name, &leaf);
		if (dirfd >= 0)
			fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, json_string_value(value), len) != (ssize_t)len) {
			ms_error_set(err, "cannot write %s/%s: %s", tree->path, key, strerror(errno));
			if (fd >= 0)
				close(fd);
			if (dirfd >= 0)
				close(dirfd);
			return -1;
		}
		close(fd);
		close(dirfd);
	}
	return 0;
}

/* A fresh directory of ours, 0700 and empty, made and opened in the
 * temporary directory's descriptor: whoever else can write there may rename
 * it or put something at its name, but never makes us write elsewhere. */
static int make_tree(struct recorded_host_tree *tree, struct ms_error *err)
{
	const char *tmp = getenv("TMPDIR");
	const char *top = tmp && tmp[0] == '/' ? tmp : "/tmp";
	struct stat st;

	snprintf(tree->path, sizeof(tree->path), "%s/memscope-host-XXXXXX", top);
	tree->parent_fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tree->parent_fd < 0 || !mkdtemp(tree->path)) {
		ms_error_set(err, "cannot create a temporary directory %s: %s (set TMPDIR to a writable one)",
			     tree->path, strerror(errno));
		return -1;
	}
	snprintf(tree->name, sizeof(tree->name), "%s", strrchr(tree->path, '/') + 1);
	tree->fd = openat(tree->parent_fd, tree->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tree->fd < 0 || fstat(tree->fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700 ||
	    st.st_nlink != 2) {
		ms_error_set(err, "the temporary directory %s was replaced as it was made (someone else can write "
			     "%s): set TMPDIR to a directory only you can write", tree->path, top);
		if (tree->fd >= 0)
			close(tree->fd);
		tree->fd = -1;
		return -1;
	}
	return 0;
}

int recording_host_load(const json_t *snapshot, struct host *host, struct recorded_host_tree *tree,
			struct ms_error *err)
{
	memset(host, 0, sizeof(*host));
	memset(tree, 0, sizeof(*tree));
	tree->fd = tree->parent_fd = -1;
	if (!json_is_object(snapshot)) {
		ms_error_set(err, "the recording's \"host\".\"files\" is not an object of file names and texts");
		return -1;
	}
	if (make_tree(tree, err) < 0 || write_tree(snapshot, tree, err) < 0)
		return -1;
	/* The same loaders as host_load(), on the recorded tree, read through
	 * its descriptor: a directory put at its name is never read. */
	snprintf(host->roots.sys, sizeof(host->roots.sys), "/proc/self/fd/%d/sys", tree->fd);
	snprintf(host->roots.proc, sizeof(host->roots.proc), "/proc/self/fd/%d/proc", tree->fd);
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
