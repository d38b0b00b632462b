-- numa_balance.lua: page migrations and automatic NUMA balancing activity:
-- NUMA hinting faults (and how many were local), pages the balancer migrated,
-- all page migrations and their failures (kernel counters, whole system),
-- promotion to faster and demotion to slower memory tiers (each node's counters), and
-- for the target's processes the balancer's task moves and swaps, the
-- cross-node CPU migrations, and per process the pages migrated and the
-- migrations that failed in its context with the kernel's reason (eBPF probes on
-- migrate:mm_migrate_pages).

script = {
  description = "page migrations and NUMA balancing activity",
  args = {},
  events = { "proc.numa_task_moves", "proc.numa_task_swaps", "proc.pages_migrated", "proc.pages_migrate_failed",
             "proc.pages_migrate_failed_by_reason",
             "proc.migrations", "proc.migrations_cross_node" },
  metrics = { "numa.hint_faults", "numa.hint_faults_local", "numa.pages_migrated",
              "kernel.pages_migrated", "kernel.page_migrate_failures", "tier.promoted_pages",
              "tier.demoted_pages", "tier.demoted_pages_kswapd", "tier.demoted_pages_direct" },
}

-- Why a name has nothing to show: memscope.why, or "counted, no value" when the run
-- counted it but never read a value (a replay that leaves it out, a cut recording).
local function why(name)
  return memscope.why(name) or (name .. ": counted, but no value was read in this run")
end

-- Each row: label, then candidate names in order of preference, with where each comes from.
local ROWS = {
  { "NUMA hinting faults", { "numa.hint_faults", "kernel numastat/vmstat numa_hint_faults (system)" },
                           { "vmstat/numa_hint_faults", "/proc/vmstat numa_hint_faults (system)" } },
  { "  of which local", { "numa.hint_faults_local", "kernel vmstat numa_hint_faults_local (system)" },
                        { "vmstat/numa_hint_faults_local", "/proc/vmstat numa_hint_faults_local (system)" } },
  { "pages migrated by NUMA balancing", { "numa.pages_migrated", "kernel vmstat numa_pages_migrated (system)" },
                                        { "vmstat/numa_pages_migrated", "/proc/vmstat numa_pages_migrated (system)" } },
  { "pages migrated (all causes)", { "kernel.pages_migrated", "kernel vmstat pgmigrate_success (system)" },
                                   { "vmstat/pgmigrate_success", "/proc/vmstat pgmigrate_success (system)" },
                                   { "proc.pages_migrated", "eBPF migrate:mm_migrate_pages (target)" } },
  { "page migrations failed", { "kernel.page_migrate_failures", "kernel vmstat pgmigrate_fail (system)" },
                              { "vmstat/pgmigrate_fail", "/proc/vmstat pgmigrate_fail (system)" },
                              { "proc.pages_migrate_failed", "eBPF migrate:mm_migrate_pages (target)" } },
  { "pages promoted to a faster tier", { "tier.promoted_pages", "nodeN/vmstat pgpromote_success (each node)" } },
  { "pages demoted to a slower tier", { "tier.demoted_pages", "nodeN/vmstat pgdemote_* (each node)" } },
  { "  by kswapd (background reclaim)", { "tier.demoted_pages_kswapd", "nodeN/vmstat pgdemote_kswapd (each node)" } },
  { "  by direct reclaim (allocations short of memory)", { "tier.demoted_pages_direct",
                                                           "nodeN/vmstat pgdemote_direct (each node)" } },
  { "task moves by the balancer", { "proc.numa_task_moves", "eBPF sched:sched_move_numa (target)" } },
  { "task swaps by the balancer", { "proc.numa_task_swaps", "eBPF sched:sched_swap_numa (target)" } },
  { "CPU migrations", { "proc.migrations", "eBPF sched:sched_migrate_task (target)" },
                      { "cpu-migrations", "perf software event cpu-migrations (target)" } },
  { "  across nodes", { "proc.migrations_cross_node", "eBPF sched:sched_migrate_task (target)" } },
}

local sums = {}

