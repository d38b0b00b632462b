/* The `memscope` table scripts see: series, catalog metrics and Lua metrics
 * by name and labels, totals, history windows and the topology. The output
 * helpers are in lua_format.c, metric definitions in lua_metrics.c.
 * docs/lua-api.md is the contract. */
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lua/lua_internal.h"
#include "metrics/metrics.h"
#include "catalog/resolver.h"
#include "host/memory_tiers.h"

static struct lua_engine *engine_of(lua_State *L)
{
	return lua_script_of(L)->engine;
}

static int *label_slot(struct label_filter *f, const char *key)
{
	if (!strcmp(key, "cpu"))
		return &f->cpu;
	if (!strcmp(key, "node"))
		return &f->node;
	if (!strcmp(key, "socket"))
		return &f->socket;
	if (!strcmp(key, "pid"))
		return &f->pid;
	if (!strcmp(key, "tid"))
		return &f->tid;
	return NULL;
}

void lua_api_filter(lua_State *L, int idx, struct label_filter *f)
{
	label_filter_init(f);
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
		int *slot = label_slot(f, key);

		if (slot) {
			if (!lua_isinteger(L, -1))
				luaL_error(L, "label %s must be an integer, not %s", key, luaL_typename(L, -1));
			*slot = (int)lua_tointeger(L, -1);
		} else if (!strcmp(key, "instance")) {
			/* The string stays alive: it is in the caller's table. */
			f->instance = luaL_checkstring(L, -1);
		} else {
			luaL_error(L, "unknown label '%s' (labels: cpu, node, socket, pid, tid, instance)", key);
		}
		lua_pop(L, 1);
	}
}

/* {instance = "uncore_imc_0" [, socket =, node =, cpu =]}: a memory
 * channel's value; the other labels pick among the channels of that name
 * (Intel's uncore_imc_0 is a channel on each socket). */
static bool channel_value(struct lua_engine *e, int m, const struct label_filter *f, double *value,
			  const char **why)
{
	const struct metric_engine *me = e->in.metrics;
	const struct metric_value *v;
	int found = -1, matches = 0;

	if (f->pid != LABEL_ANY || f->tid != LABEL_ANY) {
		*why = "catalog metrics are per system, node, socket or channel";
		return false;
	}
	for (int i = 0; i < metric_engine_nr_scopes(me, SCOPE_CHANNEL); i++) {
		const struct metric_channel *ch = metric_engine_channel(me, i);

		if (strcmp(ch->instance, f->instance) != 0 || (f->cpu != LABEL_ANY && f->cpu != ch->cpu) ||
		    (f->node != LABEL_ANY && f->node != ch->node) || (f->socket != LABEL_ANY && f->socket != ch->socket))
			continue;
		found = i;
		matches++;
	}
	if (matches != 1) {
		*why = matches ? "that instance is a channel on several sockets: add socket = N (memscope.channels() lists them)"
			       : "no memory channel with these labels (memscope.channels() lists them)";
		return false;
	}
	v = metric_engine_value(me, e->values, m, SCOPE_CHANNEL, found);
	if (!v->valid) {
		*why = v->why ? v->why : "not counted in this frame";
		return false;
	}
	*value = v->value;
	return true;
}

static bool catalog_value(struct lua_engine *e, int m, const struct label_filter *f, double *value,
			  const char **why)
{
	enum metric_scope scope = SCOPE_SYSTEM;
	int id = 0;
	const struct metric_value *v = NULL;

	if (f->instance)
		return channel_value(e, m, f, value, why);
	if (f->node != LABEL_ANY) {
		scope = SCOPE_NODE;
		id = f->node;
	} else if (f->socket != LABEL_ANY) {
		scope = SCOPE_SOCKET;
		id = f->socket;
	}
	if (f->cpu != LABEL_ANY || f->pid != LABEL_ANY || f->tid != LABEL_ANY) {
		*why = "catalog metrics are per system, node or socket";
		return false;
	}
	for (int i = 0; i < metric_engine_nr_scopes(e->in.metrics, scope); i++)
		if (scope == SCOPE_SYSTEM || metric_engine_scope_id(e->in.metrics, scope, i) == id) {
			v = metric_engine_value(e->in.metrics, e->values, m, scope, i);
			break;
		}
	if (!v) {
		*why = "this host has no such node or socket";
		return false;
	}
	if (!v->valid) {
		*why = v->why ? v->why : "not counted in this frame";
		return false;
	}
	*value = v->value;
	return true;
}

