/* The Lua engine: the sandbox, errors and limits (each disables only the
 * script at fault, with script:line and the frame), the data API's numbers
 * and the output helpers' exact text. Scripts are written to a temporary
 * directory and fed hand-made frames whose expected values are worked out
 * in the comments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fixture_tree.h"
#include "lua/lua_engine.h"

/* The process's CPU time: the limits are CPU limits, so what a runaway script
 * costs is judged in CPU, which a loaded machine does not stretch. */
static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char dir[4096];

struct rig {
	struct series_table table;
	struct topology topo;
	int nodes[2];
	struct cpu_place cpus[2];
	struct frame frame;
	struct lua_engine *lua;
	char *out_text, *err_text;
	size_t out_len, err_len;
	FILE *out, *errors;
	struct ms_error err;
};

/* Two CPUs on two nodes; page-faults per CPU, proc.pages_alloc per node,
 * proc.processes a gauge. */
static void rig_table(struct rig *r)
{
	struct series_labels l;

	memset(r, 0, sizeof(*r));
	for (int cpu = 0; cpu < 2; cpu++) {
		series_labels_init(&l);
		l.cpu = cpu;
		l.node = cpu;
		l.socket = cpu;
		series_table_add(&r->table, "page-faults", "", 1.0, SERIES_COUNTER, &l);
	}
	for (int node = 0; node < 2; node++) {
		series_labels_init(&l);
		l.node = node;
		series_table_add(&r->table, "proc.pages_alloc", "", 1.0, SERIES_COUNTER, &l);
	}
	series_labels_init(&l);
	series_table_add(&r->table, "proc.processes", "", 1.0, SERIES_GAUGE, &l);
	series_labels_init(&l);
	series_table_add(&r->table, "never-counted", "", 1.0, SERIES_COUNTER, &l);
	r->table.series[5].unavailable = strdup("the event does not exist here");
	frame_init(&r->frame, r->table.nr);
	r->nodes[0] = 0;
	r->nodes[1] = 1;
	r->cpus[0] = (struct cpu_place){ .cpu = 0 };
	r->cpus[1] = (struct cpu_place){ .cpu = 1, .socket = 1, .node = 1 };
	r->topo.cpus = r->cpus;
	r->topo.nr_cpus = 2;
	r->topo.max_cpu = 2;
	r->topo.nodes = r->nodes;
	r->topo.nr_nodes = 2;
	r->topo.nr_sockets = 2;
}

static const char *script(const char *name, const char *text)
{
	static char path[32][4096];
	static int next;
	char *p = path[next++ % 32];

	tree_write(dir, name, text);
	snprintf(p, 4096, "%s/%s", dir, name);
	return p;
}

static int rig_open(struct rig *r, const char *const *scripts, int n, bool unsafe, enum lua_output_format fmt,
		    unsigned cpu_ms, size_t mem)
{
	struct lua_engine_options o = {
		.scripts = scripts, .nr_scripts = n, .unsafe = unsafe, .format = fmt,
		.cpu_limit_ms = cpu_ms, .memory_limit = mem, .history = 4, .command_name = "test",
	};
	struct lua_engine_inputs in = { .table = &r->table, .topo = &r->topo, .source = "test" };

	r->out = open_memstream(&r->out_text, &r->out_len);
	r->errors = open_memstream(&r->err_text, &r->err_len);
	o.out = r->out;
	o.errors = r->errors;
	if (lua_engine_open(&r->lua, &o, &r->err) < 0)
		return -1;
	return lua_engine_start(r->lua, &in, &r->err);
}

/* Frame seq with the given page-faults per CPU, pages per node, processes. */
static void rig_frame(struct rig *r, uint64_t seq, uint64_t f0, uint64_t f1, uint64_t p0, uint64_t p1, uint64_t procs)
{
	uint64_t v[5] = { f0, f1, p0, p1, procs };

	r->frame.seq = seq;
	r->frame.time_ns = 1000000000ull * (seq + 1) + 5000000000ull;
	r->frame.interval_ns = 1000000000ull;
	for (int i = 0; i < 5; i++)
		r->frame.samples[i] = (struct sample){ v[i], 1000, 1000, true };
	r->frame.samples[5] = (struct sample){ 0, 0, 0, false };
	lua_engine_frame(r->lua, &r->frame, NULL, 1);
}

static void rig_flush(struct rig *r)
{
	fflush(r->out);
	fflush(r->errors);
}

static void rig_close(struct rig *r)
{
	lua_engine_free(r->lua);
	fclose(r->out);
	fclose(r->errors);
	free(r->out_text);
	free(r->err_text);
	frame_free(&r->frame);
	series_table_free(&r->table);
}

