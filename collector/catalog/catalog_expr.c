#include "catalog/catalog_expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct expr_parser {
	const char *text;
	const char *p;
	int err_offset;
	char *msg;
	size_t msgsize;
	bool failed;
	int nesting;          /* parentheses and signs open around the parser */
};

static struct expr *parse_choice(struct expr_parser *ps);

static void skip_space(struct expr_parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
		ps->p++;
}

static struct expr *fail(struct expr_parser *ps, const char *what)
{
	if (!ps->failed) {
		ps->failed = true;
		ps->err_offset = (int)(ps->p - ps->text);
		if (*ps->p)
			snprintf(ps->msg, ps->msgsize, "expected %s, found '%c'", what, *ps->p);
		else
			snprintf(ps->msg, ps->msgsize, "expected %s at the end of the formula", what);
	}
	return NULL;
}

static struct expr *too_deep(struct expr_parser *ps)
{
	if (!ps->failed) {
		ps->failed = true;
		ps->err_offset = (int)(ps->p - ps->text);
		snprintf(ps->msg, ps->msgsize, "the formula nests more than %d levels (parentheses, signs, or the "
			 "terms of one sum or product); split it into metrics", EXPR_MAX_DEPTH);
	}
	return NULL;
}

static struct expr *node_new(enum expr_op op, int column)
{
	struct expr *e = calloc(1, sizeof(*e));

	if (e) {
		e->op = op;
		e->column = column;
		e->slot = -1;
		e->height = 1;
	}
	return e;
}

/* The height of a new node over its operands. */
static void set_height(struct expr *e)
{
	int a = e->a ? e->a->height : 0, b = e->b ? e->b->height : 0, c = e->cond ? e->cond->height : 0;

	e->height = 1 + (a > b ? (a > c ? a : c) : (b > c ? b : c));
}

static bool is_word(const char *start, const char *end, const char *word)
{
	return (size_t)(end - start) == strlen(word) && strncmp(start, word, (size_t)(end - start)) == 0;
}

/* min(a, b) or max(a, b); the name runs from start to ps->p. */
static struct expr *parse_call(struct expr_parser *ps, const char *start, int column)
{
	enum expr_op op;
	struct expr *e, *a, *b;

	if (is_word(start, ps->p, "min"))
		op = EXPR_MIN;
	else if (is_word(start, ps->p, "max"))
		op = EXPR_MAX;
	else {
		ps->p = start;
		return fail(ps, "a function min( or max( (the only functions)");
	}
	skip_space(ps);
	if (*ps->p != '(')
		return fail(ps, "'(' after min or max");
	if (++ps->nesting > EXPR_MAX_DEPTH)
		return too_deep(ps);
	ps->p++;
	a = parse_choice(ps);
	if (!a) {
		ps->nesting--;
		return NULL;
	}
	skip_space(ps);
	if (*ps->p != ',') {
		ps->nesting--;
		expr_free(a);
		return fail(ps, "',' between the two arguments of min or max");
	}
	ps->p++;
	b = parse_choice(ps);
	ps->nesting--;
	if (!b) {
		expr_free(a);
		return NULL;
	}
	skip_space(ps);
	if (*ps->p != ')') {
		expr_free(a);
		expr_free(b);
		return fail(ps, "')' after the second argument of min or max");
	}
	ps->p++;
	e = node_new(op, column);
	if (!e) {
		expr_free(a);
		expr_free(b);
		return fail(ps, "memory");
	}
	e->a = a;
	e->b = b;
	set_height(e);
	if (e->height > EXPR_MAX_DEPTH) {
		expr_free(e);
		return too_deep(ps);
	}
	return e;
}

static struct expr *parse_primary(struct expr_parser *ps)
{
	int column;

	skip_space(ps);
	column = (int)(ps->p - ps->text);
	if (*ps->p == '(') {
		struct expr *inner;

		/* Bounded before recursing: 100,000 '(' must not overflow the stack. */
		if (++ps->nesting > EXPR_MAX_DEPTH)
			return too_deep(ps);
		ps->p++;
		inner = parse_choice(ps);
		ps->nesting--;
		if (!inner)
			return NULL;
		skip_space(ps);
		if (*ps->p != ')') {
			expr_free(inner);
			return fail(ps, "')'");
		}
		ps->p++;
		return inner;
	}
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		struct expr *e;
		char *end;
		double v;

