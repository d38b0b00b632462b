#include <string.h>

#include "cli/options.h"

#define FOR_EACH_OPTION(cmd, g, o) \
	for (const struct cli_group *g = (cmd)->groups; g && g->options; g++) \
		for (const struct cli_option *o = g->options; o->key; o++)

static bool is_short(int key)
{
	return key > 0 && key < CLI_LONG_ONLY;
}

/* The kind of words an option or operand takes, as the scripts name it. */
static const char *kind_word(enum cli_complete c)
{
	switch (c) {
	case CLI_COMPLETE_FILE: return "file";
	case CLI_COMPLETE_DIR: return "dir";
	case CLI_COMPLETE_PID: return "pid";
	case CLI_COMPLETE_EVENTS: return "events";
	case CLI_COMPLETE_METRICS: return "metrics";
	case CLI_COMPLETE_SCRIPT: return "script";
	case CLI_COMPLETE_WORDS: return "words";
	case CLI_COMPLETE_COMMAND: return "command";
	case CLI_COMPLETE_CPUS:
	case CLI_COMPLETE_NONE:
	default: return "none";
	}
}

/* ---- bash ---- */

static void bash_option_words(const struct cli_command *cmd, FILE *out)
{
	FOR_EACH_OPTION(cmd, g, o) {
		if (is_short(o->key))
			fprintf(out, "-%c ", o->key);
		if (o->name)
			fprintf(out, "--%s%s ", o->name, o->arg && (o->flags & CLI_OPTIONAL_ARG) ? "=" : "");
	}
	fputs("-h --help", out);
}

/* "-e|--events" patterns of the options that take an argument. */
static bool bash_arg_pattern(const struct cli_option *o, FILE *out)
{
	if (!o->arg || (o->flags & CLI_OPTIONAL_ARG))
		return false;
	if (is_short(o->key))
		fprintf(out, "-%c%s", o->key, o->name ? "|" : "");
	if (o->name)
		fprintf(out, "--%s", o->name);
	return true;
}

/* case $prev: the argument of each option that takes one. */
static void bash_value_cases(const struct cli_command *cmd, FILE *out)
{
	fputs("        __none__) ;;\n", out);
	FOR_EACH_OPTION(cmd, g, o) {
		if (!o->arg || (o->flags & CLI_OPTIONAL_ARG))
			continue;
		fputs("        ", out);
		bash_arg_pattern(o, out);
		fprintf(out, ") _memscope_value %s '%s'; return;;\n", kind_word(o->complete), o->choices ? o->choices : "");
	}
}

static void bash_command(const struct cli_command *cmd, FILE *out)
{
	bool any = false;

	fprintf(out, "    %s)\n        case $prev in\n", cmd->name);
	bash_value_cases(cmd, out);
	fputs("        esac\n", out);
	/* Where the operands begin: the first word that is neither an option nor an option's argument. */
	fputs("        local argopts='", out);
	FOR_EACH_OPTION(cmd, g, o) {
		if (!o->arg || (o->flags & CLI_OPTIONAL_ARG))
			continue;
		if (is_short(o->key))
			fprintf(out, "%s-%c", any ? " " : "", o->key);
		if (o->name)
			fprintf(out, "%s--%s", any || is_short(o->key) ? " " : "", o->name);
		any = true;
	}
	fputs("'\n        local opts='", out);
	bash_option_words(cmd, out);
	fprintf(out, "'\n        _memscope_operands %s %s '%s' \"$argopts\" \"$opts\" '%s'\n        ;;\n",
		cmd->options_first ? "first" : "any", kind_word(cmd->operands),
		cmd->operand_words ? cmd->operand_words : "", cmd->name);
}

