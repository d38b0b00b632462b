/* Symbols and source lines of ELF files (executables, shared libraries, PIE),
 * read with elfutils libdwfl: the symbol table (.symtab, or .dynsym when the
 * file is stripped), DWARF line tables, and separate debug files found by
 * build-id. Files are opened once and shared by every process that maps
 * them; addresses here are the file's own (link-time) addresses. */
#ifndef MEMSCOPE_SYMBOLIZER_H
#define MEMSCOPE_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#define BUILD_ID_MAX 20

struct symbolizer;
struct elf_image;

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *sz);
/* Why no file's symbols can be read (elfutils could not be loaded: which
 * library, why, what to install), or NULL. */
const char *symbolizer_unavailable(const struct symbolizer *sz);

/* The ELF file at path (opened once). When build_id_size > 0 the file must
 * have that build-id: a file rebuilt since it was recorded gives NULL. NULL
 * with *why set (a static text) when it cannot be used. */
struct elf_image *symbolizer_image(struct symbolizer *sz, const char *path, const uint8_t *build_id,
				   int build_id_size, const char **why);

/* The file's build-id (size 0 when it has none). */
const uint8_t *elf_image_build_id(const struct elf_image *img, int *size);
const char *elf_image_path(const struct elf_image *img);
/* The address a file offset is loaded at (through its PT_LOAD segment). */
bool elf_image_vaddr_of_offset(const struct elf_image *img, uint64_t offset, uint64_t *vaddr);
/* [lo, hi): the addresses its PT_LOAD segments span (with .bss). */
void elf_image_span(const struct elf_image *img, uint64_t *lo, uint64_t *hi);

struct symbol_info {
	const char *name;         /* NULL when no symbol covers the address */
	uint64_t offset;          /* from the symbol's start */
	const char *file;         /* source file (full path as compiled), or NULL */
	int line;                 /* 0 when unknown */
};

/* The function (code) or object (data) at a file address. Strings live as
 * long as the symbolizer. */
void elf_image_code(struct elf_image *img, uint64_t vaddr, struct symbol_info *out);
void elf_image_data(struct elf_image *img, uint64_t vaddr, struct symbol_info *out);

/* The build-id of the ELF file at path, read from its notes. Returns its
 * size, or 0 when the file has none or is not ELF. */
int elf_file_build_id(const char *path, uint8_t out[BUILD_ID_MAX]);

/* Hex text of a build-id into buf (2 * size + 1 bytes). */
void build_id_hex(const uint8_t *id, int size, char *buf);

#endif