static void test_sandbox(void)
{
	struct rig r;
	const char *s[] = { script("sandbox.lua",
		"print('execute', os.execute == nil, 'popen', io == nil, 'loadlib', package == nil)\n"
		"print('dofile', dofile == nil, 'loadfile', loadfile == nil, 'require', require == nil)\n"
		"print('time', type(os.time()), 'clock', type(os.clock()), 'getenv', os.getenv == nil)\n"
		"local f, e = load(string.dump(function() end))\n"
		"print('bytecode', f == nil)\n"
		"print('text', load('return 6 * 7')())\n"
		"print('gc', pcall(setmetatable, {}, {__gc = function() while true do end end}))\n"
		"print('meta', getmetatable(setmetatable({}, {__index = {x = 5}})).__index.x)\n") };

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_TEXT, 0, 0), 0);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "execute\ttrue\tpopen\ttrue\tloadlib\ttrue\n");
	CHECK_CONTAINS(r.out_text, "dofile\ttrue\tloadfile\ttrue\trequire\ttrue\n");
	CHECK_CONTAINS(r.out_text, "time\tnumber\tclock\tnumber\tgetenv\ttrue\n");
	CHECK_CONTAINS(r.out_text, "bytecode\ttrue\n");
	CHECK_CONTAINS(r.out_text, "text\t42\n");
	CHECK_CONTAINS(r.out_text, "gc\tfalse\tsetmetatable: __gc finalizers are not allowed");
	CHECK_CONTAINS(r.out_text, "meta\t5\n");
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 0);
	rig_close(&r);

	/* Opted in: the full libraries. */
	const char *u[] = { script("unsafe.lua", "print('execute', type(os.execute), 'popen', type(io.popen), "
				   "'loadlib', type(package.loadlib))\n") };
	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, u, 1, true, LUA_OUTPUT_TEXT, 0, 0), 0);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "execute\tfunction\tpopen\tfunction\tloadlib\tfunction\n");
	rig_close(&r);
}

/* A syntax error, a runtime error, an endless loop (even one hiding behind
 * pcall) and a huge allocation: each names script:line (and the frame), the
 * script is disabled, and a healthy script beside them sees every frame. */
static void test_failures(void)
{
	struct rig r;
	const char *s[] = {
		script("syntax.lua", "function on_frame(f)\n  local x = = 1\nend\n"),
		script("runtime.lua", "function on_frame(f)\n  if f.seq == 2 then\n    local t = nil\n"
		       "    return t.field\n  end\nend\n"),
		script("loop.lua", "function on_frame(f)\n  if f.seq == 1 then\n    while true do\n"
		       "      pcall(function() while true do end end)\n    end\n  end\nend\n"),
		/* 64 KiB a step: the budget, never the clock, stops it. */
		script("alloc.lua", "function on_frame(f)\n  local t, s = {}, string.rep('x', 65536)\n  for i = 1, 1e9 do\n"
		       "    t[i] = s .. i\n  end\nend\n"),
		script("bigstring.lua", "function on_frame(f)\n  local s = string.rep('x', 1e9)\nend\n"),
		script("healthy.lua", "n = 0\nfunction on_frame(f) n = n + 1 end\n"
		       "function on_end(s) print('healthy saw', n, 'frames of', s.frames) end\n"),
	};
	uint64_t start, took;

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 6, false, LUA_OUTPUT_TEXT, 200, 16u << 20), 0);
	start = process_cpu_ns();
	for (uint64_t seq = 0; seq < 5; seq++)
		rig_frame(&r, seq, 1, 1, 1, 1, 1);
	took = process_cpu_ns() - start;
	lua_engine_end(r.lua);
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 5);
	CHECK_CONTAINS(r.err_text, "syntax.lua:2: unexpected symbol near '='");
	CHECK_CONTAINS(r.err_text, "syntax.lua is disabled");
	CHECK_CONTAINS(r.err_text, "runtime.lua:4: attempt to index a nil value (local 't') (frame 2, in on_frame)");
	CHECK_CONTAINS(r.err_text, "loop.lua:4: CPU limit: on_frame used more than 200 ms of CPU");
	CHECK_CONTAINS(r.err_text, "(frame 1, in on_frame); ");
	CHECK_CONTAINS(r.err_text, "loop.lua is disabled, the rest goes on");
	CHECK_CONTAINS(r.err_text, "alloc.lua:4: memory limit: the script used more than 16 MiB");
	CHECK_CONTAINS(r.err_text, "(frame 0, in on_frame); ");
	CHECK_CONTAINS(r.err_text, "bigstring.lua:2: memory limit");
	CHECK_CONTAINS(r.out_text, "healthy saw\t5\tframes of\t5\n");
	/* The loop is stopped after its 200 ms; the rest is quick. */
	CHECK(took < 1500000000ull);
	rig_close(&r);
}

