/* Format fields ("config:0-7,32-35") and the "field=value,..." terms that
 * are encoded through them into perf_event_attr config words. */
#include "host/pmu.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Alias expansion nests at most this deep, so a loop of aliases ends. */
#define MAX_ALIAS_DEPTH 4
#define MAX_TERMS 64

static const char *const word_names[] = { "config", "config1", "config2", "config3" };

static int parse_bit(const char **p, int *bit)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	v = strtol(*p, &end, 10);
	if (v > 63)
		return -1;
	*bit = (int)v;
	*p = end;
	return 0;
}

int pmu_format_parse(const char *text, struct pmu_format *fmt, struct ms_error *err)
{
	const char *colon = strchr(text, ':'), *p;
	size_t word_len;
	bool known = false;

	fmt->mask = 0;
	fmt->width = 0;
	if (!colon) {
		ms_error_set(err, "format \"%s\": expected WORD:BITS such as \"config:0-7,32-35\"",
			     text);
		return -1;
	}
	word_len = (size_t)(colon - text);
	for (int w = 0; w < 4; w++) {
		if (strlen(word_names[w]) == word_len && strncmp(text, word_names[w], word_len) == 0) {
			fmt->word = (enum pmu_config_word)w;
			known = true;
		}
	}
	if (!known) {
		ms_error_set(err, "format \"%s\": unknown word \"%.*s\"; expected config, config1, "
			     "config2 or config3", text, (int)word_len, text);
		return -1;
	}
	p = colon + 1;
	for (;;) {
		int first, last;

		if (parse_bit(&p, &first) < 0)
			goto bad_bits;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_bit(&p, &last) < 0 || last < first)
				goto bad_bits;
		}
		for (int bit = first; bit <= last; bit++) {
			if (fmt->mask & (UINT64_C(1) << bit))
				goto bad_bits;
			fmt->mask |= UINT64_C(1) << bit;
		}
		if (*p != ',')
			break;
		p++;  /* a range must follow the comma */
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		goto bad_bits;
	fmt->width = __builtin_popcountll(fmt->mask);
	return 0;

bad_bits:
	fmt->mask = 0;
	ms_error_set(err, "format \"%s\": bad bit list after \"%.*s:\"; expected bits 0-63 as "
		     "\"N\" or \"LOW-HIGH\" ranges in ascending order without overlap, separated by "
		     "commas", text, (int)word_len, text);
	return -1;
}

static __u64 *attr_word(struct perf_event_attr *attr, enum pmu_config_word word)
{
	switch (word) {
	case PMU_CONFIG:
		return &attr->config;
	case PMU_CONFIG1:
		return &attr->config1;
	case PMU_CONFIG2:
		return &attr->config2;
	case PMU_CONFIG3:
		break;
	}
	/* config3 is newer than the perf_event_attr this is built against. */
	return NULL;
}

void pmu_format_apply(const struct pmu_format *fmt, uint64_t value, struct perf_event_attr *attr)
{
	__u64 *word = attr_word(attr, fmt->word);
	uint64_t bits = 0;
	int shift = 0;

	if (!word)
		return;
	/* Value bit k goes to the k-th set bit of the mask, lowest first. */
	for (int bit = 0; bit < 64; bit++) {
		if (!(fmt->mask & (UINT64_C(1) << bit)))
			continue;
		if (shift < 64 && (value >> shift) & 1)
			bits |= UINT64_C(1) << bit;
		shift++;
	}
	*word = (*word & ~fmt->mask) | bits;
}

/* --- terms --- */

struct term {
	char name[64];
	char value[64];      /* "" for a bare flag or alias name */
	bool has_value;
};

static void trim(char *s)
{
	size_t len = strlen(s);
	size_t start = 0;

	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
	while (isspace((unsigned char)s[start]))
		start++;
	memmove(s, s + start, len - start + 1);
}

