#include "sinks/stat_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "host/topology.h"
#include "lua/lua_engine.h"
#include "metrics/metrics.h"
#include "util/array.h"

const char *stat_cell_status_text(enum stat_cell_status status)
{
	switch (status) {
	case CELL_UNSUPPORTED: return "<not supported>";
	case CELL_NOT_APPLICABLE: return "n/a";
	case CELL_NOT_COUNTED: return "<not counted>";
	default: return NULL;
	}
}

static enum metric_scope scope_of(enum aggr_mode mode)
{
	switch (mode) {
	case AGGR_NODE: return SCOPE_NODE;
	case AGGR_SOCKET: return SCOPE_SOCKET;
	case AGGR_CHANNEL:
	case AGGR_INSTANCE: return SCOPE_CHANNEL;
	case AGGR_TIER: return SCOPE_TIER;
	default: return SCOPE_SYSTEM;
	}
}

static int compare_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static void add_key(struct stat_table *t, int key)
{
	for (int r = 0; r < t->nr_rows; r++)
		if (t->row_keys[r] == key)
			return;
	t->row_keys[t->nr_rows++] = key;
}

static bool wanted(const char *name, const char *const *events, int nr_events)
{
	if (!events)
		return true;
	for (int i = 0; i < nr_events; i++)
		if (!strcmp(events[i], name))
			return true;
	return false;
}

/* The aggregation's row of key, or -1. */
static int aggr_row_of(const struct aggregation *aggr, int key)
{
	for (int k = 0; k < aggr->nr_rows; k++)
		if (aggr->row_keys[k] == key)
			return k;
	return -1;
}

int stat_table_init(struct stat_table *t, const struct aggregation *aggr, const char *const *events,
		    int nr_events, const struct metric_plan *plan, const struct metric_engine *engine,
		    const struct lua_engine *lua, const int *lua_metrics, int nr_lua_metrics)
{
	int nr_metrics = 0, nr_scopes = 0, max_rows;

	memset(t, 0, sizeof(*t));
	t->mode = aggr->mode;
	t->engine = engine;
	if (plan && engine) {
		for (int i = 0; i < plan->nr_metrics; i++)
			nr_metrics += plan->metrics[i].requested;
		nr_scopes = metric_engine_nr_scopes(engine, scope_of(aggr->mode));
	}
	for (int c = 0; aggr->nr_series && c < aggr->nr_columns; c++)
		t->nr_event_columns += wanted(aggr->columns[c], events, nr_events);
	t->nr_lua_columns = lua ? nr_lua_metrics : 0;
	t->lua_metrics = lua_metrics;
	t->nr_columns = t->nr_event_columns + nr_metrics + t->nr_lua_columns;
	max_rows = aggr->nr_rows + nr_scopes + 1;
	t->row_keys = calloc((size_t)max_rows, sizeof(int));
	t->names = calloc((size_t)t->nr_columns + 1, sizeof(char *));
	t->units = calloc((size_t)t->nr_columns + 1, sizeof(char *));
	t->cgroups = calloc((size_t)t->nr_columns + 1, sizeof(char *));
	t->perf_scales = calloc((size_t)t->nr_columns + 1, sizeof(double));
	t->perf_units = calloc((size_t)t->nr_columns + 1, sizeof(char *));
	t->event_source_column = calloc((size_t)t->nr_event_columns + 1, sizeof(int));
	if (!t->row_keys || !t->names || !t->units || !t->cgroups || !t->event_source_column || !t->perf_scales ||
	    !t->perf_units)
		goto oom;
	if (aggr->mode == AGGR_TOTAL) {
		t->row_keys[t->nr_rows++] = -1;
	} else {
		/* Lua metrics are computed for the scopes the series have. */
		if (t->nr_event_columns || (lua && nr_lua_metrics))
			for (int r = 0; r < aggr->nr_rows; r++)
				if (aggr->row_keys[r] >= 0)
					add_key(t, aggr->row_keys[r]);
		for (int i = 0; i < nr_scopes; i++)
			add_key(t, metric_engine_scope_id(engine, scope_of(aggr->mode), i));
		if (t->nr_rows == 0)
			t->row_keys[t->nr_rows++] = -1;
		qsort(t->row_keys, (size_t)t->nr_rows, sizeof(int), compare_int);
	}
	for (int c = 0, out = 0; out < t->nr_event_columns; c++) {
		if (!wanted(aggr->columns[c], events, nr_events))
			continue;
		t->event_source_column[out] = c;
		t->names[out] = aggr->columns[c];
		t->cgroups[out] = aggr->cgroups[c];
		t->units[out++] = aggr->units[c];
	}
	for (int i = 0, c = t->nr_event_columns; plan && engine && i < plan->nr_metrics; i++) {
		const struct catalog_metric *m;

		if (!plan->metrics[i].requested)
			continue;
		m = &plan->cat->metrics[plan->metrics[i].metric];
		t->names[c] = m->name;
		t->units[c] = m->unit ? m->unit : "";
		t->perf_scales[c] = m->perf_scale;
		t->perf_units[c] = m->perf_unit;
		c++;
	}
	for (int i = 0, c = t->nr_columns - t->nr_lua_columns; i < t->nr_lua_columns; i++, c++) {
		t->names[c] = lua_engine_metric_name(lua, lua_metrics[i]);
		t->units[c] = lua_engine_metric_unit(lua, lua_metrics[i]);
		if (!t->units[c])
			t->units[c] = "";
	}
	t->cells = calloc((size_t)(t->nr_rows * (t->nr_columns ? t->nr_columns : 1)), sizeof(*t->cells));
	t->aggr_row = calloc((size_t)t->nr_rows + 1, sizeof(int));
	if (!t->cells || !t->aggr_row)
		goto oom;
	/* The aggregation's rows are fixed when it is made: map them by key once, not every frame. */
	t->aggr_nr_rows = aggr->nr_rows;
	for (int r = 0; r < t->nr_rows; r++)
		t->aggr_row[r] = aggr_row_of(aggr, t->row_keys[r]);
	return 0;
oom:
	stat_table_free(t);
	return -1;
}

