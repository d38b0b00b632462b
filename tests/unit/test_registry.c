/* The source registry routes by what each kind claims and declares, so the
 * session and the commands never name a source: which kind serves a name,
 * which reads recordings, which gives per-task series, and why the source
 * of a name did not start. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pipeline/session.h"
#include "sources/registry.h"

static void test_claims_and_modes(void)
{
	struct source_registry r;

	source_registry_init(&r);
	CHECK(source_registry_claim(&r, SOURCE_LIVE, "proc.faults") == &bpf_source_kind);
	CHECK(source_registry_claim(&r, SOURCE_LIVE, "vmstat/pgfault") == &procfs_source_kind);
	CHECK(source_registry_claim(&r, SOURCE_LIVE, "page-faults") == &perf_source_kind);
	CHECK(source_registry_claim(&r, SOURCE_FILE, "page-faults") == &replay_source_kind);
	/* A recording says itself what it holds: its kind claims no name, and
	 * --input finds it by its mode. */
	CHECK(source_registry_claim(&r, SOURCE_RECORDING, "page-faults") == NULL);
	CHECK(source_registry_first(&r, SOURCE_RECORDING) == &recording_source_kind);
	CHECK(source_registry_first(&r, SOURCE_FILE) == &replay_source_kind);
	/* Only the eBPF probes give series per process and per thread. */
	for (int i = 0; i < r.nr; i++)
		CHECK_EQ_INT(r.kinds[i]->per_task, r.kinds[i] == &bpf_source_kind);
}

static void test_why_a_name_is_not_served(void)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return;
	s->left_out[0].kind = &bpf_source_kind;
	snprintf(s->left_out[0].why.text, sizeof(s->left_out[0].why.text), "no BTF in this kernel");
	s->nr_left_out = 1;
	CHECK_EQ_STR(session_name_why(s, "proc.pages_alloc"), "no BTF in this kernel");
	CHECK(session_name_why(s, "page-faults") == NULL);
	CHECK(session_name_why(s, "vmstat/pgfault") == NULL);
	/* No source left out, no per-task source: stat --per-thread is refused. */
	CHECK(!session_per_task(s));
	s->sources[0].kind = &bpf_source_kind;
	s->nr_sources = 1;
	CHECK(session_per_task(s));
	s->sources[0].kind = &perf_source_kind;
	CHECK(!session_per_task(s));
	free(s);
}

/* What commands read of a session, without reaching into its sampler or target. */
static void test_session_accessors(void)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return;
	CHECK(session_series(s) == &s->sampler.table);
	s->sampler.end = SAMPLER_END_SIGNAL;
	CHECK_EQ_INT(session_end(s), SAMPLER_END_SIGNAL);
	s->target.kind = TARGET_PIDS;
	s->target.nr_pids = 2;
	CHECK_EQ_INT(session_attached_processes(s), 2);
	/* perf's -p PID -- CMD: the processes are attached to, the target is the command. */
	s->target.kind = TARGET_COMMAND;
	CHECK_EQ_INT(session_attached_processes(s), 0);
	CHECK(!session_exec_failed(s));
	s->target.exec_failed = true;
	CHECK(session_exec_failed(s));
	free(s);
}

int main(void)
{
	test_claims_and_modes();
	test_why_a_name_is_not_served();
	test_session_accessors();
	return check_summary("registry");
}
