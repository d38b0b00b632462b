-- remote_ratio.lua: local versus remote memory accesses per NUMA node (and per
-- process when the run has per-process series), from whatever this host has,
-- saying where each number comes from:
--   1. memory-access counters (mem.local_accesses / mem.remote_accesses: uncore
--      or core PMU events mapped by the catalog) - accesses by CPUs of a node
--      served by their own node's memory, or by another node's;
--   2. eBPF page-allocation probes (proc.pages_alloc): where the target's new
--      pages were placed;
--   3. the kernel's numastat (numa.local / numa.other): pages allocated for a
--      process running on the node vs on another node (whole system).
-- Each is a different question: accesses weigh every load and store, the
-- other two count pages once, when they are allocated.

script = {
  description = "local vs remote memory accesses per node and process, with their sources",
  args = {},
  events = { "proc.pages_alloc" },
  metrics = { "mem.local_accesses", "mem.remote_accesses", "numa.local", "numa.other" },
}

-- Why a name has nothing to show: memscope.why, or "counted, no value" when the run
-- counted it but never read a value (a replay that leaves it out, a cut recording).
local function why(name)
  return memscope.why(name) or (name .. ": counted, but no value was read in this run")
end

local sums = {}   -- key "name|node" -> sum over frames
local node_labels = {}   -- node -> {node = N}, made once

local function add(name, node)
  local v = memscope.value(name, node and node_labels[node] or nil)
  if v then
    local k = name .. "|" .. tostring(node)
    sums[k] = (sums[k] or 0) + v
  end
end

local function sum(name, node) return sums[name .. "|" .. tostring(node)] end

local function nodes()
  return memscope.topology().nodes or {}
end

local NAMES = { "mem.local_accesses", "mem.remote_accesses", "numa.local", "numa.other",
                "vmstat/numa_local", "vmstat/numa_other" }
local present, placed = nil, nil
local pid_pages = {}   -- pid -> pages placed for it over the run

function on_frame(f)
  if not present then
    -- What this run has does not change: look it up once.
    present, placed = {}, memscope.labels("proc.pages_alloc", "node")
    for _, name in ipairs(NAMES) do if memscope.has(name) then present[#present + 1] = name end end
    for _, n in ipairs(nodes()) do node_labels[n] = { node = n } end
    for _, n in ipairs(placed) do node_labels[n] = { node = n } end
  end
  for _, name in ipairs(present) do
    add(name, nil)
    for _, n in ipairs(nodes()) do add(name, n) end
  end
  for _, n in ipairs(placed) do add("proc.pages_alloc", n) end
  add("proc.pages_alloc", nil)
  -- Per process: processes come and go, so their pids are looked up each frame.
  for _, pid in ipairs(memscope.labels("proc.pages_alloc", "pid")) do
    local v = memscope.value("proc.pages_alloc", { pid = pid })
    if v then pid_pages[pid] = (pid_pages[pid] or 0) + v end
  end
end

local function ratio(remote, loc)
  if not remote or not loc or remote + loc == 0 then return 0 / 0 end
  return remote / (remote + loc)
end

-- Counts are whole numbers: shown without decimals (NaN when missing).
local function int(x) return x and math.floor(x + 0.5) or 0 / 0 end

local function section(title, source, local_name, remote_name, unit)
  local rows = {}
  for _, n in ipairs(nodes()) do
    local l, r = sum(local_name, n), sum(remote_name, n)
    if l or r then rows[#rows + 1] = { tostring(n), int(l), int(r), ratio(r, l) } end
  end
  local l, r = sum(local_name, nil), sum(remote_name, nil)
  if l or r then rows[#rows + 1] = { "all", int(l), int(r), ratio(r, l) } end
  if #rows == 0 then return false end
  memscope.emit { title = title .. " (" .. source .. ")",
    columns = { "node", "local " .. unit, "remote " .. unit, "remote share" }, rows = rows, precision = 4 }
  return true, ratio(r, l)
end

function on_end(run)
  print(string.format("remote_ratio.lua: local vs remote memory (%s %s, %d frames, %.2f s)",
    memscope.source, memscope.source_name, run.frames, run.duration))
  local shown = 0
  -- The one-line answer: the best source this run has (accesses counted by the
  -- PMU beat page allocations counted by the kernel).
  local best, best_source
  local ok, share = section("Memory accesses", "PMU counters through the catalog: mem.local_accesses, mem.remote_accesses",
             "mem.local_accesses", "mem.remote_accesses", "accesses")
  if ok then
    shown = shown + 1
    best, best_source = share, "memory accesses, PMU counters"
  else
    print("  memory accesses: not measured: " .. why("mem.remote_accesses"))
  end

  -- Where the target's pages went: remote for a process is a node it does not run on,
  -- which the probe does not know, so the table shows the placement itself.
  local total = sum("proc.pages_alloc", nil)
  local placed = memscope.labels("proc.pages_alloc", "node")
  if total and #placed > 0 then
    local rows = {}
    for _, n in ipairs(placed) do
      local p = sum("proc.pages_alloc", n) or 0
      rows[#rows + 1] = { n, int(p), total > 0 and p / total or 0 / 0, memscope.bar(p, total, 20) }
    end
    memscope.emit { title = "Pages of the target by node (eBPF page-allocation probe: proc.pages_alloc)",
      columns = { "node", "pages", "share", "" }, rows = rows }
    shown = shown + 1
  else
    print("  page placement of the target: not measured: " .. why("proc.pages_alloc"))
  end

  local lname = memscope.pick("numa.local", "vmstat/numa_local")
  local numa_ok, numa_share = false, nil
  if lname == "numa.local" then
    numa_ok, numa_share = section("Page allocations", "kernel numastat: numa.local, numa.other (whole system)",
                                  "numa.local", "numa.other", "pages")
  elseif lname == "vmstat/numa_local" then
    numa_ok, numa_share = section("Page allocations", "kernel /proc/vmstat numa_local, numa_other (whole system)",
                                  "vmstat/numa_local", "vmstat/numa_other", "pages")
  end
  if numa_ok then
    shown = shown + 1
    if not best then best, best_source = numa_share, "page allocations, kernel numastat, whole system" end
  else
    print("  numastat page allocations: not measured: " .. why("numa.local"))
  end
  -- Per process, when the run has a series per process (memscope record keeps one;
  -- memscope stat does not): where each process's pages went in all.
  local pids = {}
  for pid in pairs(pid_pages) do pids[#pids + 1] = pid end
  table.sort(pids)
  if #pids > 0 then
    local all, rows = 0, {}
    for _, pid in ipairs(pids) do all = all + pid_pages[pid] end
    for _, pid in ipairs(pids) do
      rows[#rows + 1] = { pid, int(pid_pages[pid]), all > 0 and pid_pages[pid] / all or 0 / 0 }
    end
    memscope.emit { title = "Pages by process (eBPF page-allocation probe: proc.pages_alloc)",
      columns = { "pid", "pages", "share" }, rows = rows }
  else
    print("  per process: this run has no per-process series (memscope record keeps one per process; "
      .. "memscope stat does not)")
  end
  if shown == 0 then
    print("  nothing to report: this run counted none of the inputs above (see why on each line)")
  elseif best and best == best then
    print(string.format("remote share: %.4f (%s)", best, best_source))
  else
    print("remote share: not measured (no local/remote split in this run: see above)")
  end
end