int stat_table_mark_whole_system(struct stat_table *t, const struct series_table *table, const struct metric_plan *plan)
{
	free(t->whole_system);
	t->whole_system = calloc((size_t)t->nr_columns + 1, sizeof(bool));
	if (!t->whole_system)
		return -1;
	for (int c = 0; c < t->nr_event_columns; c++)
		for (int s = 0; s < table->nr; s++)
			if (table->series[s].labels.whole_system && !series_is_per_task(&table->series[s]) &&
			    !strcmp(table->series[s].name, t->names[c]))
				t->whole_system[c] = true;
	for (int i = 0, c = t->nr_event_columns; plan && c < t->nr_columns - t->nr_lua_columns && i < plan->nr_metrics; i++) {
		if (!plan->metrics[i].requested)
			continue;
		t->whole_system[c++] = metric_plan_whole_system(plan, i, table);
	}
	return 0;
}

bool stat_table_whole_system(const struct stat_table *t, int col)
{
	return t->whole_system && col >= 0 && col < t->nr_columns && t->whole_system[col];
}

bool stat_table_any_whole_system(const struct stat_table *t)
{
	for (int c = 0; c < t->nr_columns; c++)
		if (stat_table_whole_system(t, c))
			return true;
	return false;
}

int stat_table_set_row_cpus(struct stat_table *t, const struct topology *topo)
{
	free(t->row_cpus);
	if (!(t->row_cpus = calloc((size_t)t->nr_rows + 1, sizeof(int))))
		return -1;
	for (int r = 0; r < t->nr_rows; r++)
		for (int i = 0; i < topo->nr_cpus; i++) {
			const struct cpu_place *p = &topo->cpus[i];

			switch (t->mode) {
			case AGGR_TOTAL: t->row_cpus[r]++; break;
			case AGGR_CPU: t->row_cpus[r] += p->cpu == t->row_keys[r]; break;
			case AGGR_SOCKET: t->row_cpus[r] += p->socket == t->row_keys[r]; break;
			case AGGR_NODE: t->row_cpus[r] += p->node == t->row_keys[r]; break;
			default:
				if (aggr_mode_by_place(t->mode))
					t->row_cpus[r] += aggr_place_key(t->mode, p) == t->row_keys[r];
				break;
			}
		}
	return 0;
}

