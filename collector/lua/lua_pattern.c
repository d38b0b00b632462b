/* string.find, string.match, string.gmatch and string.gsub for sandboxed
 * scripts: Lua's patterns (the reference manual, 6.4.1), matched here by a
 * backtracking matcher that keeps the CPU limit. Lua's own matcher is C the
 * count hook never interrupts, and a pattern with a few repetitions
 * backtracks for a time that grows as the string's length to the power of
 * their number: string.find(("a"):rep(200), ".-.-.-.-.-.-.-.-b") would take
 * longer than anyone waits. This one counts its steps and looks at the
 * clock every STEPS_PER_CHECK of them, and a search for plain text uses
 * memmem, which is linear. The results and the errors are Lua's. */
#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <string.h>

#include "lua/lua_internal.h"

#define MAX_CAPTURES 32            /* LUA_MAXCAPTURES */
#define MAX_DEPTH 200              /* nested repetitions and captures, as Lua's MAXCCALLS */
#define STEPS_PER_CHECK 16384      /* a few microseconds of matching between two looks at the clock */
#define CAPTURE_OPEN (-1)          /* a capture not closed yet */
#define CAPTURE_POSITION (-2)      /* "()": the position */
#define ESCAPE '%'

struct matcher {
	lua_State *L;
	struct lua_script *script;
	const char *subject, *subject_end, *pattern_end;
	int depth;                     /* matching calls still allowed on the C stack */
	int level;                     /* captures started */
	unsigned steps;
	struct {
		const char *start;
		ptrdiff_t len;             /* or CAPTURE_OPEN, CAPTURE_POSITION */
	} capture[MAX_CAPTURES];
};

static void step(struct matcher *m)
{
	if (++m->steps % STEPS_PER_CHECK == 0 && lua_script_over_cpu(m->script))
		lua_script_cpu_error(m->L);
}

static void start(struct matcher *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp)
{
	m->L = L;
	m->script = lua_script_of(L);
	m->subject = s;
	m->subject_end = s + ls;
	m->pattern_end = p + lp;
	m->depth = MAX_DEPTH;
	m->level = 0;
	m->steps = 0;
}

/* Before each start position: no captures, the whole depth. */
static void again(struct matcher *m)
{
	m->level = 0;
	m->depth = MAX_DEPTH;
}

/* Past the single-character class at p ("x", "%a", "[a-z%]]"). */
static const char *item_end(struct matcher *m, const char *p)
{
	char c = *p++;

	if (c == ESCAPE) {
		if (p >= m->pattern_end)
			luaL_error(m->L, "malformed pattern (ends with '%%')");
		return p + 1;
	}
	if (c != '[')
		return p;
	if (*p == '^')
		p++;
	/* The first character of a set is in it even when it is ']'. */
	do {
		if (p >= m->pattern_end)
			luaL_error(m->L, "malformed pattern (missing ']')");
		c = *p++;
		if (c == ESCAPE && p < m->pattern_end)
			p++;
	} while (*p != ']');
	return p + 1;
}

/* c against a class letter (%a, %D, ...); any other letter stands for itself. */
static bool in_class(int c, int letter)
{
	bool yes;

	switch (tolower(letter)) {
	case 'a': yes = isalpha(c); break;
	case 'c': yes = iscntrl(c); break;
	case 'd': yes = isdigit(c); break;
	case 'g': yes = isgraph(c); break;
	case 'l': yes = islower(c); break;
	case 'p': yes = ispunct(c); break;
	case 's': yes = isspace(c); break;
	case 'u': yes = isupper(c); break;
	case 'w': yes = isalnum(c); break;
	case 'x': yes = isxdigit(c); break;
	case 'z': yes = c == 0; break;          /* the NUL byte (deprecated, still Lua's) */
	default: return letter == c;
	}
	return isupper(letter) ? !yes : yes;
}

/* c against the set [...] from p ('[') to last (its ']'). */
static bool in_set(int c, const char *p, const char *last)
{
	bool want = true;

	if (p[1] == '^') {
		want = false;
		p++;
	}
	while (++p < last) {
		if (*p == ESCAPE) {
			p++;
			if (in_class(c, (unsigned char)*p))
				return want;
		} else if (p[1] == '-' && p + 2 < last) {
			p += 2;
			if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p)
				return want;
		} else if ((unsigned char)*p == c) {
			return want;
		}
	}
	return !want;
}

/* Does the character at s match the item p..ep? */
static bool item_matches(const struct matcher *m, const char *s, const char *p, const char *ep)
{
	int c;

	if (s >= m->subject_end)
		return false;
	c = (unsigned char)*s;
	switch (*p) {
	case '.':
		return true;
	case ESCAPE:
		return in_class(c, (unsigned char)p[1]);
	case '[':
		return in_set(c, p, ep - 1);
	default:
		return (unsigned char)*p == c;
	}
}

