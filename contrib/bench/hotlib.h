/* libhotlib: a shared library whose one function writes every page of a buffer
 * (hotarray --lib), so samples must resolve inside a shared library. */
#ifndef HOTLIB_H
#define HOTLIB_H

#include <stddef.h>

void hotlib_fill(char *p, size_t bytes);

#endif
