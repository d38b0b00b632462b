/* Formulas in the catalog: arithmetic over named inputs.
 *
 *   formula  := sum
 *   sum      := product (('+' | '-') product)*
 *   product  := unary (('*' | '/') unary)*
 *   unary    := '-' unary | primary
 *   primary  := NUMBER | NAME | '(' sum ')'
 *   NAME     := [A-Za-z_][A-Za-z0-9_.]*   e.g. ddrc.flux_rd, mem.read_bytes, seconds
 *   NUMBER   := decimal, float (1e6) or hex (0x40)
 *
 * Names are resolved by the catalog (event of a PMU role, metric, or the
 * built-in `seconds` = length of the interval), never by the parser. */
#ifndef MEMSCOPE_CATALOG_EXPR_H
#define MEMSCOPE_CATALOG_EXPR_H

#include <stdbool.h>
#include <stddef.h>

enum expr_op { EXPR_NUM, EXPR_REF, EXPR_ADD, EXPR_SUB, EXPR_MUL, EXPR_DIV, EXPR_NEG };

struct expr {
	enum expr_op op;
	double num;          /* EXPR_NUM */
	char *name;          /* EXPR_REF, as written */
	int column;          /* 0-based offset of this node in the formula text */
	int slot;            /* EXPR_REF: index the catalog bound the name to, -1 before */
	struct expr *a, *b;  /* operands (b unused for EXPR_NEG) */
};

/* Parse text. On error NULL, *err_offset = 0-based offset of the problem and
 * msg says what was expected there. */
struct expr *expr_parse(const char *text, int *err_offset, char *msg, size_t msgsize);
void expr_free(struct expr *e);

/* Call fn on every EXPR_REF node, left to right; stops at the first non-zero return. */
int expr_each_ref(struct expr *e, int (*fn)(struct expr *ref, void *ctx), void *ctx);

/* Value of e; lookup gives each reference's value and returns false when it has
 * none. *ok is false when a reference has no value or a division is by zero:
 * a formula never produces inf or NaN. */
double expr_eval(const struct expr *e, bool (*lookup)(const struct expr *ref, void *ctx, double *value),
		 void *ctx, bool *ok);

/* Write e back as text with minimal parentheses. */
void expr_format(const struct expr *e, char *buf, size_t size);

#endif
