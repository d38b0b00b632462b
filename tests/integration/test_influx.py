"""--influx FILE: every frame in InfluxDB line protocol, checked field by field against what the
same run of memscope stat prints (-x), and through a recording."""
import csv
import re
import shutil
import time

from conftest import run
from stat_output import counter_output, intervals, parse_csv, totals

PAGE = 4096


def split_unescaped(text, sep):
    """text split at each sep that no backslash escapes (the escapes kept)."""
    parts, cur, i = [], "", 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            cur += text[i:i + 2]
            i += 2
            continue
        if text[i] == sep:
            parts.append(cur)
            cur = ""
        else:
            cur += text[i]
        i += 1
    parts.append(cur)
    return parts


def unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def parse_line(line):
    """(measurement, {tag: value}, {field: int}, timestamp) of one line, checking its form."""
    head, fields, stamp = split_unescaped(line, " ")
    measurement, *tags = split_unescaped(head, ",")
    tag_map = {}
    for t in tags:
        key, value = split_unescaped(t, "=")
        tag_map[unescape(key)] = unescape(value)
    assert list(tag_map) == sorted(tag_map), line          # sorted by key, as InfluxDB stores them
    field_map = {}
    for f in split_unescaped(fields, ","):
        key, value = f.split("=")
        assert re.fullmatch(r"\d+i", value), line           # integers, with the i suffix
        field_map[key] = int(value[:-1])
    assert re.fullmatch(r"\d{19}", stamp), line              # nanoseconds since the epoch
    return unescape(measurement), tag_map, field_map, int(stamp)


def read_lines(path):
    text = path.read_text()
    assert text.endswith("\n"), text[-200:]
    return [parse_line(l) for l in text.splitlines()]


def frames(lines):
    """The lines grouped by timestamp, in file order: [(timestamp, {measurement: (tags, fields)})]."""
    out = []
    for m, tags, fields, stamp in lines:
        if not out or out[-1][0] != stamp:
            assert not out or stamp > out[-1][0], "timestamps go back"
            out.append((stamp, {}))
        out[-1][1][m] = (tags, fields)
    return out