/* Values, totals, rates, labels, history and a Lua metric, on known frames:
 *   frame 0: page-faults cpu0=100 cpu1=300, pages node0=10 node1=30, procs 2
 *   frame 1: page-faults cpu0=50  cpu1=150, pages node0=5  node1=45, procs 3 */
static void test_api_numbers(void)
{
	struct rig r;
	const char *s[] = { script("numbers.lua",
		"memscope.metric{name='pages.remote_share', unit='ratio', inputs={'proc.pages_alloc'},\n"
		"  compute=function(v, scope) return v['proc.pages_alloc'] / v.interval end}\n"
		"function on_frame(f)\n"
		"  local pf = memscope.value('page-faults')\n"
		"  local pf1 = memscope.value('page-faults', {node=1})\n"
		"  local rate = memscope.rate('proc.pages_alloc', {node=1})\n"
		"  local tot = memscope.total('page-faults', {cpu=0})\n"
		"  local procs = memscope.value('proc.processes')\n"
		"  local m0 = memscope.value('pages.remote_share', {node=0})\n"
		"  local msys = memscope.value('pages.remote_share')\n"
		"  print(string.format('f%d t=%.1f i=%.1f pf=%g pf1=%g rate=%g tot=%g procs=%g m0=%g msys=%g',\n"
		"    f.seq, f.time, f.interval, pf, pf1, rate, tot, procs, m0, msys))\n"
		"end\n"
		"function on_end()\n"
		"  local h, t = memscope.history('page-faults', {cpu=1})\n"
		"  print('history', #h, h[1], h[2], t[1], t[2])\n"
		"  print('total procs', memscope.total('proc.processes'))\n"
		"  print('nodes', table.concat(memscope.labels('proc.pages_alloc', 'node'), ','))\n"
		"  local v, why = memscope.value('never-counted')\n"
		"  print('never', v, why)\n"
		"  print('missing', memscope.value('no.such'))\n"
		"  print('has', memscope.has('page-faults'), memscope.has('never-counted'), memscope.has('pages.remote_share'))\n"
		"  local topo = memscope.topology()\n"
		"  print('topo', #topo.nodes, topo.cpus[2].node, topo.nr_sockets)\n"
		"  print('bad label', pcall(memscope.value, 'page-faults', {core=1}))\n"
		"end\n") };

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_TEXT, 0, 0), 0);
	rig_frame(&r, 0, 100, 300, 10, 30, 2);
	rig_frame(&r, 1, 50, 150, 5, 45, 3);
	CHECK_EQ_INT(lua_engine_find_metric(r.lua, "pages.remote_share"), 0);
	double v = 0;
	CHECK(lua_engine_metric_value(r.lua, 0, 1, &v));
	CHECK_NEAR(v, 45.0, 1e-9);
	lua_engine_end(r.lua);
	rig_flush(&r);
	CHECK_EQ_STR(r.err_text, "");
	/* Times run from the start of the first interval (time_ns - interval). */
	CHECK_CONTAINS(r.out_text, "f0 t=1.0 i=1.0 pf=400 pf1=300 rate=30 tot=100 procs=2 m0=10 msys=40\n");
	CHECK_CONTAINS(r.out_text, "f1 t=2.0 i=1.0 pf=200 pf1=150 rate=45 tot=150 procs=3 m0=5 msys=50\n");
	CHECK_CONTAINS(r.out_text, "history\t2\t300.0\t150.0\t1.0\t2.0\n");
	CHECK_CONTAINS(r.out_text, "total procs\t3.0\n");
	CHECK_CONTAINS(r.out_text, "nodes\t0,1\n");
	CHECK_CONTAINS(r.out_text, "never\tnil\tthe event does not exist here\n");
	CHECK_CONTAINS(r.out_text, "missing\tnil\tno series or metric of that name here");
	CHECK_CONTAINS(r.out_text, "has\ttrue\tfalse\ttrue\n");
	CHECK_CONTAINS(r.out_text, "topo\t2\t1\t2\n");
	CHECK_CONTAINS(r.out_text, "bad label\tfalse\tunknown label 'core'");
	rig_close(&r);

	/* The history ring keeps the last 4 frames (the rig's size): after 6 frames
	 * of 10, 20, ... 60 faults on cpu0, a window of 10 holds 30..60. */
	const char *h[] = { script("ring.lua",
		"function on_end()\n"
		"  local v, t = memscope.history('page-faults', {cpu=0}, 10)\n"
		"  print('ring', #v, table.concat(v, ','), t[1], t[4])\n"
		"  print('window', table.concat(memscope.history('page-faults', {cpu=0}, 2), ','))\n"
		"end\n") };
	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, h, 1, false, LUA_OUTPUT_TEXT, 0, 0), 0);
	for (uint64_t seq = 0; seq < 6; seq++)
		rig_frame(&r, seq, 10 * (seq + 1), 0, 0, 0, 1);
	lua_engine_end(r.lua);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "ring\t4\t30.0,40.0,50.0,60.0\t3.0\t6.0\n");
	CHECK_CONTAINS(r.out_text, "window\t50.0,60.0\n");
	rig_close(&r);
}

