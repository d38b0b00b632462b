#include "sources/damon/damon_procs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/sysfs.h"

#define MAPS_BUF 65536

/* A file under dir, opened without following links and checked to be a
 * regular file: the decision is made on the opened object. */
static int open_file_at(int dir, const char *name)
{
	struct stat st;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* /proc/PID as a directory descriptor (no link followed: PID dirs are
 * directories; self and thread-self, the links, are not numbers anyway). */
static int open_pid_dir(int proc_fd, pid_t pid)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", (int)pid);
	return openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A small file below dir, whole (trailing white space cut): 0 or -1. */
static int read_small(int dir, const char *name, char *buf, size_t size)
{
	return sysfs_read_fd_str(openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), buf, size);
}

int damon_procs_init(struct damon_procs *p, const char *proc_root, int nr_nodes, const int *node_ids,
		     struct ms_error *err)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(p, 0, sizeof(*p));
	p->proc_fd = -1;
	p->nr_nodes = nr_nodes;
	p->page_size = page > 0 ? (uint64_t)page : 4096;
	for (int i = 0; i < DAMON_PROCS_MAX; i++) {
		p->procs[i].maps_fd = p->procs[i].pagemap_fd = -1;
		if (damon_tally_init(&p->procs[i].tally, nr_nodes, node_ids) < 0)
			goto oom;
	}
	p->entries = calloc(DAMON_PROCS_CHUNK, sizeof(*p->entries));
	p->maps_buf = malloc(MAPS_BUF);
	if (!p->entries || !p->maps_buf)
		goto oom;
	p->proc_fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->proc_fd < 0) {
		ms_error_set(err, "%s: %s: per-process DAMON bytes read /proc/PID/pagemap", proc_root, strerror(errno));
		damon_procs_free(p);
		return -1;
	}
	return 0;
oom:
	ms_error_set(err, "damon source: out of memory");
	damon_procs_free(p);
	return -1;
}

static void close_proc(struct damon_proc *pr)
{
	if (pr->maps_fd >= 0)
		close(pr->maps_fd);
	if (pr->pagemap_fd >= 0)
		close(pr->pagemap_fd);
	pr->maps_fd = pr->pagemap_fd = -1;
}

void damon_procs_release(struct damon_procs *p, int slot)
{
	struct damon_proc *pr = &p->procs[slot];

	close_proc(pr);
	pr->state = DAMON_PROC_FREE;
	pr->pid = 0;
	pr->measured = false;
	pr->joins = pr->entries = pr->ns = 0;
}

void damon_procs_free(struct damon_procs *p)
{
	for (int i = 0; i < DAMON_PROCS_MAX; i++) {
		close_proc(&p->procs[i]);
		damon_tally_free(&p->procs[i].tally);
	}
	if (p->proc_fd >= 0)
		close(p->proc_fd);
	free(p->cands);
	free(p->entries);
	free(p->maps_buf);
	free(p->vruns);
	memset(p, 0, sizeof(*p));
	p->proc_fd = -1;
}

static bool wanted(const struct damon_procs *p, pid_t pid)
{
	for (int i = 0; i < p->nr_only; i++)
		if (p->only[i] == pid)
			return true;
	return p->nr_only == 0;
}

/* Every process's resident and total pages (statm), into p->cands. */
static void scan(struct damon_procs *p)
{
	int dfd = openat(p->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	p->nr_cands = 0;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(dir))) {
		char text[128];
		unsigned long long size, resident;
		int pid_fd;
		long pid;
		char *end;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || !wanted(p, (pid_t)pid))
			continue;
		if ((pid_fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		/* Kernel threads have no memory: statm reads 0 0 ... */
		if (read_small(pid_fd, "statm", text, sizeof(text)) == 0 &&
		    sscanf(text, "%llu %llu", &size, &resident) == 2 && resident > 0) {
			if (p->nr_cands == p->cap_cands) {
				int cap = p->cap_cands ? 2 * p->cap_cands : 512;
				struct damon_proc_candidate *grown = realloc(p->cands, (size_t)cap * sizeof(*grown));

				if (!grown) {
					close(pid_fd);
					break;
				}
				p->cands = grown;
				p->cap_cands = cap;
			}
			p->cands[p->nr_cands++] = (struct damon_proc_candidate){ (pid_t)pid, resident, size };
		}
		close(pid_fd);
	}
	closedir(dir);
}