static const char *match(struct matcher *m, const char *s, const char *p);

/* %bxy at s: from an x to its balancing y. */
static const char *balanced(struct matcher *m, const char *s, const char *p)
{
	int open = 1;

	if (p + 1 >= m->pattern_end)
		luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
	if (s >= m->subject_end || *s != p[0])
		return NULL;
	while (++s < m->subject_end) {
		step(m);
		if (*s == p[1]) {
			if (--open == 0)
				return s + 1;
		} else if (*s == p[0]) {
			open++;
		}
	}
	return NULL;
}

/* item* and item+: as many as match, then fewer until the rest matches. */
static const char *longest_first(struct matcher *m, const char *s, const char *p, const char *ep)
{
	ptrdiff_t n = 0;

	while (item_matches(m, s + n, p, ep)) {
		step(m);
		n++;
	}
	for (; n >= 0; n--) {
		const char *end = match(m, s + n, ep + 1);

		if (end)
			return end;
	}
	return NULL;
}

/* item-: as few as let the rest match. */
static const char *shortest_first(struct matcher *m, const char *s, const char *p, const char *ep)
{
	for (;;) {
		const char *end = match(m, s, ep + 1);

		if (end)
			return end;
		if (!item_matches(m, s, p, ep))
			return NULL;
		step(m);
		s++;
	}
}

static const char *open_capture(struct matcher *m, const char *s, const char *p, ptrdiff_t what)
{
	const char *end;

	if (m->level >= MAX_CAPTURES)
		luaL_error(m->L, "too many captures");
	m->capture[m->level].start = s;
	m->capture[m->level].len = what;
	m->level++;
	if (!(end = match(m, s, p)))
		m->level--;
	return end;
}

static const char *close_capture(struct matcher *m, const char *s, const char *p)
{
	int i = m->level - 1;
	const char *end;

	while (i >= 0 && m->capture[i].len != CAPTURE_OPEN)
		i--;
	if (i < 0)
		luaL_error(m->L, "invalid pattern capture");
	m->capture[i].len = s - m->capture[i].start;
	if (!(end = match(m, s, p)))
		m->capture[i].len = CAPTURE_OPEN;
	return end;
}

/* %1..%9: the text of a closed capture again. */
static const char *same_as_capture(struct matcher *m, const char *s, int digit)
{
	int i = digit - '1';
	size_t len;

	if (i < 0 || i >= m->level || m->capture[i].len == CAPTURE_OPEN)
		luaL_error(m->L, "invalid capture index %%%d", i + 1);
	/* A position capture has no text: never the same (as in Lua). */
	len = (size_t)m->capture[i].len;
	if ((size_t)(m->subject_end - s) >= len && !memcmp(m->capture[i].start, s, len)) {
		m->steps += (unsigned)(len / 64);
		step(m);
		return s + len;
	}
	return NULL;
}

/* The end of the match of pattern p at s, or NULL. */
static const char *match(struct matcher *m, const char *s, const char *p)
{
	if (m->depth-- == 0)
		luaL_error(m->L, "pattern too complex");
	while (s && p < m->pattern_end) {
		const char *ep;

		step(m);
		if (*p == '(') {
			s = p[1] == ')' ? open_capture(m, s, p + 2, CAPTURE_POSITION) : open_capture(m, s, p + 1, CAPTURE_OPEN);
			break;
		}
		if (*p == ')') {
			s = close_capture(m, s, p + 1);
			break;
		}
		if (*p == '$' && p + 1 == m->pattern_end) {
			if (s != m->subject_end)
				s = NULL;
			break;
		}
		if (*p == ESCAPE && p[1] == 'b') {
			if ((s = balanced(m, s, p + 2)))
				p += 4;
			continue;
		}
		if (*p == ESCAPE && p[1] == 'f') {
			int before, here;

			p += 2;
			if (*p != '[')
				luaL_error(m->L, "missing '[' after '%%f' in pattern");
			ep = item_end(m, p);
			before = s == m->subject ? 0 : (unsigned char)s[-1];
			here = s < m->subject_end ? (unsigned char)*s : 0;
			if (!in_set(before, p, ep - 1) && in_set(here, p, ep - 1))
				p = ep;
			else
				s = NULL;
			continue;
		}
		if (*p == ESCAPE && isdigit((unsigned char)p[1])) {
			if ((s = same_as_capture(m, s, (unsigned char)p[1])))
				p += 2;
			continue;
		}
		/* One item, perhaps repeated. */
		ep = item_end(m, p);
		if (!item_matches(m, s, p, ep)) {
			if (*ep == '*' || *ep == '?' || *ep == '-')
				p = ep + 1;          /* none is a match */
			else
				s = NULL;
			continue;
		}
		switch (*ep) {
		case '?': {
			const char *end = match(m, s + 1, ep + 1);

			if (end) {
				s = end;
				p = m->pattern_end;
			} else {
				p = ep + 1;
			}
			continue;
		}
		case '+':
			s = longest_first(m, s + 1, p, ep);
			break;
		case '*':
			s = longest_first(m, s, p, ep);
			break;
		case '-':
			s = shortest_first(m, s, p, ep);
			break;
		default:
			s++;
			p = ep;
			continue;
		}
		break;
	}
	m->depth++;
	return s;
}

