-- topdown.lua: a memory top-down tree over the run. The core's own top-down
-- (the catalog's topdown.* metrics: perf's TMA on Intel, the pipeline
-- metrics on AMD Zen 4/5, STALL_BACKEND on Arm Neoverse, hip08's stall
-- events) says how much of the machine's slots or cycles wait on memory and
-- at which level; the memory system's own counters say why:
--   backend bound                 topdown.backend_bound (slots; Arm: cycles)
--     memory bound                topdown.memory_bound
--       L1 / L2 / L3 bound        topdown.l1_bound ... (cycles)
--       DRAM bound                topdown.dram_bound
--         bandwidth / latency     topdown.dram_bandwidth, topdown.dram_latency
--           local / remote DRAM, remote cache   topdown.local_dram ...
--       store bound               topdown.store_bound
--     core bound                  backend bound - memory bound
--   DRAM traffic                  mem.read_bytes + mem.write_bytes; reads against
--                                 the mem.read_bw `memscope validate` measured here
--     local vs remote             mem.remote_accesses / (local + remote)
--     page placement (eBPF)       proc.pages_placed per node
--     interconnect                interconnect.tx_bytes / rx_bytes
--     queue saturation            queue.full_cycles / uncore.clockticks (e.g. the
--                                 Westmere Global Queue full), queue.occupancy
--   last-level cache              llc.misses / llc.accesses
--     coherence                   coherence.snoops_sent
--   kernel                        page faults (kernel.faults or the page-faults
--                                 series), NUMA allocation misses (numa.miss / numa.hit + miss)
-- Each share is the run's: the frames' values weighted by their length. The
-- largest of sibling branches is marked dominant; with several NUMA nodes each
-- node has its column (core counters count on the node's CPUs). A branch the
-- host cannot measure says why; with no core top-down at all, once.

local TOPDOWN = { "topdown.backend_bound", "topdown.memory_bound", "topdown.l1_bound", "topdown.l2_bound",
                  "topdown.l3_bound", "topdown.dram_bound", "topdown.dram_bandwidth", "topdown.dram_latency",
                  "topdown.store_bound", "topdown.local_dram", "topdown.remote_dram", "topdown.remote_cache" }
local COUNTERS = { "mem.read_bytes", "mem.write_bytes", "mem.local_accesses", "mem.remote_accesses",
                   "interconnect.tx_bytes", "interconnect.rx_bytes", "queue.full_cycles", "uncore.clockticks",
                   "llc.accesses", "llc.misses", "coherence.snoops_sent", "proc.pages_placed", "kernel.faults",
                   "numa.hit", "numa.miss", "page-faults" }

local wanted = {}
for _, n in ipairs(TOPDOWN) do wanted[#wanted + 1] = n end
for _, n in ipairs(COUNTERS) do if n:find("%.") then wanted[#wanted + 1] = n end end
wanted[#wanted + 1] = "queue.occupancy"

script = {
  description = "memory top-down tree: backend and memory bound by level, DRAM traffic against the validated peak, local/remote, placement, queues",
  args = {},
  metrics = wanted,
}

-- Why a name has nothing to show: memscope.why, or "counted, no value" when the run
-- counted it but never read a value (a replay that leaves it out, a cut recording).
local function why(name)
  return memscope.why(name) or (name .. ": counted, but no value was read in this run")
end

local sums, occupancy, occ_frames = {}, 0, 0
local shares = {}          -- topdown metric -> scope key -> { weighted sum, seconds }
local placed = {}          -- node -> pages placed
local node_reads = {}      -- node -> bytes read from its DRAM
local nodes = nil          -- node ids, looked up once
local present = nil        -- the counters this run has, looked up once

local function add_share(name, key, v, secs)
  local s = shares[name] or {}
  shares[name] = s
  local acc = s[key] or { 0, 0 }
  s[key] = acc
  acc[1] = acc[1] + v * secs
  acc[2] = acc[2] + secs
end

function on_frame(f)
  if not present then
    present = {}
    for _, name in ipairs(COUNTERS) do if memscope.has(name) then present[#present + 1] = name end end
    for _, name in ipairs(TOPDOWN) do if memscope.has(name) then present[#present + 1] = name end end
    nodes = memscope.topology().nodes or {}
  end
  local secs = f.interval
  for _, name in ipairs(present) do
    if name:sub(1, 8) == "topdown." then
      local v = memscope.value(name)
      if v then add_share(name, "system", v, secs) end
      if #nodes > 1 then
        for _, n in ipairs(nodes) do
          local nv = memscope.value(name, { node = n })
          if nv then add_share(name, n, nv, secs) end
        end
      end
    else
      local v = memscope.value(name)
      if v then sums[name] = (sums[name] or 0) + v end
      if name == "proc.pages_placed" or name == "mem.read_bytes" then
        local per = name == "proc.pages_placed" and placed or node_reads
        for _, n in ipairs(nodes) do
          local nv = memscope.value(name, { node = n })
          if nv then per[n] = (per[n] or 0) + nv end
        end
      end
    end
  end
  local q = memscope.value("queue.occupancy")
  if q then occupancy = occupancy + q; occ_frames = occ_frames + 1 end
end

-- The run's share of a topdown metric in a scope ("system" or a node id), or nil.
local function share(name, key)
  local acc = shares[name] and shares[name][key or "system"]
  return acc and acc[2] > 0 and acc[1] / acc[2] or nil
end

local function pct(x) return string.format("%.1f%%", 100 * x) end

local rows, per_node = {}, {}

local function branch(depth, name, value, from, dominant, node_values)
  local r = { string.rep("  ", depth) .. name, value, dominant and "yes" or "", from }
  for i, _ in ipairs(per_node) do r[#r + 1] = node_values and node_values[i] or "" end
  rows[#rows + 1] = r
end

-- A branch whose inputs may be missing: the first input without a value
-- makes it "not measurable" with that input's reason.
local function measured(depth, name, inputs, compute, from)
  for _, input in ipairs(inputs) do
    if not sums[input] then
      branch(depth, name, "not measurable", why(input))
      return false
    end
  end
  branch(depth, name, compute(), from)
  return true
end

-- Top-down rows of one level: each sibling with its share (system and per
-- node; a fraction of slots or cycles as the metric's description says), the
-- largest marked dominant. children(name) adds a sibling's subtree.
local LABEL = {
  ["topdown.l1_bound"] = "L1 bound", ["topdown.l2_bound"] = "L2 bound", ["topdown.l3_bound"] = "L3 bound",
  ["topdown.dram_bound"] = "DRAM bound", ["topdown.store_bound"] = "store bound",
  ["topdown.dram_bandwidth"] = "bandwidth", ["topdown.dram_latency"] = "latency",
  ["topdown.local_dram"] = "local DRAM", ["topdown.remote_dram"] = "remote DRAM",
  ["topdown.remote_cache"] = "remote cache",
}

local function node_shares(name)
  local out = {}
  for i, n in ipairs(per_node) do
    local v = share(name, n)
    out[i] = v and pct(v) or "-"
  end
  return out
end

local function level(depth, names, children)
  local best, best_v = nil, -1
  for _, name in ipairs(names) do
    local v = share(name)
    if v and v > best_v then best, best_v = name, v end
  end
  for _, name in ipairs(names) do
    local v = share(name)
    if v then
      branch(depth, LABEL[name], pct(v), name, name == best and #names > 1, node_shares(name))
    else
      branch(depth, LABEL[name], "not measurable", why(name))
    end
    if children then children(name, depth + 1) end
  end
end

local function topdown_tree()
  local backend, memory = share("topdown.backend_bound"), share("topdown.memory_bound")
  if not backend and not memory then
    -- No core top-down on this host: one row says why, not one per level.
    branch(0, "backend bound", "not measurable", why("topdown.backend_bound"))
    return false
  end
  if backend then
    branch(0, "backend bound", pct(backend), "topdown.backend_bound", false,
      node_shares("topdown.backend_bound"))
  else
    branch(0, "backend bound", "not measurable", why("topdown.backend_bound"))
  end
  local core = backend and memory and backend - memory or nil
  local memory_dominant = memory and (not core or memory >= core)
  if memory then
    branch(1, "memory bound", pct(memory), "topdown.memory_bound", memory_dominant,
      node_shares("topdown.memory_bound"))
  else
    branch(1, "memory bound", "not measurable", why("topdown.memory_bound"))
  end
  level(2, { "topdown.l1_bound", "topdown.l2_bound", "topdown.l3_bound", "topdown.dram_bound", "topdown.store_bound" },
    function(name, depth)
      if name ~= "topdown.dram_bound" or not share(name) then return end
      level(depth, { "topdown.dram_bandwidth", "topdown.dram_latency" }, function(sub, d)
        if sub == "topdown.dram_latency" and share(sub) then
          level(d, { "topdown.local_dram", "topdown.remote_dram", "topdown.remote_cache" })
        end
      end)
    end)
  if core then
    local nv = {}
    for i, n in ipairs(per_node) do
      local b, m = share("topdown.backend_bound", n), share("topdown.memory_bound", n)
      nv[i] = b and m and pct(b - m) or "-"
    end
    branch(1, "core bound", pct(core), "topdown.backend_bound - topdown.memory_bound",
      not memory_dominant, nv)
  end
  return true
end

-- The read bandwidth against what `memscope validate` measured on this
-- machine (it stores mem.read_bw of the node its workload ran on): the
-- system's or each such node's, or "" when nothing was stored.
local function against_peak(secs)
  local parts = {}
  local function one(label, bytes, peak, date)
    if bytes and peak and peak > 0 then
      parts[#parts + 1] = string.format("%s%s of the %s validate measured (%s)", label, pct(bytes / secs / peak),
        memscope.fmt(peak, "B/s"), date)
    end
  end
  one("", sums["mem.read_bytes"], memscope.validated("mem.read_bw"))
  for _, n in ipairs(nodes) do one("node " .. n .. " ", node_reads[n], memscope.validated("mem.read_bw", n)) end
  return #parts > 0 and "; reads: " .. table.concat(parts, ", ") or ""
end

function on_end(run)
  local secs = run.duration > 0 and run.duration or 0 / 0
  print(string.format("topdown.lua: memory top-down (%s %s, %d frames, %.2f s)",
    memscope.source, memscope.source_name, run.frames, run.duration))
  nodes = nodes or memscope.topology().nodes or {}
  if #nodes > 1 then
    for _, n in ipairs(nodes) do
      for _, name in ipairs(TOPDOWN) do
        if share(name, n) then per_node[#per_node + 1] = n; break end
      end
    end
  end
  local core_topdown = topdown_tree()
  local dram = measured(0, "DRAM traffic", { "mem.read_bytes" }, function()
    local rate = ((sums["mem.read_bytes"] or 0) + (sums["mem.write_bytes"] or 0)) / secs
    return string.format("%s (read %s, write %s%s)", memscope.fmt(rate, "B/s"),
      memscope.fmt(sums["mem.read_bytes"] / secs, "B/s"),
      sums["mem.write_bytes"] and memscope.fmt(sums["mem.write_bytes"] / secs, "B/s") or "n/a", against_peak(secs))
  end, "mem.read_bytes, mem.write_bytes")
  measured(1, "local vs remote", { "mem.local_accesses", "mem.remote_accesses" }, function()
    local l, r = sums["mem.local_accesses"], sums["mem.remote_accesses"]
    return l + r > 0 and pct(r / (l + r)) .. " remote" or "no accesses"
  end, "mem.remote_accesses / (mem.local_accesses + mem.remote_accesses)")
  measured(1, "page placement (eBPF)", { "proc.pages_placed" }, function()
    local total, parts = sums["proc.pages_placed"], {}
    for _, n in ipairs(nodes) do
      if placed[n] then
        parts[#parts + 1] = string.format("node %d %s", n, total > 0 and pct(placed[n] / total) or "-")
      end
    end
    return string.format("%.0f pages%s%s", total, #parts > 0 and ": " or "", table.concat(parts, ", "))
  end, "proc.pages_placed per node (the measured processes)")
  measured(1, "interconnect", { "interconnect.tx_bytes" }, function()
    return string.format("tx %s, rx %s", memscope.fmt(sums["interconnect.tx_bytes"] / secs, "B/s"),
      sums["interconnect.rx_bytes"] and memscope.fmt(sums["interconnect.rx_bytes"] / secs, "B/s") or "n/a")
  end, "interconnect.tx_bytes, interconnect.rx_bytes")
  measured(1, "queue saturation", { "queue.full_cycles", "uncore.clockticks" }, function()
    local c = sums["uncore.clockticks"]
    return c > 0 and pct(sums["queue.full_cycles"] / c) .. " of cycles full" or "no cycles"
  end, "queue.full_cycles / uncore.clockticks")
  if occ_frames > 0 then
    branch(2, "queue occupancy", string.format("%.2f entries", occupancy / occ_frames), "queue.occupancy (mean of frames)")
  else
    branch(2, "queue occupancy", "not measurable", why("queue.occupancy"))
  end
  measured(0, "last-level cache", { "llc.accesses", "llc.misses" }, function()
    local a = sums["llc.accesses"]
    return a > 0 and pct(sums["llc.misses"] / a) .. " misses" or "no accesses"
  end, "llc.misses / llc.accesses")
  measured(1, "coherence", { "coherence.snoops_sent" }, function()
    return memscope.fmt(sums["coherence.snoops_sent"] / secs, "snoops/s")
  end, "coherence.snoops_sent")
  local faults = sums["kernel.faults"] and "kernel.faults" or sums["page-faults"] and "page-faults" or nil
  branch(0, "kernel", "", "what the kernel counts, with or without a PMU")
  if faults then
    branch(1, "page faults", string.format("%.0f (%s)", sums[faults], memscope.fmt(sums[faults] / secs, "/s")), faults)
  else
    branch(1, "page faults", "not measurable", why("kernel.faults"))
  end
  measured(1, "NUMA allocation misses", { "numa.hit", "numa.miss" }, function()
    local h, m = sums["numa.hit"], sums["numa.miss"]
    return h + m > 0 and pct(m / (h + m)) .. " of allocations off their preferred node" or "no allocations"
  end, "numa.miss / (numa.hit + numa.miss)")
  local columns = { "branch", "value", "dominant", "from" }
  for _, n in ipairs(per_node) do columns[#columns + 1] = "node " .. n end
  memscope.emit { title = "Memory top-down (system, over the run)", columns = columns, rows = rows }
  if not core_topdown then
    print("  no core top-down on this host (the backend bound row says why); the other branches are what the "
      .. "memory counters, the kernel and eBPF still tell")
  end
  if not dram then
    print("  this host has no DRAM counters memscope knows; the branches above say what is missing")
  end
end
