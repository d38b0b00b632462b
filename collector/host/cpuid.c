/* CPUID from the instruction, or from a fixture tree's cpuid file. */
#include "host/cpuid.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static int cpuid_from_file(const struct sysfs_roots *roots, unsigned leaf, unsigned subleaf, unsigned regs[4])
{
	char path[4200], line[256];
	const char *slash = strrchr(roots->sys, '/');
	int found = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%.*s%scpuid", slash ? (int)(slash - roots->sys) : 0, roots->sys,
		 slash ? "/" : "");
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), fp)) {
		unsigned l, s, r[4];

		if (sscanf(line, " %x %x: eax=%x ebx=%x ecx=%x edx=%x", &l, &s, &r[0], &r[1], &r[2], &r[3]) == 6 &&
		    l == leaf && s == subleaf) {
			memcpy(regs, r, sizeof(r));
			found = 0;
		}
	}
	fclose(fp);
	return found;
}

int cpuid_read(const struct sysfs_roots *roots, unsigned leaf, unsigned subleaf, unsigned regs[4])
{
	if (roots->is_fixture)
		return cpuid_from_file(roots, leaf, subleaf, regs);
#if defined(__x86_64__) || defined(__i386__)
	/* clang's cpuid.h returns int, gcc's unsigned. */
	if ((unsigned)__get_cpuid_max(leaf & 0x80000000u, NULL) < leaf)
		return -1;
	__cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
	return 0;
#else
	(void)leaf, (void)subleaf, (void)regs;
	return -1;
#endif
}
