/* Metrics defined in Lua: memscope.metric{name=, unit=, inputs={...},
 * compute=function(v, scope) ... end}. Each frame, after the series and the
 * catalog metrics, every defined metric is computed for the whole system and
 * for each NUMA node from its inputs' values in that scope; the values are
 * then read like any other metric (memscope.value, lua_engine_metric_value). */
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lua/lua_internal.h"

int lua_engine_find_metric(const struct lua_engine *engine, const char *name)
{
	for (int i = 0; i < engine->nr_metrics; i++)
		if (!strcmp(engine->metrics[i].name, name))
			return i;
	return -1;
}

int lua_engine_metric_inputs(const struct lua_engine *engine, int index, const char *const **inputs)
{
	if (index < 0 || index >= engine->nr_metrics) {
		*inputs = NULL;
		return 0;
	}
	*inputs = (const char *const *)engine->metrics[index].inputs;
	return engine->metrics[index].nr_inputs;
}

int lua_engine_nr_metrics(const struct lua_engine *engine)
{
	return engine->nr_metrics;
}

const char *lua_engine_metric_name(const struct lua_engine *engine, int index)
{
	return index >= 0 && index < engine->nr_metrics ? engine->metrics[index].name : NULL;
}

const char *lua_engine_metric_unit(const struct lua_engine *engine, int index)
{
	return index >= 0 && index < engine->nr_metrics ? engine->metrics[index].unit : NULL;
}

static int node_slot(const struct lua_engine *e, int node)
{
	if (node < 0)
		return 0;
	if (!e->in.topo)
		return -1;
	for (int i = 0; i < e->in.topo->nr_nodes; i++)
		if (e->in.topo->nodes[i] == node)
			return i + 1;
	return -1;
}

bool lua_engine_metric_value(const struct lua_engine *engine, int index, int node, double *value)
{
	const struct lua_metric *m;
	int slot = node_slot(engine, node);

	if (index < 0 || index >= engine->nr_metrics || slot < 0)
		return false;
	m = &engine->metrics[index];
	if (!m->values || m->failed || !m->valid[slot])
		return false;
	*value = m->values[slot];
	return true;
}

const char *lua_engine_metric_description(const struct lua_engine *engine, int index)
{
	if (index < 0 || index >= engine->nr_metrics || !engine->metrics[index].description)
		return "";
	return engine->metrics[index].description;
}

void lua_engine_metric_why(struct lua_engine *engine, int index, int node, char *buf, size_t size)
{
	const struct lua_metric *m;
	struct label_filter f;
	char missing[1024];
	size_t len = 0;
	int have = 0;

	if (index < 0 || index >= engine->nr_metrics) {
		snprintf(buf, size, "no such metric");
		return;
	}
	m = &engine->metrics[index];
	if (m->failed || engine->scripts[m->script].failed) {
		snprintf(buf, size, "%s failed (its error is on stderr); the metric is off",
			 engine->scripts[m->script].name);
		return;
	}
	if (node_slot(engine, node) < 0) {
		snprintf(buf, size, "node %d is not in the topology", node);
		return;
	}
	if (!engine->data_ready || !m->values) {
		snprintf(buf, size, "no frame yet");
		return;
	}
	label_filter_init(&f);
	if (node >= 0)
		f.node = node;
	for (int i = 0; i < m->nr_inputs; i++) {
		const char *why = NULL;
		double v;

		if (lua_api_value(engine, m->inputs[i], &f, &v, &why)) {
			have++;
			continue;
		}
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s: %s", len ? "; " : "", m->inputs[i],
						why ? why : "not read");
	}
	/* Say which inputs were missing; with some present, compute() itself chose no value. */
	if (len && have)
		snprintf(missing, sizeof(missing), "compute() returned no number without %s", buf);
	else if (len)
		snprintf(missing, sizeof(missing), "no input has a value: %s", buf);
	else
		snprintf(missing, sizeof(missing), "compute() returned no number from its inputs (%s decides when)",
			 engine->scripts[m->script].name);
	snprintf(buf, size, "%s", missing);
}

static char *field_string(lua_State *L, int idx, const char *key, bool required)
{
	const char *v;
	char *copy;

	lua_getfield(L, idx, key);
	if (lua_isnil(L, -1) && !required) {
		lua_pop(L, 1);
		return NULL;
	}
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_error(L, "memscope.metric{}: %s must be a string", key);
	v = lua_tostring(L, -1);
	copy = strdup(v);
	lua_pop(L, 1);
	if (!copy)
		luaL_error(L, "out of memory");
	return copy;
}

static void free_metric(struct lua_metric *m)
{
	free(m->name);
	free(m->description);
	for (int i = 0; i < m->nr_inputs; i++)
		free(m->inputs[i]);
	free(m->inputs);
	free(m->values);
	free(m->valid);
}