/* The helpers' exact text, and emit in the three formats. */
static void test_output(void)
{
	static const char *body =
		"print(memscope.table({{'node', 'faults', 'share'}, {0, 1500, 0.25}, {1, 20, 0.755}}))\n"
		"print('[' .. memscope.bar(5, 10, 4) .. ']', '[' .. memscope.bar(1, 8, 1) .. ']')\n"
		"print(memscope.sparkline({0, 1, 2, 3, 4, 5, 6, 7, 0/0}))\n"
		"print(memscope.csv({{'a', 'b'}, {'x,y', 'say \"hi\"'}}))\n"
		"print(memscope.json({name='n', list={1, 2.5, true}}))\n"
		"print(memscope.fmt(1234567, 'B/s'), memscope.fmt(999), memscope.fmt(0/0))\n"
		"memscope.emit{title='Faults', columns={'node', 'faults'}, rows={{0, 10}, {1, 2.5}}}\n";
	struct rig r;
	const char *s[] = { script("output.lua", body) };

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_TEXT, 0, 0), 0);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "node  faults  share\n   0    1500   0.25\n   1      20   0.76\n");
	CHECK_CONTAINS(r.out_text, "[██]\t[▏]\n");
	CHECK_CONTAINS(r.out_text, "▁▂▃▄▅▆▇█ \n");
	CHECK_CONTAINS(r.out_text, "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
	CHECK_CONTAINS(r.out_text, "\"list\":[1,2.5,true]");
	CHECK_CONTAINS(r.out_text, "1.23 MB/s\t999\tn/a\n");
	CHECK_CONTAINS(r.out_text, "Faults\n  node  faults\n     0      10\n     1    2.50\n");
	rig_close(&r);

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_CSV, 0, 0), 0);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "# output.lua: Faults\nnode,faults\n0,10\n1,2.50\n");
	rig_close(&r);

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_JSON, 0, 0), 0);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "{\"script\":\"output.lua\",\"title\":\"Faults\",\"columns\":[\"node\",\"faults\"],"
		       "\"rows\":[{\"node\":0,\"faults\":10},{\"node\":1,\"faults\":2.5}]}\n");
	CHECK_CONTAINS(r.out_text, "{\"script\":\"output.lua\",\"note\":\"1.23 MB/s\\t999\\tn/a\"}\n");
	rig_close(&r);
}

/* Script metadata: arguments with defaults, unknown arguments refused, and
 * what the scripts ask to be measured. */
static void test_metadata(void)
{
	struct rig r;
	char spec[4200];
	const char *meta = script("meta.lua",
		"script = {description='d', args={{name='top', default='10'}, {name='sort', default='faults'}},\n"
		"  events={'proc.faults', 'page-faults'}, metrics={'mem.read_bw'}}\n"
		"print('args', memscope.args.top, memscope.args.sort)\n");
	const char *other = script("other.lua", "script = {events={'page-faults', 'proc.pages_alloc'}}\n");
	const char *s[] = { spec, other };

	snprintf(spec, sizeof(spec), "%s:top=3", meta);
	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 2, false, LUA_OUTPUT_TEXT, 0, 0), 0);
	rig_flush(&r);
	CHECK_CONTAINS(r.out_text, "args\t3\tfaults\n");
	CHECK_EQ_STR(lua_engine_wanted_events(r.lua), "proc.faults,page-faults,proc.pages_alloc");
	CHECK_EQ_STR(lua_engine_wanted_metrics(r.lua), "mem.read_bw");
	rig_close(&r);

	snprintf(spec, sizeof(spec), "%s:depth=3", meta);
	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_TEXT, 0, 0), -1);
	CHECK_CONTAINS(r.err.text, "the script takes no argument 'depth'; it takes: top, sort");
	rig_close(&r);

	/* Not found: the message lists the built-in scripts. */
	const char *missing[] = { "no_such_script.lua" };
	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, missing, 1, false, LUA_OUTPUT_TEXT, 0, 0), -1);
	CHECK_CONTAINS(r.err.text, "Lua script 'no_such_script.lua' not found");
	rig_close(&r);
}

