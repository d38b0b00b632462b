/* Creating a recording file so that nobody else's file is ever written, and
 * no running recording is ever moved away or lost.
 *
 * memscope record often runs as root in directories other users can write
 * (/tmp, a shared work directory). The file is therefore never opened by its
 * name: it is created under a random temporary name in the target directory
 * with O_CREAT|O_EXCL|O_NOFOLLOW (so neither an existing file nor a link is
 * ever opened), locked, and then moved to its name with RENAME_NOREPLACE
 * (or link()+unlink() where a file system lacks it). Anything at the name
 * that is not a regular file (a symbolic link, a device, a FIFO, a
 * directory) is refused, never followed or replaced.
 *
 * An existing recording is kept as NAME.old, as perf keeps perf.data.old.
 * Each writer holds an exclusive flock() on its file for as long as it
 * writes: when the existing NAME (or NAME.old) is still being written by
 * another memscope, this one refuses and says so, instead of moving that
 * file away (two records in one directory used to rename each other's
 * files, and a third lost the first one's data). The existing file is
 * itself locked while it is moved, so two memscopes moving it meet on its
 * lock; the directory is never locked (any user who can read it could hold
 * that lock and stop root's record). */
#ifndef MEMSCOPE_RECORDING_CREATE_H
#define MEMSCOPE_RECORDING_CREATE_H

#include "util/error.h"

/* Create `path` (mode 0600) as described above and return a writable,
 * locked descriptor, or -1 with err naming the file, the cause and the fix. */
int recording_file_open(const char *path, struct ms_error *err);
/* The same for the plain name base beneath the open directory dirfd (never
 * re-resolved by name); path is how errors show it. */
int recording_file_open_at(int dirfd, const char *base, const char *path, struct ms_error *err);

#endif