static int by_resident(const void *a, const void *b)
{
	const struct damon_proc_candidate *x = a, *y = b;

	if (x->resident != y->resident)
		return x->resident < y->resident ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int slot_of(const struct damon_procs *p, pid_t pid)
{
	for (int i = 0; i < DAMON_PROCS_MAX; i++)
		if (p->procs[i].state != DAMON_PROC_FREE && p->procs[i].pid == pid)
			return i;
	return -1;
}

/* A new process in a free slot: its maps and pagemap opened under its
 * /proc/PID directory, and its name. */
static void take(struct damon_procs *p, pid_t pid)
{
	struct damon_proc *pr = NULL;
	char comm[64];
	int dir;

	for (int i = 0; i < DAMON_PROCS_MAX && !pr; i++)
		if (p->procs[i].state == DAMON_PROC_FREE)
			pr = &p->procs[i];
	if (!pr || (dir = open_pid_dir(p->proc_fd, pid)) < 0)
		return;
	pr->maps_fd = open_file_at(dir, "maps");
	pr->pagemap_fd = open_file_at(dir, "pagemap");
	if (read_small(dir, "comm", comm, sizeof(comm)) < 0)
		comm[0] = '\0';
	close(dir);
	if (pr->maps_fd < 0 || pr->pagemap_fd < 0) {
		close_proc(pr);
		return;
	}
	comm[strcspn(comm, "\n")] = '\0';
	for (char *c = comm; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
	snprintf(pr->comm, sizeof(pr->comm), "%.15s", comm);
	pr->pid = pid;
	pr->state = DAMON_PROC_NEW;
	pr->chosen = true;
}

/* Pick the largest processes whose address space fits the budget. */
static void choose(struct damon_procs *p)
{
	uint64_t left = DAMON_PROCS_PAGE_BUDGET;
	int taken = 0;

	for (int i = 0; i < DAMON_PROCS_MAX; i++)
		p->procs[i].chosen = false;
	qsort(p->cands, (size_t)p->nr_cands, sizeof(*p->cands), by_resident);
	for (int c = 0; c < p->nr_cands && taken < DAMON_PROCS_MAX; c++) {
		int slot;

		if (p->cands[c].size > left)
			continue;
		left -= p->cands[c].size;
		taken++;
		if ((slot = slot_of(p, p->cands[c].pid)) >= 0)
			p->procs[slot].chosen = true;
	}
	/* Those that fell out leave first, so that new ones find a slot. */
	for (int i = 0; i < DAMON_PROCS_MAX; i++)
		if (p->procs[i].state == DAMON_PROC_LIVE && !p->procs[i].chosen)
			p->procs[i].state = DAMON_PROC_LEAVING;
	left = DAMON_PROCS_PAGE_BUDGET;
	taken = 0;
	for (int c = 0; c < p->nr_cands && taken < DAMON_PROCS_MAX; c++) {
		if (p->cands[c].size > left)
			continue;
		left -= p->cands[c].size;
		taken++;
		if (slot_of(p, p->cands[c].pid) < 0)
			take(p, p->cands[c].pid);
	}
}

/* The pages of [start, end) joined, within the budget; false when it ran out. */
static bool join_range(struct damon_procs *p, struct damon_proc *pr, struct damon_page_join *j, uint64_t start,
		       uint64_t end, uint64_t *left, const struct damon_phys_region *regions, int nr,
		       const struct phys_node_map *map, const struct damon_classes *classes)
{
	for (uint64_t page = start / p->page_size; page < end / p->page_size;) {
		uint64_t want = end / p->page_size - page;
		ssize_t got;

		if (want > DAMON_PROCS_CHUNK)
			want = DAMON_PROCS_CHUNK;
		if (want > *left)
			return false;
		got = pread(pr->pagemap_fd, p->entries, want * sizeof(uint64_t), (off_t)(page * sizeof(uint64_t)));
		if (got <= 0)
			return got == 0;   /* past the end of the address space */
		got /= (ssize_t)sizeof(uint64_t);
		*left -= (uint64_t)got;
		p->entries_read += (uint64_t)got;
		damon_page_join_add(j, &pr->tally, map, classes, regions, nr, p->entries, (size_t)got, p->page_size,
				    page * p->page_size);
		page += (uint64_t)got;
	}
	return true;
}

/* Read one process's mappings and join their pages: 1 read whole, 0 not
 * (past the budget), -1 gone (an exited or exec'd process's maps read empty
 * through the descriptor opened before). */
static int measure(struct damon_procs *p, struct damon_proc *pr, uint64_t *left,
		    const struct damon_phys_region *regions, int nr, const struct phys_node_map *map,
		    const struct damon_classes *classes)
{
	struct damon_page_join j;
	off_t at = 0;
	size_t have = 0;
	bool whole = true, any = false;

	damon_tally_clear(&pr->tally);
	damon_page_join_begin(&j);
	if (p->emit && (p->vruns || (p->vruns = calloc(DAMON_PROCS_VRUNS, sizeof(*p->vruns))))) {
		j.vruns = p->vruns;
		j.cap_vruns = p->vruns_left;
	}
	for (;;) {
		ssize_t got = pread(pr->maps_fd, p->maps_buf + have, MAPS_BUF - 1 - have, at);
		char *line, *nl;

		if (got <= 0)
			break;
		at += got;
		have += (size_t)got;
		p->maps_buf[have] = '\0';
		for (line = p->maps_buf; (nl = strchr(line, '\n')); line = nl + 1) {
			unsigned long long start, end;
			char perms[8];

			*nl = '\0';
			any = true;
			if (!whole || sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3)
				continue;
			/* No access: nothing the process could have touched. */
			if (!strncmp(perms, "---", 3))
				continue;
			/* [vsyscall]: above user space, not in pagemap. */
			if (start >= 1ull << 63)
				continue;
			whole = join_range(p, pr, &j, start, end, left, regions, nr, map, classes);
		}
		have = (size_t)(p->maps_buf + have - line);
		memmove(p->maps_buf, line, have);
		if (have == MAPS_BUF - 1)
			have = 0;   /* a line longer than the buffer: no mapping line is */
	}
	damon_page_join_end(&j, &pr->tally, map, classes, regions);
	if (damon_page_join_hidden(&j))
		p->hidden = true;
	if (any && whole && !p->hidden && j.vruns) {
		if (j.overflow)
			p->vruns_overflow++;
		else
			p->emit(p->emit_ctx, pr, j.vruns, j.nr_vruns);
		p->vruns_left -= j.nr_vruns;
	}
	return !any ? -1 : whole ? 1 : 0;
}

void damon_procs_update(struct damon_procs *p, const struct damon_phys_region *regions, int nr,
			const struct phys_node_map *map, const struct damon_classes *classes)
{
	struct timespec t0, t1;
	uint64_t left = DAMON_PROCS_PAGE_BUDGET, ns;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p->vruns_left = DAMON_PROCS_VRUNS;
	scan(p);
	choose(p);
	for (int i = 0; i < DAMON_PROCS_MAX; i++) {
		struct damon_proc *pr = &p->procs[i];

		if (pr->state != DAMON_PROC_NEW && pr->state != DAMON_PROC_LIVE)
			continue;
		uint64_t entries0 = p->entries_read;
		struct timespec m0, m1;
		int read;

		clock_gettime(CLOCK_MONOTONIC, &m0);
		read = measure(p, pr, &left, regions, nr, map, classes);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		pr->joins++;
		pr->entries += p->entries_read - entries0;
		pr->ns += (uint64_t)(m1.tv_sec - m0.tv_sec) * 1000000000ull + (uint64_t)m1.tv_nsec - (uint64_t)m0.tv_nsec;
		if (pr->entries / pr->joins >= p->big_entries) {
			p->big_pid = pr->pid;
			snprintf(p->big_comm, sizeof(p->big_comm), "%s", pr->comm);
			p->big_entries = pr->entries / pr->joins;
			p->big_ns = pr->ns / pr->joins;
		}

		pr->measured = read == 1 && !p->hidden;
		/* Gone: a new process with its pid, or the same one after exec,
		 * is taken again with files of its own by a later scan. */
		if (read < 0)
			pr->state = pr->state == DAMON_PROC_NEW ? DAMON_PROC_FREE : DAMON_PROC_LEAVING;
		if (pr->state == DAMON_PROC_FREE)
			damon_procs_release(p, i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	p->joins++;
	p->ns_spent += ns;
	if (ns > p->max_ns)
		p->max_ns = ns;
}
