/* Output helpers for scripts: aligned tables, text bars, sparklines, CSV and
 * JSON strings, and memscope.emit / print, which write a report table or a
 * note in the format the user chose (--format text|csv|json) so one script
 * serves all three. */
#include <jansson.h>
#include <limits.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "lua/lua_internal.h"

#define MAX_COLUMNS 64
/* Deep enough for any report; bounded for the C recursion and the Lua stack. */
#define MAX_JSON_DEPTH 200

/* Display width of UTF-8 text: continuation bytes take no column. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

/* A cell as text (pushed): integers (Lua's integer subtype: counts) without
 * decimals, floats (measurements) with `precision` decimals, NaN "n/a", nil "-", booleans yes/no. */
static const char *push_cell(lua_State *L, int idx, int precision)
{
	char buf[64];

	idx = lua_absindex(L, idx);
	switch (lua_type(L, idx)) {
	case LUA_TNUMBER: {
		double v = lua_tonumber(L, idx);

		if (lua_isinteger(L, idx))
			snprintf(buf, sizeof(buf), "%lld", (long long)lua_tointeger(L, idx));
		else if (isnan(v))
			snprintf(buf, sizeof(buf), "n/a");
		else
			snprintf(buf, sizeof(buf), "%.*f", precision, v);
		return lua_pushstring(L, buf);
	}
	case LUA_TNIL:
	case LUA_TNONE:
		return lua_pushstring(L, "-");
	case LUA_TBOOLEAN:
		return lua_pushstring(L, lua_toboolean(L, idx) ? "yes" : "no");
	default:
		return luaL_tolstring(L, idx, NULL);
	}
}

static bool is_numeric_cell(lua_State *L, int idx)
{
	return lua_type(L, idx) == LUA_TNUMBER;
}

struct table_shape {
	int nr_cols, nr_rows;
	int precision;
	size_t width[MAX_COLUMNS];
	bool numeric[MAX_COLUMNS];   /* right-aligned: every cell is a number */
};

/* columns at cols_idx (array of names), rows at rows_idx (array of arrays).
 * Pushes a table of cell strings: texts[r*nr_cols + c + 1], header first. */
