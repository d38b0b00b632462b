-- remote_hotspots.lua: the source lines and the data objects with the most
-- remote memory accesses, from the samples of `memscope record --sample mem`
-- (page faults with their page's node on any machine; the hardware's own data
-- source where it has one: Intel PEBS, AMD IBS). A sample is remote when the
-- data was served from, or lives on, another node than the CPU that touched it.
script = {
  description = "source lines and data objects with the most remote memory accesses (record --sample mem)",
  args = { { name = "top", default = "10", help = "rows in each table" } },
}

local top = tonumber(memscope.args.top) or 10
local lines, objects = {}, {}
local samples, known, remote = 0, 0, 0

local function count(t, key, is_remote)
  local e = t[key]
  if not e then
    e = { all = 0, remote = 0, nodes = {} }
    t[key] = e
  end
  e.all = e.all + 1
  if is_remote then e.remote = e.remote + 1 end
  return e
end

function on_sample(s)
  samples = samples + 1
  if s.remote == nil then return end   -- the node of the data is not known
  known = known + 1
  if s.remote then remote = remote + 1 end
  count(lines, s.srcline .. " " .. s.sym, s.remote)
  local o = count(objects, s.obj, s.remote)
  if s.node then o.nodes[s.node] = (o.nodes[s.node] or 0) + 1 end
end

local function ranked(t)
  local rows = {}
  for key, e in pairs(t) do
    if e.remote > 0 then rows[#rows + 1] = { key = key, e = e } end
  end
  table.sort(rows, function(a, b)
    if a.e.remote ~= b.e.remote then return a.e.remote > b.e.remote end
    return a.key < b.key
  end)
  return rows
end

local function nodes_text(nodes, all)
  local parts = {}
  for node, n in pairs(nodes) do parts[#parts + 1] = { node, n } end
  table.sort(parts, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, p in ipairs(parts) do out[#out + 1] = string.format("%d:%.0f%%", p[1], 100 * p[2] / all) end
  return table.concat(out, " ")
end

function on_end(run)
  if memscope.format == "text" then
    print(string.format("remote_hotspots.lua: %d samples, %d with a known locality, %d remote (%s %s)",
      samples, known, remote, memscope.source, memscope.source_name))
  end
  if samples == 0 then
    print("  no samples: record with --sample (memscope record --sample mem -- CMD)")
    return
  end
  local rows = {}
  for i, r in ipairs(ranked(lines)) do
    if i > top then break end
    rows[#rows + 1] = { r.key, r.e.remote, 100 * r.e.remote / r.e.all }
  end
  memscope.emit { title = "Source lines with the most remote accesses",
    columns = { "line and function", "remote samples", "remote %" }, rows = rows, precision = 1 }
  rows = {}
  for i, r in ipairs(ranked(objects)) do
    if i > top then break end
    rows[#rows + 1] = { r.key, r.e.remote, 100 * r.e.remote / r.e.all, nodes_text(r.e.nodes, r.e.all) }
  end
  memscope.emit { title = "Data objects with the most remote accesses",
    columns = { "data object", "remote samples", "remote %", "data nodes" }, rows = rows, precision = 1 }
end
