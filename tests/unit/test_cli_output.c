/* The option parser made from a table, the number formatter and the CSV
 * writer that every printer shares. */
#include <stdlib.h>
#include <unistd.h>

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

/* Rows with destinations: the parser fills the struct, the command's
 * function sees none of them, and the rules are checked after parsing. */
enum { OPT_QUIET = CLI_LONG_ONLY, OPT_COLOR, OPT_LINES, OPT_OLD };

struct dest_values {
	bool quiet;
	bool color_ok;
	int verbose;
	long lines;
	int width;
	const char *name;
	int color;
	int mode;
};

static const struct cli_option dest_options[] = {
	{ OPT_QUIET, "quiet", NULL, "quiet", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_BOOL(0, struct dest_values, quiet) },
	{ 'v', "verbose", NULL, "more", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_COUNT(0, struct dest_values, verbose) },
	{ OPT_LINES, "lines", "N", "lines", CLI_COMPLETE_NONE, NULL, 0,
	  CLI_TO_LONG(0, struct dest_values, lines, 1, 1000) },
	{ 'w', "width", "N", "width", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_INT(0, struct dest_values, width, -1, 80) },
	{ 'n', "name", "NAME", "name", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_STRING(0, struct dest_values, name) },
	{ OPT_COLOR, "color", "WHEN", "color", CLI_COMPLETE_WORDS, "never always auto", 0,
	  CLI_TO_CHOICE(0, struct dest_values, color) },
	{ OPT_OLD, "old", NULL, "changes nothing", CLI_COMPLETE_NONE, NULL, 0, CLI_ACCEPTED },
	{ 'N', "no-color", NULL, "no color", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_CLEAR(0, struct dest_values, color_ok) },
	{ 'e', "events", "LIST", "events", CLI_COMPLETE_EVENTS, NULL, 0 },
	{ 'f', "fast", NULL, "fast mode", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_SET(0, struct dest_values, mode, 7) },
	{ 's', "slow", NULL, "slow mode", CLI_COMPLETE_NONE, NULL, 0, CLI_TO_SET(0, struct dest_values, mode, 9) },
	{ 0 },
};

static const struct cli_group dest_groups[] = {
	{ "Dest", dest_options },
	{ NULL, NULL },
};

static const struct cli_rule dest_rules[] = {
	{ CLI_EXCLUDES, OPT_QUIET, { 'v' }, "--quiet and -v say opposite things" },
	{ CLI_NEEDS, OPT_LINES, { 'n', 'e' }, "--lines counts the lines of -n or -e" },
	{ 0 },
};

static const struct cli_command dest_command = {
	.name = "dest", .groups = dest_groups, .rules = dest_rules,
};

/* Parse argv into v (zeroed first); what went to stderr into err. */
static int parse_dest(struct dest_values *v, struct seen *s, char **argv, int *status, char *err, size_t size)
{
	void *const dest[] = { v };
	FILE *tmp = tmpfile();
	int argc = 0, saved = dup(STDERR_FILENO), first;
	size_t n;

	while (argv[argc])
		argc++;
	memset(v, 0, sizeof(*v));
	v->color_ok = true;
	s->log[0] = '\0';
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	first = cli_parse_into(&dest_command, argc, argv, record_option, s, dest, status);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, size - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return first;
}

static void test_destinations(void)
{
	struct dest_values v;
	struct seen s = { "", 0 };
	char err[512];
	int status;
	char *all[] = { "dest", "-vv", "--lines", "1000", "-w", "-1", "--name=x", "--color", "auto", "--old",
			"-N", "-e", "a", "op", NULL };
	char *big[] = { "dest", "--lines", "1001", NULL };
	char *word[] = { "dest", "-w", "8x", NULL };
	char *color[] = { "dest", "--color=blue", NULL };
	char *both[] = { "dest", "-v", "--quiet", NULL };
	char *alone[] = { "dest", "--lines", "3", NULL };
	char *quiet[] = { "dest", "--quiet", "--lines", "3", "-e", "b", NULL };
	char *modes[] = { "dest", "--slow", "-f", NULL };
	char *slow[] = { "dest", "-f", "--slow", NULL };

	CHECK_EQ_INT(parse_dest(&v, &s, all, &status, err, sizeof(err)), 13);
	CHECK_EQ_INT(status, 0);
	CHECK_EQ_INT(v.verbose, 2);
	CHECK_EQ_INT(v.lines, 1000);
	CHECK_EQ_INT(v.width, -1);
	CHECK_EQ_STR(v.name, "x");
	CHECK_EQ_INT(v.color, 2);
	CHECK(!v.quiet);
	/* Only the row without a destination reached the function. */
	CHECK_EQ_STR(s.log, "101=a");
	CHECK_EQ_STR(err, "");
	CHECK(!v.color_ok);
	CHECK_EQ_INT(parse_dest(&v, &s, quiet, &status, err, sizeof(err)), 6);
	CHECK(v.color_ok);
	CHECK(v.quiet);
	CHECK_EQ_INT(v.lines, 3);
	CHECK_EQ_INT(v.mode, 0);
	/* A mode row sets its value; the last one given wins. */
	CHECK_EQ_INT(parse_dest(&v, &s, modes, &status, err, sizeof(err)), 3);
	CHECK_EQ_INT(v.mode, 7);
	CHECK_EQ_INT(parse_dest(&v, &s, slow, &status, err, sizeof(err)), 3);
	CHECK_EQ_INT(v.mode, 9);
	CHECK_EQ_STR(s.log, "");

	CHECK_EQ_INT(parse_dest(&v, &s, big, &status, err, sizeof(err)), -1);
	CHECK_EQ_INT(status, EXIT_USAGE);
	CHECK_EQ_STR(err, "memscope dest: --lines 1001: give a whole number from 1 to 1000\n");
	CHECK_EQ_INT(parse_dest(&v, &s, word, &status, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "memscope dest: -w 8x: give a whole number from -1 to 80\n");
	CHECK_EQ_INT(parse_dest(&v, &s, color, &status, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "memscope dest: --color blue: give one of: never always auto\n");
	/* The rules, in their order, with their own words. */
	CHECK_EQ_INT(parse_dest(&v, &s, both, &status, err, sizeof(err)), -1);
	CHECK_EQ_INT(status, EXIT_USAGE);
	CHECK_EQ_STR(err, "memscope dest: --quiet and -v say opposite things\n");
	CHECK_EQ_INT(parse_dest(&v, &s, alone, &status, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "memscope dest: --lines counts the lines of -n or -e\n");
}

static void test_rules_in_help(void)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	cli_print_help(&dest_command, out);
	fclose(out);
	CHECK_CONTAINS(text, "\nCombinations:\n"
			     "  not together: --quiet and -v/--verbose\n"
			     "  required: --lines needs -n/--name or -e/--events\n");
	free(text);
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
	test_destinations();
	test_rules_in_help();
	test_numbers();
	test_csv();
	return check_summary("cli_output");
}
