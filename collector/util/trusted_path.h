/* Opening a file whose contents memscope acts on (code it runs, verdicts it
 * believes) so that the decision is made on the object opened, never on a
 * name that could be resolved again to something else.
 *
 * A file that another user can change (the file, or any directory on its
 * way, being writable by them) lets that user run code as whoever runs
 * memscope: as root that is everything. So the path is walked from / one
 * component at a time with openat() on directory descriptors, never
 * following a link by name: each directory is judged as it is passed, a
 * symbolic link is read only once its directory passed (its target is then
 * walked the same way), and the file is judged on its own descriptor.
 *
 * When memscope runs as root, a directory or file passes when it belongs to
 * root (or to the owner of the memscope program, who can change memscope
 * anyway) and neither its group (other than root's) nor every user can write
 * it; a sticky directory such as /tmp passes whatever its mode, because
 * others can add entries there but not rename or remove root's. As another
 * user nothing is judged (their files are theirs to trust), but the walk is
 * the same. Used for plugins, Lua scripts and the verdicts of validate. */
#ifndef MEMSCOPE_TRUSTED_PATH_H
#define MEMSCOPE_TRUSTED_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "util/error.h"

/* What went wrong, for callers that word it their own way. */
enum trusted_open_failure {
	TRUSTED_CANNOT_OPEN = -1,   /* errno's cause: missing, no permission... */
	TRUSTED_REFUSED = -2,       /* another user could change it */
	TRUSTED_NOT_REGULAR = -3,   /* a directory, FIFO, device or socket */
};

/* Open the regular file `path` for reading (O_RDONLY|O_CLOEXEC; the open
 * never blocks and never opens a FIFO or device) as described above. The
 * path it was reached by, links resolved, goes into real (PATH_MAX bytes).
 * A descriptor, or one of enum trusted_open_failure with err naming `what`
 * ("plugin", "Lua script"), the path, who can change what, and the fix.
 * code: the file is code memscope runs (else data it believes). */
int trusted_open(const char *path, const char *what, bool code, char *real, size_t size, struct ms_error *err);

/* The directory `path`, opened (O_RDONLY|O_DIRECTORY|O_CLOEXEC) by the same
 * walk and judged the same way; with create, missing directories are made
 * (mode 0700) on the way. A descriptor, or a failure as trusted_open's. */
int trusted_dir_open(const char *path, bool create, const char *what, struct ms_error *err);

/* Open `path` for reading only when it is a regular file, whoever owns it:
 * it is looked at first without being opened (O_PATH), so a FIFO is never
 * waited on and a device's open never runs. A descriptor (st filled), or
 * TRUSTED_CANNOT_OPEN / TRUSTED_NOT_REGULAR with err saying which. */
int regular_file_open(const char *path, struct stat *st, struct ms_error *err);

#endif
