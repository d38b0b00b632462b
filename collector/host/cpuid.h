/* CPUID of the machine memscope looks at: the instruction on a live x86 host;
 * on a fixture tree (MEMSCOPE_SYSFS_ROOT) the file <tree>/cpuid, lines as
 * `cpuid -r` prints them ("   0x80000022 0x00: eax=0x00000007 ebx=0x00004106
 * ecx=0x00000000 edx=0x00000000"), since this CPU's CPUID says nothing of that
 * machine. Some counts (AMD's data fabric counters) only CPUID gives. */
#ifndef MEMSCOPE_CPUID_H
#define MEMSCOPE_CPUID_H

#include "host/sysfs.h"

/* The four registers of leaf/subleaf into regs; -1 when unknown (not x86, leaf
 * beyond the CPU's maximum, no such line in the fixture file). */
int cpuid_read(const struct sysfs_roots *roots, unsigned leaf, unsigned subleaf, unsigned regs[4]);

#endif
