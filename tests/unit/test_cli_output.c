/* The option parser made from a table, the number formatter and the CSV
 * writer that every printer shares. */
#include <stdlib.h>

#include "check.h"
#include "cli/options.h"
#include "util/csv.h"
#include "util/error.h"
#include "util/number_format.h"

enum { OPT_JSON = CLI_LONG_ONLY, OPT_PER_NODE };

static const struct cli_option test_options[] = {
	{ 'e', "events", "LIST", "events", CLI_COMPLETE_EVENTS, NULL, 0 },
	{ 'I', "interval", "MS", "an interval", CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_JSON, "json", NULL, "JSON", CLI_COMPLETE_NONE, NULL, 0 },
	{ OPT_PER_NODE, "per-node", NULL, "a row per node\nand a second line", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

static const struct cli_group test_groups[] = {
	{ "Test", test_options },
	{ NULL, NULL },
};

static const struct cli_command test_command = {
	.name = "test", .summary = "a test", .usage = "[OPTIONS] [--] CMD", .groups = test_groups,
	.options_first = true,
};

struct seen {
	char log[256];
	int refuse_key;
};

static int record_option(void *ctx, int key, const char *arg)
{
	struct seen *s = ctx;
	size_t len = strlen(s->log);

	if (key == s->refuse_key)
		return -1;
	snprintf(s->log + len, sizeof(s->log) - len, "%s%d=%s", len ? " " : "", key, arg ? arg : "-");
	return 0;
}

static int parse(struct seen *s, int argc, char **argv, int *status)
{
	s->log[0] = '\0';
	return cli_parse(&test_command, argc, argv, record_option, s, status);
}

static void test_parse(void)
{
	struct seen s = { "", 0 };
	int status;
	char *a1[] = { "test", "-e", "a,b", "--json", "--interval=100", "-I5", "prog", "-e", "x", NULL };
	char *a2[] = { "test", "--per-node", "--", "-x", NULL };
	char *a3[] = { "test", "--jsno", NULL };
	char *a4[] = { "test", "-I", NULL };
	char *a5[] = { "test", "-e", "x", "--help", NULL };

	/* Options end at the first operand: "-e x" after prog is prog's. */
	CHECK_EQ_INT(parse(&s, 9, a1, &status), 6);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_STR(s.log, "101=a,b 256=- 73=100 73=5");
	CHECK_EQ_INT(parse(&s, 4, a2, &status), 3);
	CHECK_EQ_STR(s.log, "257=-");
	/* Unknown, missing argument, refused value: usage errors. */
	CHECK_EQ_INT(parse(&s, 2, a3, &status), -1);
	CHECK_EQ_INT(status, EXIT_USAGE);
	CHECK_EQ_INT(parse(&s, 2, a4, &status), -1);
	CHECK_EQ_INT(status, EXIT_USAGE);
	s.refuse_key = 'e';
	CHECK_EQ_INT(parse(&s, 3, a1, &status), -1);
	CHECK_EQ_INT(status, EXIT_USAGE);
	s.refuse_key = 0;
	/* --help: 0, after the options before it were taken. */
	CHECK_EQ_INT(parse(&s, 4, a5, &status), -1);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_STR(s.log, "101=x");
}

static void test_help(void)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	char label[64];

	cli_print_help(&test_command, out);
	fclose(out);
	CHECK_CONTAINS(text, "usage: memscope test [OPTIONS] [--] CMD\n");
	CHECK_CONTAINS(text, "\nTest:\n");
	CHECK_CONTAINS(text, "  -e, --events LIST  events\n");
	CHECK_CONTAINS(text, "      --per-node     a row per node\n                     and a second line\n");
	CHECK_CONTAINS(text, "  -h, --help         show this help and exit\n");
	free(text);
	cli_option_label(cli_find_option(&test_command, OPT_JSON), label, sizeof(label));
	CHECK_EQ_STR(label, "--json");
	cli_option_label(cli_find_option(&test_command, 'e'), label, sizeof(label));
	CHECK_EQ_STR(label, "-e/--events");
}

static void test_numbers(void)
{
	char buf[64];

	number_plain(buf, sizeof(buf), 34.696075999999998);
	CHECK_EQ_STR(buf, "34.696076");
	number_plain(buf, sizeof(buf), 0.20008593899999999);
	CHECK_EQ_STR(buf, "0.200085939");
	number_plain(buf, sizeof(buf), 48);
	CHECK_EQ_STR(buf, "48");
	number_plain(buf, sizeof(buf), 1.5e9);
	CHECK_EQ_STR(buf, "1500000000");
	number_plain(buf, sizeof(buf), 0.1 + 0.2);
	CHECK_EQ_STR(buf, "0.3");
	number_plain(buf, sizeof(buf), -0.0);
	CHECK_EQ_STR(buf, "0");
	number_plain(buf, sizeof(buf), 1.5e-7);
	CHECK_EQ_STR(buf, "1.5e-07");
	/* Every digit a counter can give survives. */
	number_plain(buf, sizeof(buf), 123456789012345.0);
	CHECK_EQ_STR(buf, "123456789012345");
	number_human(buf, sizeof(buf), 1234567, 1);
	CHECK_EQ_STR(buf, "1,234,567");
	number_human(buf, sizeof(buf), 12.345, 0);
	CHECK_EQ_STR(buf, "12.35");
	number_human(buf, sizeof(buf), 0.12345, 0);
	CHECK_EQ_STR(buf, "0.1235");
	number_human(buf, sizeof(buf), -1000, 1);
	CHECK_EQ_STR(buf, "-1,000");
	/* Counts as printf's %llu writes them, the largest one included. */
	CHECK_EQ_INT(number_u64(buf, sizeof(buf), 0), 1);
	CHECK_EQ_STR(buf, "0");
	CHECK_EQ_INT(number_u64(buf, sizeof(buf), 1000000007ull), 10);
	CHECK_EQ_STR(buf, "1000000007");
	CHECK_EQ_INT(number_u64(buf, sizeof(buf), UINT64_MAX), 20);
	CHECK_EQ_STR(buf, "18446744073709551615");
	CHECK_EQ_INT(number_u64(buf, 3, 1234), 0);      /* no room: empty, never cut short */
	CHECK_EQ_STR(buf, "");
	number_bytes(buf, sizeof(buf), 32768);
	CHECK_EQ_STR(buf, "32 KiB");
	number_bytes(buf, sizeof(buf), 28160ULL * 1024);
	CHECK_EQ_STR(buf, "27.5 MiB");
	number_bytes(buf, sizeof(buf), 100663296ULL * 1024);
	CHECK_EQ_STR(buf, "96 GiB");
}

static void test_csv(void)
{
	char buf[128];
	char *text = NULL;
	size_t size = 0;
	FILE *out;
	const char *row[] = { "0.1", "cpu/event=0x3c,umask=0x00/", "say \"hi\"", "" };

	CHECK_EQ_INT(csv_format_field(buf, sizeof(buf), "page-faults", ","), 11);
	CHECK_EQ_STR(buf, "page-faults");
	csv_format_field(buf, sizeof(buf), "a,b", ",");
	CHECK_EQ_STR(buf, "\"a,b\"");
	/* Another separator: commas need no quotes, the separator does. */
	csv_format_field(buf, sizeof(buf), "a,b", ";");
	CHECK_EQ_STR(buf, "a,b");
	csv_format_field(buf, sizeof(buf), "a;b", ";");
	CHECK_EQ_STR(buf, "\"a;b\"");
	csv_format_field(buf, sizeof(buf), "two\nlines", ",");
	CHECK_EQ_STR(buf, "\"two\nlines\"");
	/* Truncated, still terminated, and the full length returned. */
	CHECK_EQ_INT(csv_format_field(buf, 4, "a,bcdef", ","), 9);
	CHECK_EQ_STR(buf, "\"a,");
	out = open_memstream(&text, &size);
	csv_write_row(out, ",", row, 4);
	fclose(out);
	CHECK_EQ_STR(text, "0.1,\"cpu/event=0x3c,umask=0x00/\",\"say \"\"hi\"\"\",\n");
	free(text);
	/* A row longer than the line buffer is written whole, field by field. */
	{
		char *longest = malloc(3000);
		const char *wide[] = { "a", longest, "z,z" };
		char *want = malloc(3100);

		memset(longest, 'x', 2999);
		longest[2999] = '\0';
		snprintf(want, 3100, "a;%s;z,z\n", longest);
		text = NULL;
		out = open_memstream(&text, &size);
		csv_write_row(out, ";", wide, 3);
		fclose(out);
		CHECK_EQ_STR(text, want);
		free(text);
		free(want);
		free(longest);
	}
}

int main(void)
{
	test_parse();
	test_help();
	test_numbers();
	test_csv();
	return check_summary("cli_output");
}