		errno = 0;
		if (ps->p[0] == '0' && (ps->p[1] == 'x' || ps->p[1] == 'X'))
			v = (double)strtoull(ps->p, &end, 16);
		else
			v = strtod(ps->p, &end);
		if (end == ps->p || errno)
			return fail(ps, "a number");
		if (isalpha((unsigned char)*end) || *end == '_') {
			ps->p = end;
			return fail(ps, "an operator after the number");
		}
		e = node_new(EXPR_NUM, column);
		if (!e)
			return fail(ps, "memory");
		e->num = v;
		ps->p = end;
		return e;
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
		const char *start = ps->p;
		struct expr *e;

		while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.')
			ps->p++;
		if (ps->p[-1] == '.') {
			ps->p--;
			return fail(ps, "a name after '.'");
		}
		if (*ps->p == '(' || is_word(start, ps->p, "min") || is_word(start, ps->p, "max"))
			return parse_call(ps, start, column);
		if (is_word(start, ps->p, "if") || is_word(start, ps->p, "else")) {
			ps->p = start;
			return fail(ps, "a number, a name or '('");
		}
		e = node_new(EXPR_REF, column);
		if (!e || !(e->name = strndup(start, (size_t)(ps->p - start)))) {
			free(e);
			return fail(ps, "memory");
		}
		return e;
	}
	return fail(ps, "a number, a name or '('");
}

static struct expr *parse_unary(struct expr_parser *ps)
{
	skip_space(ps);
	if (*ps->p == '-') {
		int column = (int)(ps->p - ps->text);
		struct expr *e, *inner;

		if (++ps->nesting > EXPR_MAX_DEPTH)
			return too_deep(ps);
		ps->p++;
		inner = parse_unary(ps);
		ps->nesting--;
		if (!inner)
			return NULL;
		e = node_new(EXPR_NEG, column);
		if (!e) {
			expr_free(inner);
			return fail(ps, "memory");
		}
		e->a = inner;
		set_height(e);
		if (e->height > EXPR_MAX_DEPTH) {
			expr_free(e);
			return too_deep(ps);
		}
		return e;
	}
	return parse_primary(ps);
}

static struct expr *parse_binary(struct expr_parser *ps, bool sum_level)
{
	struct expr *left = sum_level ? parse_binary(ps, false) : parse_unary(ps);

	while (left) {
		enum expr_op op;
		struct expr *right, *e;
		int column;

		skip_space(ps);
		column = (int)(ps->p - ps->text);
		if (sum_level && (*ps->p == '+' || *ps->p == '-'))
			op = *ps->p == '+' ? EXPR_ADD : EXPR_SUB;
		else if (!sum_level && (*ps->p == '*' || *ps->p == '/'))
			op = *ps->p == '*' ? EXPR_MUL : EXPR_DIV;
		else
			break;
		ps->p++;
		right = sum_level ? parse_binary(ps, false) : parse_unary(ps);
		if (!right) {
			expr_free(left);
			return NULL;
		}
		e = node_new(op, column);
		if (!e) {
			expr_free(left);
			expr_free(right);
			return fail(ps, "memory");
		}
		e->a = left;
		e->b = right;
		set_height(e);
		left = e;
		/* Every walk of the tree recurses: its height is what is bounded
		 * (a sum of 300,000 terms is a chain that deep). */
		if (e->height > EXPR_MAX_DEPTH) {
			expr_free(e);
			return too_deep(ps);
		}
	}
	return left;
}

static struct expr *parse_sum(struct expr_parser *ps)
{
	return parse_binary(ps, true);
}

/* A node over operands, bounded in height like every other. */
static struct expr *join(struct expr_parser *ps, enum expr_op op, int column, struct expr *a, struct expr *b,
			 struct expr *cond)
{
	struct expr *e = node_new(op, column);

	if (!e) {
		expr_free(a);
		expr_free(b);
		expr_free(cond);
		return fail(ps, "memory");
	}
	e->a = a;
	e->b = b;
	e->cond = cond;
	set_height(e);
	if (e->height > EXPR_MAX_DEPTH) {
		expr_free(e);
		return too_deep(ps);
	}
	return e;
}