static int split_terms(const char *text, struct term *terms, int *nr, struct ms_error *err)
{
	const char *p = text;

	*nr = 0;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char piece[160];
		char *eq;
		struct term *t;

		if (len >= sizeof(piece)) {
			ms_error_set(err, "term \"%.*s...\" is too long", 40, p);
			return -1;
		}
		memcpy(piece, p, len);
		piece[len] = '\0';
		trim(piece);
		p = end ? end + 1 : p + len;
		if (!piece[0]) {
			if (end || *nr == 0) {
				ms_error_set(err, "\"%s\": empty term; expected field=value terms "
					     "separated by single commas", text);
				return -1;
			}
			continue;
		}
		if (*nr == MAX_TERMS) {
			ms_error_set(err, "\"%s\": more than %d terms", text, MAX_TERMS);
			return -1;
		}
		t = &terms[(*nr)++];
		eq = strchr(piece, '=');
		if (eq)
			*eq = '\0';
		trim(piece);
		if (strlen(piece) >= sizeof(t->name) || (eq && strlen(eq + 1) >= sizeof(t->value))) {
			ms_error_set(err, "term \"%s\" is too long", piece);
			return -1;
		}
		/* Both lengths were checked above. */
		memcpy(t->name, piece, strlen(piece) + 1);
		t->has_value = eq != NULL;
		memcpy(t->value, eq ? eq + 1 : "", eq ? strlen(eq + 1) + 1 : 1);
		trim(t->value);
		if (!t->name[0] || (t->has_value && !t->value[0])) {
			ms_error_set(err, "term \"%s=%s\": expected field=value with both parts present",
				     t->name, t->value);
			return -1;
		}
	}
	return 0;
}

/* Decimal or 0x hexadecimal, like perf's event parser. */
static int parse_value(const char *text, uint64_t *value)
{
	char *end;
	int base = 10;

	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		base = 16;
	if (!isdigit((unsigned char)text[0]) || (base == 16 && !isxdigit((unsigned char)text[2])))
		return -1;
	errno = 0;
	*value = strtoull(text, &end, base);
	if (errno || *end)
		return -1;
	return 0;
}

static void list_fields(const struct pmu *pmu, struct ms_error *err)
{
	if (pmu->nr_formats == 0) {
		ms_error_append(err, "; %s has no format fields (only config=, config1=, config2=)",
				pmu->name);
	} else {
		ms_error_append(err, "; %s fields:", pmu->name);
		for (int i = 0; i < pmu->nr_formats; i++)
			ms_error_append(err, "%s %s", i ? "," : "", pmu->formats[i].name);
	}
	if (pmu->nr_aliases > 0)
		ms_error_append(err, " (or one of its %d event names; see memscope list --pmus)",
				pmu->nr_aliases);
}

/* A field's name when some explicit term sets it, for '?' parameters. */
static bool term_sets(const struct term *terms, int nr, const char *name)
{
	for (int i = 0; i < nr; i++)
		if (terms[i].has_value && strcmp(terms[i].value, "?") != 0 &&
		    strcmp(terms[i].name, name) == 0)
			return true;
	return false;
}

/* A bare name that is not a format field but an event alias of the PMU. */
static bool names_alias(const struct pmu *pmu, const struct term *t)
{
	return !t->has_value && !pmu_format_find(pmu, t->name) && pmu_alias_find(pmu, t->name);
}

struct encode_state {
	const struct pmu *pmu;
	struct perf_event_attr *attr;
	const struct term *user;  /* the caller's own terms, which fill '?' parameters */
	int nr_user;
};

static int encode(struct encode_state *st, const char *text, const char *alias, int depth,
		  struct ms_error *err);

static int apply_term(struct encode_state *st, const struct term *t, const char *alias, int depth,
		      struct ms_error *err)
{
	const struct pmu *pmu = st->pmu;
	const struct pmu_format *fmt = pmu_format_find(pmu, t->name);
	uint64_t value = 1;

