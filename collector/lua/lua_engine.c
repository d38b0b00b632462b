/* The Lua engine: finding and loading scripts, the sandbox, the limits, and
 * calling callbacks so that a failing script is reported and disabled while
 * everything else goes on.
 *
 * What is where: finding scripts (built-in and user directories); limits
 * (the memory budget, the CPU hook); errors (a failing script reported and
 * disabled); the sandbox; loading (arguments, load_script, lua_engine_open);
 * then the callbacks a run makes: lua_engine_start, frames, labels, samples,
 * lua_engine_end, and lua_engine_free. */
#include "lua/lua_engine.h"
#include "metrics/sample_attrib.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <lauxlib.h>
#include <lualib.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/data_dir.h"
#include "lua/lua_internal.h"
#include "util/text_append.h"
#include "util/trusted_path.h"
#include "metrics/metrics.h"

/* Instructions between two looks at the clock: cheap enough to be invisible
 * (a clock read per ~10 us of Lua), fine enough to stop a loop in time. */
#define HOOK_COUNT 1000
/* A callback's CPU deadline starts from the thread's CPU time read at most
 * this long before (monotonic): reading it is a system call, which at every
 * frame of a recording read at 30,000 frames/s cost a fifth of the read. */
#define CPU_READ_EVERY_NS 1000000ull

/* This thread's CPU time read last, and when (monotonic, taken before). */
static _Thread_local uint64_t cpu_seen_ns, cpu_seen_at;

/* The registry key (its address) of the string "on_frame", kept there so
 * that looking the callback up allocates nothing. */