static struct expr *parse_compare(struct expr_parser *ps)
{
	struct expr *left = parse_sum(ps), *right;
	enum expr_op op;
	int column;

	if (!left)
		return NULL;
	skip_space(ps);
	if (*ps->p != '<' && *ps->p != '>')
		return left;
	column = (int)(ps->p - ps->text);
	op = *ps->p == '<' ? EXPR_LT : EXPR_GT;
	ps->p++;
	right = parse_sum(ps);
	if (!right) {
		expr_free(left);
		return NULL;
	}
	return join(ps, op, column, left, right, NULL);
}

/* The keyword at ps->p, not the start of a longer name (iffy). */
static bool at_keyword(struct expr_parser *ps, const char *word)
{
	size_t n = strlen(word);

	return strncmp(ps->p, word, n) == 0 && !isalnum((unsigned char)ps->p[n]) && ps->p[n] != '_' &&
	       ps->p[n] != '.';
}

/* perf's `a if cond else b`: right-associative, so `a if c else b if d else e`
 * is a if c, else (b if d else e). */
static struct expr *parse_choice(struct expr_parser *ps)
{
	struct expr *value = parse_compare(ps), *cond, *other;
	int column;

	if (!value)
		return NULL;
	skip_space(ps);
	if (!at_keyword(ps, "if"))
		return value;
	column = (int)(ps->p - ps->text);
	if (++ps->nesting > EXPR_MAX_DEPTH) {
		expr_free(value);
		return too_deep(ps);
	}
	ps->p += 2;
	cond = parse_compare(ps);
	if (!cond) {
		ps->nesting--;
		expr_free(value);
		return NULL;
	}
	skip_space(ps);
	if (!at_keyword(ps, "else")) {
		ps->nesting--;
		expr_free(value);
		expr_free(cond);
		return fail(ps, "'else' after the condition of 'if'");
	}
	ps->p += 4;
	other = parse_choice(ps);
	ps->nesting--;
	if (!other) {
		expr_free(value);
		expr_free(cond);
		return NULL;
	}
	return join(ps, EXPR_IF, column, value, other, cond);
}

struct expr *expr_parse(const char *text, int *err_offset, char *msg, size_t msgsize)
{
	struct expr_parser ps = { .text = text, .p = text, .msg = msg, .msgsize = msgsize };
	struct expr *e = parse_choice(&ps);

	if (e) {
		skip_space(&ps);
		if (*ps.p) {
			expr_free(e);
			e = fail(&ps, "an operator (+ - * / < > if) or the end of the formula");
		}
	}
	if (!e)
		*err_offset = ps.err_offset;
	return e;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	expr_free(e->a);
	expr_free(e->b);
	expr_free(e->cond);
	free(e->name);
	free(e);
}

static int each_ref(struct expr *e, int (*fn)(struct expr *ref, void *ctx), void *ctx, int depth)
{
	int rc;

	if (!e)
		return 0;
	/* Trees come from expr_parse, which bounds their height; this guards
	 * the recursion all the same. */
	if (depth > EXPR_MAX_DEPTH)
		return -1;
	if (e->op == EXPR_REF)
		return fn(e, ctx);
	rc = each_ref(e->cond, fn, ctx, depth + 1);
	if (rc)
		return rc;
	rc = each_ref(e->a, fn, ctx, depth + 1);
	if (rc)
		return rc;
	return each_ref(e->b, fn, ctx, depth + 1);
}

int expr_each_ref(struct expr *e, int (*fn)(struct expr *ref, void *ctx), void *ctx)
{
	return each_ref(e, fn, ctx, 0);
}