static void render_cells(lua_State *L, int cols_idx, int rows_idx, struct table_shape *t)
{
	int k = 0;

	/* Raw lengths: a __len could claim any size and keep this C loop
	 * going where no count hook reaches; a real table is paid for from
	 * the memory budget. */
	lua_Integer cols = (lua_Integer)lua_rawlen(L, cols_idx), rows = (lua_Integer)lua_rawlen(L, rows_idx);

	if (cols > MAX_COLUMNS)
		luaL_error(L, "a table has at most %d columns, not %lld", MAX_COLUMNS, (long long)cols);
	if (rows > (INT_MAX - 1) / (MAX_COLUMNS + 1))
		luaL_error(L, "a table has at most %d rows", (INT_MAX - 1) / (MAX_COLUMNS + 1));
	t->nr_cols = (int)cols;
	t->nr_rows = (int)rows;
	for (int c = 0; c < t->nr_cols; c++) {
		t->width[c] = 0;
		t->numeric[c] = t->nr_rows > 0;
	}
	lua_createtable(L, (t->nr_rows + 1) * t->nr_cols, 0);
	for (int c = 0; c < t->nr_cols; c++) {
		lua_geti(L, cols_idx, c + 1);
		const char *s = push_cell(L, -1, t->precision);

		if (text_width(s) > t->width[c])
			t->width[c] = text_width(s);
		lua_rawseti(L, -3, ++k);
		lua_pop(L, 1);
	}
	for (int r = 0; r < t->nr_rows; r++) {
		if (lua_geti(L, rows_idx, r + 1) != LUA_TTABLE)
			luaL_error(L, "table row %d is a %s, not a table of cells", r + 1, luaL_typename(L, -1));
		for (int c = 0; c < t->nr_cols; c++) {
			lua_geti(L, -1, c + 1);
			if (!is_numeric_cell(L, -1) && !lua_isnil(L, -1))
				t->numeric[c] = false;
			const char *s = push_cell(L, -1, t->precision);

			if (text_width(s) > t->width[c])
				t->width[c] = text_width(s);
			lua_rawseti(L, -4, ++k);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

static void add_padded(luaL_Buffer *b, const char *s, size_t width, bool right)
{
	size_t w = text_width(s);

	if (right)
		for (size_t i = w; i < width; i++)
			luaL_addchar(b, ' ');
	luaL_addstring(b, s);
	if (!right)
		for (size_t i = w; i < width; i++)
			luaL_addchar(b, ' ');
}

static bool cell_empty(lua_State *L, int texts_idx, int i)
{
	bool empty;

	lua_rawgeti(L, texts_idx, i);
	empty = !*lua_tostring(L, -1);
	lua_pop(L, 1);
	return empty;
}

/* The aligned text of a rendered table (texts at texts_idx); pushes it. */
static void push_aligned(lua_State *L, int texts_idx, const struct table_shape *t, const char *indent)
{
	luaL_Buffer b;
	int k = 0;

	luaL_buffinit(L, &b);
	for (int r = 0; r <= t->nr_rows; r++, k += t->nr_cols) {
		int last = t->nr_cols - 1;

		/* No trailing blanks: the line ends at its last non-empty text cell. */
		while (last > 0 && !t->numeric[last] && cell_empty(L, texts_idx, k + last + 1))
			last--;
		luaL_addstring(&b, indent);
		for (int c = 0; c <= last; c++) {
			lua_rawgeti(L, texts_idx, k + c + 1);
			const char *s = lua_tostring(L, -1);

			lua_pop(L, 1);
			if (c)
				luaL_addstring(&b, "  ");
			if (c == last && !t->numeric[c])
				luaL_addstring(&b, s);
			else
				add_padded(&b, s, t->width[c], t->numeric[c]);
		}
		luaL_addchar(&b, '\n');
	}
	luaL_pushresult(&b);
}

static void add_csv_field(luaL_Buffer *b, const char *s)
{
	size_t need = csv_format_field(NULL, 0, s, ",");
	char *room = luaL_prepbuffsize(b, need + 1);

	csv_format_field(room, need + 1, s, ",");
	luaL_addsize(b, need);
}

static void push_csv(lua_State *L, int texts_idx, const struct table_shape *t)
{
	luaL_Buffer b;
	int k = 0;

	luaL_buffinit(L, &b);
	for (int r = 0; r <= t->nr_rows; r++) {
		for (int c = 0; c < t->nr_cols; c++) {
			/* The buffer may use the stack's top: the cell is popped before
			 * it is added (the texts table keeps the string alive). */
			lua_rawgeti(L, texts_idx, ++k);
			const char *s = lua_tostring(L, -1);

			lua_pop(L, 1);
			if (c)
				luaL_addchar(&b, ',');
			/* Bars and sparklines in a CSV cell stay as they are; numbers are plain. */
			add_csv_field(&b, s);
		}
		luaL_addchar(&b, '\n');
	}
	luaL_pushresult(&b);
}

/* Options: columns (or header = first row), precision. Returns the index of
 * the columns array and of the data rows array (may be new tables). */
static void table_args(lua_State *L, int rows_idx, int opts_idx, int *cols_idx, int *data_idx, int *precision)
{
	luaL_checktype(L, rows_idx, LUA_TTABLE);
	*precision = 2;
	*cols_idx = 0;
	if (lua_istable(L, opts_idx)) {
		if (lua_getfield(L, opts_idx, "precision") == LUA_TNUMBER)
			*precision = (int)lua_tointeger(L, -1);
		lua_pop(L, 1);
		if (*precision < 0 || *precision > 12)
			*precision = 2;
		if (lua_getfield(L, opts_idx, "columns") == LUA_TTABLE)
			*cols_idx = lua_gettop(L);
		else
			lua_pop(L, 1);
	}
	if (*cols_idx) {
		*data_idx = rows_idx;
		return;
	}
	/* No columns: the first row is the header. */
	lua_geti(L, rows_idx, 1);
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		lua_newtable(L);
	}
	*cols_idx = lua_gettop(L);
	lua_newtable(L);
	for (lua_Integer i = 2, n = (lua_Integer)lua_rawlen(L, rows_idx); i <= n; i++) {
		lua_geti(L, rows_idx, i);
		lua_rawseti(L, -2, i - 1);
	}
	*data_idx = lua_gettop(L);
}

/* memscope.table(rows [, {columns=, precision=, indent=}]) -> aligned text */
static int fmt_table(lua_State *L)
{
	struct table_shape t;
	int cols, data;
	const char *indent = "";

	table_args(L, 1, 2, &cols, &data, &t.precision);
	if (lua_istable(L, 2) && lua_getfield(L, 2, "indent") == LUA_TSTRING)
		indent = lua_tostring(L, -1);
	render_cells(L, cols, data, &t);
	push_aligned(L, lua_gettop(L), &t, indent);
	return 1;
}

/* memscope.csv(rows [, {columns=}]) -> CSV text */
static int fmt_csv(lua_State *L)
{
	struct table_shape t;
	int cols, data;

	table_args(L, 1, 2, &cols, &data, &t.precision);
	render_cells(L, cols, data, &t);
	push_csv(L, lua_gettop(L), &t);
	return 1;
}

/* memscope.bar(value, max [, width]) -> a bar of `width` columns at most. */
static int fmt_bar(lua_State *L)
{
	static const char *const eighths[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
	double value = luaL_checknumber(L, 1), max = luaL_checknumber(L, 2);
	lua_Integer width = luaL_optinteger(L, 3, 20);
	luaL_Buffer b;
	long cells;

	if (width < 1 || width > 1000)
		return luaL_error(L, "bar(): width %d is not between 1 and 1000", (int)width);
	luaL_buffinit(L, &b);
	if (max > 0 && value > 0 && !isnan(value)) {
		double frac = value >= max ? 1.0 : value / max;

		cells = lround(frac * (double)width * 8);
		for (long i = 0; i < cells / 8; i++)
			luaL_addstring(&b, "█");
		luaL_addstring(&b, eighths[cells % 8]);
	}
	luaL_pushresult(&b);
	return 1;
}

/* memscope.sparkline(values [, min, max]) -> one character per value. */
static int fmt_sparkline(lua_State *L)
{
	static const char *const levels[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	lua_Integer n;
	double lo = INFINITY, hi = -INFINITY;
	luaL_Buffer b;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = (lua_Integer)lua_rawlen(L, 1);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, 1, i);
		if (lua_type(L, -1) == LUA_TNUMBER && !isnan(lua_tonumber(L, -1))) {
			double v = lua_tonumber(L, -1);

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		lua_pop(L, 1);
	}
	lo = luaL_optnumber(L, 2, lo);
	hi = luaL_optnumber(L, 3, hi);
	luaL_buffinit(L, &b);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, 1, i);
		if (lua_type(L, -1) != LUA_TNUMBER || isnan(lua_tonumber(L, -1))) {
			lua_pop(L, 1);
			luaL_addchar(&b, ' ');
			continue;
		}
		double v = lua_tonumber(L, -1);
		double at = hi > lo ? (v - lo) / (hi - lo) * 7.0 + 0.5 : 0.0;
		/* Clamped as a double: converting an out-of-range one to int is undefined. */
		int level = !(at >= 0) ? 0 : at >= 7 ? 7 : (int)at;

		lua_pop(L, 1);
		luaL_addstring(&b, levels[level]);
	}
	luaL_pushresult(&b);
	return 1;
}

/* memscope.fmt(x [, unit]) -> "1.50 G" style text with SI prefixes. */
static int fmt_human(lua_State *L)
{
	static const char *const prefixes[] = { "", "K", "M", "G", "T", "P" };
	double v = luaL_checknumber(L, 1);
	const char *unit = luaL_optstring(L, 2, "");
	int p = 0;
	char buf[64];

	if (isnan(v)) {
		lua_pushstring(L, "n/a");
		return 1;
	}
	while (fabs(v) >= 1000 && p < 5) {
		v /= 1000;
		p++;
	}
	if (p == 0 && v == floor(v))
		snprintf(buf, sizeof(buf), "%.0f%s%s", v, unit[0] ? " " : "", unit);
	else
		snprintf(buf, sizeof(buf), "%.*f %s%s", fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, prefixes[p], unit);
	lua_pushstring(L, buf);
	return 1;
}

/* ---- JSON ---- */

/* Converting a Lua value never raises while a JSON value is half built
 * (that would leak it): every failure frees what was built and comes back
 * as NULL with the reason; lua_to_json() raises once all is freed. Nesting
 * is bounded (C recursion, Lua stack), and a table met again on its own path
 * is a cycle, told apart from mere depth. */
struct json_conv {
	lua_State *L;
	unsigned long values;                   /* converted so far: the clock is looked at every 1024 */
	bool over_cpu;
	const void *path[MAX_JSON_DEPTH + 1];   /* tables being converted, outermost first */
	char error[160];
};

static json_t *value_json(struct json_conv *c, int idx, int depth);

/* A key as JSON object keys are: strings as they are, numbers as Lua
 * prints them (without converting the key in place: lua_next needs it). */
static const char *key_text(lua_State *L, int idx, char *buf, size_t size)
{
	if (lua_type(L, idx) == LUA_TSTRING)
		return lua_tostring(L, idx);
	if (lua_isinteger(L, idx))
		snprintf(buf, size, "%lld", (long long)lua_tointeger(L, idx));
	else if (lua_type(L, idx) == LUA_TNUMBER)
		snprintf(buf, size, "%.14g", lua_tonumber(L, idx));
	else
		return NULL;
	return buf;
}

static json_t *table_json(struct json_conv *c, int idx, int depth)
{
	lua_State *L = c->L;
	const void *self = lua_topointer(L, idx);
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	bool array = n > 0;
	json_t *out;

	for (int d = 0; d < depth; d++)
		if (c->path[d] == self) {
			snprintf(c->error, sizeof(c->error), "json(): the value refers to itself (a table holds, at "
				 "depth %d, a table it is inside of): JSON cannot express a cycle", depth);
			return NULL;
		}
	if (depth >= MAX_JSON_DEPTH || !lua_checkstack(L, 4)) {
		snprintf(c->error, sizeof(c->error), "json(): tables nested deeper than %d levels", MAX_JSON_DEPTH);
		return NULL;
	}
	c->path[depth] = self;
	/* An array when the keys are exactly 1..n; an empty table is {}. The
	 * stack is as it was after this, whichever way the loop ends. */
	if (array) {
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > n) {
				array = false;
				lua_pop(L, 2);
				break;
			}
			lua_pop(L, 1);
		}
	}
	out = array ? json_array() : json_object();
	if (!out) {
		snprintf(c->error, sizeof(c->error), "json(): out of memory");
		return NULL;
	}
	if (array) {
		for (lua_Integer i = 1; i <= n; i++) {
			json_t *v;

			lua_rawgeti(L, idx, i);
			v = value_json(c, -1, depth + 1);
			lua_pop(L, 1);
			if (!v || json_array_append_new(out, v) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		char buf[64];
		const char *key = key_text(L, -2, buf, sizeof(buf));

		if (key) {
			json_t *v = value_json(c, -1, depth + 1);

			if (!v || json_object_set_new(out, key, v) < 0) {
				lua_pop(L, 2);
				json_decref(out);
				if (!c->error[0])
					snprintf(c->error, sizeof(c->error), "json(): out of memory");
				return NULL;
			}
		}
		lua_pop(L, 1);
	}
	return out;
}

static json_t *value_json(struct json_conv *c, int idx, int depth)
{
	lua_State *L = c->L;
	json_t *v;

	/* A table may hold the same table many times over ({t, t} nested 30
	 * deep is 2^30 values): the conversion is C, which the count hook
	 * cannot stop, so it keeps the CPU limit itself (and the budget, in
	 * jansson's allocator). */
	if (++c->values % 1024 == 0 && lua_script_over_cpu(lua_script_of(L))) {
		c->over_cpu = true;
		return NULL;
	}
	idx = lua_absindex(L, idx);
	switch (lua_type(L, idx)) {
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx))
			v = json_integer((json_int_t)lua_tointeger(L, idx));
		else
			v = isfinite(lua_tonumber(L, idx)) ? json_real(lua_tonumber(L, idx)) : json_null();
		break;
	case LUA_TBOOLEAN:
		v = json_boolean(lua_toboolean(L, idx));
		break;
	case LUA_TSTRING:
		v = json_stringn(lua_tostring(L, idx), lua_rawlen(L, idx));
		if (!v && !c->error[0])
			snprintf(c->error, sizeof(c->error), "json(): a string that is not UTF-8 text");
		return v;
	case LUA_TTABLE:
		return table_json(c, idx, depth);
	default:
		v = json_null();
		break;
	}
	if (!v && !c->error[0])
		snprintf(c->error, sizeof(c->error), "json(): out of memory");
	return v;
}

