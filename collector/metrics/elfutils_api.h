/* elfutils (libdw, and through it libelf), opened the first time an ELF file
 * is read for its symbols or build-id (util/shared_lib.h): commands that never
 * read one start without it. Call through the table: dw.dwfl_begin(...). */
#ifndef MEMSCOPE_ELFUTILS_API_H
#define MEMSCOPE_ELFUTILS_API_H

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "util/error.h"

#define ELFUTILS_API_FUNCTIONS(X)                                                                  \
	X(dwelf_elf_gnu_build_id) X(dwfl_begin) X(dwfl_build_id_find_elf) X(dwfl_end) X(dwfl_lineinfo) \
	X(dwfl_module_getsrc) X(dwfl_module_getsym_info) X(dwfl_module_getsymtab)                   \
	X(dwfl_offline_section_address) X(dwfl_report_begin) X(dwfl_report_elf) X(dwfl_report_end)  \
	X(dwfl_standard_find_debuginfo) X(elf_begin) X(elf_end) X(elf_getphdrnum) X(elf_kind)       \
	X(elf_version) X(gelf_getphdr)

struct elfutils_api {
#define ELFUTILS_API_POINTER(name) __typeof__(name) *name;
	ELFUTILS_API_FUNCTIONS(ELFUTILS_API_POINTER)
#undef ELFUTILS_API_POINTER
};

extern struct elfutils_api dw;
/* A Dwfl's callbacks for files read at their link-time addresses (libdwfl
 * keeps the pointer: they live as long as the program). Set by the load. */
extern Dwfl_Callbacks dw_offline_callbacks;

/* Open libdw once (any thread) and set libelf's version; -1 with err saying
 * what to install. */
int elfutils_api_load(struct ms_error *err);

#endif
