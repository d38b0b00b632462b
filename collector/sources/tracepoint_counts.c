#include "sources/tracepoint_counts.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/tpcount_bpf.h"
/* The skeleton embeds the BPF object as one long string literal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "bpf/tpcount.skel.h"
#pragma GCC diagnostic pop

struct tp_counts {
	struct tpcount_bpf *skel;
	struct bpf_link *links[TPCOUNT_SLOTS];
	struct bpf_program *progs[TPCOUNT_SLOTS];
	int nr_slots;
	int nr_cpus;               /* possible CPUs: the per-CPU values the kernel returns */
	size_t stride;             /* bytes per CPU in a lookup (value size rounded up to 8) */
	unsigned char *values;     /* the last lookup: nr_cpus x stride */
	int map_fd;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0; /* a tracepoint that cannot be attached is counted by perf instead */
}

static struct bpf_program *slot_program(struct tpcount_bpf *skel, int slot)
{
	char name[32];

	snprintf(name, sizeof(name), "tpcount_0%o%o", slot / 8, slot % 8);
	return bpf_object__find_program_by_name(skel->obj, name);
}

/* "sched:sched_switch" -> "sched_switch": raw tracepoints are named by event. */
static const char *raw_name(const char *name)
{
	const char *colon = strchr(name, ':');

	return colon ? colon + 1 : name;
}

struct tp_counts *tp_counts_open(const char *const *names, int nr, bool *attached)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	struct tp_counts *t = calloc(1, sizeof(*t));
	int cpus = libbpf_num_possible_cpus();

	for (int i = 0; i < nr; i++)
		attached[i] = false;
	if (!t || cpus <= 0 || nr <= 0)
		goto fail;
	t->nr_cpus = cpus;
	t->stride = (sizeof(__u64) * TPCOUNT_SLOTS + 7) & ~(size_t)7;
	t->values = calloc((size_t)cpus, t->stride);
	t->skel = tpcount_bpf__open();
	if (!t->values || !t->skel)
		goto fail;
	/* Load only the programs that will be attached. */
	for (int s = 0; s < TPCOUNT_SLOTS; s++) {
		struct bpf_program *prog = slot_program(t->skel, s);

		if (!prog)
			goto fail;
		bpf_program__set_autoload(prog, s < nr);
	}
	if (tpcount_bpf__load(t->skel))
		goto fail;
	t->map_fd = bpf_map__fd(t->skel->maps.tp_counts);
	/* Attach in order; a tracepoint without a raw tracepoint (syscalls:*)
	 * stays with perf, and the next name takes the same program. */
	for (int i = 0; i < nr && t->nr_slots < TPCOUNT_SLOTS; i++) {
		struct bpf_program *prog = slot_program(t->skel, t->nr_slots);
		struct bpf_link *link = bpf_program__attach_raw_tracepoint(prog, raw_name(names[i]));

		if (!link || libbpf_get_error(link))
			continue;
		t->progs[t->nr_slots] = prog;
		t->links[t->nr_slots++] = link;
		attached[i] = true;
	}
	if (!t->nr_slots || tp_counts_read(t) < 0) {
		for (int i = 0; i < nr; i++)
			attached[i] = false;
		goto fail;
	}
	libbpf_set_print(old);
	return t;
fail:
	tp_counts_close(t);
	libbpf_set_print(old);
	return NULL;
}

int tp_counts_read(struct tp_counts *t)
{
	__u32 zero = 0;

	/* The plain system call: libbpf's checked lookup counts the possible
	 * CPUs again on every call. */
	return bpf_map_lookup_elem(t->map_fd, &zero, t->values) ? -1 : 0;
}

uint64_t tp_counts_get(const struct tp_counts *t, int slot, int cpu)
{
	__u64 v;

	if (cpu < 0 || cpu >= t->nr_cpus || slot < 0 || slot >= t->nr_slots)
		return 0;
	memcpy(&v, t->values + (size_t)cpu * t->stride + sizeof(__u64) * (size_t)slot, sizeof(v));
	return v;
}

uint64_t tp_counts_missed(const struct tp_counts *t)
{
	uint64_t missed = 0;

	for (int s = 0; s < t->nr_slots; s++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(t->progs[s]), &info, &len))
			missed += info.recursion_misses;
	}
	return missed;
}

void tp_counts_close(struct tp_counts *t)
{
	if (!t)
		return;
	for (int s = 0; s < t->nr_slots; s++)
		bpf_link__destroy(t->links[s]);
	tpcount_bpf__destroy(t->skel);
	free(t->values);
	free(t);
}
