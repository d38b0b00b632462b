-- topdown.lua: a memory top-down tree over the run. Each branch is a question
-- about the memory system, answered from the catalog's portable metrics when
-- this host can count them, and marked "not measurable" (with the reason)
-- when it cannot:
--   memory bound                  core stall cycles waiting on memory
--     DRAM traffic                mem.read_bytes + mem.write_bytes
--       local vs remote           mem.remote_accesses / (local + remote)
--       interconnect              interconnect.tx_bytes / rx_bytes
--       queue saturation          queue.full_cycles / uncore.clockticks (e.g. the
--                                 Westmere Global Queue full), queue.occupancy
--     last-level cache            llc.misses / llc.accesses
--       coherence                 coherence.snoops_sent

script = {
  description = "memory top-down tree: memory bound, DRAM, local/remote, interconnect, queues",
  args = {},
  metrics = { "mem.read_bytes", "mem.write_bytes", "mem.local_accesses", "mem.remote_accesses",
              "interconnect.tx_bytes", "interconnect.rx_bytes", "queue.full_cycles", "uncore.clockticks",
              "queue.occupancy", "llc.accesses", "llc.misses", "coherence.snoops_sent" },
}

-- Why a name has nothing to show: memscope.why, or "counted, no value" when the run
-- counted it but never read a value (a replay that leaves it out, a cut recording).
local function why(name)
  return memscope.why(name) or (name .. ": counted, but no value was read in this run")
end

local COUNTERS = { "mem.read_bytes", "mem.write_bytes", "mem.local_accesses", "mem.remote_accesses",
                   "interconnect.tx_bytes", "interconnect.rx_bytes", "queue.full_cycles", "uncore.clockticks",
                   "llc.accesses", "llc.misses", "coherence.snoops_sent" }
local sums, occupancy, occ_frames = {}, 0, 0

local present = nil    -- the counters this run has, looked up once

function on_frame(f)
  if not present then
    present = {}
    for _, name in ipairs(COUNTERS) do if memscope.has(name) then present[#present + 1] = name end end
  end
  for _, name in ipairs(present) do
    local v = memscope.value(name)
    if v then sums[name] = (sums[name] or 0) + v end
  end
  local q = memscope.value("queue.occupancy")
  if q then occupancy = occupancy + q; occ_frames = occ_frames + 1 end
end

local rows = {}

local function branch(depth, name, value, from)
  rows[#rows + 1] = { string.rep("  ", depth) .. name, value, from }
end

-- A branch whose inputs may be missing: the first input without a value
-- makes it "not measurable" with that input's reason.
local function measured(depth, name, inputs, compute, from)
  for _, input in ipairs(inputs) do
    if not sums[input] then
      local reason = why(input)
      branch(depth, name, "not measurable", reason)
      return false
    end
  end
  branch(depth, name, compute(), from)
  return true
end

local function pct(x) return string.format("%.1f%%", 100 * x) end

function on_end(run)
  local secs = run.duration > 0 and run.duration or 0 / 0
  print(string.format("topdown.lua: memory top-down (%s %s, %d frames, %.2f s)",
    memscope.source, memscope.source_name, run.frames, run.duration))
  branch(0, "memory bound", "not measurable",
    "no portable metric counts core stall cycles on memory yet (needs per-core stall events)")
  local dram = measured(1, "DRAM traffic", { "mem.read_bytes" }, function()
    return string.format("%s (read %s, write %s)", memscope.fmt(((sums["mem.read_bytes"] or 0)
      + (sums["mem.write_bytes"] or 0)) / secs, "B/s"), memscope.fmt(sums["mem.read_bytes"] / secs, "B/s"),
      sums["mem.write_bytes"] and memscope.fmt(sums["mem.write_bytes"] / secs, "B/s") or "n/a")
  end, "mem.read_bytes, mem.write_bytes")
  measured(2, "local vs remote", { "mem.local_accesses", "mem.remote_accesses" }, function()
    local l, r = sums["mem.local_accesses"], sums["mem.remote_accesses"]
    return l + r > 0 and pct(r / (l + r)) .. " remote" or "no accesses"
  end, "mem.remote_accesses / (mem.local_accesses + mem.remote_accesses)")
  measured(2, "interconnect", { "interconnect.tx_bytes" }, function()
    return string.format("tx %s, rx %s", memscope.fmt(sums["interconnect.tx_bytes"] / secs, "B/s"),
      sums["interconnect.rx_bytes"] and memscope.fmt(sums["interconnect.rx_bytes"] / secs, "B/s") or "n/a")
  end, "interconnect.tx_bytes, interconnect.rx_bytes")
  measured(2, "queue saturation", { "queue.full_cycles", "uncore.clockticks" }, function()
    local c = sums["uncore.clockticks"]
    return c > 0 and pct(sums["queue.full_cycles"] / c) .. " of cycles full" or "no cycles"
  end, "queue.full_cycles / uncore.clockticks")
  if occ_frames > 0 then
    branch(3, "queue occupancy", string.format("%.2f entries", occupancy / occ_frames), "queue.occupancy (mean of frames)")
  else
    branch(3, "queue occupancy", "not measurable", why("queue.occupancy"))
  end
  measured(1, "last-level cache", { "llc.accesses", "llc.misses" }, function()
    local a = sums["llc.accesses"]
    return a > 0 and pct(sums["llc.misses"] / a) .. " misses" or "no accesses"
  end, "llc.misses / llc.accesses")
  measured(2, "coherence", { "coherence.snoops_sent" }, function()
    return memscope.fmt(sums["coherence.snoops_sent"] / secs, "snoops/s")
  end, "coherence.snoops_sent")
  memscope.emit { title = "Memory top-down (system, over the run)", columns = { "branch", "value", "from" }, rows = rows }
  if not dram then
    print("  this host has no DRAM counters memscope knows; the branches above say what is missing")
  end
end
