/* libmicrohttpd, opened by `memscope live` when its server starts
 * (util/shared_lib.h): every other command starts without it and GnuTLS.
 * Call through the table: mhd.MHD_queue_response(...). */
#ifndef MEMSCOPE_MHD_API_H
#define MEMSCOPE_MHD_API_H

#include <microhttpd.h>

#include "util/error.h"

#define MHD_API_FUNCTIONS(X)                                                                   \
	X(MHD_add_response_header) X(MHD_create_response_from_buffer)                          \
	X(MHD_create_response_from_callback) X(MHD_create_response_from_fd)                    \
	X(MHD_destroy_response) X(MHD_get_connection_info) X(MHD_lookup_connection_value)      \
	X(MHD_queue_response) X(MHD_quiesce_daemon) X(MHD_resume_connection) X(MHD_start_daemon) \
	X(MHD_stop_daemon) X(MHD_suspend_connection)

struct mhd_api {
#define MHD_API_POINTER(name) __typeof__(name) *name;
	MHD_API_FUNCTIONS(MHD_API_POINTER)
#undef MHD_API_POINTER
};

extern struct mhd_api mhd;

/* Open libmicrohttpd once (any thread); -1 with err saying what to install. */
int mhd_api_load(struct ms_error *err);

#endif
