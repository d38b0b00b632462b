/* One option table per command. getopt's tables, --help, the shell
 * completions and the check against the man pages are all made from it, so
 * what a command accepts and what it documents cannot drift apart. */
#ifndef MEMSCOPE_OPTIONS_H
#define MEMSCOPE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Keys of options without a short letter start here (getopt's val). */
#define CLI_LONG_ONLY 0x100

/* What an option's argument (or a command's operands) is, for completion. */
enum cli_complete {
	CLI_COMPLETE_NONE,      /* free text: nothing to offer */
	CLI_COMPLETE_FILE,
	CLI_COMPLETE_DIR,
	CLI_COMPLETE_PID,
	CLI_COMPLETE_EVENTS,    /* a comma list of event names */
	CLI_COMPLETE_METRICS,   /* a comma list of metric names */
	CLI_COMPLETE_SCRIPT,    /* a Lua script: built-in name or file */
	CLI_COMPLETE_WORDS,     /* one of choices */
	CLI_COMPLETE_COMMAND,   /* operands: a program and its arguments */
	CLI_COMPLETE_CPUS,      /* a CPU list (0-3,8) */
};

enum cli_option_flags {
	CLI_OPTIONAL_ARG = 1 << 0,  /* --name[=ARG] */
};

/* Where a parsed option's value goes, so that the option needs no case in
 * the command's function (git's OPT_BOOL, perf's OPT_*). base picks one of
 * the structs the command hands cli_parse_into (its dest array), offset the
 * field in it; the CLI_TO_* macros below check the field's type. */
enum cli_value {
	CLI_VALUE_NONE,     /* the command's function takes it */
	CLI_VALUE_BOOL,     /* bool: true when given */
	CLI_VALUE_CLEAR,    /* bool: false when given (--no-ui) */
	CLI_VALUE_COUNT,    /* int: one more each time given (-d, -dd) */
	CLI_VALUE_LONG,     /* long: a whole number from min to max */
	CLI_VALUE_INT,      /* int: a whole number from min to max */
	CLI_VALUE_STRING,   /* const char *: the argument as given */
	CLI_VALUE_CHOICE,   /* int: the index of the argument among choices' words */
	CLI_VALUE_SET,      /* int: the row's value (min) when given: one of several modes */
	CLI_VALUE_ACCEPTED, /* taken for perf's sake, changes nothing */
};

struct cli_dest {
	enum cli_value type;
	int base;
	size_t offset;
	long min, max;      /* CLI_VALUE_LONG, CLI_VALUE_INT; min: CLI_VALUE_SET's value */
};

/* _Generic fails to compile when the field is not of the type the value
 * kind writes. */
#define CLI_FIELD_(base, type, field, ctype) \
	(base), offsetof(type, field) + _Generic(((type *)0)->field, ctype: 0)
#define CLI_TO_BOOL(base, type, field) { CLI_VALUE_BOOL, CLI_FIELD_(base, type, field, bool), 0, 0 }
#define CLI_TO_CLEAR(base, type, field) { CLI_VALUE_CLEAR, CLI_FIELD_(base, type, field, bool), 0, 0 }
#define CLI_TO_COUNT(base, type, field) { CLI_VALUE_COUNT, CLI_FIELD_(base, type, field, int), 0, 0 }
#define CLI_TO_LONG(base, type, field, min, max) { CLI_VALUE_LONG, CLI_FIELD_(base, type, field, long), min, max }
#define CLI_TO_INT(base, type, field, min, max) { CLI_VALUE_INT, CLI_FIELD_(base, type, field, int), min, max }
#define CLI_TO_STRING(base, type, field) { CLI_VALUE_STRING, CLI_FIELD_(base, type, field, const char *), 0, 0 }
#define CLI_TO_CHOICE(base, type, field) { CLI_VALUE_CHOICE, CLI_FIELD_(base, type, field, int), 0, 0 }
#define CLI_TO_SET(base, type, field, value) { CLI_VALUE_SET, CLI_FIELD_(base, type, field, int), value, value }
#define CLI_ACCEPTED { CLI_VALUE_ACCEPTED, 0, 0, 0, 0 }

struct cli_option {
	int key;                 /* the short letter, or CLI_LONG_ONLY + n */
	const char *name;        /* the long name, or NULL */
	const char *arg;         /* the argument's name in help ("MS"), or NULL: no argument */
	const char *help;        /* what it does; '\n' continues on the next line */
	enum cli_complete complete;
	const char *choices;     /* CLI_COMPLETE_WORDS: the words, space separated */
	unsigned flags;
	struct cli_dest to;      /* where the value goes; zero: the command's function takes it */
};