	if (t->has_value && strcmp(t->value, "?") == 0) {
		/* The alias leaves this field to the user. */
		if (!term_sets(st->user, st->nr_user, t->name)) {
			ms_error_set(err, "%s/%s/ needs a value for '%s' (the event's definition has "
				     "%s=?); add it, e.g. %s/%s,%s=0x0/", pmu->name,
				     alias ? alias : t->name, t->name, t->name, pmu->name,
				     alias ? alias : t->name, t->name);
			return -1;
		}
		return 0;
	}
	if (t->has_value && parse_value(t->value, &value) < 0) {
		ms_error_set(err, "%s: %s=%s: expected a decimal or 0x-prefixed hexadecimal number",
			     pmu->name, t->name, t->value);
		return -1;
	}
	if (!fmt) {
		for (int w = 0; w < 4; w++) {
			__u64 *word;

			if (strcmp(t->name, word_names[w]) != 0)
				continue;
			if (!t->has_value) {
				ms_error_set(err, "%s: '%s' needs a value (%s=0x...)", pmu->name,
					     t->name, t->name);
				return -1;
			}
			word = attr_word(st->attr, (enum pmu_config_word)w);
			if (!word) {
				ms_error_set(err, "%s: %s is not supported by the perf_event_attr "
					     "memscope was built with", pmu->name, t->name);
				return -1;
			}
			*word = value;
			return 0;
		}
	}
	if (!fmt && !t->has_value) {
		const struct pmu_alias *a = pmu_alias_find(pmu, t->name);

		if (a) {
			if (depth >= MAX_ALIAS_DEPTH) {
				ms_error_set(err, "%s/%s/: event names nest more than %d deep",
					     pmu->name, t->name, MAX_ALIAS_DEPTH);
				return -1;
			}
			return encode(st, a->terms, a->name, depth + 1, err);
		}
	}
	if (!fmt) {
		ms_error_set(err, "%s: unknown term '%s'%s%s%s", pmu->name, t->name,
			     alias ? " (in the definition of " : "", alias ? alias : "",
			     alias ? ")" : "");
		list_fields(pmu, err);
		return -1;
	}
	if (fmt->width < 64 && value >> fmt->width) {
		ms_error_set(err, "%s: %s=%s does not fit: field '%s' is %d bit%s wide (%s), at most "
			     "0x%" PRIx64, pmu->name, t->name, t->value, fmt->name, fmt->width,
			     fmt->width == 1 ? "" : "s", word_names[fmt->word],
			     (UINT64_C(1) << fmt->width) - 1);
		return -1;
	}
	if (!attr_word(st->attr, fmt->word)) {
		ms_error_set(err, "%s: field '%s' lives in %s, which the perf_event_attr memscope was "
			     "built with does not have", pmu->name, fmt->name, word_names[fmt->word]);
		return -1;
	}
	pmu_format_apply(fmt, value, st->attr);
	return 0;
}

static int encode(struct encode_state *st, const char *text, const char *alias, int depth,
		  struct ms_error *err)
{
	struct term terms[MAX_TERMS];
	int nr;

	if (split_terms(text, terms, &nr, err) < 0) {
		ms_error_prefix(err, "%s%s%s", st->pmu->name, alias ? "/" : "", alias ? alias : "");
		return -1;
	}
	if (depth > 0) {
		for (int i = 0; i < nr; i++)
			if (apply_term(st, &terms[i], alias, depth, err) < 0)
				return -1;
		return 0;
	}
	/* Expand event names first so the user's own fields override theirs
	 * whatever the order: "flux_rd,event=2" and "event=2,flux_rd" agree. */
	st->user = terms;
	st->nr_user = nr;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nr; i++)
			if (names_alias(st->pmu, &terms[i]) == (pass == 0) &&
			    apply_term(st, &terms[i], alias, depth, err) < 0)
				return -1;
	return 0;
}

int pmu_encode_terms(const struct pmu *pmu, const char *terms, struct perf_event_attr *attr,
		     struct ms_error *err)
{
	struct encode_state st = { .pmu = pmu, .attr = attr };

	return encode(&st, terms, NULL, 0, err);
}
