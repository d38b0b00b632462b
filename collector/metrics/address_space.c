#include "metrics/address_space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int address_space_init(struct address_space *as, struct strtab *strings)
{
	memset(as, 0, sizeof(*as));
	as->strings = strings;
	as->sz = symbolizer_new();
	return as->sz ? 0 : -1;
}

void address_space_free(struct address_space *as)
{
	for (int i = 0; i < as->nr_procs; i++) {
		free(as->procs[i].maps);
		free(as->procs[i].allocs);
	}
	free(as->procs);
	symbolizer_free(as->sz);
	memset(as, 0, sizeof(*as));
}

static const char *intern(struct address_space *as, const char *s)
{
	const char *t = strtab_intern(as->strings, s);

	return t ? t : "[out of memory]";
}

/* The process pid, added when new (procs stay sorted by pid). */
static struct process_space *process(struct address_space *as, uint32_t pid, bool add)
{
	int lo = 0, hi = as->nr_procs - 1;
	struct process_space *p;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (as->procs[mid].pid == pid)
			return &as->procs[mid];
		if (as->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	if (!add)
		return NULL;
	if (as->nr_procs == as->cap_procs) {
		int cap = as->cap_procs ? as->cap_procs * 2 : 16;
		struct process_space *grown = realloc(as->procs, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return NULL;
		as->procs = grown;
		as->cap_procs = cap;
	}
	memmove(&as->procs[lo + 1], &as->procs[lo], sizeof(*as->procs) * (size_t)(as->nr_procs - lo));
	as->nr_procs++;
	p = &as->procs[lo];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->comm = "";
	p->last_hit = -1;
	return p;
}

static enum mapping_kind kind_of(const char *path)
{
	if (!path[0] || !strcmp(path, "//anon") || !strncmp(path, "[anon:", 6) || !strncmp(path, "/dev/zero", 9) ||
	    !strncmp(path, "/SYSV", 5) || !strncmp(path, "/memfd:", 7) || !strncmp(path, "[anon_shmem:", 12))
		return MAPPING_ANON;
	if (!strcmp(path, "[heap]"))
		return MAPPING_HEAP;
	if (!strncmp(path, "[stack", 6))
		return MAPPING_STACK;
	if (path[0] == '[')
		return MAPPING_SPECIAL;
	return MAPPING_FILE;
}

int address_space_map(struct address_space *as, const struct map_event *m)
{
	struct process_space *p = process(as, m->pid, true);
	struct mapping *map;

	if (!p)
		return -1;
	if (p->nr_maps == p->cap_maps) {
		int cap = p->cap_maps ? p->cap_maps * 2 : 32;
		struct mapping *grown = realloc(p->maps, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		p->maps = grown;
		p->cap_maps = cap;
	}
	map = &p->maps[p->nr_maps++];
	memset(map, 0, sizeof(*map));
	map->start = m->start;
	map->end = m->start + m->len;
	map->pgoff = m->pgoff;
	map->time_ns = m->time_ns;
	map->prot = m->prot;
	map->kind = kind_of(m->path);
	map->path = intern(as, !strcmp(m->path, "//anon") ? "" : m->path);
	map->build_id_size = m->build_id_size <= BUILD_ID_MAX ? m->build_id_size : 0;
	memcpy(map->build_id, m->build_id, (size_t)map->build_id_size);
	return 0;
}

int address_space_task(struct address_space *as, const struct task_event *t)
{
	struct process_space *p;

	/* Threads share their process's address space: only processes matter. */
	if (t->kind == TASK_FORK && t->pid == t->ppid)
		return 0;
	if (t->kind == TASK_EXIT)
		return 0;
	if (!(p = process(as, t->pid, true)))
		return -1;
	if (t->kind == TASK_FORK) {
		p->ppid = t->ppid;
		p->fork_ns = t->time_ns;
	} else if (t->pid == t->tid || !p->comm[0]) {
		p->comm = intern(as, t->comm);
	}
	return 0;
}

int address_space_maps_unreadable(struct address_space *as, uint32_t pid, const char *why)
{
	struct process_space *p = process(as, pid, true);

	if (!p)
		return -1;
	p->maps_why = intern(as, why);
	return 0;
}

const char *address_space_comm(struct address_space *as, uint32_t pid)
{
	struct process_space *p = process(as, pid, false);

	/* A child that never exec'd keeps its parent's name. */
	while (p && !p->comm[0] && p->ppid && p->ppid != p->pid)
		p = process(as, p->ppid, false);
	return p && p->comm[0] ? p->comm : "[unknown]";
}

/* The mapping holding addr at time t, made last before t; a child that has
 * no mapping of its own for it sees its parent's as they were at the fork. */
static struct mapping *find_mapping(struct address_space *as, uint32_t pid, uint64_t t, uint64_t addr,
				    struct process_space **owner)
{
	for (int depth = 0; depth < 64; depth++) {
		struct process_space *p = process(as, pid, false);
		struct mapping *best = NULL;

		if (!p)
			return NULL;
		if (p->last_hit >= 0) {
			struct mapping *m = &p->maps[p->last_hit];

			/* Fast path: the last mapping, when no later one covers addr. */
			if (addr >= m->start && addr < m->end && m->time_ns <= t) {
				best = m;
				for (int i = 0; i < p->nr_maps; i++) {
					struct mapping *o = &p->maps[i];

					if (o->time_ns > best->time_ns && o->time_ns <= t && addr >= o->start && addr < o->end)
						best = o;
				}
			}
		}
		if (!best) {
			for (int i = 0; i < p->nr_maps; i++) {
				struct mapping *m = &p->maps[i];

				if (addr >= m->start && addr < m->end && m->time_ns <= t &&
				    (!best || m->time_ns >= best->time_ns))
					best = m;
			}
		}
		if (best) {
			p->last_hit = (int)(best - p->maps);
			*owner = p;
			return best;
		}
		if (!p->ppid || p->ppid == pid)
			return NULL;
		if (p->fork_ns && t > p->fork_ns)
			t = p->fork_ns;
		pid = p->ppid;
	}
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The ELF image a file mapping shows, and its load bias. */
static struct elf_image *mapping_image(struct address_space *as, struct mapping *m)
{
	uint64_t vaddr;

	if (m->image_tried)
		return m->image;
	m->image_tried = true;
	if (m->kind != MAPPING_FILE) {
		m->image_why = "not a file";
		return NULL;
	}
	m->image = symbolizer_image(as->sz, m->path, m->build_id, m->build_id_size, &m->image_why);
	if (m->image && !elf_image_vaddr_of_offset(m->image, m->pgoff, &vaddr)) {
		m->image = NULL;
		m->image_why = "the mapping is not a loadable part of the file";
	}
	if (m->image)
		m->bias = m->start - vaddr;
	return m->image;
}

static const char *build_id_text(struct address_space *as, struct mapping *m)
{
	char hex[2 * BUILD_ID_MAX + 1];
	const uint8_t *id = m->build_id;
	int size = m->build_id_size;

	if (m->image)
		id = elf_image_build_id(m->image, &size);
	else if (!size && m->kind == MAPPING_FILE)
		size = elf_file_build_id(m->path, m->build_id), m->build_id_size = size;
	build_id_hex(id, size, hex);
	return intern(as, hex);
}

void address_space_code(struct address_space *as, uint32_t pid, uint64_t t, uint64_t ip, bool return_address,
			struct code_site *out)
{
	struct process_space *p;
	struct mapping *m = find_mapping(as, pid, t, ip, &p);
	struct elf_image *img;
	struct symbol_info si;
	char text[512];
	uint64_t at = return_address && ip ? ip - 1 : ip;

	out->sym = out->srcline = out->dso = "[unknown]";
	out->build_id = "";
	out->offset = 0;
	out->resolved = false;
	if (!m)
		return;
	if (m->kind != MAPPING_FILE) {
		snprintf(text, sizeof(text), "%s", m->kind == MAPPING_ANON ? "[anon]" : m->path);
		out->dso = intern(as, text);
		return;
	}
	out->dso = intern(as, base_name(m->path));
	img = mapping_image(as, m);
	out->build_id = build_id_text(as, m);
	if (!img)
		goto unknown;
	elf_image_code(img, at - m->bias, &si);
	if (si.file && si.line) {
		snprintf(text, sizeof(text), "%s:%d", base_name(si.file), si.line);
		out->srcline = intern(as, text);
	}
	if (!si.name)
		goto unknown;
	out->sym = intern(as, si.name);
	out->offset = si.offset;
	out->resolved = true;
	return;
unknown:
	/* No file's symbols can be read (the report's end says why on stderr). */
	if (!img && symbolizer_unavailable(as->sz)) {
		out->sym = "[unknown: no elfutils]";
		return;
	}
	/* A stripped binary (or one rebuilt since): known by its build-id. */
	if (out->build_id[0]) {
		snprintf(text, sizeof(text), "[unknown] (%s build-id %s)", out->dso, out->build_id);
		out->sym = intern(as, text);
	}
}

/* A global or static variable of a binary loaded in p holds addr (its .data,
 * or its .bss, which lies in the anonymous mapping after the file's). */
static bool image_data(struct address_space *as, struct process_space *p, uint64_t t, uint64_t addr,
		       struct data_object *out)
{
	for (int i = 0; i < p->nr_maps; i++) {
		struct mapping *m = &p->maps[i];
		struct elf_image *img;
		struct symbol_info si;
		uint64_t lo, hi;
		char text[512];

		if (m->kind != MAPPING_FILE || m->time_ns > t || !(img = mapping_image(as, m)))
			continue;
		elf_image_span(img, &lo, &hi);
		if (addr < lo + m->bias || addr >= hi + m->bias)
			continue;
		elf_image_data(img, addr - m->bias, &si);
		if (si.name)
			snprintf(text, sizeof(text), "%s (%s)", si.name, base_name(m->path));
		else
			snprintf(text, sizeof(text), "[%s static data]", base_name(m->path));
		out->name = intern(as, text);
		out->known = true;
		out->start = addr - si.offset;
		out->end = out->start + 1;
		return true;
	}
	return false;
}

static void format_size(uint64_t bytes, char *buf, size_t size)
{
	if (bytes < 1024)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else if (bytes >= (1ull << 30) && !(bytes % (1ull << 20)))
		snprintf(buf, size, "%.1f GiB", (double)bytes / (double)(1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, size, "%.1f MiB", (double)bytes / (double)(1ull << 20));
	else
		snprintf(buf, size, "%llu KiB", (unsigned long long)(bytes >> 10));
}

int address_space_alloc(struct address_space *as, uint64_t t, const struct alloc_event *ae)
{
	struct process_space *p = process(as, ae->pid, true);

	if (!p)
		return -1;
	if (ae->free) {
		/* The newest live allocation at that address ends here. */
		for (int i = p->nr_allocs - 1; i >= 0; i--)
			if (p->allocs[i].addr == ae->addr && p->allocs[i].free_ns == UINT64_MAX) {
				p->allocs[i].free_ns = t;
				break;
			}
		return 0;
	}
	if (p->nr_allocs == p->cap_allocs) {
		int cap = p->cap_allocs ? p->cap_allocs * 2 : 16;
		struct heap_alloc *grown = realloc(p->allocs, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		p->allocs = grown;
		p->cap_allocs = cap;
	}
	p->allocs[p->nr_allocs++] = (struct heap_alloc){ ae->addr, ae->size, ae->caller, t, UINT64_MAX, NULL };
	return 0;
}

/* The allocation live at time t that holds addr, newest first (an address
 * reused after a free belongs to the later allocation). */
static bool heap_data(struct address_space *as, uint32_t pid, uint64_t t, uint64_t addr, struct data_object *out)
{
	struct process_space *p = process(as, pid, false);

	for (int i = p ? p->nr_allocs - 1 : -1; i >= 0; i--) {
		struct heap_alloc *h = &p->allocs[i];

		if (addr < h->addr || addr - h->addr >= h->size || t < h->alloc_ns || t >= h->free_ns)
			continue;
		if (!h->name) {
			struct code_site site;
			char text[700], size[32];

			address_space_code(as, pid, h->alloc_ns, h->caller, true, &site);
			format_size(h->size, size, sizeof(size));
			snprintf(text, sizeof(text), "heap: %s from %s (%s)", size, site.sym, site.srcline);
			h->name = intern(as, text);
		}
		*out = (struct data_object){ h->name, MAPPING_HEAP, true, h->addr, h->addr + h->size };
		return true;
	}
	return false;
}

void address_space_data(struct address_space *as, uint32_t pid, uint64_t t, uint64_t addr, struct data_object *out)
{
	struct process_space *p = NULL;
	struct mapping *m;
	char text[600], size[32];

	if (heap_data(as, pid, t, addr, out))
		return;
	m = find_mapping(as, pid, t, addr, &p);
	memset(out, 0, sizeof(*out));
	out->kind = MAPPING_ANON;
	if (!m) {
		struct process_space *q = process(as, pid, false);

		if (q && q->maps_why)
			snprintf(text, sizeof(text), "[unknown: %s]", q->maps_why);
		else
			snprintf(text, sizeof(text), "[unknown: no mapping recorded]");
		out->name = intern(as, text);
		return;
	}
	out->kind = m->kind;
	out->known = true;
	out->start = m->start;
	out->end = m->end;
	switch (m->kind) {
	case MAPPING_FILE:
		if (image_data(as, p, t, addr, out))
			return;
		snprintf(text, sizeof(text), "%s (mapped file)", m->path);
		break;
	case MAPPING_ANON:
		if (image_data(as, p, t, addr, out))
			return;
		format_size(m->end - m->start, size, sizeof(size));
		snprintf(text, sizeof(text), "[anon%s%s 0x%llx %s %c%c%c]", m->path[0] ? " " : "", m->path,
			 (unsigned long long)m->start, size, m->prot & PROT_READ ? 'r' : '-',
			 m->prot & PROT_WRITE ? 'w' : '-', m->prot & PROT_EXEC ? 'x' : '-');
		break;
	default:
		snprintf(text, sizeof(text), "%s", m->path);
		break;
	}
	out->name = intern(as, text);
}