static const char bash_head[] =
	"# bash completion for memscope, made from its option tables by `memscope completion bash`.\n"
	"\n"
	"_memscope_words()\n"
	"{\n"
	"    \"${_memscope_prog:-memscope}\" completion --list \"$1\" 2>/dev/null\n"
	"}\n"
	"\n"
	"# The argument of an option, or an operand: $1 the kind of words, $2 the words of a choice.\n"
	"_memscope_value()\n"
	"{\n"
	"    local prefix=\n"
	"    case $1 in\n"
	"    file) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- \"$cur\") ) ;;\n"
	"    dir) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- \"$cur\") ) ;;\n"
	"    pid) COMPREPLY=( $(compgen -W \"$(ps -e -o pid= 2>/dev/null)\" -- \"$cur\") ) ;;\n"
	"    events|metrics)\n"
	"        # A comma list: complete the name after the last comma.\n"
	"        [[ $cur == *,* ]] && prefix=${cur%,*},\n"
	"        compopt -o nospace 2>/dev/null\n"
	"        COMPREPLY=( $(compgen -P \"$prefix\" -W \"$(_memscope_words \"$1\")\" -- \"${cur##*,}\") ) ;;\n"
	"    script)\n"
	"        compopt -o filenames 2>/dev/null\n"
	"        COMPREPLY=( $(compgen -W \"$(_memscope_words scripts)\" -- \"$cur\") $(compgen -f -X '!*.lua' -- \"$cur\") $(compgen -d -- \"$cur\") ) ;;\n"
	"    words)\n"
	"        if [[ $2 == @* ]]; then\n"
	"            COMPREPLY=( $(compgen -W \"$(_memscope_words \"${2#@}\")\" -- \"$cur\") )\n"
	"        else\n"
	"            COMPREPLY=( $(compgen -W \"$2\" -- \"$cur\") )\n"
	"        fi ;;\n"
	"    command) COMPREPLY=( $(compgen -c -- \"$cur\") ) ;;\n"
	"    esac\n"
	"    [[ $prefix$cur == *:* ]] && declare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions \"$cur\"\n"
	"    return 0\n"
	"}\n"
	"\n"
	"# Options, or operands once they began: $1 first (options end at the first operand) or any,\n"
	"# $2 the operands' kind, $3 their words, $4 the options that take an argument, $5 every option.\n"
	"_memscope_operands()\n"
	"{\n"
	"    local i w operand=\n"
	"    for ((i = start; i < cword; i++)); do\n"
	"        w=${words[i]}\n"
	"        if [[ $w == -- ]]; then operand=$((i + 1)); break; fi\n"
	"        if [[ \" $4 \" == *\" $w \"* ]]; then ((i++)); continue; fi\n"
	"        [[ $w == -* ]] && continue\n"
	"        if [[ $1 == first ]]; then operand=$i; break; fi\n"
	"    done\n"
	"    if [[ -n $operand && $2 == command ]]; then\n"
	"        # A program and its arguments: complete them as its own completion does.\n"
	"        if ((operand < cword)) && declare -F _command_offset >/dev/null; then\n"
	"            _command_offset \"$operand\"\n"
	"        elif ((operand == cword)); then\n"
	"            COMPREPLY=( $(compgen -c -- \"$cur\") )\n"
	"        else\n"
	"            compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- \"$cur\") )\n"
	"        fi\n"
	"        return 0\n"
	"    fi\n"
	"    if [[ -z $operand && $cur == -* ]]; then\n"
	"        COMPREPLY=( $(compgen -W \"$5\" -- \"$cur\") )\n"
	"        return 0\n"
	"    fi\n"
	"    _memscope_value \"$2\" \"$3\"\n"
	"}\n"
	"\n"
	"_memscope()\n"
	"{\n"
	"    local cur prev words cword\n"
	"    if declare -F _get_comp_words_by_ref >/dev/null; then\n"
	"        _get_comp_words_by_ref -n =: cur prev words cword\n"
	"    else\n"
	"        words=( \"${COMP_WORDS[@]}\" ); cword=$COMP_CWORD\n"
	"        cur=${words[cword]}; prev=${words[cword - 1]}\n"
	"    fi\n"
	"    local _memscope_prog=${words[0]}\n"
	"    # --option=value: complete the value.\n"
	"    if [[ $cur == --*=* ]]; then\n"
	"        prev=${cur%%=*}; cur=${cur#*=}\n"
	"    fi\n"
	"    local i cmd= start=1\n"
	"    for ((i = 1; i < cword; i++)); do\n"
	"        case ${words[i]} in\n";