/* Ways around the limits: each is stopped within its limit, disabled with
 * script:line, and nothing aborts the process (a raise from _G.__index used
 * to end in a Lua panic, a loop in a message handler, a close handler or a
 * finalizer ran forever, 1,000 small tables in memscope.json wrote past the
 * Lua stack). */
static void run_escapes(const char *const *s, int n, const char *const *expect, int nr_expect)
{
	struct rig r;
	uint64_t start, took;

	rig_table(&r);
	start = process_cpu_ns();
	CHECK_EQ_INT(rig_open(&r, s, n, false, LUA_OUTPUT_TEXT, 200, 16u << 20), 0);
	for (uint64_t seq = 0; seq < 4; seq++)
		rig_frame(&r, seq, 1, 1, 1, 1, 1);
	lua_engine_end(r.lua);
	took = process_cpu_ns() - start;
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), n - 1);
	for (int i = 0; i < nr_expect; i++)
		CHECK_CONTAINS(r.err_text, expect[i]);
	CHECK_CONTAINS(r.out_text, "healthy saw\t4\tframes of\t4\n");
	/* Each limit costs its 200 ms once, never more. */
	CHECK(took < 3000000000ull);
	rig_close(&r);
}

static void test_escapes(void)
{
	const char *healthy = "n = 0\nfunction on_frame(f) n = n + 1 end\n"
			      "function on_end(s) print('healthy saw', n, 'frames of', s.frames) end\n";
	const char *handlers[] = {
		script("xpcall.lua", "function on_frame(f)\n  xpcall(error, function() while true do end end)\nend\n"),
		script("xpcall_alloc.lua", "X = string.rep('x', 65536) function on_frame(f)\n  xpcall(function() local t = {} for i = 1, 1e9 do "
		       "t[i] = X .. i end end,\n    function() local t = {} for i = 1, 1e9 do "
		       "t[i] = X .. i end end)\n"
		       "  while true do end\nend\n"),
		script("close_loop.lua", "function on_frame(f)\n  local x <close> = setmetatable({}, {__close = function()\n"
		       "    while true do end end})\n  error('first')\nend\n"),
		script("close_alloc.lua", "function on_frame(f)\n  local x <close> = setmetatable({}, {__close = function()\n"
		       "    local t = {} for i = 1, 1e9 do t[i] = i end end})\n  while true do end\nend\n"),
		script("frame_newindex.lua", "function on_frame(f)\n  f.seq = nil\n"
		       "  setmetatable(f, {__newindex = function() while true do end end})\nend\n"),
		script("healthy.lua", healthy),
	};
	const char *handlers_expect[] = {
		/* Stopped in the handler; the error meets the script again on line 3. */
		"xpcall.lua:3: CPU limit: on_frame used more than 200 ms of CPU",
		"xpcall_alloc.lua:4: CPU limit: on_frame used more than 200 ms of CPU",
		"close_loop.lua:4: first (frame 0, in on_frame)",
		"close_alloc.lua:4: CPU limit: on_frame used more than 200 ms of CPU",
		"frame_newindex.lua:3: CPU limit: on_frame used more than 200 ms of CPU",
		"(frame 1, in on_frame); ",
	};
	const char *lookups[] = {
		script("g_loop.lua", "setmetatable(_G, {__index = function(t, k)\n  while true do end\nend})\n"),
		script("g_raise.lua", "setmetatable(_G, {__index = function(t, k)\n  error('no such global ' .. k)\nend})\n"),
		script("g_alloc.lua", "local s = string.rep('x', 65536) setmetatable(_G, {__index = function(t, k)\n"
		       "  local t = {} for i = 1, 1e9 do t[i] = s .. i end\n"
		       "end})\n"),
		script("script_raise.lua", "script = setmetatable({}, {__index = function(t, k)\n  error('no ' .. k)\nend})\n"),
		/* __index slips a looping __gc into the metatable while setmetatable
		 * looks for one: the check is raw (as Lua's own), so the object
		 * never gets a finalizer, which Lua would run with hooks off. */
		script("gc_armed.lua", "local mt = setmetatable({}, {__index = function(t, k)\n"
		       "  if k == '__gc' then rawset(t, '__gc', function() while true do end end) end end})\n"
		       "pcall(setmetatable, {}, mt)\ncollectgarbage()\ncollectgarbage()\n"
		       "function on_frame(f)\n  if f.seq == 1 then error('gc ' .. tostring(rawget(mt, '__gc') ~= nil)) end\nend\n"),
		script("healthy.lua", healthy),
	};
	const char *lookups_expect[] = {
		"g_loop.lua:2: CPU limit: loading used more than 200 ms of CPU",
		"g_raise.lua:2: no such global ",
		"g_alloc.lua:2: memory limit: the script used more than 16 MiB",
		"script_raise.lua:2: no ",
		"gc_armed.lua:7: gc false (frame 1, in on_frame)",
	};

	run_escapes(handlers, 6, handlers_expect, 6);
	run_escapes(lookups, 6, lookups_expect, 5);
}

