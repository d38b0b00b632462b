#include "cli/exit_status.h"

#include "util/report.h"

int cli_exit_code(const struct ms_error *err)
{
	return err->kind == MS_ERR_USAGE ? EXIT_USAGE : 1;
}

int cli_fail(const struct ms_error *err)
{
	ms_report(err);
	return cli_exit_code(err);
}
