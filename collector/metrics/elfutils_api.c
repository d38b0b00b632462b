#include "metrics/elfutils_api.h"

#include <string.h>

#include "util/shared_lib.h"

struct elfutils_api dw;
Dwfl_Callbacks dw_offline_callbacks;

/* libelf's symbols come from libdw's own dependency on it. */
static struct shared_lib libdw = SHARED_LIB("libdw.so.1", "libdw1");

static int bind_elfutils(struct shared_lib *lib)
{
	void *address;

#define ELFUTILS_API_BIND(name)                                    \
	if (!(address = shared_lib_symbol(lib, #name)))            \
		return -1;                                         \
	memcpy(&dw.name, &address, sizeof(dw.name));
	ELFUTILS_API_FUNCTIONS(ELFUTILS_API_BIND)
#undef ELFUTILS_API_BIND
	dw.elf_version(EV_CURRENT);
	dw_offline_callbacks = (Dwfl_Callbacks){
		.find_elf = dw.dwfl_build_id_find_elf,
		.find_debuginfo = dw.dwfl_standard_find_debuginfo,
		.section_address = dw.dwfl_offline_section_address,
	};
	return 0;
}

int elfutils_api_load(struct ms_error *err)
{
	return shared_lib_open(&libdw, bind_elfutils, err);
}
