#include "sinks/http/prom_processes.h"

#include <stdlib.h>

static int busiest_first(const void *a, const void *b)
{
	const struct prom_activity *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct prom_activity *find(const struct prom_activity *acts, int nr, int pid)
{
	for (int i = 0; i < nr; i++)
		if (acts[i].pid == pid)
			return &acts[i];
	return NULL;
}

bool prom_processes_has(const struct prom_processes *p, int pid)
{
	for (int i = 0; i < PROM_PROCESSES; i++)
		if (p->place[i].pid == pid && pid)
			return true;
	return false;
}

void prom_processes_update(struct prom_processes *p, struct prom_activity *acts, int nr, uint64_t now_ns,
			   uint64_t min_age_ns)
{
	int next = 0;

	for (int i = 0; i < PROM_PROCESSES; i++) {
		const struct prom_activity *a;

		if (!p->place[i].pid)
			continue;
		a = find(acts, nr, p->place[i].pid);
		if (a && a->busy > 0)
			p->place[i].active_ns = now_ns;
		if (!a || now_ns - p->place[i].active_ns > PROM_PROCESS_IDLE_NS)
			p->place[i].pid = 0;
	}
	qsort(acts, (size_t)nr, sizeof(*acts), busiest_first);
	for (int i = 0; i < PROM_PROCESSES; i++) {
		if (p->place[i].pid)
			continue;
		while (next < nr && (acts[next].busy <= 0 || now_ns - acts[next].since_ns < min_age_ns ||
				     prom_processes_has(p, acts[next].pid)))
			next++;
		if (next == nr)
			break;
		p->place[i].pid = acts[next].pid;
		p->place[i].active_ns = now_ns;
		next++;
	}
}
