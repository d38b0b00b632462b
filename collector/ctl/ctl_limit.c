#include "ctl/ctl_limit.h"

#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool ctl_limit_take(struct ctl_limit *l)
{
	uint64_t now = now_ns();

	if (!l->last_ns)
		l->tokens = CTL_BURST;
	else
		l->tokens += (double)(now - l->last_ns) * CTL_RATE / 1e9;
	if (l->tokens > CTL_BURST)
		l->tokens = CTL_BURST;
	l->last_ns = now;
	if (l->tokens < 1) {
		l->dropped++;
		return false;
	}
	l->tokens -= 1;
	return true;
}

bool ctl_limit_report_due(struct ctl_limit *l)
{
	uint64_t now = now_ns();

	if (l->dropped == l->reported || (l->reported_ns && now - l->reported_ns < 1000000000ull))
		return false;
	l->reported = l->dropped;
	l->reported_ns = now;
	return true;
}