static const char *series_why(const struct lua_data *d, int name)
{
	for (int k = 0; k < lua_data_nr_members(d, name); k++) {
		struct lua_data_entry s;

		lua_data_entry(d, lua_data_member(d, name, k), &s);
		if (s.unavailable)
			return s.unavailable;
	}
	return "not read in this frame (or no series with these labels)";
}

bool lua_api_value(struct lua_engine *e, const char *name, const struct label_filter *f, double *value,
		   const char **why)
{
	int n, m;

	*why = NULL;
	if (!e->data_ready) {
		*why = "no frame yet (values exist from on_frame on)";
		return false;
	}
	n = lua_data_find(&e->data, name);
	if (n >= 0) {
		if (lua_data_sum(&e->data, n, f, LUA_DATA_CURRENT, value))
			return true;
		*why = series_why(&e->data, n);
		return false;
	}
	m = lua_engine_find_metric(e, name);
	if (m >= 0) {
		int node = f->node == LABEL_ANY ? -1 : f->node;

		if (lua_engine_metric_value(e, m, node, value))
			return true;
		*why = e->metrics[m].failed ? "its compute function failed" : "an input has no value in this scope";
		return false;
	}
	if (e->in.plan && e->in.metrics && (m = metric_plan_find(e->in.plan, name)) >= 0)
		return catalog_value(e, m, f, value, why);
	/* A catalog metric this host cannot compute: the catalog says why. */
	if (e->in.res && (m = catalog_metric_index(e->in.res->cat, name)) >= 0 && !e->in.res->metrics[m].available)
		*why = e->in.res->metrics[m].why;
	else
		*why = "no series or metric of that name here (memscope.series() and memscope.metrics() list them)";
	return false;
}

/* The reason strings are long (not interned by Lua) and asked for at every
 * frame: each is made once per state and kept in the registry, keyed by the
 * C string's address (they are static or live as long as the series table). */
static void push_why(lua_State *L, const char *why)
{
	if (!why)
		why = "no value";
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, why) == LUA_TSTRING)
		return;
	lua_pop(L, 1);
	lua_pushstring(L, why);
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, why);
}

static int push_value(lua_State *L, bool ok, double value, const char *why)
{
	if (ok) {
		lua_pushnumber(L, value);
		return 1;
	}
	lua_pushnil(L);
	push_why(L, why);
	return 2;
}

static int api_value(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	struct label_filter f;
	const char *why;
	double v = 0;
	bool ok;

	lua_api_filter(L, 2, &f);
	ok = lua_api_value(engine_of(L), name, &f, &v, &why);
	return push_value(L, ok, v, why);
}

static int api_rate(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	const char *name = luaL_checkstring(L, 1);
	struct label_filter f;
	const char *why;
	double v = 0;
	bool ok;

	lua_api_filter(L, 2, &f);
	ok = lua_api_value(e, name, &f, &v, &why);
	if (ok && e->data.interval_s <= 0) {
		ok = false;
		why = "the frame has no interval";
	}
	return push_value(L, ok, ok ? v / e->data.interval_s : 0, why);
}

