-- bench.lua: memscope bench's phases next to what memscope counted during each of them.
--
--   memscope record -I 100 -e page-faults,context-switches -- memscope bench bw rd --sizes 1M,64M
--   memscope report --lua bench.lua
--
-- memscope-bench marks every measurement as a phase (labels with phase = "begin"/"end")
-- and puts its result after it in a label "bench-result NAME key=value ...". Frames are
-- shared among phases by time: a frame that covers [t - interval, t] adds to a phase the
-- part of its value that falls inside the phase. Counts (series that are counters, catalog
-- metrics of bytes, accesses, pages...) are added up that way; rates and ratios (names
-- ending in _bw, _ratio, _rate, gauges) are averaged over the phase's time.

script = {
  description = "memscope bench: each phase's result (MB/s, ns) next to its counters and metrics",
  args = {
    { name = "names", default = "", help = "series and metrics to show, comma-separated (default: all the run has)" },
  },
  metrics = { "mem.read_bytes", "mem.write_bytes", "llc.misses", "llc.miss_rate", "mem.remote_ratio" },
}

local phases, open, by_name = {}, {}, {}
local frames = {}
local names = nil           -- { {name=, average=bool} }

local function averaged(name, kind)
  return kind == "gauge" or name:match("_bw$") or name:match("_ratio$") or name:match("_rate$")
    or name:match("occupancy$")
end

local function pick_names()
  local list, seen = {}, {}
  local wanted = {}
  for n in memscope.args.names:gmatch("[^,]+") do wanted[#wanted + 1] = n end
  local function add(name, kind)
    if seen[name] then return end
    seen[name] = true
    list[#list + 1] = { name = name, average = averaged(name, kind) and true or false }
  end
  if #wanted > 0 then
    local kinds = {}
    for _, s in ipairs(memscope.series()) do kinds[s.name] = s.kind end
    for _, n in ipairs(wanted) do add(n, kinds[n]) end
    return list
  end
  for _, s in ipairs(memscope.series()) do
    if not s.unavailable then add(s.name, s.kind) end
  end
  for _, m in ipairs(memscope.metrics()) do add(m, nil) end
  return list
end

function on_frame(f)
  names = names or pick_names()
  local v = {}
  for _, n in ipairs(names) do v[n.name] = memscope.value(n.name) end
  frames[#frames + 1] = { a = f.time - f.interval, b = f.time, v = v }
end

function on_label(l)
  if l.phase == "begin" then
    local p = { name = l.text, t0 = l.time, result = {} }
    phases[#phases + 1] = p
    open[l.text] = p
  elseif l.phase == "end" then
    local p = open[l.text]
    if p then
      p.t1 = l.time
      open[l.text] = nil
      by_name[l.text] = p
    end
  else
    local name, rest = l.text:match("^bench%-result (%S+)%s*(.*)$")
    local p = name and by_name[name]
    if p then
      for k, val in rest:gmatch("(%S+)=(%S+)") do p.result[k] = tonumber(val) or val end
    end
  end
end

-- A phase's values from the frames that lie wholly inside it, scaled to the phase's
-- length (work just before or after the phase, such as allocating the next buffer, never
-- leaks in); a phase shorter than any frame falls back to the overlapping frames' shares.
local function measure(p)
  local function collect(inside)
    local sums, weights, covered, count = {}, {}, 0, 0
    for _, fr in ipairs(frames) do
      local lo, hi = math.max(fr.a, p.t0), math.min(fr.b, p.t1)
      local len = fr.b - fr.a
      local whole = fr.a >= p.t0 - 1e-6 and fr.b <= p.t1 + 1e-6
      if hi > lo and len > 0 and (whole or not inside) then
        local overlap = hi - lo
        covered, count = covered + overlap, count + 1
        for _, n in ipairs(names or {}) do
          local x = fr.v[n.name]
          if x and x == x then
            if n.average then
              sums[n.name] = (sums[n.name] or 0) + x * overlap
              weights[n.name] = (weights[n.name] or 0) + overlap
            else
              sums[n.name] = (sums[n.name] or 0) + x * overlap / len
            end
          end
        end
      end
    end
    return sums, weights, covered, count
  end
  local sums, weights, covered, count = collect(true)
  local scale = covered > 0 and (p.t1 - p.t0) / covered or 1
  local whole = count > 0
  if not whole then
    sums, weights, covered, count = collect(false)
    scale = 1
  end
  local out = {}
  for _, n in ipairs(names or {}) do
    if n.average then
      out[n.name] = weights[n.name] and sums[n.name] / weights[n.name] or nil
    else
      out[n.name] = sums[n.name] and sums[n.name] * scale
    end
  end
  return out, count, whole
end

-- The result a phase is about: bandwidth, latency or switch time.
local function headline(r)
  if r.mb_s then return r.mb_s, "MB/s" end
  if r.ns then return r.ns, "ns" end
  if r.roundtrip_us then return r.roundtrip_us, "us" end
  if r.pages then return r.pages, "pages" end
  return nil, ""
end

function on_end(run)
  print(string.format("bench.lua: memscope bench phases (%s %s, %d frames, %.2f s)", memscope.source,
    memscope.source_name, run.frames, run.duration))
  local done = {}
  for _, p in ipairs(phases) do if p.t1 then done[#done + 1] = p end end
  if #done == 0 then
    print("  no phases: record memscope bench (memscope record -I 100 -- memscope bench ...); "
      .. "its phases are marked only when it runs under memscope record")
    return
  end
  local columns = { "phase", "result", "unit", "seconds", "frames" }
  local partial = false
  for _, n in ipairs(names or {}) do columns[#columns + 1] = n.name .. (n.average and " (avg)" or "") end
  local extra = {}
  local rows = {}
  for _, p in ipairs(done) do
    local got, count, whole = measure(p)
    local value, unit = headline(p.result)
    local row = { p.name, value, unit, p.t1 - p.t0, whole and math.tointeger(count) or (count .. " partly") }
    partial = partial or not whole
    for _, n in ipairs(names or {}) do row[#row + 1] = got[n.name] end
    rows[#rows + 1] = row
    -- Bytes the benchmark moved against bytes the memory controllers counted.
    local moved = tonumber(p.result.bytes)
    local counted = got["mem.total_bytes"] or (got["mem.read_bytes"] and (got["mem.read_bytes"] + (got["mem.write_bytes"] or 0)))
    if moved and counted and moved > 0 then
      extra[#extra + 1] = { p.name, moved, counted, counted / moved }
    end
    local loads = tonumber(p.result.loads)
    if loads and got["llc.misses"] and loads > 0 then
      extra[#extra + 1] = { p.name .. " (LLC misses per load)", loads, got["llc.misses"], got["llc.misses"] / loads }
    end
  end
  memscope.emit { title = "Phases: the benchmark's result and what memscope counted meanwhile "
      .. "(frames wholly inside the phase, counts scaled to its length)",
    columns = columns, rows = rows, precision = 2 }
  if partial then
    print("  'partly': no frame lies wholly inside the phase; its values are shares of the frames around it, "
      .. "which include work outside the phase: record with a shorter -I or run memscope bench with a longer --phase-ms")
  end
  if #extra > 0 then
    memscope.emit { title = "What the benchmark did against what the counters saw",
      columns = { "phase", "benchmark", "counters", "counters / benchmark" }, rows = extra, precision = 3 }
  end
  for _, n in ipairs(names or {}) do
    local why = memscope.why(n.name)
    if why then print("  " .. n.name .. ": " .. why) end
  end
end
