#include "sources/tracepoint_counts.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
	int nr_cpus;               /* possible CPUs: the map's entries */
	const __u64 *counters;     /* the map, mapped: nr_cpus x TPCOUNT_SLOTS, written by the programs */
	size_t mapped;             /* its length */
	__u64 *values;             /* the last read: nr_cpus x TPCOUNT_SLOTS */
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
	t->values = calloc((size_t)cpus * TPCOUNT_SLOTS, sizeof(__u64));
	t->skel = tpcount_bpf__open();
	if (!t->values || !t->skel || bpf_map__set_max_entries(t->skel->maps.tp_counts, (__u32)cpus))
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
	{
		long page = sysconf(_SC_PAGESIZE);
		size_t bytes = (size_t)cpus * TPCOUNT_SLOTS * sizeof(__u64);
		void *m;

		t->mapped = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
		m = mmap(NULL, t->mapped, PROT_READ, MAP_SHARED, bpf_map__fd(t->skel->maps.tp_counts), 0);
		if (m == MAP_FAILED)
			goto fail;
		t->counters = m;
	}
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

/* From memory, no system call: each counter is one aligned 64-bit load (the
 * programs on other CPUs keep adding while it is read, as they would under
 * a map lookup). */
int tp_counts_read(struct tp_counts *t)
{
	for (int cpu = 0; cpu < t->nr_cpus; cpu++)
		for (int s = 0; s < t->nr_slots; s++) {
			size_t i = (size_t)cpu * TPCOUNT_SLOTS + (size_t)s;

			t->values[i] = __atomic_load_n(&t->counters[i], __ATOMIC_RELAXED);
		}
	return 0;
}

uint64_t tp_counts_get(const struct tp_counts *t, int slot, int cpu)
{
	if (cpu < 0 || cpu >= t->nr_cpus || slot < 0 || slot >= t->nr_slots)
		return 0;
	return t->values[(size_t)cpu * TPCOUNT_SLOTS + (size_t)slot];
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
	if (t->counters)
		munmap((void *)t->counters, t->mapped);
	tpcount_bpf__destroy(t->skel);
	free(t->values);
	free(t);
}
