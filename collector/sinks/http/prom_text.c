#include "sinks/http/prom_text.h"
#include "util/array.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum prom_format prom_format_from_accept(const char *accept)
{
	return accept && strstr(accept, "application/openmetrics-text") ? PROM_OPENMETRICS : PROM_TEXT;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* memscope's unit -> base unit and the factor from it. */
static const char *base_unit(const char *unit, double *factor)
{
	static const struct { const char *unit, *base; double factor; } units[] = {
		{ "B", "bytes", 1 },          { "bytes", "bytes", 1 },
		{ "KiB", "bytes", 1024 },     { "MiB", "bytes", 1048576 },
		{ "B/s", "bytes_per_second", 1 },
		{ "ns", "seconds", 1e-9 },    { "us", "seconds", 1e-6 },
		{ "msec", "seconds", 1e-3 },  { "ms", "seconds", 1e-3 },
		{ "s", "seconds", 1 },        { "sec", "seconds", 1 },
		{ "Joules", "joules", 1 },    { "J", "joules", 1 },
		{ "Hz", "hertz", 1 },         { "C", "celsius", 1 },
	};

	*factor = 1;
	for (size_t i = 0; unit && i < ARRAY_SIZE(units); i++) {
		if (!strcmp(unit, units[i].unit)) {
			*factor = units[i].factor;
			return units[i].base;
		}
	}
	return "";
}

void prom_name_of(const char *name, const char *unit, double scale, enum prom_type type, struct prom_name *out)
{
	char base[140];
	size_t len = 0;
	const char *bu = base_unit(unit, &out->factor);
	bool under = true;

	/* memscope_ + name, lower case, runs of other characters as one '_'. */
	for (const char *p = name; *p && len < sizeof(base) - 1; p++) {
		unsigned char c = (unsigned char)*p;

		if (isalnum(c)) {
			base[len++] = (char)tolower(c);
			under = false;
		} else if (!under) {
			base[len++] = '_';
			under = true;
		}
	}
	while (len && base[len - 1] == '_')
		len--;
	base[len] = '\0';
	out->factor *= scale;
	/* "sched.offcpu_ns" counted in ns is in seconds once converted. */
	if (!strcmp(bu, "seconds")) {
		static const char *const time_suffixes[] = { "_ns", "_us", "_ms", "_msec" };

		for (size_t i = 0; i < ARRAY_SIZE(time_suffixes); i++)
			if (ends_with(base, time_suffixes[i]))
				base[strlen(base) - strlen(time_suffixes[i])] = '\0';
	}
	if (*bu && !ends_with(base, bu)) {
		snprintf(out->family, sizeof(out->family), "memscope_%s_%s", base, bu);
	} else {
		snprintf(out->family, sizeof(out->family), "memscope_%s", base);
	}
	/* The family never ends in _total: counters' samples add it, and a
	 * gauge named like a counter would mislead. */
	if (ends_with(out->family, "_total"))
		out->family[strlen(out->family) - 6] = '\0';
	snprintf(out->unit, sizeof(out->unit), "%s", ends_with(out->family, bu) ? bu : "");
	snprintf(out->sample, sizeof(out->sample), "%s%s", out->family,
		 type == PROM_COUNTER ? "_total" : type == PROM_INFO ? "_info" : "");
}

double prom_value(const struct prom_name *n, double v)
{
	if (n->factor > 0 && n->factor < 1) {
		double inverse = round(1 / n->factor);

		if (fabs(inverse * n->factor - 1) < 1e-12)
			return v / inverse;
	}
	return v * n->factor;
}

void prom_format_double(double v, char *out, size_t size)
{
	if (isnan(v)) {
		snprintf(out, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(out, size, "%.0f", v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, size, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

static void escaped(struct text_buf *b, const char *s, bool help)
{
	for (; *s; s++) {
		if (*s == '\\')
			text_buf_add(b, "\\\\", 2);
		else if (*s == '\n')
			text_buf_add(b, "\\n", 2);
		else if (*s == '"' && !help)
			text_buf_add(b, "\\\"", 2);
		else
			text_buf_addc(b, *s);
	}
}

void prom_family(struct text_buf *b, enum prom_format fmt, const struct prom_name *n, enum prom_type type,
		 const char *help)
{
	const char *type_name = type == PROM_COUNTER ? "counter" : type == PROM_INFO ? "info" : "gauge";
	/* The 0.0.4 format names the samples' name and has no info type. */
	const char *name = fmt == PROM_OPENMETRICS ? n->family : n->sample;

	if (fmt == PROM_TEXT && type == PROM_INFO)
		type_name = "gauge";
	if (help && *help) {
		text_buf_printf(b, "# HELP %s ", name);
		escaped(b, help, fmt == PROM_TEXT);
		text_buf_addc(b, '\n');
	}
	text_buf_printf(b, "# TYPE %s %s\n", name, type_name);
	if (fmt == PROM_OPENMETRICS && n->unit[0])
		text_buf_printf(b, "# UNIT %s %s\n", name, n->unit);
}

void prom_sample(struct text_buf *b, enum prom_format fmt, const struct prom_name *n, enum prom_type type,
		 const struct prom_label *labels, int nr_labels, double value)
{
	char num[40];
	int shown = 0;

	(void)fmt;
	(void)type;
	text_buf_add(b, n->sample, strlen(n->sample));
	for (int i = 0; i < nr_labels; i++) {
		if (!labels[i].value)
			continue;
		text_buf_printf(b, "%c%s=\"", shown++ ? ',' : '{', labels[i].name);
		escaped(b, labels[i].value, false);
		text_buf_addc(b, '"');
	}
	if (shown)
		text_buf_addc(b, '}');
	prom_format_double(value, num, sizeof(num));
	text_buf_printf(b, " %s\n", num);
}

void prom_end(struct text_buf *b, enum prom_format fmt)
{
	if (fmt == PROM_OPENMETRICS)
		text_buf_add(b, "# EOF\n", 6);
}
