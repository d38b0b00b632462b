-- bandwidth.lua: memory read/write bandwidth per node and socket over the run:
-- average, peak (the busiest frame) and a sparkline, from the catalog's
-- mem.read_bytes / mem.write_bytes (DRAM controller counters of this
-- machine, e.g. HiSilicon DDRC, Intel IMC CAS counts, AMD DF/UMC).

script = {
  description = "read/write bandwidth per node and socket over time: average and peak",
  args = { { name = "points", default = "40", help = "width of the sparklines" } },
  metrics = { "mem.read_bytes", "mem.write_bytes" },
}

local scopes = {}      -- key -> { label, bytes = {read=, write=}, peak = {read=, write=}, timeline = {} }
local order = {}

local function scope(key, label)
  if not scopes[key] then
    scopes[key] = { label = label, bytes = {}, peak = {}, timeline = {} }
    order[#order + 1] = key
  end
  return scopes[key]
end

local function sample(key, label, labels, f)
  local s = scope(key, label)
  local total
  for _, dir in ipairs({ "read", "write" }) do
    local v = memscope.value("mem." .. dir .. "_bytes", labels)
    if v then
      s.bytes[dir] = (s.bytes[dir] or 0) + v
      local bw = f.interval > 0 and v / f.interval or 0
      if bw > (s.peak[dir] or -1) then s.peak[dir] = bw end
      total = (total or 0) + bw
    end
  end
  s.timeline[#s.timeline + 1] = total or 0 / 0
end

local sockets = nil

function on_frame(f)
  local topo = memscope.topology()
  if not sockets then
    local seen = {}
    sockets = {}
    for _, c in ipairs(topo.cpus or {}) do
      if not seen[c.socket] then seen[c.socket] = true; sockets[#sockets + 1] = c.socket end
    end
    table.sort(sockets)
  end
  sample("system", "system", nil, f)
  for _, n in ipairs(topo.nodes or {}) do sample("node" .. n, "node " .. n, { node = n }, f) end
  for _, s in ipairs(sockets) do sample("socket" .. s, "socket " .. s, { socket = s }, f) end
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
  if not memscope.has("mem.read_bytes") and not memscope.has("mem.write_bytes") then
    print("  not measured: mem.read_bytes: " .. memscope.why("mem.read_bytes"))
    print("  not measured: mem.write_bytes: " .. memscope.why("mem.write_bytes"))
    return
  end
  local rows = {}
  for _, key in ipairs(order) do
    local s = scopes[key]
    if s.bytes.read or s.bytes.write then
      local function avg(dir) return s.bytes[dir] and run.duration > 0 and s.bytes[dir] / run.duration / MB or 0 / 0 end
      local function peak(dir) return s.peak[dir] and s.peak[dir] / MB or 0 / 0 end
      rows[#rows + 1] = { s.label, avg("read"), peak("read"), avg("write"), peak("write"),
        memscope.sparkline(squeeze(s.timeline, tonumber(memscope.args.points))) }
    end
  end
  memscope.emit { title = "Bandwidth in MB/s (catalog: mem.read_bytes, mem.write_bytes)",
    columns = { "scope", "read avg", "read peak", "write avg", "write peak", "read+write over time" },
    rows = rows, precision = 3 }
  for _, dir in ipairs({ "read", "write" }) do
    if not memscope.has("mem." .. dir .. "_bytes") then
      print("  " .. dir .. ": not measured: " .. memscope.why("mem." .. dir .. "_bytes"))
    end
  end
  print("  per channel: the catalog sums a node's memory channels; channel counts are the raw series "
    .. "(memscope report with summary.lua lists them)")
end
