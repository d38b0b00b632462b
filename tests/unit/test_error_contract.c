/* The error contract at the seams (docs/pipeline.md, "Errors, messages and
 * exit codes"): fallible functions return -1 with a struct ms_error whose
 * kind makes the exit code (once, in cli/); one reporter says every message
 * with the command's name; every "is this option mine?" step answers the
 * same way. Checked on the real registry, session and Lua engine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/exit_status.h"
#include "cli/measure_options.h"
#include "pipeline/lua_session.h"
#include "pipeline/session.h"
#include "sources/registry.h"
#include "util/report.h"

static void test_kinds_and_context(void)
{
	struct ms_error err = { "" };

	CHECK_EQ_INT(err.kind, MS_ERR_RUNTIME);
	ms_error_usage(&err, "'%s': no such event", "pagefaults");
	ms_error_prefix(&err, "-e");
	/* Context in front keeps what the error is. */
	CHECK_EQ_STR(err.text, "-e: 'pagefaults': no such event");
	CHECK_EQ_INT(err.kind, MS_ERR_USAGE);
	CHECK_EQ_INT(cli_exit_code(&err), EXIT_USAGE);
	ms_error_set(&err, "out of memory");
	CHECK_EQ_INT(err.kind, MS_ERR_RUNTIME);
	CHECK_EQ_INT(cli_exit_code(&err), 1);
	ms_error_set_kind(&err, MS_ERR_NOT_SUPPORTED, "no PMU counts %s here", "mem.read_bw");
	CHECK_EQ_INT(cli_exit_code(&err), 1);
	ms_error_set_kind(&err, MS_ERR_PERMISSION, "perf_event_paranoid is %d", 3);
	CHECK_EQ_INT(cli_exit_code(&err), 1);
	ms_error_mark(&err, MS_ERR_USAGE);
	CHECK_EQ_INT(cli_exit_code(&err), EXIT_USAGE);
	CHECK_EQ_STR(err.text, "perf_event_paranoid is 3");
}

/* What ms_report and ms_warn write on standard error. */
static void test_reporter_names_the_command(void)
{
	struct ms_error err = { "" };
	char text[256] = "";
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	if (!tmp || saved < 0)
		return;
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	ms_report_command(NULL);
	ms_warn("before any command %d", 1);
	ms_report_command("stat");
	ms_error_usage(&err, "-I 0: the interval must be at least 1 ms");
	ms_report(&err);
	ms_warn("note: %s is not split by %s", "proc.faults", "node");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(text, 1, sizeof(text) - 1, tmp);
	text[n] = '\0';
	fclose(tmp);
	CHECK_EQ_STR(text, "memscope: before any command 1\n"
			   "memscope stat: -I 0: the interval must be at least 1 ms\n"
			   "memscope stat: note: proc.faults is not split by node\n");
	CHECK_EQ_STR(ms_report_command_name(), "stat");
}

/* One sign convention for every option step. */
static void test_option_answers(void)
{
	struct session_options opt;
	struct lua_cli lua = { .nr_scripts = 0 };
	struct measure_sinks sinks = { { NULL } };

	session_options_init(&opt, "stat");
	CHECK_EQ_INT(session_option(&opt, 'e', "page-faults"), OPTION_TAKEN);
	CHECK_EQ_INT(session_option(&opt, 'Z', NULL), OPTION_NOT_MINE);
	CHECK_EQ_INT(session_option(&opt, 'I', "0"), OPTION_BAD);
	CHECK_EQ_INT(lua_cli_option(&lua, LUA_CLI_OPT_UNSAFE, NULL), OPTION_TAKEN);
	CHECK_EQ_INT(lua_cli_option(&lua, 'e', "x"), OPTION_NOT_MINE);
	CHECK_EQ_INT(measure_option(&opt, &lua, LUA_CLI_OPT_LUA, "faults.lua"), OPTION_TAKEN);
	CHECK_EQ_INT(measure_option(&opt, &lua, 'Z', NULL), OPTION_NOT_MINE);
	CHECK_EQ_INT(measure_cli_option(&opt, &lua, SESSION_OPT_PER_NODE, NULL), OPTION_TAKEN);
	CHECK_EQ_INT(measure_cli_option(&opt, &lua, SESSION_OPT_PER_SOCKET, NULL), OPTION_BAD);
	CHECK_EQ_INT(measure_cli_option(&opt, &lua, 'Z', NULL), OPTION_NOT_MINE);
	measure_options_init();
	CHECK_EQ_INT(measure_sink_option(&sinks, "stat", 'Z', NULL), OPTION_NOT_MINE);
	CHECK_EQ_INT(measure_sink_option(&sinks, "stat", MEASURE_SINK_KEY, "run.lp"), OPTION_TAKEN);
	CHECK_EQ_STR(sinks.arg[0], "run.lp");
	CHECK_EQ_INT(measure_sink_option(&sinks, "stat", MEASURE_SINK_KEY, "again.lp"), OPTION_BAD);
	CHECK_EQ_INT(opt.events.nr, 1);
	CHECK_EQ_INT(lua.nr_scripts, 1);
	session_options_free(&opt);
}

