#include "sources/alloc_probes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/allocs_bpf.h"
/* The skeleton embeds the BPF object as one long string literal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "bpf/allocs.skel.h"
#include "util/array.h"
#pragma GCC diagnostic pop

#define LINKS_MAX 256

struct alloc_probes {
	struct allocs_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *links[LINKS_MAX];
	int nr_links;
	alloc_probes_fn fn;
	void *ctx;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct alloc_probes *ap = ctx;
	const struct ms_alloc_event *e = data;
	struct alloc_event out;

	if (size < sizeof(*e))
		return 0;
	out = (struct alloc_event){ e->pid, e->tid, e->addr, e->size, e->caller, e->size == 0 };
	ap->fn(&out, e->time_ns, ap->ctx);
	return 0;
}

/* The C library pid has mapped, from /proc/PID/maps ("" when none). */
static void mapped_libc(const char *proc_root, const char *pid, char *out, size_t size)
{
	char path[4200], line[4600];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s/maps", proc_root, pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/') + 1;
		if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5)) {
			snprintf(out, size, "%s", file);
			break;
		}
	}
	fclose(f);
}

/* Whether the ELF file at path asks for a program interpreter (is linked
 * dynamically); -1 when it cannot be read as ELF. */
static int elf_is_dynamic(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), dynamic = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64) {
		dynamic = 0;
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP)
				dynamic = 1;
		}
	}
	close(fd);
	return dynamic;
}

/* argv[0] as execvp finds it. */
static void command_path(const char *name, char *out, size_t size)
{
	const char *paths = getenv("PATH");

	snprintf(out, size, "%s", name);
	if (strchr(name, '/') || !paths)
		return;
	while (*paths) {
		size_t len = strcspn(paths, ":");
		char cand[4200];

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, paths, name);
		if (access(cand, X_OK) == 0) {
			snprintf(out, size, "%s", cand);
			return;
		}
		paths += len + (paths[len] == ':');
	}
}

static const char *const functions[] = { "malloc", "calloc", "realloc", "free", "aligned_alloc",
					 "posix_memalign" };
#define REQUIRED_FUNCTIONS 4

static struct bpf_program *program(struct allocs_bpf *skel, const char *fn, bool leave)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%s", fn, leave ? "leave" : "enter");
	return bpf_object__find_program_by_name(skel->obj, name);
}

static struct bpf_link *attach_one(struct bpf_program *prog, const char *binary, pid_t pid, const char *fn,
				   bool leave)
{
	struct bpf_uprobe_opts opts;

	/* Filled by hand: LIBBPF_OPTS is a GNU statement expression. */
	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.func_name = fn;
	opts.retprobe = leave;

	return bpf_program__attach_uprobe_opts(prog, pid, binary, 0, &opts);
}

/* Every probe on binary for pid (-1: every process). malloc, calloc, realloc
 * and free are required; the others are attached when the binary has them. */
static int attach(struct alloc_probes *ap, const char *binary, pid_t pid, struct ms_error *err)
{
	for (size_t f = 0; f < ARRAY_SIZE(functions); f++) {
		for (int leave = 0; leave < 2; leave++) {
			struct bpf_program *prog = program(ap->skel, functions[f], leave);
			struct bpf_link *link;
			int e;

			if (!prog || ap->nr_links == LINKS_MAX)
				continue;   /* free has no return probe */
			if ((link = attach_one(prog, binary, pid, functions[f], leave))) {
				ap->links[ap->nr_links++] = link;
				continue;
			}
			e = errno;
			if (f >= REQUIRED_FUNCTIONS)
				continue;
			ms_error_set(err, "no uprobe on %s in %s: %s%s", functions[f], binary, strerror(e),
				     e == ENOENT || e == ESRCH ? " (no such symbol: a stripped static binary?)"
				     : e == EPERM || e == EACCES ? " (uprobes need CAP_PERFMON and CAP_BPF)" : "");
			return -1;
		}
	}
	return 0;
}

/* Where the allocator of pid lives: its C library, else its own binary. */
static void allocator_of(const char *proc_root, pid_t pid, char *out, size_t size)
{
	char id[32];

	snprintf(id, sizeof(id), "%d", (int)pid);
	mapped_libc(proc_root, id, out, size);
	if (!out[0])
		snprintf(out, size, "%s/%d/exe", proc_root, (int)pid);
}

struct alloc_probes *alloc_probes_open(const char *proc_root, const struct target *target, uint64_t min_size,
				       alloc_probes_fn fn, void *ctx, struct ms_error *err)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	struct alloc_probes *ap = calloc(1, sizeof(*ap));
	char binary[4200];
	int e;

	if (!ap) {
		ms_error_set(err, "out of memory");
		goto fail;
	}
	ap->fn = fn;
	ap->ctx = ctx;
	if (!(ap->skel = allocs_bpf__open())) {
		ms_error_set(err, "the allocator probes cannot be opened: %s", strerror(errno));
		goto fail;
	}
	ap->skel->rodata->min_size = min_size;
	ap->skel->rodata->self_tgid = (__u32)getpid();
	if (allocs_bpf__load(ap->skel)) {
		e = errno;
		ms_error_set(err, "the allocator probes cannot be loaded: %s%s", strerror(e),
			     e == EPERM || e == EACCES ? " (BPF needs CAP_BPF and CAP_PERFMON, or root)" : "");
		goto fail;
	}
	if (target->system_wide || target->kind == TARGET_SYSTEM) {
		/* Every process using memscope's own C library. */
		mapped_libc(proc_root, "self", binary, sizeof(binary));
		if (!binary[0] || attach(ap, binary, -1, err) < 0)
			goto no_binary;
	} else if (target->kind == TARGET_COMMAND) {
		char path[4200];

		command_path(target->argv[0], path, sizeof(path));
		/* Held before exec: the C library it will load is taken to be
		 * memscope's own; a static binary carries its allocator itself. */
		if (elf_is_dynamic(path) == 0)
			snprintf(binary, sizeof(binary), "%s", path);
		else
			mapped_libc(proc_root, "self", binary, sizeof(binary));
		if (!binary[0] || attach(ap, binary, target->pids[0], err) < 0)
			goto no_binary;
	} else {
		for (int p = 0; p < target->nr_pids; p++) {
			allocator_of(proc_root, target->pids[p], binary, sizeof(binary));
			if (attach(ap, binary, target->pids[p], err) < 0)
				goto fail;
		}
	}
	ap->ring = ring_buffer__new(bpf_map__fd(ap->skel->maps.allocs), on_event, ap, NULL);
	if (!ap->ring) {
		ms_error_set(err, "the allocator probes' ring buffer: %s", strerror(errno));
		goto fail;
	}
	libbpf_set_print(old);
	return ap;
no_binary:
	if (!err->text[0])
		ms_error_set(err, "no C library found to probe");
fail:
	alloc_probes_close(ap);
	libbpf_set_print(old);
	return NULL;
}

int alloc_probes_fd(const struct alloc_probes *ap)
{
	return ring_buffer__epoll_fd(ap->ring);
}

void alloc_probes_drain(struct alloc_probes *ap)
{
	ring_buffer__consume(ap->ring);
}

uint64_t alloc_probes_dropped(const struct alloc_probes *ap)
{
	return ap->skel->bss->dropped;
}

void alloc_probes_close(struct alloc_probes *ap)
{
	if (!ap)
		return;
	ring_buffer__free(ap->ring);
	for (int i = 0; i < ap->nr_links; i++)
		bpf_link__destroy(ap->links[i]);
	allocs_bpf__destroy(ap->skel);
	free(ap);
}