int stat_table_add_node_detail(struct stat_table *t, const struct metric_plan *plan,
			       const struct metric_engine *engine, const char *metric)
{
	int index = plan && engine ? metric_plan_find(plan, metric) : -1;
	int nodes = engine ? metric_engine_nr_scopes(engine, SCOPE_NODE) : 0;
	int first, old_columns = t->nr_columns, columns = t->nr_columns + nodes;
	/* The arrays with an entry per column: each grows once, and the
	 * columns from first (Lua's, which stay the last) move past the node
	 * columns; cells are zeroed below. */
	struct { void *array; size_t size; bool moves; } per_column[] = {
		{ &t->names, sizeof(*t->names), true },
		{ &t->units, sizeof(*t->units), true },
		{ &t->cgroups, sizeof(*t->cgroups), true },
		{ &t->perf_units, sizeof(*t->perf_units), true },
		{ &t->perf_scales, sizeof(*t->perf_scales), true },
		{ &t->cells, sizeof(*t->cells), false },
	};

	if (t->mode != AGGR_TOTAL || t->nr_rows != 1 || index < 0 || !plan->metrics[index].requested || nodes <= 0)
		return 0;
	first = old_columns - t->nr_lua_columns;
	for (size_t i = 0; i < ARRAY_SIZE(per_column); i++) {
		size_t cap = 0, size = per_column[i].size;
		char *base;

		if (array_grow(per_column[i].array, &cap, (size_t)columns + 1, size) < 0)
			return -1;
		memcpy(&base, per_column[i].array, sizeof(base));
		if (per_column[i].moves)
			memmove(base + (size_t)(first + nodes) * size, base + (size_t)first * size,
				(size_t)(old_columns - first) * size);
	}
	t->detail_names = calloc((size_t)nodes, sizeof(*t->detail_names));
	if (!t->detail_names)
		return -1;
	for (int k = 0; k < nodes; k++) {
		const struct catalog_metric *m = &plan->cat->metrics[plan->metrics[index].metric];

		snprintf(t->detail_names[k], sizeof(t->detail_names[k]), "%s@node%d", m->name,
			 metric_engine_scope_id(engine, SCOPE_NODE, k));
		t->names[first + k] = t->detail_names[k];
		t->units[first + k] = m->unit ? m->unit : "";
		t->cgroups[first + k] = NULL;
		t->perf_units[first + k] = m->perf_unit;
		t->perf_scales[first + k] = m->perf_scale;
	}
	t->nr_columns = columns;
	t->nr_detail_columns = nodes;
	t->detail_metric = index;
	memset(t->cells, 0, ((size_t)columns + 1) * sizeof(*t->cells));
	return 0;
}