/* memscope.json and emit --format json over many, deep and cyclic tables. */
static void test_json(void)
{
	struct rig r;
	const char *s[] = {
		script("json.lua",
		       "function on_end()\n"
		       "  local t = {} for i = 1, 1000 do t[i] = {a = i, b = {i}} end\n"
		       "  local text = memscope.json(t)\n"
		       "  print('many', #text, text:sub(1, 30))\n"
		       "  local deep = {} for i = 1, 150 do deep = {x = deep, [1.5] = i} end\n"
		       "  print('deep', #memscope.json(deep))\n"
		       "  local tooDeep = {} for i = 1, 1000 do tooDeep = {tooDeep} end\n"
		       "  print('too deep', pcall(memscope.json, tooDeep))\n"
		       "  local a = {} a.b = {c = {a}}\n"
		       "  print('cycle', pcall(memscope.json, a))\n"
		       "  local shared = {1} print('shared', memscope.json({shared, shared}))\n"
		       "  print('inf', memscope.json({1e308 * 1e308, -1e308 * 1e308, 0/0, 2.5}))\n"
		       "  local rows = {} for i = 1, 100 do rows[i] = {i, {n = i}} end\n"
		       "  memscope.emit{title = 'big', columns = {'i', 'nested'}, rows = rows}\n"
		       "end\n"),
	};

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_JSON, 0, 0), 0);
	rig_frame(&r, 0, 1, 1, 1, 1, 1);
	lua_engine_end(r.lua);
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 0);
	/* 1,000 objects {"a":i,"b":[i]} (keys in Lua's order): 19,787 characters. */
	CHECK_CONTAINS(r.out_text, "many\\t19787\\t[{\\\"");
	/* {"x":...,"1.5":i} 150 times around {}. */
	CHECK_CONTAINS(r.out_text, "deep\\t");
	CHECK_CONTAINS(r.out_text, "too deep\\tfalse\\tjson(): tables nested deeper than 200 levels");
	CHECK_CONTAINS(r.out_text, "cycle\\tfalse\\tjson(): the value refers to itself");
	CHECK_CONTAINS(r.out_text, "shared\\t[[1],[1]]");
	CHECK_CONTAINS(r.out_text, "inf\\t[null,null,null,2.5]");
	CHECK_CONTAINS(r.out_text, "{\"script\":\"json.lua\",\"title\":\"big\",\"columns\":[\"i\",\"nested\"],"
		       "\"rows\":[{\"i\":1,\"nested\":{\"n\":1}},");
	CHECK_CONTAINS(r.out_text, "{\"i\":100,\"nested\":{\"n\":100}}]}\n");
	rig_close(&r);
}

/* The built-ins that loop in C, where the count hook never fires: each
 * script below ran for days (or took gigabytes past its budget) and is now
 * disabled by its limit with script:line; the same functions on ordinary
 * data give what Lua's own give. */
