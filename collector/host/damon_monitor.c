#include "host/damon_monitor.h"
#include "host/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel configuration a kdamond needs, and where Debian 12 has it. */
#define DAMON_KERNEL_HINT                                                                                  \
	"this kernel has no DAMON sysfs interface (CONFIG_DAMON, CONFIG_DAMON_SYSFS and CONFIG_DAMON_PADDR, " \
	"CONFIG_DAMON_VADDR for processes); on Debian 12 the bookworm 6.12 kernel (linux-image-6.12.*+deb12-amd64) " \
	"has them, the stock 6.1 kernel (linux-image-6.1.0-*-amd64) does not"

/* One file below dir, read through the opened descriptor: no link is
 * followed and only a regular file is read (memscope runs as root here). */
static int read_at(int dir, const char *name, char *buf, size_t size)
{
	return sysfs_read_fd_str(openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), buf, size);
}

static int read_u64_at(int dir, const char *name, uint64_t *value)
{
	char text[64], *end;

	if (read_at(dir, name, text, sizeof(text)) < 0)
		return -1;
	errno = 0;
	*value = strtoull(text, &end, 10);
	if (end == text || *end || errno) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static int open_dir_at(int dir, const char *name)
{
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Context 0 of kdamond dir: its operations set, intervals and address unit. */
static int read_context(int kdamond, struct damon_monitor *mon, struct ms_error *err)
{
	int ctx = open_dir_at(kdamond, "contexts/0"), intervals = -1, rc = -1;

	if (ctx < 0 || read_at(ctx, "operations", mon->ops, sizeof(mon->ops)) < 0 ||
	    (intervals = open_dir_at(ctx, "monitoring_attrs/intervals")) < 0 ||
	    read_u64_at(intervals, "sample_us", &mon->sample_us) < 0 ||
	    read_u64_at(intervals, "aggr_us", &mon->aggr_us) < 0 ||
	    read_u64_at(intervals, "update_us", &mon->update_us) < 0) {
		ms_error_set(err, "kdamond %d: cannot read its context 0 (operations, monitoring_attrs/intervals): %s",
			     mon->index, strerror(errno));
		goto out;
	}
	if (!mon->sample_us || mon->aggr_us < mon->sample_us) {
		ms_error_set(err, "kdamond %d: sample interval %" PRIu64 " us and aggregation interval %" PRIu64
			     " us make no access rate", mon->index, mon->sample_us, mon->aggr_us);
		goto out;
	}
	/* Kernels before addr_unit (6.17) count physical addresses in bytes. */
	if (read_u64_at(ctx, "addr_unit", &mon->addr_unit) < 0 || !mon->addr_unit)
		mon->addr_unit = 1;
	rc = 0;
out:
	if (intervals >= 0)
		close(intervals);
	if (ctx >= 0)
		close(ctx);
	return rc;
}

int damon_monitor_find(const struct sysfs_roots *roots, struct damon_monitor *mon, enum damon_absent *reason,
		       struct ms_error *err)
{
	char path[4200], state[16], text[32];
	uint64_t nr = 0;
	int kdamonds;

	memset(mon, 0, sizeof(*mon));
	mon->index = -1;
	sysfs_join(path, sizeof(path), roots->sys, "kernel/mm/damon/admin/kdamonds");
	kdamonds = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (kdamonds < 0) {
		char mm[4200];

		sysfs_join(mm, sizeof(mm), roots->sys, "kernel/mm");
		if (errno == EACCES || errno == EPERM) {
			*reason = DAMON_NOT_ALLOWED;
			ms_error_set(err, "%s: %s: reading DAMON's kdamonds needs root", path, strerror(errno));
		} else if (!sysfs_exists(mm)) {
			*reason = DAMON_NO_SYSFS;
			ms_error_set(err, "%s does not exist: sysfs is not mounted (mount -t sysfs sysfs /sys)", mm);
		} else {
			*reason = DAMON_NO_KERNEL_SUPPORT;
			ms_error_set(err, "%s does not exist: %s", path, DAMON_KERNEL_HINT);
		}
		return -1;
	}
	if (read_u64_at(kdamonds, "nr_kdamonds", &nr) < 0) {
		*reason = errno == EACCES ? DAMON_NOT_ALLOWED : DAMON_BAD_STATE;
		ms_error_set(err, "%s/nr_kdamonds: %s%s", path, strerror(errno),
			     errno == EACCES ? ": reading DAMON's kdamonds needs root" : "");
		close(kdamonds);
		return -1;
	}
	mon->nr_kdamonds = (int)nr;
	for (int i = 0; i < (int)nr; i++) {
		int kd;
		long long pid;

		snprintf(text, sizeof(text), "%d", i);
		if ((kd = open_dir_at(kdamonds, text)) < 0)
			continue;
		if (read_at(kd, "state", state, sizeof(state)) < 0) {
			*reason = errno == EACCES ? DAMON_NOT_ALLOWED : DAMON_BAD_STATE;
			ms_error_set(err, "%s/%d/state: %s%s", path, i, strerror(errno),
				     errno == EACCES ? ": reading a kdamond's state needs root" : "");
			close(kd);
			close(kdamonds);
			return -1;
		}
		if (strcmp(state, "on") != 0) {
			close(kd);
			continue;
		}
		mon->index = i;
		if (read_at(kd, "pid", text, sizeof(text)) < 0 || (pid = strtoll(text, NULL, 10)) <= 0) {
			*reason = DAMON_BAD_STATE;
			ms_error_set(err, "%s/%d/pid: no thread for a kdamond whose state is on", path, i);
			close(kd);
			close(kdamonds);
			return -1;
		}
		mon->pid = (pid_t)pid;
		if (read_context(kd, mon, err) < 0) {
			*reason = DAMON_BAD_STATE;
			close(kd);
			close(kdamonds);
			return -1;
		}
		close(kd);
		close(kdamonds);
		return 0;
	}
	close(kdamonds);
	*reason = DAMON_NONE_RUNNING;
	ms_error_set(err, "no kdamond runs (%d configured, none on): passive mode has none to read; active mode "
		     "(--damon auto or active, root) starts memscope's own%s", (int)nr,
		     nr ? ", but only when nr_kdamonds is 0 (adding one rebuilds every kdamond directory)" : "");
	return -1;
}

static void format_us(char *buf, size_t size, uint64_t us)
{
	if (us % 1000000 == 0)
		snprintf(buf, size, "%" PRIu64 " s", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 " ms", us / 1000);
	else
		snprintf(buf, size, "%" PRIu64 " us", us);
}

void damon_monitor_describe(const struct damon_monitor *mon, char *buf, size_t size)
{
	char sample[32], aggr[32], update[32];

	format_us(sample, sizeof(sample), mon->sample_us);
	format_us(aggr, sizeof(aggr), mon->aggr_us);
	format_us(update, sizeof(update), mon->update_us);
	snprintf(buf, size, "kdamond %d (pid %d, %s, sample %s, aggregation %s, update %s)", mon->index, (int)mon->pid,
		 mon->ops, sample, aggr, update);
}