static const char on_frame_name;

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t lua_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* The limit is on the CPU a callback uses (this thread's): on a busy
 * machine a script waiting for a CPU is not stopped for others' work. */
static uint64_t cpu_now_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
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

/* The user's own scripts: $XDG_DATA_HOME/memscope/lua, by default
 * ~/.local/share/memscope/lua. */
static void user_script_dir(char *dir, size_t size)
{
	const char *data = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	dir[0] = '\0';
	if (data && data[0] == '/')
		snprintf(dir, size, "%s/memscope/lua", data);
	else if (home && home[0] == '/')
		snprintf(dir, size, "%s/.local/share/memscope/lua", home);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int lua_script_names(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	char **list = NULL;
	int nr = 0;

	*names = NULL;
	if (!d)
		return 0;
	while ((ent = readdir(d))) {
		size_t len = strlen(ent->d_name);
		char **grown;

		if (len <= 4 || ent->d_name[0] == '.' || strcmp(ent->d_name + len - 4, ".lua"))
			continue;
		grown = realloc(list, sizeof(char *) * (size_t)(nr + 1));
		if (!grown || !(grown[nr] = strdup(ent->d_name))) {
			list = grown ? grown : list;
			break;
		}
		list = grown;
		nr++;
	}
	closedir(d);
	if (nr)
		qsort(list, (size_t)nr, sizeof(char *), by_name);
	*names = list;
	return nr;
}

int lua_script_dirs(char (*dirs)[PATH_MAX], int max)
{
	const char *env = getenv("MEMSCOPE_LUA_DIR");
	int nr = 0;

	if (env && env[0] && nr < max)
		snprintf(dirs[nr++], PATH_MAX, "%s", env);
	if (nr < max) {
		user_script_dir(dirs[nr], PATH_MAX);
		nr += dirs[nr][0] != '\0';
	}
	if (nr < max)
		data_dir("lua", dirs[nr++], PATH_MAX);
	return nr;
}

/* "faults.lua, remote_ratio.lua, ...": what a bare name can be. */
static void builtin_names(const char *dir, char *buf, size_t size)
{
	char **names;
	int nr = lua_script_names(dir, &names);
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < nr; i++) {
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
		free(names[i]);
	}
	free(names);
	if (!nr)
		snprintf(buf, size, "none (%s has no .lua files)", dir);
}

static int find_file(const char *name, char *path, size_t size, struct ms_error *err)
{
	char with_ext[PATH_MAX];
	char user_lua[PATH_MAX], data_lua[PATH_MAX];
	const char *env = getenv("MEMSCOPE_LUA_DIR");
	size_t len = strlen(name);

	if (!len) {
		ms_error_set(err, "--lua needs a script name or path, e.g. --lua faults.lua");
		return -1;
	}
	/* A path is that file, and only that. */
	if (strchr(name, '/')) {
		if (is_file(name) && (size_t)snprintf(path, size, "%s", name) < size)
			return 0;
		ms_error_set(err, "Lua script %s: %s; give the path of an existing .lua file", name,
			     errno ? strerror(errno) : "not a regular file");
		return -1;
	}
	/* A bare name is a script of the user's or a built-in one, never a
	 * file that happens to be in the current directory: there, another
	 * user's summary.lua would run in place of the built-in. */
	snprintf(with_ext, sizeof(with_ext), "%s%s", name,
		 len > 4 && !strcmp(name + len - 4, ".lua") ? "" : ".lua");
	user_script_dir(user_lua, sizeof(user_lua));
	data_dir("lua", data_lua, sizeof(data_lua));
	if (try_dir(env, with_ext, path, size) || try_dir(user_lua, with_ext, path, size) ||
	    try_dir(data_lua, with_ext, path, size))
		return 0;
	{
		char where[3 * PATH_MAX + 64], names[512];
		size_t n = 0;

		where[0] = '\0';
		if (env && env[0])
			n += (size_t)snprintf(where, sizeof(where), "%s, ", env);
		if (user_lua[0] && n < sizeof(where))
			n += (size_t)snprintf(where + n, sizeof(where) - n, "%s, ", user_lua);
		if (n < sizeof(where))
			snprintf(where + n, sizeof(where) - n, "%s", data_lua);
		builtin_names(data_lua, names, sizeof(names));
		ms_error_set(err, "Lua script '%s' not found in %s; built-in scripts: %s%s%s", name, where, names,
			     is_file(name) ? "; to run the file in the current directory, give its path: --lua ./" : "",
			     is_file(name) ? name : "");
	}
	return -1;
}

int lua_script_open(const char *name, char *path, size_t size, struct ms_error *err)
{
	int fd;

	errno = 0;
	if (find_file(name, path, size, err) < 0)
		return -1;
	/* As root, a script another user can change would run their code as
	 * root: judged on the descriptor that is then read, never by name. */
	fd = trusted_open(path, "Lua script", true, NULL, 0, err);
	if (fd == TRUSTED_NOT_REGULAR)
		ms_error_append(err, "; give the path of an existing .lua file");
	return fd < 0 ? -1 : fd;
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
	if (s->in_callback && nsize > old && s->mem_used - old + nsize + s->json_bytes > s->mem_limit) {
		s->mem_exceeded = true;
		return NULL;
	}
	grown = realloc(ptr, nsize);
	if (!grown)
		return NULL;
	s->mem_used = s->mem_used - old + nsize;
	return grown;
}

/* The script whose callback runs on this thread: jansson's memory (made in
 * memscope.json and emit) is charged to it. */
static _Thread_local struct lua_script *json_charged_to;

/* jansson allocates with plain malloc, outside the Lua state's allocator:
 * its functions are pointed here (for the whole process, once), and what
 * it allocates while a callback runs counts in that script's budget with
 * the Lua heap. Without a callback on the thread this is malloc and free.
 * The count is of this callback's conversions: a JSON value freed later by
 * the collector was charged while it was built, and the count starts from
 * nothing at each callback. */
static void *json_budget_malloc(size_t size)
{
	struct lua_script *s = json_charged_to;
	void *p;

	if (s && s->mem_used + s->json_bytes + size > s->mem_limit) {
		s->mem_exceeded = true;
		return NULL;
	}
	p = malloc(size);
	if (p && s)
		s->json_bytes += malloc_usable_size(p);
	return p;
}

static void json_budget_free(void *p)
{
	struct lua_script *s = json_charged_to;

	if (p && s) {
		size_t n = malloc_usable_size(p);

		s->json_bytes -= n < s->json_bytes ? n : s->json_bytes;
	}
	free(p);
}

/* Before any script runs, on the thread that opens the engine (the others
 * see the same functions: allocation and freeing are plain without a
 * callback, so values made before or elsewhere free alike). */
static void json_budget_install(void)
{
	static bool installed;

	if (!installed) {
		json_set_alloc_funcs(json_budget_malloc, json_budget_free);
		installed = true;
	}
}

bool lua_script_over_cpu(struct lua_script *s)
{
	/* A thread uses no more CPU time than time passes: within the limit
	 * since the start, there is no need to read the CPU clock. */
	return s->deadline_ns &&
	       lua_now_ns() - s->started_ns > (uint64_t)s->engine->opt.cpu_limit_ms * 1000000ull &&
	       cpu_now_ns() > s->deadline_ns;
}

static void limit_hook(lua_State *L, lua_Debug *ar);

int lua_script_cpu_error(lua_State *L)
{
	struct lua_script *s = lua_script_of(L);

	/* From now on check at every instruction: a script that catches the
	 * error with pcall meets it again at once, outside the pcall. */
	if (!s->timed_out)
		lua_sethook(L, limit_hook, LUA_MASKCOUNT, 1);
	s->timed_out = true;
	return luaL_error(L, "CPU limit: %s used more than %d ms of CPU (set MEMSCOPE_LUA_CPU_MS to allow more)",
			  s->phase ? s->phase : "the script", (int)s->engine->opt.cpu_limit_ms);
}

static void limit_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (lua_script_over_cpu(lua_script_of(L)))
		lua_script_cpu_error(L);
}

