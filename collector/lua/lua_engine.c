/* The Lua engine: finding and loading scripts, the sandbox, the limits, and
 * calling callbacks so that a failing script is reported and disabled while
 * everything else goes on. */
#include "lua/lua_engine.h"

#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config.h"
#include "lua/lua_internal.h"

/* Instructions between two looks at the clock: cheap enough to be invisible
 * (a clock read per ~10 us of Lua), fine enough to stop a loop in time. */
#define HOOK_COUNT 1000

uint64_t lua_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- finding scripts ---- */

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool try_dir(const char *dir, const char *name, char *path, size_t size)
{
	if (!dir || !dir[0])
		return false;
	if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size)
		return false;
	return is_file(path);
}

int lua_script_find(const char *name, char *path, size_t size, struct ms_error *err)
{
	char with_ext[PATH_MAX];
	char source_lua[PATH_MAX], data_lua[PATH_MAX];
	const char *env = getenv("MEMSCOPE_LUA_DIR");
	size_t len = strlen(name);

	if (!len) {
		ms_error_set(err, "--lua needs a script name or path, e.g. --lua faults.lua");
		return -1;
	}
	/* A path (or a file in the current directory) is taken as it is. */
	if (is_file(name) && (size_t)snprintf(path, size, "%s", name) < size)
		return 0;
	if (strchr(name, '/')) {
		ms_error_set(err, "Lua script %s: %s; give the path of an existing .lua file", name,
			     strerror(errno));
		return -1;
	}
	snprintf(with_ext, sizeof(with_ext), "%s%s", name,
		 len > 4 && !strcmp(name + len - 4, ".lua") ? "" : ".lua");
	snprintf(source_lua, sizeof(source_lua), "%s/lua", MEMSCOPE_SOURCE_DIR);
	snprintf(data_lua, sizeof(data_lua), "%s/lua", MEMSCOPE_DATADIR);
	if (try_dir(env, with_ext, path, size) || try_dir(source_lua, with_ext, path, size) ||
	    try_dir(data_lua, with_ext, path, size))
		return 0;
	ms_error_set(err, "Lua script '%s' not found: it is not a file here, nor a built-in script in %s%s%s or %s; "
		     "built-in scripts: remote_ratio.lua, bandwidth.lua, topdown.lua, faults.lua, numa_balance.lua",
		     name, env ? env : "", env ? ", " : "", source_lua, data_lua);
	return -1;
}

int lua_output_format_parse(const char *text, enum lua_output_format *format)
{
	if (!strcmp(text, "text"))
		*format = LUA_OUTPUT_TEXT;
	else if (!strcmp(text, "csv"))
		*format = LUA_OUTPUT_CSV;
	else if (!strcmp(text, "json"))
		*format = LUA_OUTPUT_JSON;
	else
		return -1;
	return 0;
}

/* ---- limits ---- */

/* Every allocation of a script's state goes through its budget; past it Lua
 * gets NULL and raises a memory error in the script, never in memscope. */
static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct lua_script *s = ud;
	size_t old = ptr ? osize : 0;
	void *grown;

	if (nsize == 0) {
		free(ptr);
		s->mem_used -= old;
		return NULL;
	}
	/* Outside callbacks memscope itself is building tables for the script:
	 * refusing there would end in a Lua panic instead of a script error. */
	if (s->in_callback && nsize > old && s->mem_used - old + nsize > s->mem_limit) {
		s->mem_exceeded = true;
		return NULL;
	}
	grown = realloc(ptr, nsize);
	if (!grown)
		return NULL;
	s->mem_used = s->mem_used - old + nsize;
	return grown;
}

static void limit_hook(lua_State *L, lua_Debug *ar)
{
	struct lua_script *s = lua_script_of(L);

	(void)ar;
	if (!s->deadline_ns || lua_now_ns() <= s->deadline_ns)
		return;
	/* From now on check at every instruction: a script that catches the
	 * error with pcall meets it again at once, outside the pcall. */
	if (!s->timed_out)
		lua_sethook(L, limit_hook, LUA_MASKCOUNT, 1);
	s->timed_out = true;
	luaL_error(L, "CPU limit: %s ran longer than %d ms (set MEMSCOPE_LUA_CPU_MS to allow more)",
		   s->phase ? s->phase : "the script", (int)s->engine->opt.cpu_limit_ms);
}