/* Capture i of the match s..e (0 without captures: the whole match);
 * returns its length, or CAPTURE_POSITION with the position pushed. */
static ptrdiff_t capture_text(struct matcher *m, int i, const char *s, const char *e, const char **text)
{
	if (i >= m->level) {
		if (i != 0)
			luaL_error(m->L, "invalid capture index %%%d", i + 1);
		*text = s;
		return e - s;
	}
	*text = m->capture[i].start;
	if (m->capture[i].len == CAPTURE_OPEN)
		luaL_error(m->L, "unfinished capture");
	if (m->capture[i].len == CAPTURE_POSITION)
		lua_pushinteger(m->L, (m->capture[i].start - m->subject) + 1);
	return m->capture[i].len;
}

static void push_capture(struct matcher *m, int i, const char *s, const char *e)
{
	const char *text;
	ptrdiff_t len = capture_text(m, i, s, e, &text);

	if (len != CAPTURE_POSITION)
		lua_pushlstring(m->L, text, (size_t)len);
}

/* The captures (the whole match s..e when there are none and s is given). */
static int push_captures(struct matcher *m, const char *s, const char *e)
{
	int n = m->level == 0 && s ? 1 : m->level;

	luaL_checkstack(m->L, n, "too many captures");
	for (int i = 0; i < n; i++)
		push_capture(m, i, s, e);
	return n;
}

/* A start position as Lua takes it (negative: from the end), 1-based. */
static size_t start_position(lua_Integer pos, size_t len)
{
	if (pos > 0)
		return (size_t)pos;
	if (pos == 0 || pos < -(lua_Integer)len)
		return 1;
	return len + (size_t)pos + 1;
}

static bool has_specials(const char *p, size_t lp)
{
	for (size_t i = 0; i < lp; i++)
		if (p[i] && strchr("^$*+?.([%-", p[i]))
			return true;
	return false;
}

static int find_or_match(lua_State *L, bool find)
{
	size_t ls, lp;
	const char *s = luaL_checklstring(L, 1, &ls), *p = luaL_checklstring(L, 2, &lp);
	size_t init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
	struct matcher m;
	bool anchor;

	if (init > ls) {
		luaL_pushfail(L);
		return 1;
	}
	if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
		/* Plain text: memmem is linear in the subject. */
		const char *at = lp == 0 ? s + init : memmem(s + init, ls - init, p, lp);

		if (!at) {
			luaL_pushfail(L);
			return 1;
		}
		lua_pushinteger(L, (at - s) + 1);
		lua_pushinteger(L, (at - s) + (lua_Integer)lp);
		return 2;
	}
	anchor = *p == '^';
	if (anchor) {
		p++;
		lp--;
	}
	start(&m, L, s, ls, p, lp);
	for (const char *from = s + init;; from++) {
		const char *end;

		again(&m);
		if ((end = match(&m, from, p))) {
			if (!find)
				return push_captures(&m, from, end);
			lua_pushinteger(L, (from - s) + 1);
			lua_pushinteger(L, end - s);
			return push_captures(&m, NULL, NULL) + 2;
		}
		if (from >= m.subject_end || anchor)
			break;
	}
	luaL_pushfail(L);
	return 1;
}

static int bounded_find(lua_State *L)
{
	return find_or_match(L, true);
}

static int bounded_match(lua_State *L)
{
	return find_or_match(L, false);
}

/* gmatch's iterator; upvalues: the subject, the pattern, where the next
 * search starts and where the last match ended (0-based; -1: none). */
