#include "metrics/symbolizer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics/elfutils_api.h"
#include "util/trusted_path.h"

struct load_segment {
	uint64_t offset, vaddr, filesz, memsz;
};

/* One sized symbol of the image, for a binary search (libdwfl's own lookup
 * walks the whole table for every address). */
struct sym_entry {
	uint64_t addr, size;
	const char *name;         /* libdwfl's string, valid while the Dwfl lives */
	bool code;                /* STT_FUNC / STT_GNU_IFUNC */
	bool data;                /* STT_OBJECT / STT_TLS / STT_COMMON */
	bool global;
};

struct elf_image {
	char *path;
	uint8_t expected_id[BUILD_ID_MAX];
	int expected_id_size;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint8_t build_id[BUILD_ID_MAX];
	int build_id_size;
	struct load_segment *segments;
	int nr_segments;
	const char *why;          /* non-NULL: this file could not be used */
	struct sym_entry *syms;   /* sorted by address, built on first lookup */
	int nr_syms;
	bool syms_built;
};

struct symbolizer {
	struct elf_image **images;
	int nr, cap;
	struct ms_error unloadable;    /* why elfutils could not be opened: every image's why */
};

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

const char *symbolizer_unavailable(const struct symbolizer *sz)
{
	return sz && sz->unloadable.text[0] ? sz->unloadable.text : NULL;
}

static void image_free(struct elf_image *img)
{
	free(img->syms);
	if (img->dwfl)
		dw.dwfl_end(img->dwfl);
	free(img->segments);
	free(img->path);
	free(img);
}

void symbolizer_free(struct symbolizer *sz)
{
	if (!sz)
		return;
	for (int i = 0; i < sz->nr; i++)
		image_free(sz->images[i]);
	free(sz->images);
	free(sz);
}

static int read_segments(struct elf_image *img, Elf *elf)
{
	size_t nr;

	if (dw.elf_getphdrnum(elf, &nr) < 0)
		return -1;
	img->segments = calloc(nr ? nr : 1, sizeof(*img->segments));
	if (!img->segments)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		GElf_Phdr ph;

		if (!dw.gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		img->segments[img->nr_segments++] =
			(struct load_segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz };
	}
	return 0;
}

/* The path comes from a recording, which may be anyone's: only a regular
 * file is opened, looked at first without opening it, so a FIFO named there
 * never hangs report and no device is opened. Any owner's file is read (a
 * root-made recording of a user's program needs the user's binary); only
 * its symbols are taken from it. */
static void image_open(struct elf_image *img)
{
	struct ms_error err;
	struct stat st;
	int fd = regular_file_open(img->path, &st, &err);
	Elf *elf;
	const void *id;
	ssize_t id_size;

	if (fd == TRUSTED_NOT_REGULAR) {
		img->why = "not a regular file (a directory, FIFO, device or socket is never opened)";
		return;
	}
	if (fd < 0) {
		img->why = "the file is missing or unreadable";
		return;
	}
	elf = dw.elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || dw.elf_kind(elf) != ELF_K_ELF) {
		img->why = "not an ELF file";
		goto out;
	}
	id_size = dw.dwelf_elf_gnu_build_id(elf, &id);
	if (id_size > 0 && id_size <= BUILD_ID_MAX) {
		memcpy(img->build_id, id, (size_t)id_size);
		img->build_id_size = (int)id_size;
	}
	if (img->expected_id_size &&
	    (img->expected_id_size != img->build_id_size ||
	     memcmp(img->expected_id, img->build_id, (size_t)img->build_id_size))) {
		img->why = "the file's build-id differs from the recorded one (rebuilt since)";
		goto out;
	}
	if (read_segments(img, elf) < 0 || img->nr_segments == 0) {
		img->why = "the ELF file has no loadable segments";
		goto out;
	}
	img->dwfl = dw.dwfl_begin(&dw_offline_callbacks);
	if (img->dwfl) {
		dw.dwfl_report_begin(img->dwfl);
		/* The file checked above, not its name again (libdwfl owns the
		 * copy), at its link-time addresses: ET_DYN at bias 0, ET_EXEC
		 * where linked. */
		int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);

		if (copy >= 0)
			img->mod = dw.dwfl_report_elf(img->dwfl, img->path, img->path, copy, 0, true);
		if (copy >= 0 && !img->mod)
			close(copy);
		dw.dwfl_report_end(img->dwfl, NULL, NULL);
	}
	if (!img->mod)
		img->why = "libdwfl cannot read the file";
out:
	if (elf)
		dw.elf_end(elf);
	close(fd);
}

struct elf_image *symbolizer_image(struct symbolizer *sz, const char *path, const uint8_t *build_id,
				   int build_id_size, const char **why)
{
	struct elf_image *img;

	if (build_id_size > BUILD_ID_MAX)
		build_id_size = 0;
	for (int i = 0; i < sz->nr; i++) {
		img = sz->images[i];
		if (strcmp(img->path, path) != 0 || img->expected_id_size != build_id_size ||
		    memcmp(img->expected_id, build_id, (size_t)build_id_size))
			continue;
		*why = img->why;
		return img->why ? NULL : img;
	}
	if (sz->nr == sz->cap) {
		int cap = sz->cap ? sz->cap * 2 : 16;
		struct elf_image **grown = realloc(sz->images, sizeof(*grown) * (size_t)cap);

		if (!grown) {
			*why = "out of memory";
			return NULL;
		}
		sz->images = grown;
		sz->cap = cap;
	}
	img = calloc(1, sizeof(*img));
	if (!img || !(img->path = strdup(path))) {
		free(img);
		*why = "out of memory";
		return NULL;
	}
	memcpy(img->expected_id, build_id, (size_t)build_id_size);
	img->expected_id_size = build_id_size;
	if (elfutils_api_load(&sz->unloadable) < 0)
		img->why = sz->unloadable.text;
	else
		image_open(img);
	sz->images[sz->nr++] = img;
	*why = img->why;
	return img->why ? NULL : img;
}