/* A heading in --help and the options under it (the array ends with a
 * zero entry). One array can be part of several commands (the options that
 * stat, record and top share). */
struct cli_group {
	const char *title;
	const struct cli_option *options;
};

/* An option a command does not take but a user may well try, with why not
 * and what to do instead (record --per-node: stat --input does that). */
struct cli_refusal {
	const char *name;        /* long name; a trailing '*' matches any ending */
	const char *why;
};

/* Combinations of options, checked after parsing and listed in --help:
 * CLI_EXCLUDES: key and others[0] not together; CLI_NEEDS: key only with
 * one of others (up to three, the rest 0). why is the whole message. */
enum cli_rule_kind { CLI_EXCLUDES = 1, CLI_NEEDS };

struct cli_rule {
	enum cli_rule_kind kind;
	int key;
	int others[3];
	const char *why;
};

struct cli_command {
	const char *name;        /* "stat"; NULL for memscope's own options */
	const char *summary;     /* one line, for memscope --help */
	const char *usage;       /* the synopsis, one form a line, without "memscope NAME" */
	const struct cli_group *groups; /* ends with { NULL, NULL } */
	const char *epilog;      /* text after the options (ctl's commands, top's keys), or NULL */
	enum cli_complete operands;
	const char *operand_words; /* CLI_COMPLETE_WORDS operands */
	/* Options end at the first operand (the command's own options then
	 * follow it untouched, as with perf stat). */
	bool options_first;
	const struct cli_refusal *refused; /* ends with { NULL, NULL }; or NULL */
	/* More help before the epilog (memscope's list of commands), or NULL. */
	void (*more_help)(FILE *out);
	const struct cli_rule *rules; /* ends with a zero row; or NULL */
};

/* What every "is this option mine?" step answers (session_option,
 * lua_cli_option, measure_option, and cli/measure_options.h's): taken,
 * refused for its value (said on stderr), or not one of its options. The
 * first two are cli_option_fn's own. */
enum option_answer { OPTION_BAD = -1, OPTION_TAKEN = 0, OPTION_NOT_MINE = 1 };

/* Handle one option: 0 taken, -1 a bad value (the message printed),
 * CLI_DONE: the option did all there is to do (--version): end with 0. */
#define CLI_DONE 1
typedef int (*cli_option_fn)(void *ctx, int key, const char *arg);

/* Parse argv (argv[0] is the command's name) with the command's table,
 * calling fn for each option. --help is every command's: it prints the help
 * to stdout. Returns the index of the first operand, or -1 when the caller
 * should end with *exit_code: 0 after --help or CLI_DONE, EXIT_USAGE after an unknown
 * option, a missing argument or a value fn refused (each said on stderr). */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, cli_option_fn fn, void *ctx,
	      int *exit_code);
/* cli_parse for a table with destinations: an option with one is written
 * to dest[o->to.base] (a bad value: "memscope CMD: -r x: give a whole number
 * from 1 to N", EXIT_USAGE) and fn is not called for it; then cmd->rules are
 * checked against the options given (the first broken one's why, EXIT_USAGE). */
int cli_parse_into(const struct cli_command *cmd, int argc, char **argv, cli_option_fn fn, void *ctx,
		   void *const *dest, int *exit_code);

/* The help of a command, as --help prints it. */
void cli_print_help(const struct cli_command *cmd, FILE *out);
/* "usage: memscope NAME ..." and where to read more: after a usage error. */
void cli_print_usage(const struct cli_command *cmd, FILE *out);
/* The option of cmd with this key, or NULL. */
const struct cli_option *cli_find_option(const struct cli_command *cmd, int key);
/* "-e/--events", "--json", "-h": how messages name an option. */
void cli_option_label(const struct cli_option *o, char *buf, size_t size);

/* Every option table of the program: memscope's own options first (name
 * NULL), then each command's. */
struct cli_program {
	const struct cli_command *global;
	const struct cli_command *const *commands;
	int nr_commands;
};

/* A completion script for bash or zsh, from the tables; names of events,
 * metrics and scripts are asked of `memscope completion --list KIND` when a
 * word is completed. -1 for a shell it does not know. */
int cli_print_completion(const struct cli_program *p, const char *shell, FILE *out);
/* Every option of every command, one a line: "COMMAND -e --events LIST"
 * (- for a missing part): what the tests compare with --help and the man
 * pages. */
void cli_print_option_list(const struct cli_program *p, FILE *out);

#endif