/* ---- errors ---- */

/* A sandboxed script that reaches for what the sandbox leaves out (io,
 * os.execute, require...) meets Lua's bare "attempt to call a nil value":
 * say why, and the way in. Sandboxed names stay nil, so that scripts can
 * test for them (if io then ... end). */
static const char *sandbox_hint(const struct lua_engine *e, const char *message)
{
	static const char *const left_out[] = {
		"(global 'io')", "(global 'package')", "(global 'require')", "(global 'dofile')",
		"(global 'loadfile')", "(field 'execute')", "(field 'exit')", "(field 'getenv')", "(field 'remove')",
		"(field 'rename')", "(field 'tmpname')", "(field 'setlocale')", NULL,
	};

	if (e->opt.unsafe || !strstr(message, "attempt to "))
		return "";
	for (int i = 0; left_out[i]; i++)
		if (strstr(message, left_out[i]))
			return " (scripts are sandboxed: no io, os.execute and the like, package or require; "
			       "--lua-unsafe gives them io, os and package)";
	return "";
}

void lua_script_fail(struct lua_script *s, const char *message)
{
	struct lua_engine *e = s->engine;
	const char *cmd = e->opt.command_name ? e->opt.command_name : "lua";
	const char *hint = sandbox_hint(e, message);

	if (s->failed)
		return;
	s->failed = true;
	e->nr_failed++;
	if (e->data_ready && e->data.frames)
		fprintf(e->errors, "memscope %s: %s%s (frame %llu, in %s); %s is disabled, the rest goes on\n", cmd,
			message, hint, (unsigned long long)e->data.seq, s->phase ? s->phase : "?", s->name);
	else
		fprintf(e->errors, "memscope %s: %s%s (in %s); %s is disabled, the rest goes on\n", cmd, message,
			hint, s->phase ? s->phase : "?", s->name);
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

	/* A memory error the script caught does not hide a later CPU limit. */
	bool memory = !s->timed_out && (status == LUA_ERRMEM || s->mem_exceeded);

	if (memory)
		msg = NULL;
	for (int level = 0; lua_getstack(co, level, &ar); level++) {
		if (lua_getinfo(co, "Sl", &ar) && ar.currentline > 0) {
			/* ar.source is the whole name; short_src is cut to LUA_IDSIZE. */
			snprintf(where, sizeof(where), "%s:%d: ", ar.source[0] == '@' ? ar.source + 1 : ar.short_src,
				 ar.currentline);
			break;
		}
	}
	if (memory) {
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

/* Close what the failed call left open (its <close> variables run here),
 * still under the limits: once a limit was hit, the hook stops each
 * handler at once. */
static void reset_runner(struct lua_script *s)
{
#if LUA_VERSION_RELEASE_NUM >= 50406
	lua_closethread(s->runner, s->L);
#else
	lua_resetthread(s->runner);
#endif
}

int lua_script_run(struct lua_script *s, const char *phase, lua_CFunction body, void *ud)
{
	lua_State *co = s->runner;
	const char *old_phase = s->phase;
	struct lua_script *old_charged = json_charged_to;
	unsigned limit = s->engine->opt.cpu_limit_ms;
	char message[1024];
	int status, nres = 0;
	uint64_t start;

	/* A script that failed stays off; a call from inside a callback (a
	 * memscope.* function reaching back) would nest limits: refused. */
	if (s->failed || s->in_callback)
		return -1;
	s->phase = phase;
	s->in_callback = true;
	s->timed_out = false;
	s->mem_exceeded = false;
	s->json_bytes = 0;
	json_charged_to = s;
	lua_settop(co, 0);
	lua_sethook(co, limit_hook, LUA_MASKCOUNT, HOOK_COUNT);
	start = lua_now_ns();
	/* The CPU time at the start is at most what was read last plus the time
	 * since: the deadline is never early, and at most CPU_READ_EVERY_NS late. */
	if (!cpu_seen_at || start - cpu_seen_at > CPU_READ_EVERY_NS) {
		cpu_seen_at = start;
		cpu_seen_ns = cpu_now_ns();
	}
	s->started_ns = start;
	s->deadline_ns = cpu_seen_ns + (start - cpu_seen_at) + (uint64_t)limit * 1000000ull;
	/* Neither push allocates: nothing can fail outside the protected call. */
	lua_pushcfunction(co, body);
	lua_pushlightuserdata(co, ud);
	status = lua_resume(co, s->L, 1, &nres);
	if (status == LUA_OK) {
		lua_settop(co, 0);
	} else {
		if (status == LUA_YIELD)
			snprintf(message, sizeof(message), "%s: %s yielded: callbacks must return, not yield", s->name,
				 phase);
		else
			describe_error(s, co, status, message, sizeof(message));
		reset_runner(s);
		lua_sethook(co, limit_hook, LUA_MASKCOUNT, HOOK_COUNT);
	}
	s->deadline_ns = 0;
	s->calls++;
	s->busy_ns += lua_now_ns() - start;
	s->in_callback = false;
	json_charged_to = old_charged;
	s->json_bytes = 0;
	if (status != LUA_OK)
		lua_script_fail(s, message);
	s->phase = old_phase;
	return status == LUA_OK ? 0 : -1;
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

/* setmetatable() without finalizers: Lua runs a __gc with hooks off
 * (no time limit can stop it), whenever the collector gets to it. The
 * check is raw, as Lua's own: an __index on the metatable must not be able
 * to add a __gc while it is looked up. */
static int safe_setmetatable(lua_State *L)
{
	if (lua_istable(L, 2) && (lua_pushliteral(L, "__gc"), lua_rawget(L, 2)) != LUA_TNIL)
		return luaL_error(L, "setmetatable: __gc finalizers are not allowed in sandboxed scripts "
				  "(--lua-unsafe allows them)");
	lua_settop(L, 2);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, 2, 1);
	return 1;
}

/* Lua calls a message handler for an error raised in the count hook with
 * hooks off, so a handler that loops would never be stopped: once a limit
 * was hit, the error goes on as it is, without the script's handler. */
static int guarded_handler(lua_State *L)
{
	struct lua_script *s = lua_script_of(L);

	if (s->timed_out || s->mem_exceeded)
		return 1;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

static int xpcall_done(lua_State *L, int status, lua_KContext ctx)
{
	(void)status;
	(void)ctx;
	return lua_gettop(L);
}

static int guarded_xpcall(lua_State *L)
{
	int n = lua_gettop(L);

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 2);
	lua_pushcclosure(L, guarded_handler, 1);
	lua_replace(L, 2);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_callk(L, n, LUA_MULTRET, 0, xpcall_done);
	return lua_gettop(L);
}

/* In every state, sandboxed or not: the limits hold for --lua-unsafe too. */
static void guard_limits(lua_State *L)
{
	lua_getglobal(L, "xpcall");
	lua_pushcclosure(L, guarded_xpcall, 1);
	lua_setglobal(L, "xpcall");
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

static char *read_file(int fd, const char *path, size_t *len, struct ms_error *err)
{
	FILE *f = fdopen(fd, "rb");
	char *buf = NULL;
	size_t cap = 0, used = 0, n;

	if (!f) {
		ms_error_set(err, "Lua script %s: %s", path, strerror(errno));
		close(fd);
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

struct check_args {
	struct lua_script *s;
	char known[512];
	char unknown[128];          /* an argument given that the script does not declare */
};

/* Is `name` one of the comma-separated names in `list`? */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p++)
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* After the chunk ran: check given args against script.args, fill defaults.
 * Runs as script code (script.args may have metamethods). */
static int check_args_body(lua_State *L)
{
	struct check_args *c = lua_touserdata(L, 1);
	struct lua_script *s = c->s;
	size_t len = 0;

	lua_settop(L, 0);
	lua_getglobal(L, "memscope");
	lua_getfield(L, 1, "args");                                          /* 2 */
	if (lua_getglobal(L, "script") == LUA_TTABLE && lua_getfield(L, 3, "args") == LUA_TTABLE) {
		for (lua_Integer i = 1; lua_geti(L, 4, i) == LUA_TTABLE; i++) {    /* 5 */
			if (lua_getfield(L, 5, "name") == LUA_TSTRING) {           /* 6 */
				const char *an = lua_tostring(L, 6);

				text_appendf(c->known, sizeof(c->known), &len, "%s%s", len ? ", " : "", an);
				if (lua_istable(L, 2) && lua_getfield(L, 2, an) == LUA_TNIL) {
					lua_getfield(L, 5, "default");
					if (!lua_isnil(L, -1)) {
						lua_tostring(L, -1);
						lua_setfield(L, 2, an);
					}
				}
			}
			lua_settop(L, 4);
		}
	}
	lua_settop(L, 2);
	/* Every argument given must be one the script declares. */
	if (!s->args || !lua_istable(L, 2))
		return 0;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING) {
			char needle[160];
			const char *an = lua_tostring(L, -1);

			snprintf(needle, sizeof(needle), "%s=", an);
			if (strstr(s->args, needle) && !listed(c->known, an)) {
				snprintf(c->unknown, sizeof(c->unknown), "%s", an);
				break;
			}
		}
	}
	return 0;
}

static int check_args(struct lua_script *s, struct ms_error *err)
{
	struct check_args c = { .s = s };

	if (lua_script_run(s, "loading", check_args_body, &c) < 0 || !c.unknown[0])
		return 0;
	ms_error_set(err, "--lua %s: the script takes no argument '%s'%s%s", s->name, c.unknown,
		     c.known[0] ? "; it takes: " : " (it takes none)", c.known);
	return -1;
}

struct load_chunk {
	const char *text;
	size_t len;
	const char *chunkname;
};

/* Compile and run the chunk's top level: under the same limits as
 * callbacks (a script can loop or allocate at its top level, and its
 * compilation takes memory too). */
static int load_body(lua_State *L)
{
	struct load_chunk *c = lua_touserdata(L, 1);

	if (luaL_loadbufferx(L, c->text, c->len, c->chunkname, "t") != LUA_OK)
		return lua_error(L);
	lua_call(L, 0, 0);
	return 0;
}

/* Does the script define on_sample? (script code: a global lookup) */
static int wants_samples_body(lua_State *L)
{
	struct lua_engine *e = lua_touserdata(L, 1);

	if (lua_getglobal(L, "on_sample") == LUA_TFUNCTION)
		e->wants_samples = true;
	return 0;
}

static int load_script(struct lua_engine *e, struct lua_script *s, const char *spec, struct ms_error *err)
{
	char name[PATH_MAX], chunkname[PATH_MAX + 1];
	struct load_chunk chunk;
	size_t len;
	char *text;
	int ret, fd;

	if (split_spec(spec, name, sizeof(name), &s->args) < 0) {
		ms_error_set(err, "--lua %s: name too long or out of memory", spec);
		return -1;
	}
	/* Read at once from the descriptor the checks were made on. */
	if ((fd = lua_script_open(name, s->path, sizeof(s->path), err)) < 0 ||
	    !(text = read_file(fd, s->path, &len, err)))
		return -1;
	/* Built-ins are named by their file name, user scripts as given. */
	snprintf(s->name, sizeof(s->name), "%s", strchr(name, '/') ? name : strrchr(s->path, '/') ?
		 strrchr(s->path, '/') + 1 : s->path);
	s->label = strrchr(s->name, '/') ? strrchr(s->name, '/') + 1 : s->name;
	s->engine = e;
	s->mem_limit = e->opt.memory_limit;
	s->L = lua_newstate(budget_alloc, s);
	if (!s->L) {
		free(text);
		ms_error_set(err, "Lua script %s: cannot create a Lua state (out of memory)", s->name);
		return -1;
	}
	if (e->opt.unsafe)
		luaL_openlibs(s->L);
	else
		open_safe_libs(s->L);
	guard_limits(s->L);
	lua_builtins_bound(s->L);
	lua_api_open(s->L, s);
	lua_pushliteral(s->L, "on_frame");
	lua_rawsetp(s->L, LUA_REGISTRYINDEX, &on_frame_name);
	s->runner = lua_newthread(s->L);
	lua_setfield(s->L, LUA_REGISTRYINDEX, "memscope.runner");
	if (set_args(s, err) < 0) {
		free(text);
		return -1;
	}
	snprintf(chunkname, sizeof(chunkname), "@%s", s->name);
	chunk = (struct load_chunk){ text, len, chunkname };
	/* A broken script is reported and disabled like one failing later: the
	 * other scripts still run. */
	ret = lua_script_run(s, "loading", load_body, &chunk);
	free(text);
	if (ret < 0)
		return 0;
	/* Known before the run, so that a report can give it the samples. */
	lua_script_run(s, "loading", wants_samples_body, e);
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

struct wanted {
	const char *field;
	char **list;
	size_t *len, *cap;
	bool oom;
};

/* script.<field> (script code: it may have metamethods). */
static int wanted_body(lua_State *L)
{
	struct wanted *w = lua_touserdata(L, 1);

	if (lua_getglobal(L, "script") != LUA_TTABLE || lua_getfield(L, -1, w->field) != LUA_TTABLE)
		return 0;
	for (lua_Integer k = 1; lua_geti(L, -1, k) == LUA_TSTRING; k++) {
		if (add_unique(w->list, w->len, w->cap, lua_tostring(L, -1)) < 0) {
			w->oom = true;
			return 0;
		}
		lua_pop(L, 1);
	}
	return 0;
}

/* Append each string of script.<field> to a comma list, once. */
static int collect_wanted(struct lua_engine *e, const char *field, char **list)
{
	size_t len = 0, cap = 256;
	struct wanted w = { field, list, &len, &cap, false };

	if (!(*list = calloc(cap, 1)))
		return -1;
	for (int i = 0; i < e->nr_scripts && !w.oom; i++)
		lua_script_run(&e->scripts[i], "loading", wanted_body, &w);
	return w.oom ? -1 : 0;
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
	json_budget_install();
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

struct callback {
	const char *name;                       /* the global function to call */
	void (*fill)(lua_State *L, void *arg);  /* pushes its one argument */
	void *arg;
};

/* Look the callback up and call it: all of it script code (_G may have an
 * __index, the argument table a __newindex). */
static int callback_body(lua_State *L)
{
	struct callback *c = lua_touserdata(L, 1);

	if (lua_getglobal(L, c->name) != LUA_TFUNCTION)
		return 0;
	c->fill(L, c->arg);
	lua_call(L, 1, 0);
	return 0;
}

/* Could the script have an on_frame? Answered without running any of its
 * code and without allocating (outside a callback, a script's code would run
 * unlimited): a global table without a metatable and without the name has
 * none. A recording is read at tens of thousands of frames a second, and a
 * callback run costs more than a frame's values. */
static bool may_have_on_frame(struct lua_script *s)
{
	lua_State *L = s->L;
	int top = lua_gettop(L);
	bool maybe = true;

	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
	if (!lua_getmetatable(L, -1) && lua_rawgetp(L, LUA_REGISTRYINDEX, &on_frame_name) == LUA_TSTRING)
		maybe = lua_rawget(L, -2) != LUA_TNIL;
	lua_settop(L, top);
	return maybe;
}

/* Call the global function `name` of each script with one table argument
 * built by fill(). */
static void call_each(struct lua_engine *e, const char *name, void (*fill)(lua_State *L, void *arg), void *arg)
{
	struct callback c = { name, fill, arg };

	for (int i = 0; i < e->nr_scripts; i++)
		lua_script_run(&e->scripts[i], name, callback_body, &c);
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

/* memscope.source and .source_name (script code: memscope is the script's
 * to change, metatable and all). */
static int set_source_body(lua_State *L)
{
	struct lua_engine *e = lua_touserdata(L, 1);

	if (lua_getglobal(L, "memscope") != LUA_TTABLE)
		return 0;
	lua_pushstring(L, e->in.source ? e->in.source : "live");
	lua_setfield(L, -2, "source");
	lua_pushstring(L, e->in.source_name ? e->in.source_name : "");
	lua_setfield(L, -2, "source_name");
	return 0;
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
	if (in->metrics && !(e->values = metric_values_new(in->metrics))) {
		ms_error_set(err, "out of memory for the metric values");
		return -1;
	}
	e->started = true;
	for (int i = 0; i < e->nr_scripts; i++) {
		lua_script_run(&e->scripts[i], "on_start", set_source_body, e);
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
	lua_pushinteger(L, (lua_Integer)e->merged);
	lua_setfield(L, -2, "merged");
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

void lua_engine_frame(struct lua_engine *engine, const struct frame *frame, const struct metric_values *values,
		      uint64_t merged)
{
	if (!engine || !engine->started)
		return;
	engine->merged = merged ? merged : 1;
	if (engine->values && values)
		metric_values_copy(engine->values, values);
	lua_data_push(&engine->data, frame);
	lua_metrics_compute(engine);
	for (int i = 0; i < engine->nr_scripts; i++) {
		struct lua_script *sc = &engine->scripts[i];
		struct callback c = { "on_frame", fill_frame, engine };

		if (!sc->failed && !may_have_on_frame(sc)) {
			sc->calls++;
			continue;
		}
		lua_script_run(sc, "on_frame", callback_body, &c);
	}
}

struct label_arg {
	double time_s;
	const char *text;
	const char *phase;          /* "begin", "end", or NULL for a plain label */
};

static void fill_label(lua_State *L, void *arg)
{
	struct label_arg *l = arg;

	lua_createtable(L, 0, 3);
	lua_pushnumber(L, l->time_s);
	lua_setfield(L, -2, "time");
	lua_pushstring(L, l->text);
	lua_setfield(L, -2, "text");
	if (l->phase && l->phase[0]) {
		lua_pushstring(L, l->phase);
		lua_setfield(L, -2, "phase");
	}
}

void lua_engine_label(struct lua_engine *engine, double time_s, const char *text, const char *phase)
{
	struct label_arg l = { time_s, text, phase };

	if (engine && engine->started)
		call_each(engine, "on_label", fill_label, &l);
}

struct sample_arg {
	const struct attributed_sample *s;
	double time_s;
};

static void set_str(lua_State *L, const char *key, const char *value)
{
	lua_pushstring(L, value);
	lua_setfield(L, -2, key);
}

static void set_int_or_nil(lua_State *L, const char *key, long long value, bool known)
{
	if (known)
		lua_pushinteger(L, (lua_Integer)value);
	else
		lua_pushnil(L);
	lua_setfield(L, -2, key);
}

static void fill_sample(lua_State *L, void *arg)
{
	const struct sample_arg *a = arg;
	const struct attributed_sample *s = a->s;
	const struct event_sample *e = s->sample;

	lua_createtable(L, 0, 24);
	lua_pushnumber(L, a->time_s);
	lua_setfield(L, -2, "time");
	set_int_or_nil(L, "pid", e->pid, true);
	set_int_or_nil(L, "tid", e->tid, true);
	set_int_or_nil(L, "cpu", e->cpu, e->cpu >= 0);
	set_str(L, "comm", s->comm);
	set_str(L, "event", s->event);
	set_int_or_nil(L, "ip", (long long)e->ip, true);
	set_int_or_nil(L, "addr", (long long)e->addr, e->addr != 0);
	set_str(L, "sym", s->code.sym);
	set_str(L, "srcline", s->code.srcline);
	set_str(L, "dso", s->code.dso);
	set_str(L, "obj", s->data.name);
	set_int_or_nil(L, "node", s->node, s->node >= 0);
	set_int_or_nil(L, "cpu_node", s->cpu_node, s->cpu_node >= 0);
	if (s->remote >= 0)
		lua_pushboolean(L, s->remote);
	else
		lua_pushnil(L);
	lua_setfield(L, -2, "remote");
	if (s->access.level)
		set_str(L, "level", s->access.level);
	if (s->access.op)
		set_str(L, "op", s->access.op == 'L' ? "load" : s->access.op == 'S' ? "store"
				 : s->access.op == 'P' ? "prefetch" : "exec");
	lua_pushboolean(L, s->access.hitm);
	lua_setfield(L, -2, "hitm");
	lua_pushboolean(L, s->access.peer);
	lua_setfield(L, -2, "peer");
	set_int_or_nil(L, "weight", (long long)s->weight, s->weight != 0);
	lua_createtable(L, s->nr_chain, 0);
	for (int i = 0; i < s->nr_chain; i++) {
		lua_createtable(L, 0, 3);
		set_str(L, "sym", s->chain[i].sym);
		set_str(L, "srcline", s->chain[i].srcline);
		set_str(L, "dso", s->chain[i].dso);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "callchain");
}

void lua_engine_sample(struct lua_engine *engine, const struct attributed_sample *s, double time_s)
{
	struct sample_arg a = { s, time_s };

	if (engine && engine->started && engine->wants_samples)
		call_each(engine, "on_sample", fill_sample, &a);
}

bool lua_engine_wants_samples(const struct lua_engine *engine)
{
	return engine && engine->wants_samples;
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

const char *lua_engine_script_label(const struct lua_engine *engine, int index)
{
	return index >= 0 && index < engine->nr_scripts ? engine->scripts[index].label : NULL;
}

void lua_engine_free(struct lua_engine *engine)
{
	if (!engine)
		return;
	metric_values_free(engine->values);
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
