#include "sinks/http/mhd_api.h"

#include <string.h>

#include "util/shared_lib.h"

struct mhd_api mhd;

/* The soname of every libmicrohttpd release since 0.9.x (Debian 12: libmicrohttpd12). */
static struct shared_lib libmicrohttpd = SHARED_LIB("libmicrohttpd.so.12", "libmicrohttpd12");

static int bind_mhd(struct shared_lib *lib)
{
	void *address;

#define MHD_API_BIND(name)                                         \
	if (!(address = shared_lib_symbol(lib, #name)))            \
		return -1;                                         \
	memcpy(&mhd.name, &address, sizeof(mhd.name));
	MHD_API_FUNCTIONS(MHD_API_BIND)
#undef MHD_API_BIND
	return 0;
}

int mhd_api_load(struct ms_error *err)
{
	return shared_lib_open(&libmicrohttpd, bind_mhd, err);
}