def test_interval_lines_match_stat_csv_field_by_field(memscope, touchmem, tmp_path):
    lp = tmp_path / "run.lp"
    before = time.time_ns()
    res = run([memscope, "stat", "-x,", "--self-describing", "-I", "100", "-e", "page-faults,context-switches",
               "--influx", str(lp), "--", touchmem, "50", "--sleep-ms", "300"])
    after = time.time_ns()
    assert res.returncode == 0, res.stderr
    rows = parse_csv(counter_output(res.stderr))
    times = sorted({float(r["time"]) for r in intervals(rows)})
    got = frames(read_lines(lp))
    # A line per event and frame, a frame per interval line of stat.
    assert len(got) == len(times) >= 3, (len(got), times)
    for (stamp, series), t in zip(got, times):
        assert before <= stamp <= after, (before, stamp, after)
        assert set(series) == {"page-faults", "context-switches"}, series
        for event, (tags, fields) in series.items():
            row = [r for r in intervals(rows) if float(r["time"]) == t and r["event"] == event][0]
            assert tags == {}, tags                              # the command's total: no labels
            assert fields["value"] == row["value"], (event, t, fields, row)
            assert set(fields) == {"value", "enabled_ns", "running_ns"}, fields
            assert fields["running_ns"] == fields["enabled_ns"], fields   # software events: never multiplexed
    # The frames are as far apart as stat's interval times (printed to the microsecond).
    for k in range(1, len(got)):
        assert abs((got[k][0] - got[k - 1][0]) / 1e9 - (times[k] - times[k - 1])) <= 2e-6, (got[k], times[k])
    # Their sum is stat's total, and the child's pages are in it.
    t = totals(rows)
    for event in ("page-faults", "context-switches"):
        assert sum(series[event][1]["value"] for _, series in got) == t[("total", event)], event
    assert abs(t[("total", "page-faults")] - 50 * 1024 * 1024 // PAGE) <= 0.02 * 50 * 1024 * 1024 // PAGE


def test_totals_match_perf_csv_fields_and_a_name_with_a_comma_is_escaped(memscope, touchmem, tmp_path):
    """Without -I one frame, the run's: its value and running time are perf -x's count and runtime.
    The event's name holds a comma and equals signs: the measurement escapes the comma only."""
    lp = tmp_path / "run.lp"
    event = "software/config=2,config1=0/"      # page-faults, spelt with its PMU's terms
    res = run([memscope, "stat", "-x,", "-e", f"page-faults,{event}", "--influx", str(lp), "--", touchmem, "20"])
    assert res.returncode == 0, res.stderr
    perf = {}
    for line in counter_output(res.stderr).splitlines():
        f = next(csv.reader([line]))
        if len(f) > 4:
            perf[f[2]] = (int(f[0]), int(f[3]))
    raw = lp.read_text().splitlines()
    assert len(raw) == 2, raw
    assert raw[1].startswith("software/config=2\\,config1=0/ value="), raw[1]
    got = {m: fields for m, _, fields, _ in (parse_line(l) for l in raw)}
    assert set(got) == {"page-faults", event} == set(perf), (got, perf)
    for name, (count, runtime) in perf.items():
        assert got[name]["value"] == count and got[name]["running_ns"] == runtime, (name, got[name], perf[name])
    assert abs(perf["page-faults"][0] - 20 * 1024 * 1024 // PAGE) <= 0.03 * 20 * 1024 * 1024 // PAGE


def test_tags_escape_a_thread_name_with_space_comma_and_equals(memscope, touchmem, tmp_path):
    """--per-thread: a series per thread, tagged comm, pid and tid; the name is the program's."""
    prog = tmp_path / "t m,x=1"
    shutil.copy(touchmem, prog)
    lp = tmp_path / "run.lp"
    res = run([memscope, "stat", "-x,", "--per-thread", "-e", "proc.faults", "--influx", str(lp), "--", str(prog), "10"])
    assert res.returncode == 0, res.stderr
    row = [l for l in counter_output(res.stderr).splitlines() if l.startswith('"t m,x=1-')]
    assert len(row) == 1, res.stderr
    fields = next(csv.reader(row))
    pid, count = int(fields[0].rsplit("-", 1)[1]), int(fields[1])
    raw = [l for l in lp.read_text().splitlines() if ",comm=" in l]
    assert len(raw) == 1 and raw[0].startswith("proc.faults,comm=t\\ m\\,x\\=1,pid="), raw
    m, tags, fields, _ = parse_line(raw[0])
    assert (m, tags) == ("proc.faults", {"comm": "t m,x=1", "pid": str(pid), "tid": str(pid)}), (m, tags)
    assert fields["value"] == count >= 10 * 1024 * 1024 // PAGE, (fields, count)


def test_record_and_its_input_write_the_same_frames(memscope, touchmem, tmp_path):
    """record --influx writes each frame as it records it; stat --input of the file writes the same
    values, stamped with the recording's own start."""
    rec, live_lp, replay_lp = tmp_path / "run.rec", tmp_path / "live.lp", tmp_path / "input.lp"
    res = run([memscope, "record", "--no-ctl", "-o", str(rec), "-I", "100", "-e", "page-faults", "--influx",
               str(live_lp), "--", touchmem, "30", "--sleep-ms", "250"])
    assert res.returncode == 0, res.stderr
    res = run([memscope, "stat", "-x,", "--input", str(rec), "-I", "100", "--influx", str(replay_lp)])
    assert res.returncode == 0, res.stderr
    live, replay = frames(read_lines(live_lp)), frames(read_lines(replay_lp))
    assert len(live) == len(replay) >= 3, (len(live), len(replay))
    for (t1, s1), (t2, s2) in zip(live, replay):
        assert s1["page-faults"][1]["value"] == s2["page-faults"][1]["value"], (s1, s2)
        assert abs(t1 - t2) < 50_000_000, (t1, t2)   # the same frame: the writer's start and the run's
    assert sum(s["page-faults"][1]["value"] for _, s in live) >= 30 * 1024 * 1024 // PAGE


def test_a_file_that_cannot_be_made_is_a_runtime_error_and_twice_a_usage_error(memscope, touchmem, tmp_path):
    res = run([memscope, "stat", "-e", "page-faults", "--influx", str(tmp_path / "no" / "x.lp"), "--", touchmem, "1"])
    assert res.returncode == 1, res.stderr
    assert f"memscope stat: --influx {tmp_path}/no/x.lp: cannot create it: No such file or directory" in res.stderr
    res = run([memscope, "record", "--influx", "a.lp", "--influx", "b.lp", "--", touchmem, "1"], cwd=tmp_path)
    assert res.returncode == 2 and "memscope record: --influx is given once" in res.stderr, res.stderr
    assert not (tmp_path / "a.lp").exists()
