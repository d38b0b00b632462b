/* The c2c state preparation sequence, per architecture and state, as
 * docs/bench.md describes it: every state starts from lines flushed from
 * all caches (clflush/clflushopt on x86-64, dc civac on aarch64) and a
 * fence; M then writes, E reads, S reads on the owner and on a helper; a
 * last fence before the reader is told to go. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static int failures;

static void expect_plan(enum c2c_state st, enum bench_arch arch, bool opt, const char *want)
{
	struct c2c_step s[8];
	char got[512] = "";
	int n = c2c_plan(st, arch, opt, s, 8);

	for (int i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s:%s:%s", i ? " | " : "",
			 s[i].who == C2C_PREPARER ? "owner" : "helper", c2c_op_name(s[i].op), s[i].insn);
	if (strcmp(got, want)) {
		printf("FAIL %s on %s%s:\n  got  %s\n  want %s\n", c2c_state_name(st), arch_name(arch),
		       opt ? " (clflushopt)" : "", got, want);
		failures++;
	} else {
		printf("ok %s on %s%s\n", c2c_state_name(st), arch_name(arch), opt ? " (clflushopt)" : "");
	}
}

/* arch_name lives in arch.c, which this test does not link (it would bring
 * the timer and the inline assembly of the host only). */
const char *arch_name(enum bench_arch a)
{
	return a == ARCH_X86_64 ? "x86_64" : a == ARCH_AARCH64 ? "aarch64" : "other";
}

int main(void)
{
	struct c2c_step s[8];
	enum c2c_state st;

	expect_plan(C2C_M, ARCH_X86_64, false,
		    "owner:flush:clflush | owner:fence:mfence | owner:write:mov (store) | owner:fence:mfence");
	expect_plan(C2C_M, ARCH_X86_64, true,
		    "owner:flush:clflushopt | owner:fence:mfence | owner:write:mov (store) | owner:fence:mfence");
	expect_plan(C2C_E, ARCH_X86_64, true,
		    "owner:flush:clflushopt | owner:fence:mfence | owner:read:mov (load) | owner:fence:mfence");
	expect_plan(C2C_S, ARCH_X86_64, false,
		    "owner:flush:clflush | owner:fence:mfence | owner:read:mov (load) | owner:fence:mfence | "
		    "helper:read:mov (load) | helper:fence:mfence");
	expect_plan(C2C_M, ARCH_AARCH64, false,
		    "owner:flush:dc civac | owner:fence:dsb ish | owner:write:str | owner:fence:dsb ish");
	expect_plan(C2C_E, ARCH_AARCH64, false,
		    "owner:flush:dc civac | owner:fence:dsb ish | owner:read:ldr | owner:fence:dsb ish");
	expect_plan(C2C_S, ARCH_AARCH64, false,
		    "owner:flush:dc civac | owner:fence:dsb ish | owner:read:ldr | owner:fence:dsb ish | "
		    "helper:read:ldr | helper:fence:dsb ish");
	/* clflushopt means nothing on aarch64. */
	expect_plan(C2C_M, ARCH_AARCH64, true,
		    "owner:flush:dc civac | owner:fence:dsb ish | owner:write:str | owner:fence:dsb ish");
	if (c2c_plan(C2C_S, ARCH_X86_64, false, s, 3) != -1) {
		printf("FAIL a plan longer than the room given is refused\n");
		failures++;
	}
	if (c2c_state_parse("X", &st) == 0 || c2c_state_parse("e", &st) != 0 || st != C2C_E) {
		printf("FAIL state names\n");
		failures++;
	}
	printf("%s\n", failures ? "FAILED" : "all plans as documented");
	return failures != 0;
}