/* ---- errors ---- */

void lua_script_fail(struct lua_script *s, const char *message)
{
	struct lua_engine *e = s->engine;
	const char *cmd = e->opt.command_name ? e->opt.command_name : "lua";

	if (s->failed)
		return;
	s->failed = true;
	e->nr_failed++;
	if (e->data_ready && e->data.frames)
		fprintf(e->errors, "memscope %s: %s (frame %llu, in %s); %s is disabled, the rest goes on\n", cmd,
			message, (unsigned long long)e->data.seq, s->phase ? s->phase : "?", s->name);
	else
		fprintf(e->errors, "memscope %s: %s (in %s); %s is disabled, the rest goes on\n", cmd, message,
			s->phase ? s->phase : "?", s->name);
	fflush(e->errors);
}

/* Lua cuts a long script path to "...tail" (LUA_IDSIZE) in the position
 * it puts in front of an error: give the whole path back. True when msg
 * started with such a cut name (buf then holds the message with the path). */
static bool whole_name(const struct lua_script *s, const char *msg, char *buf, size_t size)
{
	size_t name_len = strlen(s->name);

	if (strncmp(msg, "...", 3) != 0)
		return false;
	for (const char *colon = strchr(msg + 3, ':'); colon; colon = strchr(colon + 1, ':')) {
		size_t n = (size_t)(colon - (msg + 3));

		if (n <= name_len && !strncmp(s->name + name_len - n, msg + 3, n)) {
			snprintf(buf, size, "%s%s", s->name, colon);
			return true;
		}
	}
	return false;
}

/* The error's text with script:line in front when it has none (memory and
 * CPU limit errors, errors raised from C). The runner's stack still holds
 * the failed call, so the line is where the script was. */
static void describe_error(struct lua_script *s, lua_State *co, int status, char *buf, size_t size)
{
	const char *msg = lua_type(co, -1) == LUA_TSTRING ? lua_tostring(co, -1) : NULL;
	char where[PATH_MAX + 32] = "";
	char prefix[PATH_MAX + 2];
	lua_Debug ar;

	if (status == LUA_ERRMEM || s->mem_exceeded)
		msg = NULL;
	for (int level = 0; lua_getstack(co, level, &ar); level++) {
		if (lua_getinfo(co, "Sl", &ar) && ar.currentline > 0) {
			/* ar.source is the whole name; short_src is cut to LUA_IDSIZE. */
			snprintf(where, sizeof(where), "%s:%d: ", ar.source[0] == '@' ? ar.source + 1 : ar.short_src,
				 ar.currentline);
			break;
		}
	}
	if (status == LUA_ERRMEM || s->mem_exceeded) {
		snprintf(buf, size, "%smemory limit: the script used more than %zu MiB (set MEMSCOPE_LUA_MEMORY_MB "
			 "to allow more)", where, s->mem_limit >> 20);
		return;
	}
	if (!msg) {
		snprintf(buf, size, "%serror object is a %s value", where, luaL_typename(co, -1));
		return;
	}
	snprintf(prefix, sizeof(prefix), "%s:", s->name);
	if (!strncmp(msg, prefix, strlen(prefix)) || !where[0])
		snprintf(buf, size, "%s", msg);
	else if (whole_name(s, msg, buf, size))
		;
	else
		snprintf(buf, size, "%s%s", where, msg);
}

static void reset_runner(struct lua_script *s)
{
#if LUA_VERSION_RELEASE_NUM >= 50406
	lua_closethread(s->runner, s->L);
#else
	lua_resetthread(s->runner);
#endif
}