static void test_c_loops(void)
{
	struct rig r;
	const char *s[] = {
		script("move.lua", "function on_frame(f)\n  local t = {1, 2, 3}\n  table.move(t, 1, 1 << 50, 2)\nend\n"),
		/* Each element is table.concat(t, k) of an empty t: "" from a C
		 * function, neither Lua code nor memory. */
		script("concat.lua", "function on_frame(f)\n  local t = setmetatable({}, {__index = table.concat})\n"
		       "  return table.concat(t, '', 1, 1 << 50)\nend\n"),
		script("sort.lua", "function on_frame(f)\n  local t = setmetatable({}, {__len = function() return 1 << 40 end,\n"
		       "    __index = rawlen, __newindex = rawequal})\n  table.sort(t)\nend\n"),
		/* {t, t} 40 levels deep: 2^40 JSON values out of 41 tables. */
		script("json_dag.lua", "function on_frame(f)\n  local t = {1}\n  for i = 1, 40 do t = {t, t} end\n"
		       "  memscope.json(t)\nend\n"),
		script("emit_dag.lua", "function on_frame(f)\n  local t = {1}\n  for i = 1, 40 do t = {t, t} end\n"
		       "  memscope.emit{title = 'x', columns = {'a'}, rows = {{t}}}\nend\n"),
		script("same.lua",
		       "function on_frame(f)\n"
		       "  local t = {} for i = 1, 10000 do t[i] = i end\n"
		       "  table.move(t, 1, 10000, 3)\n"
		       "  local u = table.move(t, 1, 10002, 1, {})\n"
		       "  table.move(t, 3, 10002, 1)\n"
		       "  print('move', t[1], t[2], t[10000], t[10001], #u, u[1], u[2], u[3], u[10002])\n"
		       "  local c = table.concat(u, ',', 2, 10001)\n"
		       "  print('concat', #c, c:sub(1, 8), c:sub(-6), table.concat({}, 'x'), table.concat({1, 2}, '-'))\n"
		       "  print('errors', select(2, pcall(table.concat, {1, {}, 3})), select(2, pcall(table.move, t, -1, math.maxinteger, 2)))\n"
		       "  table.insert(u, 1, 0) table.sort(u, function(a, b) return a > b end)\n"
		       "  print('sorted', u[1], u[#u], table.remove(u), #u)\n"
		       "end\n"),
	};
	uint64_t start, took;

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 6, false, LUA_OUTPUT_JSON, 200, 16u << 20), 0);
	start = process_cpu_ns();
	rig_frame(&r, 0, 1, 1, 1, 1, 1);
	took = process_cpu_ns() - start;
	lua_engine_end(r.lua);
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 5);
	CHECK_CONTAINS(r.err_text, "move.lua:3: CPU limit: on_frame used more than 200 ms of CPU");
	CHECK_CONTAINS(r.err_text, "concat.lua:3: CPU limit: on_frame used more than 200 ms of CPU");
	CHECK_CONTAINS(r.err_text, "sort.lua:4: table.sort: the table's __len gives 1099511627776 elements, more than "
		       "the memory budget could hold (1048576)");
	CHECK_CONTAINS(r.err_text, "json_dag.lua:4: memory limit: the script used more than 16 MiB");
	CHECK_CONTAINS(r.err_text, "emit_dag.lua:4: memory limit: the script used more than 16 MiB");
	/* 10,000 numbers moved up 2 and back: 1 2 .. with the copy's first two the originals. */
	CHECK_CONTAINS(r.out_text, "move\\t1\\t2\\t10000\\t9999\\t10002\\t1\\t2\\t1\\t10000\"");
	/* u = 1 2 1 2 3 .. 10000; elements 2..10001 are "2" and 1..9999: 1 + 38,889 digits
	 * (9 + 90 * 2 + 900 * 3 + 9000 * 4) and 9,999 commas. */
	CHECK_CONTAINS(r.out_text, "concat\\t48889\\t2,1,2,3,\\t8,9999\\t\\t1-2\"");
	CHECK_CONTAINS(r.out_text, "errors\\tinvalid value (table) at index 2 in table for 'concat'\\t"
		       "bad argument #3 to 'table.move' (too many elements to move)\"");
	/* 0 inserted, sorted down: 10000 first, 0 last (removed), 10002 left. */
	CHECK_CONTAINS(r.out_text, "sorted\\t10000\\t0\\t0\\t10002\"");
	/* Five limits of 200 ms each, and the rest quick. */
	CHECK(took < 3000000000ull);
	rig_close(&r);
}

/* Patterns that backtrack for ever on a short string: Lua's matcher ran
 * them to their end (never, in practice); the sandbox's keeps the CPU
 * limit. Ordinary ones give Lua's results (fuzz_lua_pattern compares the
 * two on any input). */