static double eval(const struct expr *e, bool (*lookup)(const struct expr *ref, void *ctx, double *value),
		   void *ctx, const char **fault, int depth)
{
	double a, b;

	if (depth > EXPR_MAX_DEPTH) {
		*fault = "the formula nests too deeply";
		return 0;
	}
	switch (e->op) {
	case EXPR_NUM:
		return e->num;
	case EXPR_REF:
		if (!lookup(e, ctx, &a)) {
			if (!*fault)
				*fault = EXPR_FAULT_INPUT;
			return 0;
		}
		return a;
	case EXPR_NEG:
		return -eval(e->a, lookup, ctx, fault, depth + 1);
	case EXPR_IF:
		/* Only the branch taken: the other may divide by zero. */
		a = eval(e->cond, lookup, ctx, fault, depth + 1);
		if (*fault)
			return 0;
		return eval(a != 0 ? e->a : e->b, lookup, ctx, fault, depth + 1);
	default:
		break;
	}
	a = eval(e->a, lookup, ctx, fault, depth + 1);
	b = eval(e->b, lookup, ctx, fault, depth + 1);
	switch (e->op) {
	case EXPR_ADD:
		return a + b;
	case EXPR_SUB:
		return a - b;
	case EXPR_MUL:
		return a * b;
	case EXPR_DIV:
		if (b == 0) {
			if (!*fault)
				*fault = EXPR_FAULT_DIVISION;
			return 0;
		}
		return a / b;
	case EXPR_LT:
		return a < b ? 1 : 0;
	case EXPR_GT:
		return a > b ? 1 : 0;
	case EXPR_MIN:
		return a < b ? a : b;
	case EXPR_MAX:
		return a > b ? a : b;
	default:
		*fault = "unknown operator";
		return 0;
	}
}

double expr_eval(const struct expr *e, bool (*lookup)(const struct expr *ref, void *ctx, double *value),
		 void *ctx, const char **fault)
{
	double v;

	*fault = NULL;
	v = eval(e, lookup, ctx, fault, 0);
	/* Counts are finite; a result that is not went past what a double
	 * holds (1e308 * 1e308): no number, with that reason. */
	if (!*fault && !isfinite(v))
		*fault = EXPR_FAULT_RANGE;
	return *fault ? 0 : v;
}

static int precedence(enum expr_op op)
{
	switch (op) {
	case EXPR_IF:
		return -1;
	case EXPR_LT:
	case EXPR_GT:
		return 0;
	case EXPR_ADD:
	case EXPR_SUB:
		return 1;
	case EXPR_MUL:
	case EXPR_DIV:
		return 2;
	case EXPR_NEG:
		return 3;
	default:
		return 4;
	}
}

static void format_into(const struct expr *e, char *buf, size_t size, size_t *len, int parent_prec, bool right)
{
	int prec = precedence(e->op);
	bool paren = prec < parent_prec || (right && prec == parent_prec && prec < 3);
	const char *op = NULL;

#define EMIT(...) do { if (*len < size) *len += (size_t)snprintf(buf + *len, size - *len, __VA_ARGS__); } while (0)
	if (paren)
		EMIT("(");
	switch (e->op) {
	case EXPR_NUM:
		EMIT("%.10g", e->num);
		break;
	case EXPR_REF:
		EMIT("%s", e->name);
		break;
	case EXPR_NEG:
		EMIT("-");
		format_into(e->a, buf, size, len, prec, false);
		break;
	case EXPR_MIN:
	case EXPR_MAX:
		EMIT("%s(", e->op == EXPR_MIN ? "min" : "max");
		format_into(e->a, buf, size, len, -1, false);
		EMIT(", ");
		format_into(e->b, buf, size, len, -1, false);
		EMIT(")");
		break;
	case EXPR_IF:
		format_into(e->a, buf, size, len, 0, false);
		EMIT(" if ");
		format_into(e->cond, buf, size, len, 0, false);
		EMIT(" else ");
		format_into(e->b, buf, size, len, -1, false);
		break;
	case EXPR_LT:
	case EXPR_GT:
		format_into(e->a, buf, size, len, 1, false);
		EMIT("%s", e->op == EXPR_LT ? " < " : " > ");
		format_into(e->b, buf, size, len, 1, false);
		break;
	default:
		op = e->op == EXPR_ADD ? " + " : e->op == EXPR_SUB ? " - " : e->op == EXPR_MUL ? " * " : " / ";
		format_into(e->a, buf, size, len, prec, false);
		EMIT("%s", op);
		format_into(e->b, buf, size, len, prec, true);
		break;
	}
	if (paren)
		EMIT(")");
#undef EMIT
}

void expr_format(const struct expr *e, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	format_into(e, buf, size, &len, -1, false);
	if (len >= size)
		buf[size - 1] = '\0';
}