int lua_script_call(struct lua_script *s, int nargs, int nresults, const char *phase)
{
	lua_State *co = s->runner;
	const char *old_phase = s->phase;
	unsigned limit = s->engine->opt.cpu_limit_ms;
	char message[1024];
	int status, nres = 0;
	uint64_t start;

	if (s->failed || s->in_callback) {
		lua_pop(s->L, nargs + 1);
		return -1;
	}
	s->phase = phase;
	s->in_callback = true;
	s->timed_out = false;
	s->mem_exceeded = false;
	lua_xmove(s->L, co, nargs + 1);
	lua_sethook(co, limit_hook, LUA_MASKCOUNT, HOOK_COUNT);
	start = lua_now_ns();
	s->deadline_ns = start + (uint64_t)limit * 1000000ull;
	status = lua_resume(co, s->L, nargs, &nres);
	s->deadline_ns = 0;
	s->calls++;
	s->busy_ns += lua_now_ns() - start;
	s->in_callback = false;
	if (status == LUA_OK) {
		if (nresults >= 0) {
			lua_settop(co, nresults < nres ? nresults : nres);
			while (nres < nresults) {
				lua_pushnil(co);
				nres++;
			}
			nres = nresults;
		}
		lua_xmove(co, s->L, nres);
		s->phase = old_phase;
		return nres;
	}
	if (status == LUA_YIELD)
		snprintf(message, sizeof(message), "%s: %s yielded: callbacks must return, not yield", s->name, phase);
	else
		describe_error(s, co, status, message, sizeof(message));
	reset_runner(s);
	lua_sethook(co, limit_hook, LUA_MASKCOUNT, HOOK_COUNT);
	lua_script_fail(s, message);
	s->phase = old_phase;
	return -1;
}

/* ---- the sandbox ---- */

/* load() without binary chunks: crafted bytecode can break the VM. */
static int safe_load(lua_State *L)
{
	size_t len;
	const char *text = luaL_checklstring(L, 1, &len);
	const char *chunk = luaL_optstring(L, 2, "=(load)");
	int status;

	status = luaL_loadbufferx(L, text, len, chunk, "t");
	if (status != LUA_OK) {
		lua_pushnil(L);
		lua_insert(L, -2);
		return 2;
	}
	if (!lua_isnoneornil(L, 4)) {
		lua_pushvalue(L, 4);
		if (!lua_setupvalue(L, -2, 1))
			lua_pop(L, 1);
	}
	return 1;
}

/* setmetatable() without finalizers: a __gc runs whenever the collector
 * gets to it, also outside callbacks where no time limit applies. */
static int safe_setmetatable(lua_State *L)
{
	if (lua_istable(L, 2) && lua_getfield(L, 2, "__gc") != LUA_TNIL)
		return luaL_error(L, "setmetatable: __gc finalizers are not allowed in sandboxed scripts "
				  "(--lua-unsafe allows them)");
	lua_settop(L, 2);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, 2, 1);
	return 1;
}

static void open_safe_libs(lua_State *L)
{
	static const luaL_Reg libs[] = {
		{ LUA_GNAME, luaopen_base }, { LUA_COLIBNAME, luaopen_coroutine },
		{ LUA_TABLIBNAME, luaopen_table }, { LUA_STRLIBNAME, luaopen_string },
		{ LUA_MATHLIBNAME, luaopen_math }, { LUA_UTF8LIBNAME, luaopen_utf8 },
		{ NULL, NULL },
	};
	static const char *const os_safe[] = { "time", "clock", "date", "difftime", NULL };

	for (const luaL_Reg *lib = libs; lib->name; lib++) {
		luaL_requiref(L, lib->name, lib->func, 1);
		lua_pop(L, 1);
	}
	/* Files and code from disk stay out of reach. */
	lua_pushnil(L);
	lua_setglobal(L, "dofile");
	lua_pushnil(L);
	lua_setglobal(L, "loadfile");
	lua_pushcfunction(L, safe_load);
	lua_setglobal(L, "load");
	lua_getglobal(L, "setmetatable");
	lua_pushcclosure(L, safe_setmetatable, 1);
	lua_setglobal(L, "setmetatable");
	/* os: only the clock. */
	luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
	lua_newtable(L);
	for (int i = 0; os_safe[i]; i++) {
		lua_getfield(L, -2, os_safe[i]);
		lua_setfield(L, -2, os_safe[i]);
	}
	lua_setglobal(L, "os");
	lua_pop(L, 1);
}