static void test_patterns(void)
{
	struct rig r;
	const char *s[] = {
		script("find.lua", "function on_frame(f)\n  local s = string.rep('a', 200)\n"
		       "  return s:find('.-.-.-.-.-.-.-.-b')\nend\n"),
		script("gsub.lua", "function on_frame(f)\n  local s = string.rep('a', 200)\n"
		       "  return string.gsub(s, 'a*a*a*a*a*a*b', '%0')\nend\n"),
		script("gmatch.lua", "function on_frame(f)\n  for w in string.gmatch(string.rep('x', 300), 'x-x-x-x-x-x-y') do end\nend\n"),
		script("words.lua",
		       "function on_frame(f)\n"
		       "  local s = 'key=value, k2=v2;  trim  '\n"
		       "  print('find', s:find('(%w+)=(%w+)', 3), s:find('k2', 1, true), s:find('%s+', -6))\n"
		       "  print('match', s:match('^(%w+)=(%w+)'), s:match('()k2'), ('  x  '):match('^%s*(.-)%s*$'))\n"
		       "  local t = {} for k, v in s:gmatch('(%w+)=(%w+)') do t[#t + 1] = k .. ':' .. v end\n"
		       "  print('gmatch', table.concat(t, ' '), select(2, ('abc'):gsub('', '-')))\n"
		       "  print('gsub', s:gsub('%w+', {key = 'K', k2 = false}), ('f(a(b)c)'):gsub('%b()', '[%0]'))\n"
		       "end\n"),
	};

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 4, false, LUA_OUTPUT_TEXT, 200, 16u << 20), 0);
	rig_frame(&r, 0, 1, 1, 1, 1, 1);
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 3);
	CHECK_CONTAINS(r.err_text, "find.lua:3: CPU limit: on_frame used more than 200 ms of CPU");
	CHECK_CONTAINS(r.err_text, "gsub.lua:3: CPU limit: on_frame used more than 200 ms of CPU");
	CHECK_CONTAINS(r.err_text, "gmatch.lua:2: CPU limit: on_frame used more than 200 ms of CPU");
	/* A call inside an argument list gives one value: from 3, 'y=value' starts at 3; 'k2' at 12;
	 * the last run of spaces from -6 (byte 20) is 24-25. */
	CHECK_CONTAINS(r.out_text, "find\t3\t12\t24\t25\n");
	CHECK_CONTAINS(r.out_text, "match\tkey\t12\tx\n");
	/* '' matches before each of a, b, c and at the end: 4. */
	CHECK_CONTAINS(r.out_text, "gmatch\tkey:value k2:v2\t4\n");
	/* key -> K; value, v2 and trim kept (no key); k2 kept (false). */
	CHECK_CONTAINS(r.out_text, "gsub\tK=value, k2=v2;  trim  \tf[(a(b)c)]\t1\n");
	rig_close(&r);
}

/* memscope.json under a budget large enough that the clock stops it first:
 * the conversion keeps the CPU limit itself. */
static void test_json_cpu(void)
{
	struct rig r;
	const char *s[] = {
		script("json_slow.lua", "function on_frame(f)\n  local t = {1}\n  for i = 1, 40 do t = {t, t} end\n"
		       "  memscope.json(t)\nend\n"),
	};

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 1, false, LUA_OUTPUT_TEXT, 100, 1024u << 20), 0);
	rig_frame(&r, 0, 1, 1, 1, 1, 1);
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 1);
	CHECK_CONTAINS(r.err_text, "json_slow.lua:4: CPU limit: on_frame used more than 100 ms of CPU");
	rig_close(&r);
}

/* on_frame is looked up at every frame, as scripts see it: one defined late
 * (in on_start, in an earlier on_frame's absence), one served by the global
 * table's __index, one removed midway; a script without any runs on. */
static void test_on_frame_lookup(void)
{
	struct rig r;
	const char *s[] = {
		script("late.lua", "n = 0\nfunction on_start() function on_frame(f) n = n + 1 end end\n"
		       "function on_end() print('late', n) end\n"),
		script("index.lua", "n = 0\nsetmetatable(_G, {__index = function(t, k)\n"
		       "  if k == 'on_frame' then return function(f) n = n + 1 end end end})\n"
		       "function on_end() print('index', n) end\n"),
		script("removed.lua", "n = 0\nfunction on_frame(f) n = n + 1 if n == 2 then on_frame = nil end end\n"
		       "function on_end() print('removed', n) end\n"),
		script("none.lua", "function on_end(s) print('none', s.frames) end\n"),
	};

	rig_table(&r);
	CHECK_EQ_INT(rig_open(&r, s, 4, false, LUA_OUTPUT_TEXT, 2000, 16u << 20), 0);
	for (uint64_t seq = 0; seq < 5; seq++)
		rig_frame(&r, seq, 1, 1, 1, 1, 1);
	lua_engine_end(r.lua);
	rig_flush(&r);
	CHECK_EQ_INT(lua_engine_nr_failed(r.lua), 0);
	CHECK_CONTAINS(r.out_text, "late\t5\n");
	CHECK_CONTAINS(r.out_text, "index\t5\n");
	CHECK_CONTAINS(r.out_text, "removed\t2\n");
	CHECK_CONTAINS(r.out_text, "none\t5\n");
	rig_close(&r);
}

int main(void)
{
	tree_new(dir, sizeof(dir));
	test_sandbox();
	test_failures();
	test_escapes();
	test_json();
	test_c_loops();
	test_patterns();
	test_json_cpu();
	test_api_numbers();
	test_output();
	test_metadata();
	test_on_frame_lookup();
	tree_remove(dir);
	return check_summary("lua_engine");
}
