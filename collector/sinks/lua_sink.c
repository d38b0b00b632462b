#include "sinks/lua_sink.h"
#include "util/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lua_sink {
	struct lua_engine *lua;
	const char *command_name;
};

static int lua_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct lua_sink *ls = sink->priv;
	struct lua_engine_inputs in = {
		.table = setup->table,
		.topo = setup->topo,
		.host = setup->host,
		.plan = setup->plan,
		.metrics = setup->engine,
		.res = setup->res,
		.source = setup->origin,
		.source_name = setup->origin_name,
		.task_target = setup->task_target,
	};

	ls->command_name = setup->command_name;
	return lua_engine_start(ls->lua, &in, err);
}

static int lua_frame(struct sink *sink, const struct sink_frame *f)
{
	struct lua_sink *ls = sink->priv;

	lua_engine_frame(ls->lua, f->frame, f->metrics, f->merged);
	return 0;
}

static int lua_event(struct sink *sink, const struct sink_event *ev)
{
	struct lua_sink *ls = sink->priv;
	double time_s = (double)ev->time_ns / 1e9;

	switch (ev->kind) {
	case SINK_EVENT_LABEL:
		lua_engine_label(ls->lua, time_s, ev->text, NULL);
		break;
	case SINK_EVENT_PHASE_BEGIN:
	case SINK_EVENT_PHASE_END:
		lua_engine_label(ls->lua, time_s, ev->text, ev->kind == SINK_EVENT_PHASE_BEGIN ? "begin" : "end");
		break;
	default:
		break;
	}
	return 0;
}

static void lua_end(struct sink *sink, const struct sink_end *end)
{
	struct lua_sink *ls = sink->priv;

	if (end->frames_merged) {
		char names[512] = "";
		size_t len = 0;

		for (int i = 0; i < lua_engine_nr_scripts(ls->lua) && len < sizeof(names); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
						lua_engine_script_label(ls->lua, i));
		/* The reports cover every frame, but not at every frame's resolution. */
		ms_warn("%s received %llu of %llu frames merged (%s behind)", names, (unsigned long long)end->frames_merged,
			(unsigned long long)end->frames, lua_engine_nr_scripts(ls->lua) > 1 ? "they fell" : "it fell");
	}
	lua_engine_end(ls->lua);
}

static void lua_close(struct sink *sink)
{
	free(sink->priv);
	sink->priv = NULL;
}

static const struct sink_ops lua_sink_ops = {
	.name = "lua",
	.open = lua_open,
	.frame = lua_frame,
	.event = lua_event,
	.end = lua_end,
	.close = lua_close,
	.says_merged = true,
};

int lua_sink_init(struct sink *sink, struct lua_engine *lua, struct ms_error *err)
{
	struct lua_sink *ls = calloc(1, sizeof(*ls));

	memset(sink, 0, sizeof(*sink));
	if (!ls) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	ls->lua = lua;
	sink->ops = &lua_sink_ops;
	sink->priv = ls;
	sink->queue_length = LUA_SINK_QUEUE;
	return 0;
}
