/* Libraries only some commands need (the web server, the reader of ELF
 * symbols), opened by those commands when they first need them rather than by
 * the dynamic loader at every start: linked, each costs every command its
 * share of start-up (libmicrohttpd with GnuTLS 1.3 ms, libdw 0.5 ms, of the
 * 7 ms a report of a short recording takes). */
#ifndef MEMSCOPE_SHARED_LIB_H
#define MEMSCOPE_SHARED_LIB_H

#include <pthread.h>
#include <stdbool.h>

#include "util/error.h"

struct shared_lib {
	const char *soname;        /* "libmicrohttpd.so.12": the ABI the headers were built against */
	const char *package;       /* what to install when it is missing */
	pthread_mutex_t lock;
	bool tried;
	void *handle;              /* NULL: missing, or a symbol missing in it */
	char error[512];
};

#define SHARED_LIB(soname, package) { (soname), (package), PTHREAD_MUTEX_INITIALIZER, false, NULL, "" }

/* Open the library the first time (any thread; later calls give the first
 * call's result) and let bind() look up its symbols; -1 with err naming the
 * library, the loader's reason and the package to install. */
int shared_lib_open(struct shared_lib *lib, int (*bind)(struct shared_lib *lib), struct ms_error *err);
/* For bind(): the address of name, or NULL with the library's error set. */
void *shared_lib_symbol(struct shared_lib *lib, const char *name);

#endif