/* ---- loading ---- */

static char *read_file(const char *path, size_t *len, struct ms_error *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, used = 0, n;

	if (!f) {
		ms_error_set(err, "Lua script %s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (used + 4096 > cap) {
			char *grown = realloc(buf, cap = cap ? cap * 2 : 8192);

			if (!grown) {
				free(buf);
				fclose(f);
				ms_error_set(err, "Lua script %s: out of memory", path);
				return NULL;
			}
			buf = grown;
		}
		n = fread(buf + used, 1, cap - used, f);
		used += n;
	} while (n > 0);
	fclose(f);
	*len = used;
	return buf;
}

/* "faults.lua:top=5,sort=rss" -> name and args. */
static int split_spec(const char *spec, char *name, size_t size, char **args)
{
	const char *colon = strstr(spec, ".lua:");
	size_t len = colon ? (size_t)(colon - spec) + 4 : strlen(spec);

	*args = NULL;
	if (len >= size)
		return -1;
	memcpy(name, spec, len);
	name[len] = '\0';
	if (colon && !(*args = strdup(colon + 5)))
		return -1;
	return 0;
}

/* memscope.args.KEY not given on the command line: the default that
 * script.args declares, so the chunk's top level can read it too. */
static int args_default(lua_State *L)
{
	const char *key = lua_tostring(L, 2);

	if (!key || lua_getglobal(L, "script") != LUA_TTABLE || lua_getfield(L, -1, "args") != LUA_TTABLE)
		return 0;
	for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; i++) {
		lua_getfield(L, -1, "name");
		if (lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), key)) {
			lua_getfield(L, -2, "default");
			if (lua_type(L, -1) == LUA_TNUMBER)
				lua_tostring(L, -1);
			return 1;
		}
		lua_pop(L, 2);
	}
	return 0;
}

/* memscope.args from the command line; defaults come from script.args. */
static int set_args(struct lua_script *s, struct ms_error *err)
{
	lua_State *L = s->L;
	char *copy, *save = NULL;

	lua_getglobal(L, "memscope");
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, args_default);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
	if (s->args && s->args[0]) {
		if (!(copy = strdup(s->args)))
			return -1;
		for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');

			if (!eq || eq == kv) {
				ms_error_set(err, "--lua %s:%s: argument '%s' is not KEY=VALUE", s->name, s->args, kv);
				free(copy);
				lua_pop(L, 2);
				return -1;
			}
			*eq = '\0';
			lua_pushstring(L, eq + 1);
			lua_setfield(L, -2, kv);
		}
		free(copy);
	}
	lua_setfield(L, -2, "args");
	lua_pop(L, 1);
	return 0;
}

/* After the chunk ran: check given args against script.args, fill defaults. */
static int check_args(struct lua_script *s, struct ms_error *err)
{
	lua_State *L = s->L;
	char known[512] = "";
	size_t len = 0;
	int status = 0;

	lua_getglobal(L, "memscope");
	lua_getfield(L, -1, "args");
	lua_getglobal(L, "script");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "args");
		if (lua_istable(L, -1)) {
			for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; i++) {
				lua_getfield(L, -1, "name");
				if (lua_type(L, -1) == LUA_TSTRING) {
					const char *an = lua_tostring(L, -1);

					len += (size_t)snprintf(known + len, len < sizeof(known) ? sizeof(known) - len : 0,
								"%s%s", len ? ", " : "", an);
					lua_getfield(L, -5, an);
					if (lua_isnil(L, -1)) {
						lua_getfield(L, -3, "default");
						if (!lua_isnil(L, -1)) {
							lua_tostring(L, -1);
							lua_setfield(L, -7, an);
						} else {
							lua_pop(L, 1);
						}
					}
					lua_pop(L, 1);
				}
				lua_pop(L, 2);
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	/* Every argument given must be one the script declares. */
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pop(L, 1);
		if (s->args && lua_type(L, -1) == LUA_TSTRING) {
			char needle[160];
			const char *an = lua_tostring(L, -1);

			snprintf(needle, sizeof(needle), "%s=", an);
			if (strstr(s->args, needle) && !strstr(known, an)) {
				ms_error_set(err, "--lua %s: the script takes no argument '%s'%s%s", s->name, an,
					     known[0] ? "; it takes: " : " (it takes none)", known);
				status = -1;
				lua_pop(L, 1);
				break;
			}
		}
	}
	lua_pop(L, 2);
	return status;
}

