#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/suggest.h"

static const struct cli_option help_option[] = {
	{ 'h', "help", NULL, "show this help and exit", CLI_COMPLETE_NONE, NULL, 0 },
	{ 0 },
};

/* Every option of cmd in help order (its groups, then --help). */
#define FOR_EACH_OPTION(cmd, g, o) \
	for (const struct cli_group *g = (cmd)->groups; g && g->options; g++) \
		for (const struct cli_option *o = g->options; o->key; o++)

static int count_options(const struct cli_command *cmd)
{
	int nr = 1;

	FOR_EACH_OPTION(cmd, g, o)
		nr++;
	return nr;
}

static bool is_short(int key)
{
	return key > 0 && key < CLI_LONG_ONLY;
}

static void add_getopt(const struct cli_option *o, char *shorts, size_t *ns, struct option *longs, int *nl)
{
	int has_arg = !o->arg ? no_argument : (o->flags & CLI_OPTIONAL_ARG) ? optional_argument
									    : required_argument;

	if (is_short(o->key)) {
		shorts[(*ns)++] = (char)o->key;
		if (has_arg != no_argument)
			shorts[(*ns)++] = ':';
		if (has_arg == optional_argument)
			shorts[(*ns)++] = ':';
	}
	if (o->name)
		longs[(*nl)++] = (struct option){ o->name, has_arg, NULL, o->key };
}

const struct cli_option *cli_find_option(const struct cli_command *cmd, int key)
{
	FOR_EACH_OPTION(cmd, g, o)
		if (o->key == key)
			return o;
	return key == 'h' ? &help_option[0] : NULL;
}

void cli_option_label(const struct cli_option *o, char *buf, size_t size)
{
	if (is_short(o->key) && o->name)
		snprintf(buf, size, "-%c/--%s", o->key, o->name);
	else if (o->name)
		snprintf(buf, size, "--%s", o->name);
	else
		snprintf(buf, size, "-%c", o->key);
}

static void command_path(const struct cli_command *cmd, char *buf, size_t size)
{
	snprintf(buf, size, "memscope%s%s", cmd->name ? " " : "", cmd->name ? cmd->name : "");
}

/* The option the user typed (argv[optind - 1], or the short letter in
 * optopt), named for a message, and the closest option names. */
static void report_bad_option(const struct cli_command *cmd, char **argv, int c, char *prog)
{
	const char *typed = argv[optind - 1];
	char name[128], hint[512] = "";
	struct suggestions sug;

	if (optopt && is_short(optopt) && !(typed[0] == '-' && typed[1] == '-'))
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(typed, "="), typed);
	if (c == ':') {
		const struct cli_option *o = cli_find_option(cmd, optopt);

		fprintf(stderr, "%s: option %s needs an argument (%s)\n", prog, name, o && o->arg ? o->arg : "a value");
		return;
	}
	for (const struct cli_refusal *r = cmd->refused; r && r->name; r++) {
		size_t len = strcspn(r->name, "*");

		if (name[0] == '-' && name[1] == '-' && !strncmp(name + 2, r->name, len) &&
		    (r->name[len] == '*' || !name[2 + len])) {
			fprintf(stderr, "%s: %s: %s\n", prog, name, r->why);
			return;
		}
	}
	suggestions_init(&sug, name);
	FOR_EACH_OPTION(cmd, g, o) {
		char candidate[96];

		if (o->name) {
			snprintf(candidate, sizeof(candidate), "--%s", o->name);
			suggestions_offer(&sug, candidate);
		}
		if (is_short(o->key)) {
			snprintf(candidate, sizeof(candidate), "-%c", o->key);
			suggestions_offer(&sug, candidate);
		}
	}
	suggestions_format(&sug, hint, sizeof(hint));
	fprintf(stderr, "%s: unknown option '%s'%s (%s --help lists the options)\n", prog, name, hint, prog);
}

/* How a value message names an option: its letter, else its long name
 * ("-r 0: ...", "--timeout x: ..."). */
static void value_label(const struct cli_option *o, char *buf, size_t size)
{
	if (is_short(o->key))
		snprintf(buf, size, "-%c", o->key);
	else
		snprintf(buf, size, "--%s", o->name);
}

/* The index of word in a space separated list, or -1. */
static int choice_index(const char *words, const char *word)
{
	size_t len = strlen(word);
	int i = 0;

	for (const char *w = words; *w; i++) {
		size_t n = strcspn(w, " ");

		if (n == len && !strncmp(w, word, n))
			return i;
		w += n;
		w += strspn(w, " ");
	}
	return -1;
}

