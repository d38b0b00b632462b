-- summary.lua: what `memscope report` prints without --lua: every series of
-- the run with its total (counters) or last value (gauges), and its labels.

script = { description = "every series over the run: totals and last values", args = {} }

function on_end(run)
  print(string.format("summary.lua: %s %s, %d frames, %.2f s", memscope.source, memscope.source_name,
    run.frames, run.duration))
  local rows = {}
  for _, s in ipairs(memscope.series()) do
    local labels = {}
    for _, k in ipairs({ "node", "socket", "cpu", "pid", "tid", "instance" }) do
      if s.labels[k] ~= nil then labels[#labels + 1] = k .. "=" .. tostring(s.labels[k]) end
    end
    local total = memscope.total(s.name, s.labels)
    -- counts are whole numbers: shown without decimals
    if total and s.kind == "counter" and total == math.floor(total) then total = math.floor(total) end
    rows[#rows + 1] = { s.name, table.concat(labels, ","), s.kind, total or 0 / 0, s.unit,
      s.unavailable and ("not counted: " .. s.unavailable) or "" }
  end
  memscope.emit { title = "Series", columns = { "series", "labels", "kind", "total", "unit", "note" }, rows = rows }
end
