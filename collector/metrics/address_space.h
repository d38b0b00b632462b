/* The address spaces of the sampled processes, rebuilt from what was
 * recorded: the /proc/PID/maps lines read when recording started and every
 * mapping made later (PERF_RECORD_MMAP2), names (COMM) and forks. It answers
 * two questions about a sample: which code is at its instruction address
 * (symbol, source line, file), and which data object holds its data address
 * (a global variable of a binary, the heap, a stack, an anonymous region, a
 * mapped file). Mappings carry the time they were made, so an address is
 * looked up as the process was at the time of the sample. */
#ifndef MEMSCOPE_ADDRESS_SPACE_H
#define MEMSCOPE_ADDRESS_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "events/sample_record.h"
#include "sampler/sample_item.h"
#include "metrics/symbolizer.h"
#include "util/strtab.h"

enum mapping_kind {
	MAPPING_FILE,         /* a file (an ELF image's data and code, or any mapped file) */
	MAPPING_HEAP,         /* [heap]: brk memory */
	MAPPING_STACK,        /* [stack]: the main thread's stack */
	MAPPING_ANON,         /* anonymous memory: mmap'd buffers, thread stacks, large mallocs */
	MAPPING_SPECIAL,      /* [vdso], [vvar], [vsyscall] and other kernel-made mappings */
};

struct mapping {
	uint64_t start, end, pgoff;
	uint64_t time_ns;     /* when it was made (0: before the recording started) */
	uint32_t prot;
	enum mapping_kind kind;
	const char *path;     /* interned: a file, "[heap]", "[stack]", "" for anonymous memory */
	uint8_t build_id[BUILD_ID_MAX];
	int build_id_size;
	/* The ELF image at this mapping and its load bias, found on first use. */
	bool image_tried;
	struct elf_image *image;
	const char *image_why;
	uint64_t bias;        /* runtime address - file address */
};

/* A heap allocation the allocator probes saw (record --alloc). */
struct heap_alloc {
	uint64_t addr, size, caller;
	uint64_t alloc_ns, free_ns;   /* free_ns UINT64_MAX: not freed */
	const char *name;             /* "heap: 64 KiB from f (t.c:12)", made on first use */
};

struct process_space {
	uint32_t pid;
	uint32_t ppid;        /* 0: not seen forking */
	uint64_t fork_ns;
	const char *comm;     /* interned; "" until known */
	struct mapping *maps;
	int nr_maps, cap_maps;
	int last_hit;         /* the mapping found last (addresses come in runs) */
	const char *maps_why; /* why /proc/PID/maps could not be read, or NULL */
	struct heap_alloc *allocs;    /* in the order they were made */
	int nr_allocs, cap_allocs;
};

struct address_space {
	struct process_space *procs;
	int nr_procs, cap_procs;
	struct symbolizer *sz;
	struct strtab *strings;   /* where every name returned lives */
};

int address_space_init(struct address_space *as, struct strtab *strings);
void address_space_free(struct address_space *as);

int address_space_map(struct address_space *as, const struct map_event *m);
int address_space_task(struct address_space *as, const struct task_event *t);
/* /proc/PID/maps of pid could not be read when recording started: why. */
int address_space_maps_unreadable(struct address_space *as, uint32_t pid, const char *why);
/* An allocation or a free at time t (record --alloc): data addresses inside a
 * live allocation are named by its size and allocating call. */
int address_space_alloc(struct address_space *as, uint64_t t, const struct alloc_event *ae);
const char *address_space_comm(struct address_space *as, uint32_t pid);

struct code_site {
	const char *sym;      /* "hot", or "[unknown]" */
	const char *srcline;  /* "t.c:12", or "[unknown]" */
	const char *dso;      /* file name of the binary or library, "[unknown]" */
	const char *build_id; /* hex, "" when none; stripped binaries are known by it */
	uint64_t offset;      /* from the symbol's start */
	bool resolved;        /* a symbol was found */
};

/* The code at ip in process pid at time t. return_address: ip is a caller's
 * return address (from a call chain), looked up at ip - 1 so the line is the
 * call's, not the next one's. */
void address_space_code(struct address_space *as, uint32_t pid, uint64_t t, uint64_t ip, bool return_address,
			struct code_site *out);

struct data_object {
	const char *name;     /* "table (app)", "[heap]", "[anon 0x7f..+64M rw-]", "/data/x.bin" ... */
	enum mapping_kind kind;
	bool known;           /* a mapping holds the address */
	uint64_t start, end;  /* the object's (symbol's) or mapping's range */
};

void address_space_data(struct address_space *as, uint32_t pid, uint64_t t, uint64_t addr, struct data_object *out);

#endif