static int next_match(lua_State *L)
{
	size_t ls, lp;
	const char *s = lua_tolstring(L, lua_upvalueindex(1), &ls), *p = lua_tolstring(L, lua_upvalueindex(2), &lp);
	lua_Integer from = lua_tointeger(L, lua_upvalueindex(3)), last = lua_tointeger(L, lua_upvalueindex(4));
	struct matcher m;

	if (from > (lua_Integer)ls)
		return 0;               /* past the end: nothing more */
	start(&m, L, s, ls, p, lp);
	for (lua_Integer i = from; i <= (lua_Integer)ls; i++) {
		const char *at = s + i, *end;

		again(&m);
		if ((end = match(&m, at, p)) && end - s != last) {
			lua_pushinteger(L, end - s);
			lua_copy(L, -1, lua_upvalueindex(3));
			lua_replace(L, lua_upvalueindex(4));
			return push_captures(&m, at, end);
		}
	}
	return 0;
}

static int bounded_gmatch(lua_State *L)
{
	size_t ls;
	size_t init;

	luaL_checklstring(L, 1, &ls);
	luaL_checkstring(L, 2);
	init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
	if (init > ls)
		init = ls + 1;          /* nothing to find */
	lua_settop(L, 2);
	lua_pushinteger(L, (lua_Integer)init);
	lua_pushinteger(L, -1);
	lua_pushcclosure(L, next_match, 4);
	return 1;
}

/* gsub's replacement string: %0..%9 and %% in it. */
static void add_replacement_text(struct matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
	size_t len;
	const char *r = lua_tolstring(m->L, 3, &len), *r_end = r + len;

	for (; r < r_end; r++) {
		const char *escape = memchr(r, ESCAPE, (size_t)(r_end - r));

		if (!escape) {
			luaL_addlstring(b, r, (size_t)(r_end - r));
			return;
		}
		luaL_addlstring(b, r, (size_t)(escape - r));
		r = escape + 1;
		if (*r == ESCAPE) {
			luaL_addchar(b, ESCAPE);
		} else if (*r == '0') {
			luaL_addlstring(b, s, (size_t)(e - s));
		} else if (isdigit((unsigned char)*r)) {
			push_capture(m, *r - '1', s, e);
			luaL_tolstring(m->L, -1, NULL);
			lua_remove(m->L, -2);
			luaL_addvalue(b);
		} else {
			luaL_error(m->L, "invalid use of '%c' in replacement string", ESCAPE);
		}
	}
}

/* The replacement of the match s..e (a table's or a function's value; the
 * match itself when that is false or nil). */
static void add_replacement(struct matcher *m, luaL_Buffer *b, const char *s, const char *e, int type)
{
	lua_State *L = m->L;

	if (type == LUA_TNUMBER || type == LUA_TSTRING) {
		add_replacement_text(m, b, s, e);
		return;
	}
	if (type == LUA_TFUNCTION) {
		int n;

		lua_pushvalue(L, 3);
		n = push_captures(m, s, e);
		lua_call(L, n, 1);
	} else {
		push_capture(m, 0, s, e);
		lua_gettable(L, 3);
	}
	if (!lua_toboolean(L, -1)) {
		lua_pop(L, 1);
		luaL_addlstring(b, s, (size_t)(e - s));
		return;
	}
	if (!lua_isstring(L, -1))
		luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
	luaL_addvalue(b);
}

static int bounded_gsub(lua_State *L)
{
	size_t ls, lp;
	const char *s = luaL_checklstring(L, 1, &ls), *p = luaL_checklstring(L, 2, &lp);
	const char *from = s, *last = NULL;
	int type = lua_type(L, 3);
	lua_Integer most = luaL_optinteger(L, 4, (lua_Integer)ls + 1), n = 0;
	bool anchor = *p == '^';
	struct matcher m;
	luaL_Buffer b;

	luaL_argexpected(L, type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION || type == LUA_TTABLE,
			 3, "string/function/table");
	luaL_buffinit(L, &b);
	if (anchor) {
		p++;
		lp--;
	}
	start(&m, L, s, ls, p, lp);
	while (n < most) {
		const char *end;

		again(&m);
		if ((end = match(&m, from, p)) && end != last) {
			n++;
			add_replacement(&m, &b, from, end, type);
			from = last = end;
		} else if (from < m.subject_end) {
			step(&m);
			luaL_addchar(&b, *from++);
		} else {
			break;
		}
		if (anchor)
			break;
	}
	luaL_addlstring(&b, from, (size_t)(m.subject_end - from));
	luaL_pushresult(&b);
	lua_pushinteger(L, n);
	return 2;
}

void lua_pattern_bound(lua_State *L)
{
	static const luaL_Reg bounded[] = {
		{ "find", bounded_find }, { "match", bounded_match }, { "gmatch", bounded_gmatch },
		{ "gsub", bounded_gsub }, { NULL, NULL },
	};

	if (lua_getglobal(L, "string") == LUA_TTABLE)
		luaL_setfuncs(L, bounded, 0);
	lua_pop(L, 1);
}