/* Write o's value to its destination: 0, or -1 (said on stderr). */
static int store_value(const struct cli_option *o, const char *arg, void *const *dest, const char *prog)
{
	char *field = (char *)dest[o->to.base] + o->to.offset, label[96], *end;
	long v;

	switch (o->to.type) {
	case CLI_VALUE_BOOL:
		*(bool *)field = true;
		return 0;
	case CLI_VALUE_CLEAR:
		*(bool *)field = false;
		return 0;
	case CLI_VALUE_COUNT:
		(*(int *)field)++;
		return 0;
	case CLI_VALUE_STRING:
		*(const char **)field = arg;
		return 0;
	case CLI_VALUE_SET:
		*(int *)field = (int)o->to.min;
		return 0;
	case CLI_VALUE_CHOICE:
		if ((*(int *)field = choice_index(o->choices, arg)) >= 0)
			return 0;
		value_label(o, label, sizeof(label));
		fprintf(stderr, "%s: %s %s: give one of: %s\n", prog, label, arg, o->choices);
		return -1;
	case CLI_VALUE_LONG:
	case CLI_VALUE_INT:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < o->to.min || v > o->to.max) {
			value_label(o, label, sizeof(label));
			fprintf(stderr, "%s: %s %s: give a whole number from %ld to %ld\n", prog, label, arg, o->to.min,
				o->to.max);
			return -1;
		}
		if (o->to.type == CLI_VALUE_LONG)
			*(long *)field = v;
		else
			*(int *)field = (int)v;
		return 0;
	case CLI_VALUE_ACCEPTED:
	case CLI_VALUE_NONE:
		break;
	}
	return 0;
}

/* The position of key among cmd's options (help order), or -1. */
static int option_index(const struct cli_command *cmd, int key)
{
	int i = 0;

	FOR_EACH_OPTION(cmd, g, o) {
		if (o->key == key)
			return i;
		i++;
	}
	return -1;
}

static bool was_given(const struct cli_command *cmd, const bool *given, int key)
{
	int i = option_index(cmd, key);

	return i >= 0 && given[i];
}

/* The first of cmd's rules the given options break, said on stderr: -1; else 0. */
static int check_rules(const struct cli_command *cmd, const bool *given, const char *prog)
{
	for (const struct cli_rule *r = cmd->rules; r && r->kind; r++) {
		bool broken;

		if (!was_given(cmd, given, r->key))
			continue;
		if (r->kind == CLI_EXCLUDES) {
			broken = was_given(cmd, given, r->others[0]);
		} else {
			broken = true;
			for (int i = 0; i < 3 && r->others[i]; i++)
				if (was_given(cmd, given, r->others[i]))
					broken = false;
		}
		if (broken) {
			fprintf(stderr, "%s: %s\n", prog, r->why);
			return -1;
		}
	}
	return 0;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, cli_option_fn fn, void *ctx,
	      int *exit_code)
{
	return cli_parse_into(cmd, argc, argv, fn, ctx, NULL, exit_code);
}

int cli_parse_into(const struct cli_command *cmd, int argc, char **argv, cli_option_fn fn, void *ctx,
		   void *const *dest, int *exit_code)
{
	int nr = count_options(cmd), nl = 0, c, first = -1;
	char *shorts = malloc((size_t)nr * 3 + 4);
	struct option *longs = calloc((size_t)nr + 1, sizeof(*longs));
	bool *given = calloc((size_t)nr, sizeof(*given));
	char prog[64];
	size_t ns = 0;

	command_path(cmd, prog, sizeof(prog));
	*exit_code = EXIT_USAGE;
	if (!shorts || !longs || !given) {
		fprintf(stderr, "%s: out of memory\n", prog);
		*exit_code = 1;
		goto out;
	}
	/* '+': stop at the first operand; ':': a missing argument is ':'. */
	if (cmd->options_first)
		shorts[ns++] = '+';
	shorts[ns++] = ':';
	FOR_EACH_OPTION(cmd, g, o)
		add_getopt(o, shorts, &ns, longs, &nl);
	add_getopt(&help_option[0], shorts, &ns, longs, &nl);
	shorts[ns] = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == '?' || c == ':') {
			report_bad_option(cmd, argv, c, prog);
			goto out;
		}
		if (c == 'h') {
			cli_print_help(cmd, stdout);
			*exit_code = 0;
			goto out;
		}
		const struct cli_option *o = cli_find_option(cmd, c);
		int index = option_index(cmd, c);

		if (index >= 0)
			given[index] = true;
		if (o && o->to.type != CLI_VALUE_NONE && o->to.type != CLI_VALUE_ACCEPTED && !dest) {
			/* A row with a destination parsed by cli_parse: the command's bug, not the user's. */
			fprintf(stderr, "%s: internal error: option %s has a destination; parse with cli_parse_into\n",
				prog, o->name ? o->name : "");
			*exit_code = 1;
			goto out;
		}
		if (o && o->to.type != CLI_VALUE_NONE) {
			if (store_value(o, optarg, dest, prog) < 0)
				goto out;
			continue;
		}
		switch (fn(ctx, c, optarg)) {
		case 0:
			break;
		case CLI_DONE:
			*exit_code = 0;
			goto out;
		default:
			goto out;
		}
	}
	if (check_rules(cmd, given, prog) < 0)
		goto out;
	first = optind;
	*exit_code = 0;
out:
	free(shorts);
	free(longs);
	free(given);
	return first;
}