-- Per process (pid series of the eBPF source, exited processes included): pages migrated and
-- pages whose migration failed in its context, largest first; rows for processes with any.
local function per_process_migrations()
  local by_pid = {}
  for _, name in ipairs({ "proc.pages_migrated", "proc.pages_migrate_failed" }) do
    if memscope.has(name) then
      for _, s in ipairs(memscope.series(name)) do
        if s.labels.pid and not s.labels.tid and s.total and s.total > 0 then
          local p = by_pid[s.labels.pid] or { pid = s.labels.pid, comm = s.comm or "", migrated = 0, failed = 0 }
          if name == "proc.pages_migrated" then p.migrated = s.total else p.failed = s.total end
          by_pid[s.labels.pid] = p
        end
      end
    end
  end
  -- The kernel's reason of each failure (the tracepoint's names), per process.
  if memscope.has("proc.pages_migrate_failed_by_reason") then
    for _, s in ipairs(memscope.series("proc.pages_migrate_failed_by_reason")) do
      local p = s.labels.pid and not s.labels.tid and by_pid[s.labels.pid]
      if p and s.total and s.total > 0 then
        p.reasons = p.reasons or {}
        p.reasons[#p.reasons + 1] = { s.labels.instance, s.total }
      end
    end
  end
  local procs = {}
  for _, p in pairs(by_pid) do
    if p.reasons then
      table.sort(p.reasons, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
      local parts = {}
      for i, r in ipairs(p.reasons) do parts[i] = string.format("%s %d", r[1], math.floor(r[2] + 0.5)) end
      p.why = table.concat(parts, ", ")
    end
    procs[#procs + 1] = p
  end
  table.sort(procs, function(a, b)
    if a.failed ~= b.failed then return a.failed > b.failed end
    if a.migrated ~= b.migrated then return a.migrated > b.migrated end
    return a.pid < b.pid
  end)
  return procs
end

local present = nil    -- the names this run has, looked up once

function on_frame(f)
  if not present then
    present = {}
    for _, row in ipairs(ROWS) do
      for i = 2, #row do
        if memscope.has(row[i][1]) then present[#present + 1] = row[i][1] end
      end
    end
  end
  for _, name in ipairs(present) do
    local v = memscope.value(name)
    if v then sums[name] = (sums[name] or 0) + v end
  end
end

function on_end(run)
  print(string.format("numa_balance.lua: migrations and NUMA balancing (%s %s, %d frames, %.2f s)",
    memscope.source, memscope.source_name, run.frames, run.duration))
  local rows, missing = {}, {}
  for _, row in ipairs(ROWS) do
    local found
    for i = 2, #row do
      if sums[row[i][1]] then found = row[i]; break end
    end
    if found then
      local total = sums[found[1]]
      rows[#rows + 1] = { row[1], math.floor(total + 0.5), run.duration > 0 and total / run.duration or 0 / 0, found[2] }
    else
      rows[#rows + 1] = { row[1], "n/a", "n/a", "not measured" }
      missing[#missing + 1] = "  " .. (why(row[2][1]))
    end
  end
  memscope.emit { title = "Migrations and NUMA balancing", columns = { "activity", "total", "per second", "source" },
    rows = rows, precision = 2 }
  local hf, hl = sums["numa.hint_faults"] or sums["vmstat/numa_hint_faults"],
                 sums["numa.hint_faults_local"] or sums["vmstat/numa_hint_faults_local"]
  if hf and hl and hf > 0 then
    print(string.format("  %.1f%% of NUMA hinting faults were local", 100 * hl / hf))
  elseif hf == 0 then
    print("  no NUMA hinting faults: automatic NUMA balancing was idle or is off (kernel.numa_balancing)")
  end
  -- Why pages are on another node than the CPUs that use them, as far as these counters say.
  local demoted, direct = sums["tier.demoted_pages"], sums["tier.demoted_pages_direct"]
  local failed = sums["kernel.page_migrate_failures"] or sums["vmstat/pgmigrate_fail"]
    or sums["proc.pages_migrate_failed"]
  local promoted = sums["tier.promoted_pages"]
  print("  why pages may be remote:")
  if hf == 0 then
    print("    - no hinting faults: the node of first touch decides where a page lives, and nothing moves it back")
  end
  if demoted and demoted > 0 then
    print(string.format("    - %d pages were demoted under memory pressure to a slower tier (a CPU-less node: remote to "
      .. "every CPU)%s", math.floor(demoted + 0.5),
      direct and direct > 0 and string.format(", %d of them by direct reclaim in allocating tasks",
        math.floor(direct + 0.5)) or ""))
    if not promoted or promoted == 0 then
      print("    - none were promoted back: NUMA balancing's memory tiering mode (numa_balancing 2) was off or idle")
    end
  end
  if failed and failed > 0 then
    print(string.format("    - %d page migrations failed: those pages stayed where they were", math.floor(failed + 0.5)))
  end
  local procs = per_process_migrations()
  for _, p in ipairs(procs) do
    if p.failed > 0 then
      print(string.format("    - pid %d (%s): %d page migrations failed in its context (move_pages, mbind, "
        .. "NUMA balancing or compaction it ran), %d pages migrated%s", p.pid, p.comm, math.floor(p.failed + 0.5),
        math.floor(p.migrated + 0.5), p.why and ("; the kernel's reason: " .. p.why) or ""))
    end
  end
  -- Memory policy (numa_maps/policy_bytes, when recorded): bytes a policy put on each node.
  if memscope.has("numa_maps/policy_bytes") then
    -- The policies as memscope names them (the series' instance label); default and local
    -- place pages where they are first touched, the others by the policy's nodes.
    for _, policy in ipairs({ "preferred", "preferred_many", "bind", "interleave", "weighted_interleave" }) do
      do
        for _, node in ipairs(memscope.labels("numa_maps/policy_bytes", "node")) do
          local bytes = memscope.total("numa_maps/policy_bytes", { instance = policy, node = node })
          if bytes and bytes > 0 then
            print(string.format("    - %s: %.1f MiB on node %d (placed by the memory policy)", policy,
              bytes / 1048576, node))
          end
        end
      end
    end
  end
  if (not demoted or demoted == 0) and (not failed or failed == 0) and hf ~= 0 then
    print("    - no demotion and no failed migration counted")
  end
  if #procs > 0 then
    local rows = {}
    for i, p in ipairs(procs) do
      rows[i] = { p.pid, p.comm, math.floor(p.migrated + 0.5), math.floor(p.failed + 0.5),
        p.why or (p.failed > 0 and "not recorded (-e proc.pages_migrate_failed_by_reason)" or "") }
    end
    memscope.emit { title = "Page migrations per process (eBPF migrate:mm_migrate_pages, in its context)",
      columns = { "pid", "comm", "pages migrated", "pages failed", "failed: the kernel's reason" }, rows = rows }
  end
  if #missing > 0 then
    print("  not measured:")
    for _, m in ipairs(missing) do print(m) end
  end
end
