/* Formulas in the catalog: arithmetic over named inputs.
 *
 *   formula  := choice
 *   choice   := compare ['if' compare 'else' choice]   value if condition else other
 *   compare  := sum [('<' | '>') sum]                  1 when it holds, else 0
 *   sum      := product (('+' | '-') product)*
 *   product  := unary (('*' | '/') unary)*
 *   unary    := '-' unary | primary
 *   primary  := NUMBER | NAME | ('min' | 'max') '(' choice ',' choice ')' | '(' choice ')'
 *   NAME     := [A-Za-z_][A-Za-z0-9_.]*   e.g. ddrc.flux_rd, mem.read_bytes, seconds
 *   NUMBER   := decimal, float (1e6) or hex (0x40)
 *
 * The choice and min/max are those of perf's metric expressions (a condition
 * holds when it is not 0; only the branch taken is evaluated, so a division
 * by zero in the other gives no fault). Names are resolved by the catalog
 * (event of a PMU role, metric, or a built-in: `seconds` = length of the
 * interval, `smt_on`, `core_wide`), never by the parser. */
#ifndef MEMSCOPE_CATALOG_EXPR_H
#define MEMSCOPE_CATALOG_EXPR_H

#include <stdbool.h>
#include <stddef.h>

enum expr_op { EXPR_NUM, EXPR_REF, EXPR_ADD, EXPR_SUB, EXPR_MUL, EXPR_DIV, EXPR_NEG,
	       EXPR_LT, EXPR_GT, EXPR_MIN, EXPR_MAX, EXPR_IF };

struct expr {
	enum expr_op op;
	double num;          /* EXPR_NUM */
	char *name;          /* EXPR_REF, as written */
	int column;          /* 0-based offset of this node in the formula text */
	int slot;            /* EXPR_REF: index the catalog bound the name to, -1 before */
	int height;          /* levels of the tree below and including this node */
	struct expr *a, *b;  /* operands (b unused for EXPR_NEG); EXPR_IF: a if cond else b */
	struct expr *cond;   /* EXPR_IF only */
};

/* How deep a formula may nest (parentheses, signs, and the terms of one
 * sum or product, which form a chain): every walk of a tree recurses, so
 * this bounds the stack. */
#define EXPR_MAX_DEPTH 1000

/* Parse text. On error NULL, *err_offset = 0-based offset of the problem and
 * msg says what was expected there (also for a formula nested deeper than
 * EXPR_MAX_DEPTH). */
struct expr *expr_parse(const char *text, int *err_offset, char *msg, size_t msgsize);
void expr_free(struct expr *e);

/* Call fn on every EXPR_REF node, left to right; stops at the first non-zero return. */
int expr_each_ref(struct expr *e, int (*fn)(struct expr *ref, void *ctx), void *ctx);

/* Why a formula has no value (expr_eval's *fault). */
#define EXPR_FAULT_INPUT "an input has no value"
#define EXPR_FAULT_DIVISION "division by zero (nothing counted)"
#define EXPR_FAULT_RANGE "the result is out of range (beyond 1.8e308, a double's largest value)"

/* Value of e; lookup gives each reference's value and returns false when it has
 * none. *fault is NULL for a value, else why there is none (one of the
 * EXPR_FAULT_* texts): a reference without a value, a division by zero, or a
 * result that overflowed. A formula never produces inf or NaN. */
double expr_eval(const struct expr *e, bool (*lookup)(const struct expr *ref, void *ctx, double *value),
		 void *ctx, const char **fault);

/* Write e back as text with minimal parentheses. */
void expr_format(const struct expr *e, char *buf, size_t size);

#endif
