-- bandwidth.lua: memory read/write bandwidth per node, socket and memory
-- channel over the run: average, peak (the busiest frame) and a sparkline,
-- from the catalog's mem.read_bytes / mem.write_bytes (DRAM controller
-- counters of this machine, e.g. HiSilicon DDRC, Intel IMC CAS counts, AMD
-- UMC), or mem.total_bytes where the counters do not tell reads from writes
-- (AMD DF). Channels are the PMU instances the catalog scopes per channel
-- (memscope.channels()); where the counters are per socket or die, the
-- report says so instead.

script = {
  description = "read/write bandwidth per node, socket and channel over time: average and peak",
  args = { { name = "points", default = "40", help = "width of the sparklines" } },
  metrics = { "mem.read_bytes", "mem.write_bytes", "mem.total_bytes" },
}

-- Why a name has nothing to show: memscope.why, or "counted, no value" when the run
-- counted it but never read a value (a replay that leaves it out, a cut recording).
local function why(name)
  return memscope.why(name) or (name .. ": counted, but no value was read in this run")
end

local scopes = {}      -- key -> { label, bytes = {read=, write=}, peak = {read=, write=}, timeline = {} }
local order = {}

local function scope(key, label)
  if not scopes[key] then
    scopes[key] = { label = label, bytes = {}, peak = {}, timeline = {} }
    order[#order + 1] = key
  end
  return scopes[key]
end

local DIRS = { "read", "write", "total" }
local NAMES = { read = "mem.read_bytes", write = "mem.write_bytes", total = "mem.total_bytes" }
local v = {}

local function sample(key, label, labels, f)
  local s = scope(key, label)
  for _, dir in ipairs(DIRS) do v[dir] = memscope.value(NAMES[dir], labels) end
  -- read + write is the total when both are counted
  if not v.total and v.read and v.write then v.total = v.read + v.write end
  for _, dir in ipairs(DIRS) do
    if v[dir] then
      s.bytes[dir] = (s.bytes[dir] or 0) + v[dir]
      local bw = f.interval > 0 and v[dir] / f.interval or 0
      if bw > (s.peak[dir] or -1) then s.peak[dir] = bw end
    end
  end
  s.timeline[#s.timeline + 1] = v.total and f.interval > 0 and v.total / f.interval or 0 / 0
end

-- The scopes, with their label tables, made once (on_frame runs at every frame).
local scope_list = nil

local function make_scopes()
  local topo = memscope.topology()
  local list, seen, sockets = { { "system", "system", nil } }, {}, {}
  for _, n in ipairs(topo.nodes or {}) do list[#list + 1] = { "node" .. n, "node " .. n, { node = n } } end
  for _, c in ipairs(topo.cpus or {}) do
    if not seen[c.socket] then seen[c.socket] = true; sockets[#sockets + 1] = c.socket end
  end
  table.sort(sockets)
  for _, s in ipairs(sockets) do list[#list + 1] = { "socket" .. s, "socket " .. s, { socket = s } } end
  for _, ch in ipairs(memscope.channels()) do
    local where = ch.node and (" (node " .. ch.node .. ")") or ch.socket and (" (socket " .. ch.socket .. ")") or ""
    list[#list + 1] = { "channel " .. ch.instance .. "@" .. tostring(ch.cpu), "channel " .. ch.instance .. where,
      { instance = ch.instance, cpu = ch.cpu, node = ch.node, socket = ch.socket } }
  end
  return list
end

local measured = nil

function on_frame(f)
  if measured == nil then
    measured = memscope.has(NAMES.read) or memscope.has(NAMES.write) or memscope.has(NAMES.total)
  end
  if not measured then return end       -- on_end says why
  scope_list = scope_list or make_scopes()
  for _, sc in ipairs(scope_list) do sample(sc[1], sc[2], sc[3], f) end
end

local function squeeze(values, n)
  if #values <= n then return values end
  local out = {}
  for i = 1, n do
    local lo, hi = math.floor((i - 1) * #values / n) + 1, math.floor(i * #values / n)
    local s, k = 0, 0
    for j = lo, hi do if values[j] == values[j] then s = s + values[j]; k = k + 1 end end
    out[i] = k > 0 and s / k or 0 / 0
  end
  return out
end

local MB = 1e6

function on_end(run)
  print(string.format("bandwidth.lua: memory bandwidth (%s %s, %d frames, %.2f s)",
    memscope.source, memscope.source_name, run.frames, run.duration))
  local have = {}
  for _, dir in ipairs({ "read", "write", "total" }) do have[dir] = memscope.has("mem." .. dir .. "_bytes") end
  if not have.read and not have.write and not have.total then
    print("  not measured: " .. why("mem.read_bytes"))
    print("  not measured: " .. why("mem.total_bytes"))
    return
  end
  local rows = {}
  for _, key in ipairs(order) do
    local s = scopes[key]
    if s.bytes.read or s.bytes.write or s.bytes.total then
      local function avg(dir) return s.bytes[dir] and run.duration > 0 and s.bytes[dir] / run.duration / MB or 0 / 0 end
      local function peak(dir) return s.peak[dir] and s.peak[dir] / MB or 0 / 0 end
      rows[#rows + 1] = { s.label, avg("read"), peak("read"), avg("write"), peak("write"), avg("total"), peak("total"),
        memscope.sparkline(squeeze(s.timeline, tonumber(memscope.args.points))) }
    end
  end
  memscope.emit { title = "Bandwidth in MB/s (catalog: mem.read_bytes, mem.write_bytes, mem.total_bytes)",
    columns = { "scope", "read avg", "read peak", "write avg", "write peak", "total avg", "total peak", "total over time" },
    rows = rows, precision = 3 }
  for _, dir in ipairs({ "read", "write" }) do
    if not have[dir] then print("  " .. dir .. ": not measured: " .. why("mem." .. dir .. "_bytes")) end
  end
  if #memscope.channels() == 0 then
    print("  per channel: not measured: on this machine the catalog maps these metrics to PMUs of a whole "
      .. "socket, die or node, not to one PMU per memory channel (as Intel IMC, HiSilicon DDRC and AMD UMC are)")
  end
end