/* "  -e, --events LIST" */
static int option_head(const struct cli_option *o, char *buf, size_t size)
{
	int len;

	if (is_short(o->key) && o->name)
		len = snprintf(buf, size, "  -%c, --%s", o->key, o->name);
	else if (o->name)
		len = snprintf(buf, size, "      --%s", o->name);
	else
		len = snprintf(buf, size, "  -%c", o->key);
	if (o->arg && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, (o->flags & CLI_OPTIONAL_ARG) ? "[=%s]" : " %s",
				o->arg);
	return len;
}

/* Options whose head is longer than this put their help on the next line. */
#define HELP_MAX_COLUMN 30

static void print_option(const struct cli_option *o, int column, FILE *out)
{
	char head[160];
	int len = option_head(o, head, sizeof(head));
	const char *line = o->help;

	fputs(head, out);
	if (len + 2 > column) {
		fputc('\n', out);
		len = 0;
	}
	for (;;) {
		size_t n = strcspn(line, "\n");

		fprintf(out, "%*s%.*s\n", column - len, "", (int)n, line);
		if (!line[n])
			break;
		line += n + 1;
		len = 0;
	}
}

void cli_print_usage(const struct cli_command *cmd, FILE *out)
{
	const char *line = cmd->usage ? cmd->usage : "[OPTIONS]";
	char prog[64];
	bool first = true;

	command_path(cmd, prog, sizeof(prog));
	for (;;) {
		size_t n = strcspn(line, "\n");

		fprintf(out, "%s %s %.*s\n", first ? "usage:" : "      ", prog, (int)n, line);
		first = false;
		if (!line[n])
			break;
		line += n + 1;
	}
}

static void print_labels(const struct cli_command *cmd, const int *keys, int nr, const char *join, FILE *out)
{
	char label[96];

	for (int i = 0; i < nr && keys[i]; i++) {
		const struct cli_option *o = cli_find_option(cmd, keys[i]);

		if (!o)
			continue;
		cli_option_label(o, label, sizeof(label));
		fprintf(out, "%s%s", i ? (i + 1 < nr && keys[i + 1] ? ", " : join) : "", label);
	}
}

/* The rules, one a line (a line never starts with '-': those are options). */
static void print_rules(const struct cli_command *cmd, FILE *out)
{
	if (!cmd->rules || !cmd->rules[0].kind)
		return;
	fputs("\nCombinations:\n", out);
	for (const struct cli_rule *r = cmd->rules; r->kind; r++) {
		int excluded[2] = { r->key, r->others[0] };

		if (r->kind == CLI_EXCLUDES) {
			fputs("  not together: ", out);
			print_labels(cmd, excluded, 2, " and ", out);
		} else {
			fputs("  required: ", out);
			print_labels(cmd, &r->key, 1, "", out);
			fputs(" needs ", out);
			print_labels(cmd, r->others, 3, " or ", out);
		}
		fputc('\n', out);
	}
}

void cli_print_help(const struct cli_command *cmd, FILE *out)
{
	int column = 0;
	char head[160];

	FOR_EACH_OPTION(cmd, g, o) {
		int len = option_head(o, head, sizeof(head)) + 2;

		if (len <= HELP_MAX_COLUMN && len > column)
			column = len;
	}
	if (column < 16)
		column = 16;
	cli_print_usage(cmd, out);
	if (cmd->summary)
		fprintf(out, "\n%s\n", cmd->summary);
	for (const struct cli_group *g = cmd->groups; g && g->options; g++) {
		/* A group without a title goes on the one before it. */
		if (g->title || g == cmd->groups)
			fprintf(out, "\n%s%s", g->title ? g->title : "", g->title ? ":\n" : "");
		for (const struct cli_option *o = g->options; o->key; o++)
			print_option(o, column, out);
	}
	fputc('\n', out);
	print_option(&help_option[0], column, out);
	print_rules(cmd, out);
	if (cmd->more_help)
		cmd->more_help(out);
	if (cmd->epilog)
		fprintf(out, "\n%s", cmd->epilog);
}

static void print_option_line(const char *command, const struct cli_option *o, FILE *out)
{
	fprintf(out, "%s ", command);
	if (is_short(o->key))
		fprintf(out, "-%c ", o->key);
	else
		fputs("- ", out);
	fprintf(out, "%s%s %s\n", o->name ? "--" : "-", o->name ? o->name : "", o->arg ? o->arg : "-");
}

void cli_print_option_list(const struct cli_program *p, FILE *out)
{
	FOR_EACH_OPTION(p->global, g, o)
		print_option_line("memscope", o, out);
	print_option_line("memscope", &help_option[0], out);
	for (int i = 0; i < p->nr_commands; i++) {
		/* A command that parses its own options (bench: memscope-bench) has no table. */
		if (!p->commands[i]->groups)
			continue;
		FOR_EACH_OPTION(p->commands[i], g, o)
			print_option_line(p->commands[i]->name, o, out);
		print_option_line(p->commands[i]->name, &help_option[0], out);
	}
}
