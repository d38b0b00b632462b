/* The Lua sink: --lua scripts (stat, record, top) and reports (report) run
 * on frames and labels on a thread of their own, so a slow script never
 * delays sampling; when it falls behind it gets frames merged and says so at
 * the end. */
#ifndef MEMSCOPE_LUA_SINK_H
#define MEMSCOPE_LUA_SINK_H

#include "lua/lua_engine.h"
#include "sinks/sink.h"
#include "util/error.h"

/* Frames the scripts may fall behind before they get merged ones. */
#define LUA_SINK_QUEUE 1

/* Make sink run the scripts of lua (loaded with lua_engine_open; started by
 * open, on_start; on_end and the reports at end). The engine stays the
 * caller's. */
int lua_sink_init(struct sink *sink, struct lua_engine *lua, struct ms_error *err);

#endif