/* memscope.metric{...}: define a metric (at load time or in on_start). */
int lua_metrics_define(lua_State *L)
{
	struct lua_script *s = lua_script_of(L);
	struct lua_engine *e = s->engine;
	struct lua_metric m;
	char *unit;
	lua_Integer n;

	luaL_checktype(L, 1, LUA_TTABLE);
	memset(&m, 0, sizeof(m));
	if (lua_getfield(L, 1, "compute") != LUA_TFUNCTION)
		return luaL_error(L, "memscope.metric{}: compute = function(v, scope) ... end is required");
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "inputs") != LUA_TTABLE)
		return luaL_error(L, "memscope.metric{}: inputs = {\"series or metric\", ...} is required");
	n = luaL_len(L, -1);
	lua_pop(L, 1);
	m.name = field_string(L, 1, "name", true);
	if (!m.name[0] || lua_engine_find_metric(e, m.name) >= 0 || (e->data_ready && lua_data_find(&e->data, m.name) >= 0)) {
		lua_pushfstring(L, "memscope.metric{}: name '%s' is %s", m.name,
				m.name[0] ? "already defined" : "empty");
		free(m.name);
		return lua_error(L);
	}
	unit = field_string(L, 1, "unit", false);
	snprintf(m.unit, sizeof(m.unit), "%s", unit ? unit : "");
	free(unit);
	m.description = field_string(L, 1, "description", false);
	m.inputs = calloc((size_t)n + 1, sizeof(char *));
	if (!m.inputs) {
		free_metric(&m);
		return luaL_error(L, "out of memory");
	}
	lua_getfield(L, 1, "inputs");
	for (lua_Integer i = 1; i <= n; i++) {
		if (lua_geti(L, -1, i) != LUA_TSTRING) {
			free_metric(&m);
			return luaL_error(L, "memscope.metric{}: inputs[%d] must be a name", (int)i);
		}
		m.inputs[m.nr_inputs++] = strdup(lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (e->nr_metrics == e->cap_metrics) {
		int cap = e->cap_metrics ? 2 * e->cap_metrics : 8;
		struct lua_metric *grown = realloc(e->metrics, (size_t)cap * sizeof(*grown));

		if (!grown) {
			free_metric(&m);
			return luaL_error(L, "out of memory");
		}
		e->metrics = grown;
		e->cap_metrics = cap;
	}
	lua_getfield(L, 1, "compute");
	m.compute_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	m.script = s->index;
	e->metrics[e->nr_metrics++] = m;
	return 0;
}

static int scope_count(const struct lua_engine *e)
{
	return 1 + (e->in.topo ? e->in.topo->nr_nodes : 0);
}

struct compute {
	struct lua_engine *engine;
	struct lua_metric *metric;
};

/* compute(inputs, scope) for the system and each node: script code. */
static int compute_body(lua_State *L)
{
	struct compute *c = lua_touserdata(L, 1);
	struct lua_engine *e = c->engine;
	struct lua_metric *m = c->metric;
	int scopes = scope_count(e);

	for (int sc = 0; sc < scopes; sc++) {
		struct label_filter f;
		bool any = false;

		lua_settop(L, 1);
		label_filter_init(&f);
		if (sc > 0)
			f.node = e->in.topo->nodes[sc - 1];
		lua_rawgeti(L, LUA_REGISTRYINDEX, m->compute_ref);
		lua_createtable(L, 0, m->nr_inputs + 1);
		for (int i = 0; i < m->nr_inputs; i++) {
			const char *why;
			double v;

			if (lua_api_value(e, m->inputs[i], &f, &v, &why)) {
				lua_pushnumber(L, v);
				lua_setfield(L, -2, m->inputs[i]);
				any = true;
			}
		}
		lua_pushnumber(L, e->data.interval_s);
		lua_setfield(L, -2, "interval");
		if (!any)
			continue;
		lua_createtable(L, 0, 1);
		if (sc > 0) {
			lua_pushinteger(L, f.node);
			lua_setfield(L, -2, "node");
		}
		lua_call(L, 2, 1);
		if (lua_type(L, -1) == LUA_TNUMBER && !isnan(lua_tonumber(L, -1))) {
			m->values[sc] = lua_tonumber(L, -1);
			m->valid[sc] = true;
		}
	}
	return 0;
}

static void compute_one(struct lua_engine *e, struct lua_metric *m)
{
	struct compute c = { e, m };
	int scopes = scope_count(e);

	for (int sc = 0; sc < scopes; sc++)
		m->valid[sc] = false;
	if (lua_script_run(&e->scripts[m->script], "a metric's compute", compute_body, &c) < 0) {
		/* A failure leaves no half-computed frame behind. */
		for (int sc = 0; sc < scopes; sc++)
			m->valid[sc] = false;
		m->failed = true;
	}
}

void lua_metrics_compute(struct lua_engine *e)
{
	for (int i = 0; i < e->nr_metrics; i++) {
		struct lua_metric *m = &e->metrics[i];

		if (m->failed)
			continue;
		if (!m->values) {
			m->values = calloc((size_t)scope_count(e), sizeof(double));
			m->valid = calloc((size_t)scope_count(e), sizeof(bool));
			if (!m->values || !m->valid) {
				m->failed = true;
				continue;
			}
		}
		compute_one(e, m);
	}
}

void lua_metrics_free(struct lua_engine *e)
{
	for (int i = 0; i < e->nr_metrics; i++)
		free_metric(&e->metrics[i]);
	free(e->metrics);
	e->metrics = NULL;
	e->nr_metrics = 0;
}
