#include "host/privileges.h"

#include <string.h>
#include <sys/capability.h>

/* Older libcap headers predate these (Linux include/uapi/linux/capability.h). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool effective(cap_t caps, cap_value_t cap)
{
	cap_flag_value_t value = CAP_CLEAR;

	return cap_get_flag(caps, cap, CAP_EFFECTIVE, &value) == 0 && value == CAP_SET;
}

void privileges_read(struct privileges *p)
{
	cap_t caps = cap_get_proc();

	memset(p, 0, sizeof(*p));
	if (!caps)
		return;
	p->known = true;
	p->sys_admin = effective(caps, CAP_SYS_ADMIN);
	p->perfmon = effective(caps, CAP_PERFMON);
	p->bpf = effective(caps, CAP_BPF);
	cap_free(caps);
}

bool privileges_allow_bpf(const struct privileges *p)
{
	return p->sys_admin || (p->bpf && p->perfmon);
}
