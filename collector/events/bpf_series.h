/* The names of the series memscope's eBPF probes provide ("proc.faults", ...):
 * part of the event vocabulary, so the catalog, the event lists and the
 * session can know them without the eBPF source itself. */
#ifndef MEMSCOPE_BPF_SERIES_H
#define MEMSCOPE_BPF_SERIES_H

#include <stdbool.h>

/* True for the series names the eBPF source provides ("proc.faults", ...). */
bool bpf_series_name_known(const char *name);
/* All of them, NULL-terminated (for `list` and suggestions). */
const char *const *bpf_series_names(void);

#endif
