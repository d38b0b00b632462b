-- faults.lua: page faults and where their pages land, per process and NUMA node.
--
-- Fault counts come from the first source the run has: memscope's eBPF fault
-- probes (proc.faults: the target's processes, split user/kernel and
-- read/write), perf's software event page-faults, or the kernel's pgfault
-- count (whole system). Page placement comes from the eBPF page-allocation
-- probe (proc.pages_alloc, per node), else the kernel's numastat (whole system).

script = {
  description = "page faults and page placement per process and NUMA node",
  args = {
    { name = "top", default = "10", help = "processes to list when the run has per-process series" },
    { name = "points", default = "60", help = "width of the fault-rate sparkline" },
  },
  events = { "proc.faults", "proc.faults_user", "proc.faults_kernel", "proc.faults_read",
             "proc.faults_write", "proc.pages_alloc", "page-faults", "major-faults" },
  metrics = { "kernel.faults", "numa.local", "numa.other" },
}

-- Why a name has nothing to show: memscope.why, or "counted, no value" when the run
-- counted it but never read a value (a replay that leaves it out, a cut recording).
local function why(name)
  return memscope.why(name) or (name .. ": counted, but no value was read in this run")
end

local FAULT_SOURCES = {
  { "proc.faults", "eBPF fault probes (the target's processes)" },
  { "page-faults", "perf software event page-faults" },
  { "kernel.faults", "kernel pgfault count (/proc/vmstat, whole system)" },
  { "vmstat/pgfault", "kernel pgfault count (/proc/vmstat, whole system)" },
}
local SPLITS = {
  { "user mode", "proc.faults_user" }, { "kernel mode", "proc.faults_kernel" },
  { "reads", "proc.faults_read" }, { "writes", "proc.faults_write" },
  { "major (I/O)", "major-faults" },
}

local sums = {}            -- name -> sum over frames (series and metrics alike)
local node_pages = {}      -- node -> pages allocated there
local timeline = {}        -- faults per second, per frame
local peak = 0

local function add(name, v)
  if v then sums[name] = (sums[name] or 0) + v end
end

local function fault_source()
  for _, s in ipairs(FAULT_SOURCES) do
    if memscope.has(s[1]) then return s[1], s[2] end
  end
end

-- Label tables and label lists, made at the first frame: on_frame runs at every frame.
local alloc_nodes, topo_nodes, by_node