static int api_total(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	const char *name = luaL_checkstring(L, 1);
	struct label_filter f;
	double v = 0;
	int n;

	lua_api_filter(L, 2, &f);
	if (!e->data_ready)
		return push_value(L, false, 0, "no frame yet");
	n = lua_data_find(&e->data, name);
	if (n < 0)
		return push_value(L, false, 0, lua_engine_find_metric(e, name) >= 0 || (e->in.plan &&
				  metric_plan_find(e->in.plan, name) >= 0) ?
				  "totals are kept for series; add a metric's values up in on_frame" :
				  "no series of that name here");
	if (lua_data_sum(&e->data, n, &f, LUA_DATA_TOTAL, &v))
		return push_value(L, true, v, NULL);
	return push_value(L, false, 0, series_why(&e->data, n));
}

/* history(name, labels, n) -> values (oldest first, NaN where not read), times. */
static int api_history(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	const char *name = luaL_checkstring(L, 1);
	struct label_filter f;
	lua_Integer want;
	int n, len;

	lua_api_filter(L, 2, &f);
	want = luaL_optinteger(L, 3, e->opt.history);
	if (!e->data_ready)
		return push_value(L, false, 0, "no frame yet");
	if ((n = lua_data_find(&e->data, name)) < 0)
		return push_value(L, false, 0, "history windows are kept for series; no series of that name here");
	len = e->data.history_len < want ? e->data.history_len : (int)(want > 0 ? want : 0);
	lua_createtable(L, len, 0);
	lua_createtable(L, len, 0);
	for (int i = 0; i < len; i++) {
		int age = len - 1 - i;
		int slot = (e->data.history_head - 1 - age + 2 * e->data.history_cap) % e->data.history_cap;
		double v;

		if (!lua_data_sum_history(&e->data, n, &f, age, &v))
			v = NAN;
		lua_pushnumber(L, v);
		lua_rawseti(L, -3, i + 1);
		lua_pushnumber(L, e->data.history_time[slot]);
		lua_rawseti(L, -2, i + 1);
	}
	return 2;
}

/* table.key = value on the table at the top, unless the label is absent. */
static void set_label(lua_State *L, const char *key, int value)
{
	if (value == LABEL_NONE)
		return;
	lua_pushinteger(L, value);
	lua_setfield(L, -2, key);
}

static void push_labels(lua_State *L, const struct series_labels *l)
{
	lua_createtable(L, 0, 4);
	set_label(L, "cpu", l->cpu);
	set_label(L, "node", l->node);
	set_label(L, "socket", l->socket);
	set_label(L, "pid", l->pid);
	set_label(L, "tid", l->tid);
	if (l->instance[0]) {
		lua_pushstring(L, l->instance);
		lua_setfield(L, -2, "instance");
	}
}

static void set_number(lua_State *L, const char *key, double value)
{
	lua_pushnumber(L, value);
	lua_setfield(L, -2, key);
}

static void push_series(lua_State *L, const struct lua_data_entry *s, bool totals, bool task_target)
{
	lua_createtable(L, 0, 8);
	lua_pushstring(L, s->name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, s->unit);
	lua_setfield(L, -2, "unit");
	lua_pushstring(L, s->kind == SERIES_COUNTER ? "counter" : "gauge");
	lua_setfield(L, -2, "kind");
	push_labels(L, s->labels);
	lua_setfield(L, -2, "labels");
	if (s->labels->comm[0]) {
		lua_pushstring(L, s->labels->comm);
		lua_setfield(L, -2, "comm");
	}
	if (s->unavailable) {
		lua_pushstring(L, s->unavailable);
		lua_setfield(L, -2, "unavailable");
	}
	/* What it added up to over the run, once it was read: counters their
	 * sum, gauges their peak, mean and last value. */
	if (totals && s->seen) {
		if (s->kind == SERIES_COUNTER) {
			set_number(L, "total", s->total);
		} else {
			set_number(L, "peak", s->peak);
			set_number(L, "mean", s->mean);
			set_number(L, "last", s->last);
		}
		set_number(L, "first", s->start_s);
	}
	if (s->ended)
		set_number(L, "ended", s->end_s);
	/* Measured for a command or PIDs, a series that counts the whole machine says so. */
	if (task_target && s->labels->whole_system) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "whole_system");
	}
}

