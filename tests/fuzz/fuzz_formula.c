/* The catalog's formula parser, and what runs on every tree it returns:
 * the reference walk, evaluation, formatting. Property: what expr_format
 * writes parses again. */
#include "catalog/catalog_expr.h"
#include "fuzz_common.h"

static int count_ref(struct expr *ref, void *ctx)
{
	(*(int *)ctx)++;
	return ref->name[0] == '\0';   /* a reference always has a name */
}

/* Every name has a value but "missing"; "zero" is 0 (divisions by it). */
static bool lookup(const struct expr *ref, void *ctx, double *value)
{
	(void)ctx;
	if (!strcmp(ref->name, "missing"))
		return false;
	*value = !strcmp(ref->name, "zero") ? 0.0 : (double)strlen(ref->name) * 1e300;
	return true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size), msg[256], formatted[65536];
	int offset = -1, refs = 0;
	const char *fault;
	struct expr *e;

	if (!text)
		return 0;
	e = expr_parse(text, &offset, msg, sizeof(msg));
	if (!e) {
		if (offset < 0 || (size_t)offset > strlen(text) || !msg[0])
			abort();      /* an error always says where and what */
		free(text);
		return 0;
	}
	if (expr_each_ref(e, count_ref, &refs) != 0)
		abort();
	expr_eval(e, lookup, NULL, &fault);
	expr_format(e, formatted, sizeof(formatted));
	if (strlen(formatted) < sizeof(formatted) - 1) {
		struct expr *again = expr_parse(formatted, &offset, msg, sizeof(msg));

		/* A formula memscope prints must read back (list --explain shows them). */
		if (!again) {
			fprintf(stderr, "'%s' formatted as '%s' does not parse: %s\n", text, formatted, msg);
			abort();
		}
		expr_free(again);
	}
	expr_free(e);
	free(text);
	return 0;
}
