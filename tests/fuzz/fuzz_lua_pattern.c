/* The sandbox's string.find, match, gmatch and gsub (lua/lua_pattern.c)
 * against Lua's own, on the same calls: every result and every error must
 * be the same. The input is the subject, a NUL byte, the pattern, a NUL
 * byte, the replacement (its first byte chooses a string, a table or a
 * function), then the start position's byte. Patterns Lua's own matcher
 * could take minutes on (more than three repetitions) are left out: the
 * comparison needs its answer. */
#include <lauxlib.h>
#include <lualib.h>

#include "lua/lua_internal.h"
#include "fuzz_common.h"

static const char compare[] =
	"local s, p, r, init = ...\n"
	"local out = {}\n"
	"local function add(...) out[#out + 1] = table.concat(table.pack(...), '|', 1, select('#', ...)) end\n"
	"local function each(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end\n"
	"  return table.unpack(t, 1, t.n) end\n"
	"add(each(pcall(string.find, s, p, init)))\n"
	"add(each(pcall(string.find, s, p, init, true)))\n"
	"add(each(pcall(string.match, s, p, init)))\n"
	"local repl = r\n"
	"if r:byte(1) == 116 then repl = {x = 'X', [''] = false, ab = 1.5}\n"
	"elseif r:byte(1) == 102 then repl = function(a, b) if b then return a .. '<' .. tostring(b) .. '>' end return a end end\n"
	"add(each(pcall(string.gsub, s, p, repl)))\n"
	"add(each(pcall(string.gsub, s, p, repl, 2)))\n"
	"add(each(pcall(function() local t = {} for a, b in string.gmatch(s, p, init) do\n"
	"  t[#t + 1] = tostring(a) .. ',' .. tostring(b) if #t > 1000 then break end end return table.concat(t, ';') end)))\n"
	"return table.concat(out, '\\n')\n";

static struct lua_script script;

static void *plain_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	script.mem_limit = (size_t)1 << 30;
	return 0;
}

/* Run the comparison script in L; its text (caller frees) or NULL. */
static char *run(lua_State *L, const char *s, size_t ls, const char *p, size_t lp, const char *r, size_t lr,
		 lua_Integer init)
{
	size_t len;
	const char *text;
	char *copy;

	if (luaL_loadbuffer(L, compare, sizeof(compare) - 1, "=compare") != LUA_OK) {
		fprintf(stderr, "fuzz_lua_pattern: %s\n", lua_tostring(L, -1));
		abort();
	}
	lua_pushlstring(L, s, ls);
	lua_pushlstring(L, p, lp);
	lua_pushlstring(L, r, lr);
	lua_pushinteger(L, init);
	if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
		fprintf(stderr, "fuzz_lua_pattern: %s\n", lua_tostring(L, -1));
		abort();
	}
	text = lua_tolstring(L, -1, &len);
	copy = malloc(len + 1);
	memcpy(copy, text, len + 1);
	lua_pop(L, 1);
	return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size, *p, *r;
	size_t ls, lp, lr, repeats = 0;
	lua_Integer init = 1;
	lua_State *lua, *ours;
	char *want, *got;

	if (!(p = memchr(s, 0, size)) || !(r = memchr(p + 1, 0, (size_t)(end - p - 1))))
		return 0;
	ls = (size_t)(p - s);
	lp = (size_t)(r - ++p);
	lr = (size_t)(end - ++r);
	if (lr > 0) {
		init = (signed char)r[lr - 1];
		lr--;
	}
	for (size_t i = 0; i < lp; i++)
		repeats += p[i] == '*' || p[i] == '+' || p[i] == '-' || p[i] == '?';
	/* Lua's own matcher, the reference, backtracks for a time that grows as the subject's length
	 * to the power of the pattern's repetitions, with no limit: keep to inputs it finishes in
	 * well under libFuzzer's timeout (3 repetitions over 256 bytes took 26 s in gsub). The
	 * sandbox's matcher on worse inputs is the unit tests' (the CPU limit stops it). */
	if (repeats > 2 || ls > 128)
		return 0;
	lua = luaL_newstate();
	ours = lua_newstate(plain_alloc, &script);
	luaL_openlibs(lua);
	luaL_openlibs(ours);
	lua_builtins_bound(ours);
	want = run(lua, s, ls, p, lp, r, lr, init);
	got = run(ours, s, ls, p, lp, r, lr, init);
	if (strcmp(want, got)) {
		fprintf(stderr, "fuzz_lua_pattern: Lua's\n%s\nthe sandbox's\n%s\n", want, got);
		abort();
	}
	free(want);
	free(got);
	lua_close(lua);
	lua_close(ours);
	return 0;
}