static const char bash_tail[] =
	"    esac\n"
	"}\n"
	"complete -F _memscope memscope\n";

static void bash_script(const struct cli_program *p, FILE *out)
{
	const struct cli_command *global = p->global;
	bool any = false;

	fputs(bash_head, out);
	/* Global options that take an argument skip it. */
	FOR_EACH_OPTION(global, g, o)
		if (o->arg && !(o->flags & CLI_OPTIONAL_ARG)) {
			fputs("        ", out);
			bash_arg_pattern(o, out);
			fputs(") ((i++)) ;;\n", out);
		}
	fputs("        -*) ;;\n        *) cmd=${words[i]}; start=$((i + 1)); break ;;\n        esac\n    done\n", out);
	fputs("    case $cmd in\n    '')\n        case $prev in\n", out);
	bash_value_cases(global, out);
	fputs("        esac\n        if [[ $cur == -* ]]; then\n            COMPREPLY=( $(compgen -W '", out);
	bash_option_words(global, out);
	fputs("' -- \"$cur\") )\n        else\n            COMPREPLY=( $(compgen -W '", out);
	for (int i = 0; i < p->nr_commands; i++) {
		fprintf(out, "%s%s", any ? " " : "", p->commands[i]->name);
		any = true;
	}
	fputs("' -- \"$cur\") )\n        fi\n        ;;\n", out);
	for (int i = 0; i < p->nr_commands; i++)
		bash_command(p->commands[i], out);
	fputs(bash_tail, out);
}

/* ---- zsh ---- */