function on_frame(f)
  if not alloc_nodes then
    alloc_nodes = memscope.labels("proc.pages_alloc", "node")
    topo_nodes, by_node = memscope.topology().nodes or {}, {}
    for _, n in ipairs(alloc_nodes) do by_node[n] = { node = n } end
    for _, n in ipairs(topo_nodes) do by_node[n] = { node = n } end
  end
  for _, s in ipairs(FAULT_SOURCES) do add(s[1], (memscope.value(s[1]))) end
  for _, s in ipairs(SPLITS) do add(s[2], (memscope.value(s[2]))) end
  local name = fault_source()
  local v = name and memscope.value(name)
  if v and f.interval > 0 then
    timeline[#timeline + 1] = v / f.interval
    if v / f.interval > peak then peak = v / f.interval end
  end
  for _, node in ipairs(alloc_nodes) do
    local p = memscope.value("proc.pages_alloc", by_node[node])
    if p then node_pages[node] = (node_pages[node] or 0) + p end
  end
  if #alloc_nodes == 0 then
    for _, node in ipairs(topo_nodes) do
      local p = memscope.value("numa.local", by_node[node])
      if p then node_pages[node] = (node_pages[node] or 0) + p end
    end
  end
end

-- Average the timeline into at most n points for the sparkline.
local function squeeze(values, n)
  if #values <= n then return values end
  local out = {}
  for i = 1, n do
    local lo, hi = math.floor((i - 1) * #values / n) + 1, math.floor(i * #values / n)
    local s = 0
    for j = lo, hi do s = s + values[j] end
    out[i] = s / (hi - lo + 1)
  end
  return out
end

local function int(x) return math.floor(x + 0.5) end

function on_end(run)
  local name, source = fault_source()
  print(string.format("faults.lua: page faults and page placement (%s %s, %d frames, %.2f s)",
    memscope.source, memscope.source_name, run.frames, run.duration))
  if not name then
    print("  no fault counts: " .. why("proc.faults") .. "; page-faults: " .. why("page-faults"))
    print("  fix: run as root for the eBPF probes, or count -e page-faults")
    return
  end
  local total = sums[name] or 0
  local rows = { { "all faults", int(total), 1.0, source } }
  for _, s in ipairs(SPLITS) do
    if memscope.has(s[2]) and sums[s[2]] then
      rows[#rows + 1] = { s[1], int(sums[s[2]]), total > 0 and sums[s[2]] / total or 0 / 0, s[2] }
    end
  end
  memscope.emit { title = "Faults", columns = { "faults", "count", "share", "source" }, rows = rows }

  local avg = run.duration > 0 and total / run.duration or 0 / 0
  memscope.emit { title = "Fault rate", columns = { "avg/s", "peak/s", "over time" },
    rows = { { avg, peak, memscope.sparkline(squeeze(timeline, tonumber(memscope.args.points))) } }, precision = 1 }

  local nodes, all = {}, 0
  for node, pages in pairs(node_pages) do nodes[#nodes + 1] = node; all = all + pages end
  table.sort(nodes)
  if #nodes > 0 then
    local psource = memscope.has("proc.pages_alloc") and "eBPF page allocations (the target's processes)"
      or "numastat local_node (whole system)"
    rows = {}
    for _, node in ipairs(nodes) do
      local p = node_pages[node]
      rows[#rows + 1] = { node, int(p), p * 4096 / 1048576, all > 0 and p / all or 0 / 0,
        memscope.bar(p, all, 20) }
    end
    memscope.emit { title = "Pages allocated per node (" .. psource .. ")",
      columns = { "node", "pages", "MiB", "share", "" }, rows = rows }
  else
    print("  page placement: no per-node counts (" .. why("proc.pages_alloc") .. ")")
  end

  -- Every process the run saw, those that exited before the end included
  -- (memscope.series lists them with their totals and when they ended).
  local procs = {}
  for _, s in ipairs(memscope.series("proc.faults")) do
    if s.labels.pid and not s.labels.tid and s.total then procs[#procs + 1] = s end
  end
  if #procs > 0 then
    table.sort(procs, function(a, b)
      if a.total ~= b.total then return a.total > b.total end
      return a.labels.pid < b.labels.pid
    end)
    rows = {}
    local listed, shown = 0, math.min(#procs, tonumber(memscope.args.top))
    for i = 1, shown do
      local s = procs[i]
      listed = listed + s.total
      rows[i] = { s.labels.pid, s.comm or "", int(s.total), total > 0 and s.total / total or 0 / 0,
        s.ended and string.format("exited at %.2f s", s.ended) or "running at the end" }
    end
    local rest = 0
    for i = shown + 1, #procs do rest = rest + procs[i].total end
    if #procs > shown then
      rows[#rows + 1] = { "others", string.format("%d processes", #procs - shown), int(rest),
        total > 0 and rest / total or 0 / 0, "" }
    end
    -- Faults the total counts but no process series holds (a process the
    -- probes saw before its series could be made); the rows add up to the total.
    local unattributed = total - listed - rest
    if name == "proc.faults" and math.abs(unattributed) >= 0.5 then
      rows[#rows + 1] = { "-", "not attributed to a process", int(unattributed),
        total > 0 and unattributed / total or 0 / 0, "" }
    end
    memscope.emit { title = "Faults per process", columns = { "pid", "comm", "faults", "share", "lifetime" },
      rows = rows }
  else
    print("  per process: this run has no per-process series (its fault counts cover the whole target)")
  end
end
