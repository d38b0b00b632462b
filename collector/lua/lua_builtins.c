/* The standard library's functions that loop in C, bounded. The count hook
 * that keeps a callback's CPU limit fires between Lua instructions only:
 * a loop inside a C function runs to its end, however long that is
 * (table.move(t, 1, 1 << 50, 2) ran for days, allocating nothing). Each
 * such function is replaced in the script's state by one that runs the
 * original in pieces and looks at the clock between them, or checks its
 * size against the memory budget before it starts. The others loop at most
 * once over memory the budget bounds (docs/lua-api.md lists them all). */
#include <lauxlib.h>
#include <stdbool.h>

#include "lua/lua_internal.h"

/* Elements a piece of table.move or table.concat handles between two looks
 * at the clock (a fraction of a millisecond). */
#define PIECE 4096

/* The smallest an element of a Lua table can be (a TValue): a length past
 * budget / this is not made of elements the script holds. */
#define ELEMENT_BYTES 16

static void check_clock(lua_State *L)
{
	if (lua_script_over_cpu(lua_script_of(L)))
		lua_script_cpu_error(L);
}

/* The original (upvalue 1: a C function without upvalues of its own),
 * run as a plain C call in this function's call: it reads the arguments
 * on this stack, and its errors name the function as the script called it
 * ("bad argument #3 to 'move'"). */
static int original(lua_State *L)
{
	return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

/* table.move(a1, f, e, t [, a2]): the same moves in the same order (forward,
 * or backward when the ranges overlap in the same table), a piece at a
 * time. */
static int bounded_move(lua_State *L)
{
	lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3), t = luaL_checkinteger(L, 4), n;
	int dest = lua_isnoneornil(L, 5) ? 1 : 5;
	bool forward;

	/* Short moves, and the ones the original refuses, are the original's. */
	if (e < f || !(f > 0 || e < LUA_MAXINTEGER + f) || e - f < PIECE)
		return original(L);
	n = e - f + 1;
	luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
	forward = t > e || t <= f || (dest != 1 && !lua_compare(L, 1, dest, LUA_OPEQ));
	lua_settop(L, 5);
	for (lua_Integer done = 0; done < n;) {
		lua_Integer count = n - done < PIECE ? n - done : PIECE;
		/* Forward from the first element; backward from the last. */
		lua_Integer first = forward ? f + done : e - done - count + 1;

		lua_pushinteger(L, first);
		lua_replace(L, 2);
		lua_pushinteger(L, first + count - 1);
		lua_replace(L, 3);
		lua_pushinteger(L, t + (first - f));
		lua_replace(L, 4);
		original(L);
		lua_settop(L, 5);
		done += count;
		check_clock(L);
	}
	lua_pushvalue(L, dest);
	return 1;
}

/* table.concat(list [, sep [, i [, j]]]): a piece's text at a time (an
 * element may come from an __index that is a C function giving "", so
 * neither the hook nor the budget would see the loop), then the pieces
 * joined with sep. */
static int bounded_concat(lua_State *L)
{
	lua_Integer i, last, pieces = 0;

	if (!lua_istable(L, 1))
		return original(L);
	luaL_optlstring(L, 2, "", NULL);
	i = luaL_optinteger(L, 3, 1);
	last = lua_isnoneornil(L, 4) ? luaL_len(L, 1) : luaL_checkinteger(L, 4);
	/* The length is taken once (__len is script code). */
	lua_settop(L, 2);
	lua_pushinteger(L, i);
	lua_pushinteger(L, last);
	/* Unsigned: i may be far below zero. */
	if (last < i || (lua_Unsigned)last - (lua_Unsigned)i < PIECE)
		return original(L);
	lua_newtable(L);                   /* 5: the pieces */
	for (lua_Integer lo = i;; lo += PIECE) {
		lua_Integer hi = (lua_Unsigned)last - (lua_Unsigned)lo < PIECE ? last : lo + PIECE - 1;

		lua_pushinteger(L, lo);
		lua_replace(L, 3);
		lua_pushinteger(L, hi);
		lua_replace(L, 4);
		original(L);
		lua_rawseti(L, 5, ++pieces);
		lua_settop(L, 5);
		check_clock(L);
		if (hi == last)
			break;
	}
	lua_replace(L, 1);
	lua_pushinteger(L, 1);
	lua_replace(L, 3);
	lua_pushinteger(L, pieces);
	lua_replace(L, 4);
	return original(L);
}

/* table.insert, table.remove, table.sort: they loop over #t, which an __len
 * metamethod may make anything, over elements that __index and __newindex
 * C functions may make out of nothing. A length the budget could not hold
 * is refused before the loop (upvalue 2: the function's name). */
static int bounded_by_length(lua_State *L)
{
	struct lua_script *s = lua_script_of(L);

	if (lua_istable(L, 1) && luaL_getmetafield(L, 1, "__len") != LUA_TNIL) {
		lua_Integer n, most = (lua_Integer)(s->mem_limit / ELEMENT_BYTES);

		lua_pop(L, 1);
		n = luaL_len(L, 1);
		if (n > most)
			return luaL_error(L, "%s: the table's __len gives %I elements, more than the memory budget "
					  "could hold (%I): its loop would run past the CPU limit unseen",
					  lua_tostring(L, lua_upvalueindex(2)), n, most);
	}
	return original(L);
}

static void replace(lua_State *L, const char *lib, const char *name, lua_CFunction bounded)
{
	if (lua_getglobal(L, lib) != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	lua_getfield(L, -1, name);
	lua_pushfstring(L, "%s.%s", lib, name);
	lua_pushcclosure(L, bounded, 2);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
}

void lua_builtins_bound(lua_State *L)
{
	replace(L, "table", "move", bounded_move);
	replace(L, "table", "concat", bounded_concat);
	replace(L, "table", "insert", bounded_by_length);
	replace(L, "table", "remove", bounded_by_length);
	replace(L, "table", "sort", bounded_by_length);
	lua_pattern_bound(L);
}