/* The JSON of the value at idx (a new reference), or a Lua error. `depth`:
 * how deep the value already sits in what the caller builds. */
static json_t *lua_to_json(lua_State *L, int idx, int depth)
{
	struct json_conv c = { .L = L };
	json_t *v = value_json(&c, idx, depth);

	if (!v && c.over_cpu)
		lua_script_cpu_error(L);
	if (!v)
		luaL_error(L, "%s", c.error[0] ? c.error : "json(): out of memory");
	return v;
}

/* A JSON value owned by the Lua stack (a userdata that frees it when
 * collected), so a Lua error while it is built leaks nothing. */
static int anchor_gc(lua_State *L)
{
	json_t **box = lua_touserdata(L, 1);

	json_decref(*box);
	*box = NULL;
	return 0;
}

static json_t **push_anchor(lua_State *L)
{
	json_t **box = lua_newuserdatauv(L, sizeof(*box), 0);

	*box = NULL;
	if (luaL_newmetatable(L, "memscope.json_anchor")) {
		lua_pushcfunction(L, anchor_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return box;
}

/* Text of the anchored value, pushed; the value is freed at once. The text
 * is written straight into a Lua buffer (the script's budget), sized by a
 * first pass: a memory error while it grows leaks nothing, as the value
 * stays anchored until it is written. */
static void push_json_text(lua_State *L, json_t **box)
{
	const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER;
	size_t size = json_dumpb(*box, NULL, 0, flags);
	luaL_Buffer b;
	char *text;

	if (!size)
		luaL_error(L, "json(): the value cannot be written as JSON");
	text = luaL_buffinitsize(L, &b, size);
	if (json_dumpb(*box, text, size, flags) != size)
		luaL_error(L, "json(): the value cannot be written as JSON");
	json_decref(*box);
	*box = NULL;
	luaL_pushresultsize(&b, size);
}

/* memscope.json(value) -> compact JSON text */
static int fmt_json(lua_State *L)
{
	json_t **box;

	luaL_checkany(L, 1);
	lua_settop(L, 1);
	box = push_anchor(L);
	*box = lua_to_json(L, 1, 0);
	push_json_text(L, box);
	return 1;
}

/* ---- report output ---- */

static void write_out(lua_State *L, const char *text)
{
	struct lua_engine *e = lua_script_of(L)->engine;

	fputs(text, e->out);
}

/* print(...): a line of the report. In CSV it becomes a "# " comment, in JSON
 * a {"script":..., "note":...} object, so machine output stays parseable. */
int lua_format_print(lua_State *L)
{
	struct lua_script *s = lua_script_of(L);
	int n = lua_gettop(L);
	luaL_Buffer b;

	luaL_buffinit(L, &b);
	for (int i = 1; i <= n; i++) {
		luaL_tolstring(L, i, NULL);
		luaL_addvalue(&b);
		if (i < n)
			luaL_addchar(&b, '\t');
	}
	luaL_pushresult(&b);
	switch (s->engine->opt.format) {
	case LUA_OUTPUT_TEXT:
		write_out(L, lua_tostring(L, -1));
		write_out(L, "\n");
		break;
	case LUA_OUTPUT_CSV: {
		const char *text = lua_tostring(L, -1);

		/* Each line of a note is a comment line. */
		write_out(L, "# ");
		for (const char *p = text; *p; p++) {
			char c[2] = { *p, 0 };

			write_out(L, c);
			if (*p == '\n' && p[1])
				write_out(L, "# ");
		}
		write_out(L, "\n");
		break;
	}
	case LUA_OUTPUT_JSON: {
		const char *note = lua_tostring(L, -1);
		json_t **box = push_anchor(L);

		*box = json_pack("{s:s, s:s?}", "script", s->label, "note", note);
		if (!*box)
			return luaL_error(L, "print(): the note is not UTF-8 text");
		push_json_text(L, box);
		write_out(L, lua_tostring(L, -1));
		write_out(L, "\n");
		break;
	}
	}
	return 0;
}

/* memscope.emit{title=, columns=, rows=, precision=}: a report table. */
int lua_format_emit(lua_State *L)
{
	struct lua_script *s = lua_script_of(L);
	struct table_shape t;
	const char *title;
	int cols, data, texts;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "title");
	title = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
	if (lua_getfield(L, 1, "columns") != LUA_TTABLE)
		return luaL_error(L, "emit{}: columns = {...} is required");
	cols = lua_gettop(L);
	if (lua_getfield(L, 1, "rows") != LUA_TTABLE)
		return luaL_error(L, "emit{}: rows = {{...}, ...} is required");
	data = lua_gettop(L);
	lua_getfield(L, 1, "precision");
	t.precision = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 2;
	if (t.precision < 0 || t.precision > 12)
		t.precision = 2;
	lua_pop(L, 1);
	switch (s->engine->opt.format) {
	case LUA_OUTPUT_TEXT:
		render_cells(L, cols, data, &t);
		texts = lua_gettop(L);
		if (title[0]) {
			write_out(L, title);
			write_out(L, "\n");
		}
		push_aligned(L, texts, &t, "  ");
		write_out(L, lua_tostring(L, -1));
		write_out(L, "\n");
		break;
	case LUA_OUTPUT_CSV:
		render_cells(L, cols, data, &t);
		texts = lua_gettop(L);
		lua_pushfstring(L, "# %s: %s\n", s->label, title);
		write_out(L, lua_tostring(L, -1));
		push_csv(L, texts, &t);
		write_out(L, lua_tostring(L, -1));
		break;
	case LUA_OUTPUT_JSON: {
		/* Rows as objects keyed by column, values as they are (numbers
		 * stay numbers). Anchored while built: reading a cell is script
		 * code (__index, __tostring) that may raise. */
		lua_Integer nr_cols = (lua_Integer)lua_rawlen(L, cols), nr_rows = (lua_Integer)lua_rawlen(L, data);
		json_t **box = push_anchor(L), *rows;

		*box = json_pack("{s:s, s:s?}", "script", s->label, "title", title);
		if (!*box)
			return luaL_error(L, "emit{}: the title is not UTF-8 text");
		json_object_set_new(*box, "columns", lua_to_json(L, cols, 0));
		json_object_set_new(*box, "rows", rows = json_array());
		for (lua_Integer r = 1; r <= nr_rows; r++) {
			json_t *row = json_object();

			if (!row || json_array_append_new(rows, row) < 0)
				return luaL_error(L, "emit{}: out of memory");
			lua_geti(L, data, r);
			for (lua_Integer c = 1; c <= nr_cols && lua_istable(L, -1); c++) {
				lua_geti(L, cols, c);
				const char *key = luaL_tolstring(L, -1, NULL);

				lua_geti(L, -3, c);
				json_object_set_new(row, key, lua_to_json(L, -1, 1));
				lua_pop(L, 3);
			}
			lua_pop(L, 1);
		}
		push_json_text(L, box);
		write_out(L, lua_tostring(L, -1));
		write_out(L, "\n");
		break;
	}
	}
	s->engine->tables_emitted++;
	return 0;
}

void lua_format_open(lua_State *L)
{
	static const luaL_Reg helpers[] = {
		{ "table", fmt_table }, { "csv", fmt_csv }, { "json", fmt_json }, { "bar", fmt_bar },
		{ "sparkline", fmt_sparkline }, { "fmt", fmt_human }, { "emit", lua_format_emit },
		{ "print", lua_format_print },
		{ NULL, NULL },
	};

	lua_getglobal(L, "memscope");
	luaL_setfuncs(L, helpers, 0);
	lua_pop(L, 1);
	/* print() writes to the report, not to memscope's own stdout. */
	lua_pushcfunction(L, lua_format_print);
	lua_setglobal(L, "print");
}