static int load_script(struct lua_engine *e, struct lua_script *s, const char *spec, struct ms_error *err)
{
	char name[PATH_MAX], chunkname[PATH_MAX + 1];
	size_t len;
	char *text;
	int status;

	if (split_spec(spec, name, sizeof(name), &s->args) < 0) {
		ms_error_set(err, "--lua %s: name too long or out of memory", spec);
		return -1;
	}
	if (lua_script_find(name, s->path, sizeof(s->path), err) < 0)
		return -1;
	/* Built-ins are named by their file name, user scripts as given. */
	snprintf(s->name, sizeof(s->name), "%s", strchr(name, '/') ? name : strrchr(s->path, '/') ?
		 strrchr(s->path, '/') + 1 : s->path);
	s->label = strrchr(s->name, '/') ? strrchr(s->name, '/') + 1 : s->name;
	s->engine = e;
	s->mem_limit = e->opt.memory_limit;
	s->L = lua_newstate(budget_alloc, s);
	if (!s->L) {
		ms_error_set(err, "Lua script %s: cannot create a Lua state (out of memory)", s->name);
		return -1;
	}
	if (e->opt.unsafe)
		luaL_openlibs(s->L);
	else
		open_safe_libs(s->L);
	lua_api_open(s->L, s);
	s->runner = lua_newthread(s->L);
	lua_setfield(s->L, LUA_REGISTRYINDEX, "memscope.runner");
	if (set_args(s, err) < 0)
		return -1;
	if (!(text = read_file(s->path, &len, err)))
		return -1;
	snprintf(chunkname, sizeof(chunkname), "@%s", s->name);
	s->phase = "loading";
	status = luaL_loadbufferx(s->L, text, len, chunkname, "t");
	free(text);
	/* A broken script is reported and disabled like one failing later: the
	 * other scripts still run. */
	if (status != LUA_OK) {
		char message[PATH_MAX + 512];

		if (!whole_name(s, lua_tostring(s->L, -1), message, sizeof(message)))
			snprintf(message, sizeof(message), "%s", lua_tostring(s->L, -1));
		lua_script_fail(s, message);
		lua_pop(s->L, 1);
		return 0;
	}
	/* The chunk's top level runs under the same limits as callbacks. */
	if (lua_script_call(s, 0, 0, "loading") < 0)
		return 0;
	return check_args(s, err);
}

static int add_unique(char **list, size_t *len, size_t *cap, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = *list; (p = strstr(p, name)); p += n)
		if ((p == *list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 0;
	if (*len + n + 2 > *cap) {
		char *grown = realloc(*list, *cap = 2 * (*len + n + 2));

		if (!grown)
			return -1;
		*list = grown;
	}
	*len += (size_t)sprintf(*list + *len, "%s%s", *len ? "," : "", name);
	return 0;
}

/* Append each string of script.<field> to a comma list, once. */
static int collect_wanted(struct lua_engine *e, const char *field, char **list)
{
	size_t len = 0, cap = 256;

	if (!(*list = calloc(cap, 1)))
		return -1;
	for (int i = 0; i < e->nr_scripts; i++) {
		lua_State *L = e->scripts[i].L;

		if (e->scripts[i].failed)
			continue;
		int top = lua_gettop(L);

		if (lua_getglobal(L, "script") == LUA_TTABLE && lua_getfield(L, -1, field) == LUA_TTABLE) {
			for (lua_Integer k = 1; lua_rawgeti(L, -1, k) == LUA_TSTRING; k++) {
				int added = add_unique(list, &len, &cap, lua_tostring(L, -1));

				lua_pop(L, 1);
				if (added < 0)
					return -1;
			}
		}
		lua_settop(L, top);
	}
	return 0;
}

static unsigned env_unsigned(const char *name, unsigned fallback)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !v[0])
		return fallback;
	n = strtoul(v, &end, 10);
	return *end || n == 0 || n > 1000000 ? fallback : (unsigned)n;
}