const uint8_t *elf_image_build_id(const struct elf_image *img, int *size)
{
	*size = img->build_id_size;
	return img->build_id;
}

const char *elf_image_path(const struct elf_image *img)
{
	return img->path;
}

bool elf_image_vaddr_of_offset(const struct elf_image *img, uint64_t offset, uint64_t *vaddr)
{
	for (int i = 0; i < img->nr_segments; i++) {
		const struct load_segment *s = &img->segments[i];

		/* Mappings start on a page boundary, at or before p_offset; one
		 * of the segment's last page reaches past p_filesz. */
		if (offset >= (s->offset & ~(uint64_t)4095) &&
		    offset < s->offset + (s->memsz > s->filesz ? s->memsz : s->filesz)) {
			*vaddr = offset - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

void elf_image_span(const struct elf_image *img, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (int i = 0; i < img->nr_segments; i++) {
		const struct load_segment *s = &img->segments[i];

		if (s->vaddr < *lo)
			*lo = s->vaddr;
		if (s->vaddr + s->memsz > *hi)
			*hi = s->vaddr + s->memsz;
	}
}

static int sym_order(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* At one address, the global name first (aliases: the public one). */
	return (int)y->global - (int)x->global;
}

static void build_symbols(struct elf_image *img)
{
	int n = dw.dwfl_module_getsymtab(img->mod);

	img->syms_built = true;
	if (n <= 0 || !(img->syms = calloc((size_t)n, sizeof(*img->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dw.dwfl_module_getsym_info(img->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		/* A symbol without a size matches whatever follows it: only sized
		 * ones say that an address is theirs. */
		if (!name || !name[0] || !sym.st_size || shndx == SHN_UNDEF)
			continue;
		img->syms[img->nr_syms++] = (struct sym_entry){
			addr, sym.st_size, name, type == STT_FUNC || type == STT_GNU_IFUNC,
			type == STT_OBJECT || type == STT_TLS || type == STT_COMMON,
			GELF_ST_BIND(sym.st_info) != STB_LOCAL,
		};
	}
	qsort(img->syms, (size_t)img->nr_syms, sizeof(*img->syms), sym_order);
}

/* The symbol of the wanted kind whose [addr, addr + size) holds vaddr. */
static const struct sym_entry *find_symbol(struct elf_image *img, uint64_t vaddr, bool code)
{
	int lo = 0, hi, last = -1;

	if (!img->syms_built)
		build_symbols(img);
	hi = img->nr_syms - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (img->syms[mid].addr <= vaddr) {
			last = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	/* Symbols may nest (a function's static data inside no other); look
	 * back a little for one that holds the address. */
	for (int i = last; i >= 0 && i > last - 32; i--) {
		const struct sym_entry *e = &img->syms[i];

		if (vaddr < e->addr + e->size && (code ? e->code || !e->data : e->data || !e->code))
			return e;
	}
	return NULL;
}

static void lookup(struct elf_image *img, uint64_t vaddr, bool code, struct symbol_info *out)
{
	const struct sym_entry *e = find_symbol(img, vaddr, code);

	memset(out, 0, sizeof(*out));
	if (e) {
		out->name = e->name;
		out->offset = vaddr - e->addr;
	}
	if (code) {
		Dwfl_Line *line = dw.dwfl_module_getsrc(img->mod, vaddr);
		int lineno = 0;
		const char *file = line ? dw.dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;

		if (file && lineno > 0) {
			out->file = file;
			out->line = lineno;
		}
	}
}

void elf_image_code(struct elf_image *img, uint64_t vaddr, struct symbol_info *out)
{
	lookup(img, vaddr, true, out);
}

void elf_image_data(struct elf_image *img, uint64_t vaddr, struct symbol_info *out)
{
	lookup(img, vaddr, false, out);
}

int elf_file_build_id(const char *path, uint8_t out[BUILD_ID_MAX])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), size = 0;
	struct ms_error unloadable;
	Elf *elf;
	const void *id;
	ssize_t n;

	if (fd < 0)
		return 0;
	/* Without elfutils the file has no build-id we can read: reports say why
	 * its symbols are missing (symbolizer_image). */
	if (elfutils_api_load(&unloadable) < 0) {
		close(fd);
		return 0;
	}
	elf = dw.elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && dw.elf_kind(elf) == ELF_K_ELF && (n = dw.dwelf_elf_gnu_build_id(elf, &id)) > 0 && n <= BUILD_ID_MAX) {
		memcpy(out, id, (size_t)n);
		size = (int)n;
	}
	if (elf)
		dw.elf_end(elf);
	close(fd);
	return size;
}

void build_id_hex(const uint8_t *id, int size, char *buf)
{
	for (int i = 0; i < size; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * (size > 0 ? size : 0)] = '\0';
}
