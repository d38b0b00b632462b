/* How c2c leaves lines in a coherence state before another core loads them.
 * Every state starts from lines that no cache holds (flushed to memory and
 * invalidated everywhere: clflush/clflushopt reach every cache of the
 * coherence domain on x86, dc civac cleans and invalidates to the point of
 * coherence on aarch64), then:
 *   M: the preparing core writes each line (it holds the only, dirty copy);
 *   E: the preparing core reads each line (the only, clean copy: MESI's E,
 *      Arm's UniqueClean);
 *   S: the preparing core reads each line, then a helper core reads it too
 *      (two clean copies: S; on Intel the last reader's copy is MESIF's F).
 * The plan is data so that a unit test can check the sequence per
 * architecture, and the executor (c2c.c) runs the same steps. */
#include <string.h>

#include "bench.h"

int c2c_state_parse(const char *text, enum c2c_state *out)
{
	if (!strcmp(text, "M") || !strcmp(text, "m"))
		*out = C2C_M;
	else if (!strcmp(text, "E") || !strcmp(text, "e"))
		*out = C2C_E;
	else if (!strcmp(text, "S") || !strcmp(text, "s"))
		*out = C2C_S;
	else
		return -1;
	return 0;
}

const char *c2c_state_name(enum c2c_state s)
{
	return s == C2C_M ? "M" : s == C2C_E ? "E" : "S";
}

const char *c2c_op_name(enum c2c_op op)
{
	static const char *names[] = { "flush", "fence", "write", "read" };

	return names[op];
}

int c2c_plan(enum c2c_state s, enum bench_arch arch, bool clflushopt, struct c2c_step *steps, int max)
{
	const char *flush = arch == ARCH_AARCH64 ? "dc civac" : arch == ARCH_X86_64 ? (clflushopt ? "clflushopt" : "clflush")
											  : "none";
	const char *fence = arch == ARCH_AARCH64 ? "dsb ish" : arch == ARCH_X86_64 ? "mfence" : "atomic_thread_fence";
	const char *load = arch == ARCH_AARCH64 ? "ldr" : "mov (load)";
	const char *store = arch == ARCH_AARCH64 ? "str" : "mov (store)";
	struct c2c_step plan[8];
	int n = 0;

	plan[n++] = (struct c2c_step){ C2C_PREPARER, C2C_FLUSH, flush };
	plan[n++] = (struct c2c_step){ C2C_PREPARER, C2C_FENCE, fence };
	switch (s) {
	case C2C_M:
		plan[n++] = (struct c2c_step){ C2C_PREPARER, C2C_WRITE, store };
		break;
	case C2C_E:
		plan[n++] = (struct c2c_step){ C2C_PREPARER, C2C_READ, load };
		break;
	case C2C_S:
		plan[n++] = (struct c2c_step){ C2C_PREPARER, C2C_READ, load };
		plan[n++] = (struct c2c_step){ C2C_PREPARER, C2C_FENCE, fence };
		plan[n++] = (struct c2c_step){ C2C_HELPER, C2C_READ, load };
		break;
	}
	/* The prepared lines are visible before the reader is told to start. */
	plan[n++] = (struct c2c_step){ s == C2C_S ? C2C_HELPER : C2C_PREPARER, C2C_FENCE, fence };
	if (n > max)
		return -1;
	memcpy(steps, plan, (size_t)n * sizeof(*plan));
	return n;
}