/* series([name]) -> { {name=, unit=, kind=, labels={...}, comm=, unavailable=why,
 * total= | peak=, mean=, last=, first=, ended=}, ... }: every series the run
 * has had, those that ended (their process exited) with `ended`, the run time
 * of their last frame. */
static int api_series(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	const char *only = luaL_optstring(L, 1, NULL);
	struct lua_data_entry entry;
	int k = 0;

	lua_newtable(L);
	if (!e->in.table)
		return 1;
	for (int i = 0; i < (e->data_ready ? e->data.nr_series : e->in.table->nr); i++) {
		const struct series *s = &e->in.table->series[i];

		/* An index that ended with the last frame shows its ended series (below: those before). */
		if (e->data_ready ? e->data.ended_index[i] || (s->state == SERIES_RETIRED && e->data.ended_slot[i] < 0)
				  : s->state == SERIES_RETIRED)
			continue;
		if (only && strcmp(only, s->name))
			continue;
		if (e->data_ready) {
			lua_data_entry(&e->data, i, &entry);
		} else {
			entry = (struct lua_data_entry){ s->name, s->unit, s->unavailable, s->kind, &s->labels, false, false,
							 0, 0, 0, 0, 0, NAN };
		}
		push_series(L, &entry, e->data_ready, e->in.task_target);
		lua_rawseti(L, -2, ++k);
	}
	for (int j = 0; e->data_ready && j < e->data.first_pending; j++) {
		lua_data_entry(&e->data, -1 - j, &entry);
		if (only && strcmp(only, entry.name))
			continue;
		push_series(L, &entry, true, e->in.task_target);
		lua_rawseti(L, -2, ++k);
	}
	return 1;
}