int lua_engine_open(struct lua_engine **out, const struct lua_engine_options *opt, struct ms_error *err)
{
	struct lua_engine *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e || !(e->scripts = calloc((size_t)opt->nr_scripts + 1, sizeof(struct lua_script)))) {
		free(e);
		ms_error_set(err, "out of memory");
		return -1;
	}
	e->opt = *opt;
	e->out = opt->out ? opt->out : stdout;
	e->errors = opt->errors ? opt->errors : stderr;
	if (!e->opt.memory_limit)
		e->opt.memory_limit = (size_t)env_unsigned("MEMSCOPE_LUA_MEMORY_MB", LUA_ENGINE_DEFAULT_MEMORY_MB) << 20;
	if (!e->opt.cpu_limit_ms)
		e->opt.cpu_limit_ms = env_unsigned("MEMSCOPE_LUA_CPU_MS", LUA_ENGINE_DEFAULT_CPU_MS);
	if (e->opt.history <= 0)
		e->opt.history = LUA_ENGINE_DEFAULT_HISTORY;
	for (int i = 0; i < opt->nr_scripts; i++) {
		struct lua_script *s = &e->scripts[e->nr_scripts++];

		s->index = i;
		if (load_script(e, s, opt->scripts[i], err) < 0) {
			lua_engine_free(e);
			return -1;
		}
	}
	if (collect_wanted(e, "events", &e->wanted_events) < 0 ||
	    collect_wanted(e, "metrics", &e->wanted_metrics) < 0) {
		lua_engine_free(e);
		ms_error_set(err, "out of memory");
		return -1;
	}
	*out = e;
	return 0;
}

const char *lua_engine_wanted_events(const struct lua_engine *engine)
{
	return engine->wanted_events ? engine->wanted_events : "";
}

const char *lua_engine_wanted_metrics(const struct lua_engine *engine)
{
	return engine->wanted_metrics ? engine->wanted_metrics : "";
}

/* Call the global function `name` with one table argument built by fill(). */
static void call_each(struct lua_engine *e, const char *name, void (*fill)(lua_State *L, void *arg), void *arg)
{
	for (int i = 0; i < e->nr_scripts; i++) {
		struct lua_script *s = &e->scripts[i];

		if (s->failed)
			continue;
		if (lua_getglobal(s->L, name) != LUA_TFUNCTION) {
			lua_pop(s->L, 1);
			continue;
		}
		fill(s->L, arg);
		if (lua_script_call(s, 1, 0, name) < 0)
			continue;
	}
}

static void fill_start(lua_State *L, void *arg)
{
	struct lua_engine *e = arg;

	lua_createtable(L, 0, 4);
	lua_pushstring(L, e->in.source ? e->in.source : "live");
	lua_setfield(L, -2, "source");
	lua_pushstring(L, e->in.source_name ? e->in.source_name : "");
	lua_setfield(L, -2, "source_name");
	lua_pushinteger(L, e->in.table ? e->in.table->nr : 0);
	lua_setfield(L, -2, "nr_series");
}

