/* Is code from this file safe to run with our privileges? A file that
 * another user can change (the file, or any directory on its way, being
 * writable by them) lets that user run code as whoever runs memscope: as
 * root that is everything. Used for Lua scripts (and plugins) before they
 * are loaded. */
#ifndef MEMSCOPE_TRUSTED_PATH_H
#define MEMSCOPE_TRUSTED_PATH_H

#include "util/error.h"

/* When memscope runs as root: 0 when only root (or the owner of the memscope
 * program itself, who can change memscope anyway) can change `path` and
 * every directory leading to it; -1 with err naming who can write what, and
 * the fix. As another user: always 0 (their files are theirs to trust).
 * `what` names the file in the message: "Lua script". */
int trusted_path_check(const char *path, const char *what, struct ms_error *err);

#endif
