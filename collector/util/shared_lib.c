#include "util/shared_lib.h"

#include <dlfcn.h>
#include <stdio.h>

void *shared_lib_symbol(struct shared_lib *lib, const char *name)
{
	void *address;

	dlerror();
	address = dlsym(lib->handle, name);
	if (!address)
		snprintf(lib->error, sizeof(lib->error), "%s has no %s (%s): it is older than memscope was built "
			 "for; upgrade the %s package", lib->soname, name, dlerror(), lib->package);
	return address;
}

int shared_lib_open(struct shared_lib *lib, int (*bind)(struct shared_lib *lib), struct ms_error *err)
{
	pthread_mutex_lock(&lib->lock);
	if (!lib->tried) {
		lib->tried = true;
		lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
		if (!lib->handle) {
			snprintf(lib->error, sizeof(lib->error), "cannot load %s: %s; install the %s package",
				 lib->soname, dlerror(), lib->package);
		} else if (bind(lib) < 0) {
			dlclose(lib->handle);
			lib->handle = NULL;
		}
	}
	pthread_mutex_unlock(&lib->lock);
	if (!lib->handle) {
		ms_error_set(err, "%s", lib->error);
		return -1;
	}
	return 0;
}