int lua_engine_start(struct lua_engine *engine, const struct lua_engine_inputs *in, struct ms_error *err)
{
	struct lua_engine *e = engine;

	e->in = *in;
	if (lua_data_init(&e->data, in->table, e->opt.history) < 0) {
		ms_error_set(err, "out of memory for the Lua history (%d frames x %d series)", e->opt.history,
			     in->table->nr);
		return -1;
	}
	e->data_ready = true;
	e->started = true;
	for (int i = 0; i < e->nr_scripts; i++) {
		lua_State *L = e->scripts[i].L;

		lua_getglobal(L, "memscope");
		lua_pushstring(L, e->in.source ? e->in.source : "live");
		lua_setfield(L, -2, "source");
		lua_pushstring(L, e->in.source_name ? e->in.source_name : "");
		lua_setfield(L, -2, "source_name");
		lua_pop(L, 1);
	}
	call_each(e, "on_start", fill_start, e);
	return 0;
}

void lua_frame_fields(lua_State *L, const struct lua_engine *e)
{
	lua_pushinteger(L, (lua_Integer)e->data.seq);
	lua_setfield(L, -2, "seq");
	lua_pushnumber(L, e->data.time_s);
	lua_setfield(L, -2, "time");
	lua_pushnumber(L, e->data.interval_s);
	lua_setfield(L, -2, "interval");
}

static void fill_frame(lua_State *L, void *arg)
{
	struct lua_engine *e = arg;

	/* One table per state, reused: on_frame runs at every frame. */
	if (lua_getfield(L, LUA_REGISTRYINDEX, "memscope.frame") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_createtable(L, 0, 3);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, "memscope.frame");
	}
	lua_frame_fields(L, e);
}

void lua_engine_frame(struct lua_engine *engine, const struct frame *frame)
{
	if (!engine || !engine->started)
		return;
	lua_data_push(&engine->data, frame);
	lua_metrics_compute(engine);
	call_each(engine, "on_frame", fill_frame, engine);
}

struct label_arg {
	double time_s;
	const char *text;
};

static void fill_label(lua_State *L, void *arg)
{
	struct label_arg *l = arg;

	lua_createtable(L, 0, 2);
	lua_pushnumber(L, l->time_s);
	lua_setfield(L, -2, "time");
	lua_pushstring(L, l->text);
	lua_setfield(L, -2, "text");
}

void lua_engine_label(struct lua_engine *engine, double time_s, const char *text)
{
	struct label_arg l = { time_s, text };

	if (engine && engine->started)
		call_each(engine, "on_label", fill_label, &l);
}

static void fill_end(lua_State *L, void *arg)
{
	struct lua_engine *e = arg;

	lua_createtable(L, 0, 2);
	lua_pushinteger(L, (lua_Integer)e->data.frames);
	lua_setfield(L, -2, "frames");
	lua_pushnumber(L, e->data.time_s);
	lua_setfield(L, -2, "duration");
}

void lua_engine_end(struct lua_engine *engine)
{
	if (!engine || !engine->started)
		return;
	call_each(engine, "on_end", fill_end, engine);
	fflush(engine->out);
	/* How much of a run the scripts cost, for measuring (docs/performance.md). */
	if (getenv("MEMSCOPE_LUA_STATS"))
		for (int i = 0; i < engine->nr_scripts; i++)
			fprintf(engine->errors, "memscope %s: lua stats: %s: %llu callbacks, %.3f s\n",
				engine->opt.command_name ? engine->opt.command_name : "lua", engine->scripts[i].name,
				(unsigned long long)engine->scripts[i].calls, (double)engine->scripts[i].busy_ns / 1e9);
}

int lua_engine_nr_scripts(const struct lua_engine *engine)
{
	return engine->nr_scripts;
}

int lua_engine_nr_failed(const struct lua_engine *engine)
{
	return engine->nr_failed;
}

void lua_engine_free(struct lua_engine *engine)
{
	if (!engine)
		return;
	lua_metrics_free(engine);
	for (int i = 0; i < engine->nr_scripts; i++) {
		if (engine->scripts[i].L)
			lua_close(engine->scripts[i].L);
		free(engine->scripts[i].args);
	}
	free(engine->scripts);
	free(engine->wanted_events);
	free(engine->wanted_metrics);
	if (engine->data_ready)
		lua_data_free(&engine->data);
	free(engine);
}
