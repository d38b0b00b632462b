/* Where memscope's data (catalog/, lua/) lives. A program of the build tree
 * reads the source tree's, so an edit is seen without installing; an
 * installed program reads its prefix's share/memscope, found from where the
 * program is (an install moved elsewhere, or unpacked under a staging
 * directory, still finds its own), never the source tree it was built from. */
#ifndef MEMSCOPE_DATA_DIR_H
#define MEMSCOPE_DATA_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* The directory sub ("catalog", "lua") of memscope's data: 0, or -1 when
 * the path does not fit (buf then holds the configured one). */
int data_dir(const char *sub, char *buf, size_t size);
/* Whether this program runs from the build tree. */
bool data_dir_in_build_tree(void);

#endif
