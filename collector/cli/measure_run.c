#include "cli/measure_run.h"

#include <stdio.h>

#include "cli/exit_status.h"
#include "util/report.h"

void measure_run_hand(struct measure_run *m, struct sink *sink)
{
	/* Only live hands one; more than the session holds would be a bug. */
	if (m->nr_handed == SESSION_MAX_SINKS) {
		sink->ops->close(sink);
		return;
	}
	m->handed[m->nr_handed++] = sink;
}

int measure_run_add(struct measure_run *m, struct sink *sink, const struct sink *follows, struct ms_error *err)
{
	return session_add_sink(m->session, sink, follows, err);
}

static void close_handed(struct measure_run *m)
{
	for (int i = 0; i < m->nr_handed; i++)
		m->handed[i]->ops->close(m->handed[i]);
	m->nr_handed = 0;
}

/* The command's sinks are there: then those handed before, then the registry's. */
static int add_the_rest(struct measure_run *m, struct ms_error *err)
{
	int failed = 0;

	for (int i = 0; i < m->nr_handed; i++)
		failed |= session_add_sink(m->session, m->handed[i], NULL, failed ? NULL : err) < 0;
	m->nr_handed = 0;
	if (failed)
		return -1;
	for (int k = 0; m->chosen && sink_registry[k]; k++) {
		struct sink *sink = &m->registry_sinks[m->nr_registry];

		if (!m->chosen->arg[k])
			continue;
		if (sink_registry[k]->create(sink, m->chosen->arg[k], err) < 0)
			return -1;
		m->registry_kinds[m->nr_registry++] = sink_registry[k];
		if (session_add_sink(m->session, sink, NULL, err) < 0)
			return -1;
	}
	return 0;
}

static bool registry_sink_failed(const struct measure_run *m)
{
	for (int i = 0; i < m->nr_registry; i++)
		if (m->registry_kinds[i]->failed && m->registry_kinds[i]->failed(&m->registry_sinks[i]))
			return true;
	return false;
}

int measure_run(struct measure_run *m)
{
	struct session *s = m->session;
	struct ms_error err = { "" };
	int status;

	m->nr_registry = 0;
	m->ran = false;
	if ((m->open ? m->open(m, &err) : session_open(s, m->opt, &err)) < 0) {
		status = cli_fail(&err);
		close_handed(m);
		session_close(s);
		return m->open_failure_status ? m->open_failure_status : status;
	}
	status = m->opened ? m->opened(m, &err) : 0;
	if (status == 0 && add_the_rest(m, &err) < 0)
		status = -1;
	close_handed(m);   /* a step that failed before they were added */
	if (status) {
		if (status < 0)
			status = cli_fail(&err);
		session_close(s);
		return status;
	}
	if (session_run(s, m->opt, &err) < 0) {
		status = m->exec_status && session_exec_failed(s) ? session_exit_code(s) : 1;
		if (m->close_before_error)
			session_close(s);
		ms_report(&err);
		session_close(s);
		return status;
	}
	m->ran = true;
	status = m->ended ? m->ended(m) : session_exit_code(s);
	if (registry_sink_failed(m) && !status)
		status = 1;
	session_close(s);
	return status;
}