/* Text inside '...[DESCRIPTION]...': the first line, quotes and brackets escaped. */
static void zsh_description(const char *text, FILE *out)
{
	for (const char *c = text; *c && *c != '\n'; c++) {
		if (*c == '\'')
			fputs("'\\''", out);
		else if (*c == '[' || *c == ']' || *c == ':' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else
			fputc(*c, out);
	}
}

static void zsh_action(enum cli_complete c, const char *choices, FILE *out)
{
	switch (c) {
	case CLI_COMPLETE_FILE: fputs("_files", out); break;
	case CLI_COMPLETE_DIR: fputs("_files -/", out); break;
	case CLI_COMPLETE_PID: fputs("_pids", out); break;
	case CLI_COMPLETE_EVENTS: fputs("_memscope_list events", out); break;
	case CLI_COMPLETE_METRICS: fputs("_memscope_list metrics", out); break;
	case CLI_COMPLETE_SCRIPT: fputs("_memscope_scripts", out); break;
	case CLI_COMPLETE_COMMAND: fputs("_command_names -e", out); break;
	case CLI_COMPLETE_WORDS:
		if (choices && choices[0] == '@')
			fprintf(out, "_memscope_words %s", choices + 1);
		else
			fprintf(out, "(%s)", choices ? choices : "");
		break;
	default: fputs(" ", out); break;
	}
}

static void zsh_option(const struct cli_option *o, FILE *out)
{
	bool arg = o->arg != NULL;
	bool optional = arg && (o->flags & CLI_OPTIONAL_ARG);

	fputs("    ", out);
	/* Options with an argument may repeat (-e a -e b); flags exclude themselves. */
	if (arg) {
		fputs("'*'", out);
	} else if (is_short(o->key) && o->name) {
		fprintf(out, "'(-%c --%s)'", o->key, o->name);
	}
	if (is_short(o->key) && o->name)
		fprintf(out, "{-%c%s,--%s%s}'", o->key, arg ? (optional ? "" : "+") : "", o->name,
			arg ? (optional ? "=-" : "=") : "");
	else if (o->name)
		fprintf(out, "'--%s%s", o->name, arg ? (optional ? "=-" : "=") : "");
	else
		fprintf(out, "'-%c%s", o->key, arg ? "+" : "");
	fputc('[', out);
	zsh_description(o->help, out);
	fputc(']', out);
	if (arg) {
		fprintf(out, ":%s:", o->arg);
		zsh_action(o->complete, o->choices, out);
	}
	fputs("' \\\n", out);
}

static void zsh_function(const struct cli_command *cmd, const char *fn, FILE *out)
{
	fprintf(out, "%s()\n{\n", fn);
	/* The program as it was typed, for the name lists (words shrink in sub-commands). */
	if (!cmd->name)
		fputs("  local _memscope_prog=${words[1]}\n", out);
	fputs("  _arguments -s -S \\\n", out);
	FOR_EACH_OPTION(cmd, g, o)
		zsh_option(o, out);
	fputs("    '(- *)'{-h,--help}'[show the help and exit]' \\\n", out);
	if (!cmd->name)
		fputs("    '(-)1:command:_memscope_commands' \\\n    '*::arguments:_memscope_command'\n}\n\n", out);
	else if (cmd->operands == CLI_COMPLETE_COMMAND)
		fputs("    '(-)1:command:_command_names -e' \\\n    '*::arguments:_normal'\n}\n\n", out);
	else if (cmd->operands != CLI_COMPLETE_NONE) {
		fputs("    '*:argument:", out);
		zsh_action(cmd->operands, cmd->operand_words, out);
		fputs("'\n}\n\n", out);
	} else
		fputs("\n}\n\n", out);
}

static void zsh_script(const struct cli_program *p, FILE *out)
{
	fputs("#compdef memscope\n"
	      "# zsh completion for memscope, made from its option tables by `memscope completion zsh`.\n\n"
	      "_memscope_list()\n{\n"
	      "  local -a names\n"
	      "  names=( ${(f)\"$(_call_program names ${_memscope_prog:-memscope} completion --list $1 2>/dev/null)\"} )\n"
	      "  _sequence compadd - $names\n}\n\n"
	      "_memscope_words()\n{\n"
	      "  local -a names\n"
	      "  names=( ${(f)\"$(_call_program names ${_memscope_prog:-memscope} completion --list $1 2>/dev/null)\"} )\n"
	      "  compadd - $names\n}\n\n"
	      "_memscope_scripts()\n{\n"
	      "  _alternative 'scripts:built-in script:_memscope_words scripts' 'files:script file:_files -g \"*.lua\"'\n}\n\n"
	      "_memscope_commands()\n{\n  local -a commands\n  commands=(\n", out);
	for (int i = 0; i < p->nr_commands; i++) {
		fprintf(out, "    '%s:", p->commands[i]->name);
		zsh_description(p->commands[i]->summary, out);
		fputs("'\n", out);
	}
	fputs("  )\n  _describe -t commands 'memscope command' commands\n}\n\n", out);
	for (int i = 0; i < p->nr_commands; i++) {
		char fn[96];

		snprintf(fn, sizeof(fn), "_memscope_%s", p->commands[i]->name);
		zsh_function(p->commands[i], fn, out);
	}
	fputs("_memscope_command()\n{\n  case $words[1] in\n", out);
	for (int i = 0; i < p->nr_commands; i++)
		fprintf(out, "    %s) _memscope_%s ;;\n", p->commands[i]->name, p->commands[i]->name);
	fputs("  esac\n}\n\n", out);
	zsh_function(p->global, "_memscope", out);
	fputs("_memscope \"$@\"\n", out);
}

int cli_print_completion(const struct cli_program *p, const char *shell, FILE *out)
{
	if (!strcmp(shell, "bash"))
		bash_script(p, out);
	else if (!strcmp(shell, "zsh"))
		zsh_script(p, out);
	else
		return -1;
	return 0;
}
