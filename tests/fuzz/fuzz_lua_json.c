/* The Lua engine's JSON conversion (memscope.json, memscope.emit and print
 * in JSON output) on values a script builds from the input: numbers,
 * floats, NaN, booleans, strings of any bytes (not all UTF-8), nested and
 * keyed tables, the same table twice and cycles. The script (written at
 * start) reads the input as label text, one byte an operation, under the
 * engine's limits. Every output line must be JSON, and every error must
 * name script:line. */
#include <jansson.h>

#include "lua/lua_engine.h"
#include "fuzz_common.h"

static const char script_text[] =
	"function on_label(l)\n"
	"  local s, i, made = l.text, 1, {}\n"
	"  local stack = {{}}\n"
	"  while i <= #s do\n"
	"    local b = s:byte(i)\n"
	"    i = i + 1\n"
	"    local top, op, arg = stack[#stack], b % 8, b // 8\n"
	"    if op == 0 then top[#top + 1] = arg - 8\n"
	"    elseif op == 1 then top[#top + 1] = (arg - 16) / 3 * 10 ^ (arg % 7 * 50)\n"
	"    elseif op == 2 then top[#top + 1] = s:sub(i, i + arg - 1) i = i + arg\n"
	"    elseif op == 3 then\n"
	"      local t = {}\n"
	"      top[#top + 1] = t\n"
	"      made[#made + 1] = t\n"
	"      if #stack < 250 then stack[#stack + 1] = t end\n"
	"    elseif op == 4 then if #stack > 1 then stack[#stack] = nil end\n"
	"    elseif op == 5 then top[s:sub(i, i + arg % 8)] = arg i = i + arg % 8 + 1\n"
	"    elseif op == 6 then if #made > 0 then top[#top + 1] = made[1 + arg % #made] end\n"
	"    else top[#top + 1] = arg == 0 and 0 / 0 or arg == 1 and math.huge or arg % 2 == 0\n"
	"    end\n"
	"  end\n"
	"  local v = stack[1]\n"
	"  local ok, text = pcall(memscope.json, v)\n"
	"  print(ok, text)\n"
	"  print(pcall(memscope.emit, {title = s:sub(1, 8), columns = {'a', 'b', 3}, rows = {v, {v, 1}}}))\n"
	"end\n";

static char script_path[600];
static struct series_table table;
static struct topology topo;
static int nodes[1];
static struct cpu_place cpus[1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f;

	(void)argc;
	(void)argv;
	snprintf(script_path, sizeof(script_path), "%s/json.lua", fuzz_dir());
	f = fopen(script_path, "w");
	if (!f || fputs(script_text, f) < 0 || fclose(f) != 0)
		abort();
	cpus[0] = (struct cpu_place){ .cpu = 0 };
	topo.cpus = cpus;
	topo.nr_cpus = 1;
	topo.max_cpu = 1;
	topo.nodes = nodes;
	topo.nr_nodes = 1;
	topo.nr_sockets = 1;
	return 0;
}

/* Each line of text is a JSON document. */
static void check_lines(char *text)
{
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		json_error_t jerr;
		json_t *doc = json_loads(line, JSON_DECODE_ANY, &jerr);

		if (!doc) {
			fprintf(stderr, "fuzz_lua_json: not JSON (%s): %s\n", jerr.text, line);
			abort();
		}
		json_decref(doc);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *scripts[] = { script_path };
	struct lua_engine_options opt = {
		.scripts = scripts, .nr_scripts = 1, .format = LUA_OUTPUT_JSON,
		.memory_limit = 16u << 20, .cpu_limit_ms = 1000, .history = 2, .command_name = "fuzz",
	};
	struct lua_engine_inputs in = { .table = &table, .topo = &topo, .source = "fuzz" };
	struct lua_engine *engine;
	struct ms_error err = { "" };
	char *out_text = NULL, *err_text = NULL, *text;
	size_t out_len, err_len;
	struct series_labels l;

	if (!(text = malloc(size + 1)))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&table, 0, sizeof(table));
	series_labels_init(&l);
	series_table_add(&table, "page-faults", "", 1.0, SERIES_COUNTER, &l);
	opt.out = open_memstream(&out_text, &out_len);
	opt.errors = open_memstream(&err_text, &err_len);
	if (lua_engine_open(&engine, &opt, &err) < 0 || lua_engine_start(engine, &in, &err) < 0) {
		fprintf(stderr, "fuzz_lua_json: %s\n", err.text);
		abort();
	}
	lua_engine_label(engine, 1.0, text, NULL);
	lua_engine_end(engine);
	lua_engine_free(engine);
	fclose(opt.out);
	fclose(opt.errors);
	check_lines(out_text);
	/* A limit or an error names the script and its line. */
	if (err_len && !strstr(err_text, "json.lua:"))
		abort();
	free(out_text);
	free(err_text);
	free(text);
	series_table_free(&table);
	return 0;
}