static int label_value(const struct series_labels *l, const char *key)
{
	if (!strcmp(key, "cpu"))
		return l->cpu;
	if (!strcmp(key, "node"))
		return l->node;
	if (!strcmp(key, "socket"))
		return l->socket;
	if (!strcmp(key, "pid"))
		return l->pid;
	if (!strcmp(key, "tid"))
		return l->tid;
	return LABEL_NONE;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* labels(name, key) -> sorted distinct values of a label among a name's series. */
static int api_labels(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	const char *name = luaL_checkstring(L, 1);
	const char *key = luaL_checkstring(L, 2);
	struct label_filter probe;
	int n, count = 0, k = 0, *vals;

	label_filter_init(&probe);
	if (!label_slot(&probe, key))
		return luaL_error(L, "labels(): unknown label '%s' (cpu, node, socket, pid, tid)", key);
	lua_newtable(L);
	if (!e->data_ready || (n = lua_data_find(&e->data, name)) < 0)
		return 1;
	vals = lua_newuserdatauv(L, sizeof(int) * (size_t)(lua_data_nr_members(&e->data, n) + 1), 0);
	for (int j = 0; j < lua_data_nr_members(&e->data, n); j++) {
		struct lua_data_entry s;
		int v;

		lua_data_entry(&e->data, lua_data_member(&e->data, n, j), &s);
		v = label_value(s.labels, key);

		if (v != LABEL_NONE)
			vals[count++] = v;
	}
	qsort(vals, (size_t)count, sizeof(int), cmp_int);
	for (int j = 0; j < count; j++) {
		if (j && vals[j] == vals[j - 1])
			continue;
		lua_pushinteger(L, vals[j]);
		lua_rawseti(L, -3, ++k);
	}
	lua_pop(L, 1);
	return 1;
}

static bool name_known(struct lua_engine *e, const char *name)
{
	int n;

	if (e->data_ready && (n = lua_data_find(&e->data, name)) >= 0) {
		for (int k = 0; k < lua_data_nr_members(&e->data, n); k++) {
			struct lua_data_entry s;

			lua_data_entry(&e->data, lua_data_member(&e->data, n, k), &s);
			if (!s.unavailable)
				return true;
		}
		return false;
	}
	if (lua_engine_find_metric(e, name) >= 0)
		return true;
	return e->in.plan && e->in.metrics && metric_plan_find(e->in.plan, name) >= 0;
}

/* has(name) -> true when a series (counted) or a metric of that name exists. */
static int api_has(lua_State *L)
{
	lua_pushboolean(L, name_known(engine_of(L), luaL_checkstring(L, 1)));
	return 1;
}

/* pick(name, ...) -> the first name that has values here, or nil: for
 * scripts that take a number from whichever source the host has. */
static int api_pick(lua_State *L)
{
	struct lua_engine *e = engine_of(L);

	for (int i = 1; i <= lua_gettop(L); i++)
		if (name_known(e, luaL_checkstring(L, i))) {
			lua_pushvalue(L, i);
			return 1;
		}
	lua_pushnil(L);
	return 1;
}

static const char *run_name(const struct lua_engine *e)
{
	return e->in.source && strcmp(e->in.source, "live") ? e->in.source : "run";
}

static bool is_recording(const struct lua_engine *e)
{
	return e->in.source && !strcmp(e->in.source, "recording");
}

/* Whether a source ran at all: any series whose name has its prefix. */
static bool has_series_prefix(const struct lua_engine *e, const char *prefix)
{
	size_t len = strlen(prefix);

	for (int i = 0; e->in.table && i < e->in.table->nr; i++)
		if (!strncmp(e->in.table->series[i].name, prefix, len))
			return true;
	return false;
}

/* Without a resolution (a run without -m), the shipped catalog still says
 * whether a name is a metric at all. */
static bool catalog_name_unknown(const struct lua_engine *e, const char *name)
{
	return e->in.plan && catalog_metric_index(e->in.plan->cat, name) < 0;
}

/* why(name) -> why a name has nothing to show here, or nil. */
static int api_why(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	const char *name = luaL_checkstring(L, 1);
	int n, metric = e->in.res ? catalog_metric_index(e->in.res->cat, name) : -1;

	if (name_known(e, name)) {
		lua_pushnil(L);
		return 1;
	}
	if (e->data_ready && (n = lua_data_find(&e->data, name)) >= 0)
		lua_pushfstring(L, "%s: %s", name, series_why(&e->data, n));
	else if (metric >= 0 && !e->in.res->metrics[metric].available)
		lua_pushfstring(L, "%s: %s", name, e->in.res->metrics[metric].why);
	else if (!strncmp(name, "proc.", 5) && !has_series_prefix(e, "proc."))
		lua_pushfstring(L, "%s comes from the eBPF probes, which this %s did not run (live: root or "
				"CAP_BPF+CAP_PERFMON; reports: record with -e %s)", name, run_name(e), name);
	else if (!strncmp(name, "proc.", 5))
		lua_pushfstring(L, "%s was not asked of the eBPF probes, which this %s ran (%s: -e %s)", name,
				run_name(e), is_recording(e) ? "record it" : "count it", name);
	else if (metric >= 0)
		/* The machine of the run (a recording's, for a report) can measure it. */
		lua_pushfstring(L, "%s was not measured in this %s, though its machine has what it needs (%s with "
				"-m %s)", name, run_name(e), is_recording(e) ? "record" : "run", name);
	else if (e->in.res || catalog_name_unknown(e, name))
		lua_pushfstring(L, "%s is neither a series of this %s, a catalog metric nor a metric a script "
				"defines (memscope list --events, --metrics)", name, run_name(e));
	else
		lua_pushfstring(L, "%s is neither counted in this %s nor a metric of its plan (%s with -m %s; "
				"memscope list --explain %s says what it needs)", name, run_name(e),
				is_recording(e) ? "record" : "run", name, name);
	return 1;
}

/* channels() -> the memory channels catalog metrics have values for:
 * {{instance =, node =, socket =, cpu =}, ...} by socket, node and name. */
static int api_channels(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	int n = e->in.metrics ? metric_engine_nr_scopes(e->in.metrics, SCOPE_CHANNEL) : 0;

	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		const struct metric_channel *ch = metric_engine_channel(e->in.metrics, i);

		lua_createtable(L, 0, 4);
		lua_pushstring(L, ch->instance);
		lua_setfield(L, -2, "instance");
		set_label(L, "node", ch->node);
		set_label(L, "socket", ch->socket);
		set_label(L, "cpu", ch->cpu);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* metrics() -> names of every metric values can be read for. */
static int api_metrics(lua_State *L)
{
	struct lua_engine *e = engine_of(L);
	int k = 0;

	lua_newtable(L);
	if (e->in.plan)
		for (int i = 0; i < e->in.plan->nr_metrics; i++) {
			lua_pushstring(L, metric_plan_catalog_metric(e->in.plan, i)->name);
			lua_rawseti(L, -2, ++k);
		}
	for (int i = 0; i < e->nr_metrics; i++) {
		lua_pushstring(L, e->metrics[i].name);
		lua_rawseti(L, -2, ++k);
	}
	return 1;
}

static lua_validation_reader validation_reader;

void lua_engine_set_validation_reader(lua_validation_reader reader)
{
	validation_reader = reader;
}

/* validated(metric [, node]) -> what memscope validate measured for the
 * metric on this machine (the system, or node N) where it agreed, and the
 * date; or nil, why. Reports set a measured rate beside it (a stored peak). */
static int api_validated(lua_State *L)
{
	const char *metric = luaL_checkstring(L, 1);
	int node = lua_isnoneornil(L, 2) ? -1 : (int)luaL_checkinteger(L, 2);
	char date[64] = "", why[600] = "";
	double measured = 0;

	if (!validation_reader)
		snprintf(why, sizeof(why), "this program keeps no validation store");
	else if (validation_reader(metric, node, &measured, date, sizeof(date), why, sizeof(why)) == 1) {
		lua_pushnumber(L, measured);
		lua_pushstring(L, date);
		return 2;
	}
	lua_pushnil(L);
	lua_pushstring(L, why);
	return 2;
}

/* tier[node] = N of memory_tierN (nodes in no tier are absent) and tiers, the
 * tiers fastest first, each {tier = N, nodes = {...}}: both empty when the
 * kernel lists none (before Linux 6.1, or no host). */
static void push_tiers(lua_State *L, const struct host *host, const struct topology *t)
{
	struct memory_tiers mt = { 0 };
	struct ms_error err;
	bool have = host && memory_tiers_load(&mt, &host->roots, t, &err) == 0 && mt.have_tiers;
	int last = -1;

	lua_newtable(L);
	for (int i = 0; have && i < mt.nr_nodes; i++)
		if (mt.nodes[i].tier >= 0) {
			lua_pushinteger(L, mt.nodes[i].tier);
			lua_rawseti(L, -2, mt.nodes[i].node);
		}
	lua_setfield(L, -2, "tier");
	lua_newtable(L);
	for (int k = 0; have; k++) {
		int next = -1, n = 0;

		for (int i = 0; i < mt.nr_nodes; i++)
			if (mt.nodes[i].tier > last && (next < 0 || mt.nodes[i].tier < next))
				next = mt.nodes[i].tier;
		if (next < 0)
			break;
		lua_createtable(L, 0, 2);
		lua_pushinteger(L, next);
		lua_setfield(L, -2, "tier");
		lua_newtable(L);
		for (int i = 0; i < mt.nr_nodes; i++)
			if (mt.nodes[i].tier == next) {
				lua_pushinteger(L, mt.nodes[i].node);
				lua_rawseti(L, -2, ++n);
			}
		lua_setfield(L, -2, "nodes");
		lua_rawseti(L, -2, k + 1);
		last = next;
	}
	lua_setfield(L, -2, "tiers");
	if (host)
		memory_tiers_free(&mt);
}

/* topology(): built once per script and then the same table (treat it as
 * read-only): scripts ask for it at every frame. */
static int api_topology(lua_State *L)
{
	const struct topology *t = engine_of(L)->in.topo;

	if (lua_getfield(L, LUA_REGISTRYINDEX, "memscope.topology") == LUA_TTABLE)
		return 1;
	lua_pop(L, 1);
	lua_newtable(L);
	if (!t)
		return 1;
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, "memscope.topology");
	lua_createtable(L, t->nr_nodes, 0);
	for (int i = 0; i < t->nr_nodes; i++) {
		lua_pushinteger(L, t->nodes[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "nodes");
	lua_createtable(L, t->nr_cpus, 0);
	for (int i = 0; i < t->nr_cpus; i++) {
		const struct cpu_place *c = &t->cpus[i];

		lua_createtable(L, 0, 5);
		lua_pushinteger(L, c->cpu);
		lua_setfield(L, -2, "cpu");
		lua_pushinteger(L, c->core);
		lua_setfield(L, -2, "core");
		lua_pushinteger(L, c->die);
		lua_setfield(L, -2, "die");
		lua_pushinteger(L, c->socket);
		lua_setfield(L, -2, "socket");
		lua_pushinteger(L, c->node);
		lua_setfield(L, -2, "node");
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "cpus");
	/* distance[from][to], by node id. */
	lua_newtable(L);
	for (int i = 0; i < t->nr_nodes; i++) {
		lua_newtable(L);
		for (int j = 0; j < t->nr_nodes; j++) {
			lua_pushinteger(L, t->distance ? t->distance[i * t->nr_nodes + j] : (i == j ? 10 : 20));
			lua_rawseti(L, -2, t->nodes[j]);
		}
		lua_rawseti(L, -2, t->nodes[i]);
	}
	lua_setfield(L, -2, "distance");
	push_tiers(L, engine_of(L)->in.host, t);
	lua_pushinteger(L, t->nr_sockets);
	lua_setfield(L, -2, "nr_sockets");
	lua_pushinteger(L, t->nr_cpus);
	lua_setfield(L, -2, "nr_cpus");
	lua_pushinteger(L, t->nr_nodes);
	lua_setfield(L, -2, "nr_nodes");
	return 1;
}

static int api_frame(lua_State *L)
{
	struct lua_engine *e = engine_of(L);

	lua_createtable(L, 0, 4);
	lua_frame_fields(L, e);
	lua_pushinteger(L, (lua_Integer)e->data.frames);
	lua_setfield(L, -2, "count");
	return 1;
}

void lua_api_open(lua_State *L, struct lua_script *s)
{
	static const luaL_Reg api[] = {
		{ "value", api_value }, { "rate", api_rate }, { "total", api_total }, { "history", api_history },
		{ "series", api_series }, { "labels", api_labels }, { "has", api_has }, { "why", api_why }, { "pick", api_pick },
		{ "metrics", api_metrics }, { "channels", api_channels }, { "topology", api_topology }, { "validated", api_validated }, { "frame", api_frame },
		{ "metric", lua_metrics_define },
		{ NULL, NULL },
	};
	static const char *const formats[] = { "text", "csv", "json" };

	luaL_newlib(L, api);
	lua_pushstring(L, MEMSCOPE_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushinteger(L, 1);
	lua_setfield(L, -2, "api_version");
	lua_pushstring(L, formats[s->engine->opt.format]);
	lua_setfield(L, -2, "format");
	lua_pushstring(L, s->name);
	lua_setfield(L, -2, "script_name");
	lua_pushstring(L, "live");
	lua_setfield(L, -2, "source");
	lua_setglobal(L, "memscope");
	lua_format_open(L);
}