/* The seams the commands build on: a source kind, session_open,
 * session_open_recording and lua_cli_open return -1, the kind saying whose
 * the fix is. */
static void test_seams_return_minus_one_with_a_kind(void)
{
	struct session *s = calloc(1, sizeof(*s));
	struct session_options opt;
	struct ms_error err = { "" };
	struct lua_cli lua = { .nr_scripts = 0 };
	struct lua_engine *engine = (struct lua_engine *)&err;
	struct source src;
	struct host host;
	const char *names[] = { "page-faultz" };
	struct source_request req = { .names = names, .nr_names = 1, .notes = stderr, .command_name = "stat" };

	if (!s)
		return;
	/* A name no source serves: the user's to fix. */
	session_options_init(&opt, "stat");
	session_option(&opt, 'e', "no-such-event-anywhere");
	opt.system_wide = true;
	CHECK_EQ_INT(session_options_finish(&opt, NULL), 0);
	CHECK_EQ_INT(session_open(s, &opt, &err), -1);
	CHECK_EQ_INT(err.kind, MS_ERR_USAGE);
	CHECK(strstr(err.text, "no-such-event-anywhere") != NULL);
	session_close(s);
	session_options_free(&opt);
	/* A process id that is not one. */
	session_options_init(&opt, "stat");
	opt.pids = "12abc";
	CHECK_EQ_INT(session_open(s, &opt, &err), -1);
	CHECK_EQ_INT(err.kind, MS_ERR_USAGE);
	session_close(s);
	session_options_free(&opt);
	/* A recording that is not there: a runtime failure. */
	session_options_init(&opt, "stat");
	opt.input_path = "/nonexistent/memscope.rec";
	CHECK_EQ_INT(session_open(s, &opt, &err), -1);
	CHECK_EQ_INT(err.kind, MS_ERR_RUNTIME);
	CHECK(strstr(err.text, "/nonexistent/memscope.rec") != NULL);
	session_close(s);
	session_options_free(&opt);
	/* The perf kind, asked directly for an event it cannot parse. */
	if (host_load(&host, &err) == 0) {
		req.host = &host;
		memset(&src, 0, sizeof(src));
		CHECK_EQ_INT(perf_source_kind.create(&perf_source_kind, &src, &req, &err), -1);
		CHECK_EQ_INT(err.kind, MS_ERR_USAGE);
		host_free(&host);
	}
	/* A script that is nowhere. */
	session_options_init(&opt, "stat");
	lua.scripts[lua.nr_scripts++] = "/nonexistent/script.lua";
	CHECK_EQ_INT(lua_cli_open(&lua, &opt, LUA_OUTPUT_TEXT, &engine, &err), -1);
	CHECK_EQ_INT(err.kind, MS_ERR_USAGE);
	CHECK_EQ_INT(cli_exit_code(&err), EXIT_USAGE);
	lua_engine_free(engine);
	session_options_free(&opt);
	free(s);
}

int main(void)
{
	test_kinds_and_context();
	test_reporter_names_the_command();
	test_option_answers();
	test_seams_return_minus_one_with_a_kind();
	return check_summary("error_contract");
}
