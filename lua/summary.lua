-- summary.lua: what `memscope report` prints without --lua: every series of
-- the run, those of processes that exited before the end included, with what
-- it added up to: a counter its total (the sum of its deltas), a gauge its
-- peak, mean and last value over the frames that read it (never only the
-- last: a gauge read after the target ended says little about the run).

script = { description = "every series over the run: counter totals, gauge peak/mean/last", args = {} }

function on_end(run)
  print(string.format("summary.lua: %s %s, %d frames, %.2f s", memscope.source, memscope.source_name,
    run.frames, run.duration))
  local rows = {}
  local none = ""   -- a cell that does not apply to the series' kind
  for _, s in ipairs(memscope.series()) do
    local labels = {}
    for _, k in ipairs({ "node", "socket", "cpu", "pid", "tid", "instance" }) do
      if s.labels[k] ~= nil then labels[#labels + 1] = k .. "=" .. tostring(s.labels[k]) end
    end
    local total = s.kind == "counter" and (s.total or 0 / 0) or none
    -- counts are whole numbers: shown without decimals
    if type(total) == "number" and total == math.floor(total) then total = math.floor(total) end
    local note = s.unavailable and ("not counted: " .. s.unavailable) or ""
    -- measured for a command or PIDs, a series of the whole machine says so
    if s.whole_system then note = note .. "whole machine, not only the target" end
    if s.ended then
      note = string.format("%s%s%s (pid %s) ended at %.2f s", note, note ~= "" and "; " or "", s.comm or "",
        tostring(s.labels.pid), s.ended)
    end
    rows[#rows + 1] = { s.name, table.concat(labels, ","), s.kind, total, s.peak or none, s.mean or none,
      s.last or none, s.unit, note }
  end
  memscope.emit { title = "Series", columns = { "series", "labels", "kind", "total", "peak", "mean", "last",
    "unit", "note" }, rows = rows }
end