void stat_table_free(struct stat_table *t)
{
	free(t->row_keys);
	free(t->row_names);
	free(t->row_cpus);
	free(t->aggr_row);
	free(t->names);
	free(t->units);
	free(t->cgroups);
	free(t->perf_scales);
	free(t->perf_units);
	free(t->detail_names);
	free(t->whole_system);
	free(t->event_source_column);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* An event whose source counts it as a whole (the eBPF proc.* counts but
 * the pages, /proc/vmstat): it has no value for a row of a split. */
static const char *not_split_why(enum aggr_mode mode)
{
	switch (mode) {
	case AGGR_NODE: return "not split by node: its source counts it as a whole";
	case AGGR_SOCKET: return "not split by socket: its source counts it as a whole";
	case AGGR_CPU: return "not split by CPU: its source counts it as a whole";
	case AGGR_CORE: return "not split by core: its source counts it as a whole";
	case AGGR_DIE: return "not split by die: its source counts it as a whole";
	case AGGR_CLUSTER: return "not split by cluster: its source counts it as a whole";
	case AGGR_CACHE: return "not split by cache: its source counts it as a whole";
	default: return NULL;
	}
}

void stat_table_set_events(struct stat_table *t, const struct aggregation *aggr, const struct aggr_cell *cells)
{
	bool mapped = t->aggr_row && t->aggr_nr_rows == aggr->nr_rows;

	for (int r = 0; r < t->nr_rows; r++) {
		int ar = mapped ? t->aggr_row[r] : aggr_row_of(aggr, t->row_keys[r]);

		for (int c = 0; c < t->nr_event_columns; c++) {
			int ac = t->event_source_column[c];
			struct stat_cell *out = &t->cells[r * t->nr_columns + c];
			const struct aggr_cell *in = ar >= 0 ? &cells[ar * aggr->nr_columns + ac] : NULL;
			double scale = aggr->scales[ac] > 0 ? aggr->scales[ac] : 1.0;

			memset(out, 0, sizeof(*out));
			if (!in || in->not_applicable) {
				out->status = CELL_NOT_APPLICABLE;
				if (t->mode == AGGR_CHANNEL || t->mode == AGGR_INSTANCE)
					out->why = "events are not grouped by memory channel or instance: --per-channel and "
						   "--per-instance are for -m metrics";
				else if (t->mode == AGGR_TIER)
					out->why = "events are not grouped by memory tier: --per-tier is for -m metrics "
						   "(--per-node splits events)";
				else
					out->why = not_split_why(t->mode);
				continue;
			}
			if (in->unsupported)
				out->status = CELL_UNSUPPORTED;
			else if (!in->valid)
				out->status = CELL_NOT_COUNTED;
			out->value = in->value * scale;
			out->raw = in->raw;
			out->running_ns = in->running_ns;
			out->coverage = aggr_cell_coverage(in);
			out->integer = scale == 1.0 && in->value == (double)in->raw;
			out->gauge = in->gauge;
			if (in->gauge && in->gauge_frames > 1) {
				out->gauge_frames = in->gauge_frames;
				out->gauge_mean = in->gauge_sum / (double)in->gauge_frames * scale;
				out->gauge_last = in->gauge_last * scale;
			}
		}
	}
}

void stat_table_set_metrics(struct stat_table *t, const struct metric_plan *plan,
			    const struct metric_engine *engine, const struct metric_values *values)
{
	enum metric_scope scope = scope_of(t->mode);
	int nr_scopes = metric_engine_nr_scopes(engine, scope);

	for (int r = 0; r < t->nr_rows; r++) {
		int index = -1;

		for (int k = 0; k < nr_scopes; k++)
			if (scope == SCOPE_SYSTEM || metric_engine_scope_id(engine, scope, k) == t->row_keys[r])
				index = k;
		for (int i = 0, c = t->nr_event_columns; i < plan->nr_metrics; i++) {
			struct stat_cell *out;
			const struct metric_value *v;

			if (!plan->metrics[i].requested)
				continue;
			out = &t->cells[r * t->nr_columns + c++];
			memset(out, 0, sizeof(*out));
			if (index < 0 || t->mode == AGGR_CPU || aggr_mode_by_place(t->mode)) {
				out->status = CELL_NOT_APPLICABLE;
				out->why = "metrics are computed for the system, each node, socket, memory channel or memory tier";
				continue;
			}
			v = metric_engine_value(engine, values, i, scope, index);
			if (!v || !v->valid) {
				out->status = CELL_NOT_COUNTED;
				out->why = v ? v->why : NULL;
				continue;
			}
			out->value = v->value;
			out->coverage = v->coverage;
			out->mixed_slices = v->mixed_slices;
		}
		/* stat -d: the detail metric on each node (the totals' row only). */
		for (int k = 0; k < t->nr_detail_columns; k++) {
			int c = t->nr_columns - t->nr_lua_columns - t->nr_detail_columns + k;
			struct stat_cell *out = &t->cells[r * t->nr_columns + c];
			const struct metric_value *v = metric_engine_value(engine, values, t->detail_metric, SCOPE_NODE, k);

			memset(out, 0, sizeof(*out));
			if (!v || !v->valid) {
				out->status = CELL_NOT_COUNTED;
				out->why = v ? v->why : NULL;
				continue;
			}
			out->value = v->value;
			out->coverage = v->coverage;
			out->mixed_slices = v->mixed_slices;
		}
	}
}

void stat_table_set_lua_metrics(struct stat_table *t, const struct lua_engine *lua, bool whole_run)
{
	for (int r = 0; r < t->nr_rows; r++) {
		for (int i = 0; i < t->nr_lua_columns; i++) {
			struct stat_cell *out = &t->cells[r * t->nr_columns + t->nr_columns - t->nr_lua_columns + i];
			double value;

			memset(out, 0, sizeof(*out));
			if (t->mode != AGGR_TOTAL && t->mode != AGGR_NODE) {
				out->status = CELL_NOT_APPLICABLE;
				out->why = "Lua metrics are computed for the system and each node";
			} else if (!whole_run) {
				out->status = CELL_NOT_APPLICABLE;
				out->why = "a Lua metric is computed per frame: see the -I lines";
			} else if (!lua_engine_metric_value(lua, t->lua_metrics[i], t->row_keys[r], &value)) {
				out->status = CELL_NOT_COUNTED;
				out->why = "the script's compute gave no value (an input was not read)";
			} else {
				out->value = value;
				out->coverage = 1.0;
			}
		}
	}
}

bool stat_table_row_is_channel(const struct stat_table *t)
{
	return (t->mode == AGGR_CHANNEL || t->mode == AGGR_INSTANCE) && t->engine;
}

void stat_table_thread_label(const struct stat_table *t, int row, char *buf, size_t size)
{
	if (t->row_names && t->row_names[row][0])
		snprintf(buf, size, "%s-%d", t->row_names[row], t->row_keys[row]);
	else
		snprintf(buf, size, "%d", t->row_keys[row]);
}

void stat_table_row_label(const struct stat_table *t, int row, char *buf, size_t size)
{
	const struct metric_channel *ch;
	int same_name = 0;

	if (t->row_keys[row] < 0) {
		snprintf(buf, size, "total");
		return;
	}
	if (aggr_mode_by_place(t->mode)) {
		aggr_key_label(t->mode, t->row_keys[row], buf, size);
		return;
	}
	if (!stat_table_row_is_channel(t)) {
		snprintf(buf, size, "%s%d", aggr_mode_name(t->mode), t->row_keys[row]);
		return;
	}
	ch = metric_engine_channel(t->engine, t->row_keys[row]);
	for (int i = 0; i < metric_engine_nr_scopes(t->engine, SCOPE_CHANNEL); i++)
		same_name += !strcmp(metric_engine_channel(t->engine, i)->instance, ch->instance);
	if (same_name > 1 && ch->cpu >= 0)
		snprintf(buf, size, "%s@cpu%d", ch->instance, ch->cpu);
	else
		snprintf(buf, size, "%s", ch->instance);
}
