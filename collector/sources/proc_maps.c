#include "sources/proc_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int proc_maps_read(const char *proc_root, pid_t pid, void (*fn)(const struct map_event *m, void *ctx), void *ctx)
{
	char path[4200], line[4400];
	struct map_event *m;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	if (!(m = malloc(sizeof(*m)))) {
		fclose(f);
		return -ENOMEM;
	}
	/* A process we may not read shows an empty file on some kernels, an
	 * error on the first read on others. */
	errno = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int consumed = 0;
		char *name;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj, &min, &ino,
			   &consumed) < 7)
			continue;
		memset(m, 0, sizeof(*m));
		m->pid = m->tid = (uint32_t)pid;
		m->start = start;
		m->len = end - start;
		m->pgoff = pgoff;
		m->maj = maj;
		m->min = min;
		m->ino = ino;
		m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			  (perms[2] == 'x' ? PROT_EXEC : 0);
		m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		m->executable = perms[2] == 'x';
		name = line + consumed;
		name[strcspn(name, "\n")] = '\0';
		snprintf(m->path, sizeof(m->path), "%s", name);
		fn(m, ctx);
	}
	if (ferror(f))
		ret = errno ? -errno : -EIO;
	free(m);
	fclose(f);
	return ret;
}
