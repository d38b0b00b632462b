"""The pipeline: every sink runs off the sampling thread behind a bounded queue. A script that is
slower than the interval gets merged frames and says so; the sampler, the recording and stat's
lines keep their pace; totals are the same in every sink; metrics are computed once per frame."""
import json
import os
import pathlib
import re
import statistics

from conftest import run
from stat_output import counter_output, intervals, parse_csv

# Busy for a given CPU time per frame (os.clock: the sandbox has no sleep), adding up the
# page-faults it sees, frame by frame and merged frame by merged frame. The limit per callback is
# wall time: raised, so that a loaded machine (less CPU per second) does not make it illegal.
SLOW_ENV = dict(os.environ, MEMSCOPE_LUA_CPU_MS="20000")
SLOW_SCRIPT = """
frames, faults, covered = 0, 0, 0
function on_frame(f)
  frames = frames + 1
  covered = covered + f.merged
  local v = memscope.value("page-faults")
  if v then faults = faults + v end
  local t = os.clock()
  while os.clock() - t < %(busy)s do end
end
function on_end(run)
  print(string.format("slow.lua: %%d frames covering %%d, page-faults %%d, total %%d", frames, covered,
                      faults, memscope.total("page-faults") or -1))
end
"""


def read_recording(path):
    lines = pathlib.Path(path).read_text().splitlines()
    header = json.loads(lines[0])
    records = [json.loads(line) for line in lines[1:]]
    return header, [r for r in records if "v" in r], [r for r in records if "v" not in r]


def stat_rows(stdout):
    """stat's CSV rows, without the scripts' reports printed after them."""
    return parse_csv("\n".join(l for l in stdout.splitlines()
                               if re.match(r"(time|total|[0-9.]+),", l) and l.count(",") == 6))


def merged_note(stderr, script):
    m = re.search(rf"{re.escape(script)} received (\d+) of (\d+) frames merged \(it fell behind\)", stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


def test_slow_script_never_delays_the_recording(memscope, touchmem, tmp_path):
    """-I 50 with a script busy 300 ms per frame, and record: the file's frames stay 50 ms apart,
    the script says how many frames reached it merged, and both see the same page-faults."""
    script = tmp_path / "slow.lua"
    script.write_text(SLOW_SCRIPT % {"busy": "0.3"})
    rec = tmp_path / "slow.rec"
    # About 2 s of a workload whose page faults are its own: 8 x 16 MB touched, then a sleep.
    res = run([memscope, "record", "-o", str(rec), "-I", "50", "-e", "page-faults", "--lua", str(script),
               "--", touchmem, "16", "--repeat", "8", "--sleep-ms", "1500"], env=SLOW_ENV, timeout=180)
    assert res.returncode == 0, res.stderr
    header, frames, _ = read_recording(rec)
    times = [f["t"] for f in frames]
    gaps = [(b - a) / 1e6 for a, b in zip(times, times[1:])][:-1]   # the last frame is partial
    assert len(gaps) >= 20, times
    # The sampler never waited for the script (which takes 6 intervals per frame): frames stay
    # 50 ms apart. On a quiet machine every gap is within 50 +- 1 ms; a loaded one wakes the
    # sampler late now and then, and the timer's next frame comes that much sooner. So: the median
    # gap is 50 ms, no gap comes near the script's 300 ms, and the frames never drift from the
    # timer's grid (a late frame is late by less than an interval, and catches up).
    assert abs(statistics.median(gaps) - 50) <= 2, gaps
    assert max(gaps) < 150, gaps
    grid = [t - times[0] - 50e6 * k for k, t in enumerate(times[:-1])]
    assert max(abs(g) for g in grid) < 50e6, grid
    note = merged_note(res.stderr, "slow.lua")
    assert note, res.stderr
    merged, handed = note
    # Every frame of the file reached the script, most of them merged (it takes 6 intervals per frame).
    assert handed in (len(frames), len(frames) + 1), (note, len(frames))
    assert merged >= handed // 2, note
    m = re.search(r"slow\.lua: (\d+) frames covering (\d+), page-faults (\d+), total (\d+)", res.stdout)
    assert m, res.stdout
    seen, covered, faults, total = map(int, m.groups())
    assert covered == handed, (covered, note)    # frame.merged says what each one stands for
    # Each frame it took stands for one frame, or for two or more merged ones.
    assert handed - merged < seen <= handed - merged // 2, (seen, note)
    index = [s["name"] for s in header["series"]].index("page-faults")
    recorded = sum(f["v"][index] for f in frames)
    # The same totals on both sides: merging adds counters up, it never loses one.
    assert faults == total == recorded, (faults, total, recorded)
    assert recorded >= 8 * 16 * 256 * 0.95, recorded   # the workload touched 8 x 4096 pages


def test_a_legal_slow_on_frame_does_not_stretch_the_frames(memscope, tmp_path):
    """A 1.5 s on_frame (within the default 2 s limit) at -I 100: stat's lines stay 100 ms apart
    and the run ends with its command, not 1.5 s per frame later."""
    script = tmp_path / "slower.lua"
    script.write_text(SLOW_SCRIPT % {"busy": "1.5"})
    res = run([memscope, "stat", "-x,", "--self-describing", "-I", "100", "-e", "page-faults", "--lua", str(script),
               "--", "sleep", "1.2"], env=SLOW_ENV, timeout=180)
    assert res.returncode == 0, res.stderr
    rows = stat_rows(counter_output(res.stderr))
    times = sorted({float(r["time"]) for r in intervals(rows)})
    assert len(times) >= 11, times
    gaps = [b - a for a, b in zip(times, times[1:])][:-1]
    assert abs(statistics.median(gaps) - 0.1) <= 0.005, gaps
    assert max(gaps) < 0.5, gaps          # the script takes 1.5 s per frame
    assert times[-1] < 1.5, times
    merged, handed = merged_note(res.stderr, "slower.lua")
    assert handed == len(times) and merged >= handed // 2, (merged, handed, len(times))


def test_stat_computes_metrics_once_per_frame(memscope, touchmem):
    """stat -I with -m and --lua: one metric computation per frame, shared by the stat lines and
    the script (which reads the same values)."""
    res = run([memscope, "stat", "-x,", "--self-describing", "-I", "50", "-m", "kernel.faults", "--lua", "faults.lua",
               "--", touchmem, "16", "--repeat", "4", "--sleep-ms", "500"],
              env=dict(os.environ, MEMSCOPE_PIPELINE_STATS="1"))
    assert res.returncode == 0, res.stderr
    m = re.search(r"memscope stat: pipeline: (\d+) frames, (\d+) metric computations", res.stderr)
    assert m, res.stderr
    frames, computed = map(int, m.groups())
    lines = {float(r["time"]) for r in intervals(stat_rows(counter_output(res.stderr)))}
    assert frames >= 5 and computed == frames, (frames, computed)
    assert len(lines) in (frames, frames - 1), (len(lines), frames)   # a last frame of 0 s prints no line
    for sink in ("stat", "lua"):
        s = re.search(rf"sink {sink}: (\d+) frames taken, (\d+) of (\d+) frames merged, (\d+) metric "
                      r"recomputations", res.stderr)
        assert s, res.stderr
        taken, merged, put, recomputed = map(int, s.groups())
        assert put == frames and frames - merged <= taken <= frames, s.group(0)
        # Only a merged frame is computed again (on the sink's thread), never a plain one.
        assert (recomputed > 0) == (merged > 0), s.group(0)


def test_list_sources_says_what_runs_here_and_why_not(memscope, fixtures_dir):
    """Every registered kind of source, with whether it can run on this host and, when not, why."""
    def table(res):
        assert res.returncode == 0, res.stderr
        lines = res.stdout.splitlines()
        assert lines[0].split() == ["SOURCE", "HERE", "READS"], lines[0]
        kinds, why = {}, {}
        for line in lines[1:]:
            if line.startswith(" "):
                why[last] = line.split("why not: ", 1)[1]
            else:
                last = line.split()[0]
                kinds[last] = line.split()[1]
        return kinds, why

    kinds, why = table(run([memscope, "list", "--sources"]))
    assert list(kinds) == ["bpf", "procfs", "damon", "sample", "perf", "replay", "recording"], kinds
    # This process may open its own task clock: perf is here (as it must be for the other tests).
    assert kinds["perf"] == "yes" and kinds["procfs"] == "yes" and kinds["replay"] == "yes"
    if os.geteuid() == 0 and pathlib.Path("/sys/kernel/btf/vmlinux").exists():
        assert kinds["bpf"] == "yes", why
    # Another machine's sysfs tree: nothing of it can be counted here, and the reason says so.
    env = dict(os.environ, MEMSCOPE_SYSFS_ROOT=str(fixtures_dir / "epyc-zen3-2s" / "sys"))
    kinds, why = table(run([memscope, "list", "--sources"], env=env))
    assert kinds["perf"] == "no" and "describes another machine" in why["perf"], why
    assert kinds["sample"] == "no" and "describes another machine" in why["sample"], why
    assert kinds["damon"] == "no" and "describes another machine" in why["damon"], why
    assert kinds["bpf"] == "no" and ("kernel BTF" in why["bpf"] or "CAP_BPF" in why["bpf"]), why
    if os.geteuid() == 0:
        res = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", memscope, "list", "--sources"])
        kinds, why = table(res)
        assert kinds["bpf"] == "no" and "CAP_BPF" in why["bpf"], why
        if pathlib.Path("/sys/kernel/mm/damon/admin").exists():
            assert kinds["damon"] == "no" and "needs root" in why["damon"], why



def test_a_label_reaches_the_recording_and_the_script(memscope, tmp_path):
    """record --lua: a label and a phase sent with memscope ctl go to every sink: into the file, in
    its place between the frames, and to the script's on_label, at the same time."""
    script = tmp_path / "labels.lua"
    script.write_text('function on_label(l)\n'
                      '  print(string.format("seen: %s %s %.3f", l.text, l.phase or "-", l.time))\n'
                      'end\n')
    rec = tmp_path / "labels.rec"
    shell = (f"sleep 0.3; {memscope} ctl label warm up; sleep 0.2; {memscope} ctl phase begin solve; "
             f"sleep 0.2")
    rundir = tmp_path / "run"
    rundir.mkdir(mode=0o700)
    res = run([memscope, "record", "-o", str(rec), "-I", "50", "--lua", str(script), "--", "sh", "-c", shell],
              env=dict(os.environ, XDG_RUNTIME_DIR=str(rundir)))
    assert res.returncode == 0, res.stderr
    seen = re.findall(r"seen: (.+) (\S+) ([0-9.]+)", res.stdout)
    assert [(text, phase) for text, phase, _ in seen] == [("warm up", "-"), ("solve", "begin")], res.stdout
    _, frames, others = read_recording(rec)
    labels = [o for o in others if "label" in o]
    assert [(o["label"], o.get("phase")) for o in labels] == [("warm up", None), ("solve", "begin")]
    # The same instant on both sides (the file in ns from the start, the script in s).
    for (_, _, t), o in zip(seen, labels):
        assert abs(float(t) - o["t"] / 1e9) < 0.0015, (t, o)
    # In its place: after every frame taken before it, before every frame after.
    lines = rec.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"label"' in line)
    assert all(json.loads(line)["t"] <= labels[0]["t"] for line in lines[1:at] if line.startswith('{"t"'))
    assert all(json.loads(line)["t"] >= labels[0]["t"] for line in lines[at + 1:] if line.startswith('{"t"'))
    # A report over the file sees them in the same place among the frames.
    order = tmp_path / "order.lua"
    order.write_text('function on_frame(f) print(string.format("frame %.6f", f.time)) end\n'
                     'function on_label(l) print(string.format("label %.6f %s", l.time, l.text)) end\n')
    res = run([memscope, "report", "--lua", str(order), str(rec)])
    assert res.returncode == 0, res.stderr
    seq = [line.split()[:2] for line in res.stdout.splitlines() if line.startswith(("frame", "label"))]
    for i, (kind, t) in enumerate(seq):
        if kind == "label":
            assert all(float(u) <= float(t) for k, u in seq[:i] if k == "frame"), seq
            assert all(float(u) >= float(t) for k, u in seq[i + 1:] if k == "frame"), seq
    assert [k for k, _ in seq].count("label") == 2


def test_stat_output_that_falls_behind_is_merged_and_said(memscope, touchmem):
    """stat -I 10 writing into a pipe nobody reads for 2 s: its sink falls behind, gets frames
    merged, and the session says how many at the end; the merged lines still add up to the total
    (each covers the intervals it stands for)."""
    import fcntl
    import subprocess
    import time

    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)   # F_SETPIPE_SZ: a page, full after ~90 lines
    proc = subprocess.Popen([memscope, "stat", "-x,", "--self-describing", "-I", "10", "-e", "page-faults", "--",
                             touchmem, "8", "--sleep-ms", "3000"], stdout=subprocess.PIPE, stderr=w)
    os.close(w)
    time.sleep(2.0)
    with os.fdopen(r) as out:
        stderr = out.read()
    proc.communicate(timeout=60)
    stdout = counter_output(stderr)
    assert proc.returncode == 0, stderr
    m = re.search(r"memscope stat: sink stat received (\d+) of (\d+) frames merged \(it fell behind\)", stderr)
    assert m, stderr
    merged, frames = map(int, m.groups())
    rows = stat_rows(stdout)
    lines = intervals(rows)
    total = [r for r in rows if r["time"] == "total"]
    assert merged > 0 and len(total) == 1
    # Each merged line stands for two frames or more; a last frame of 0 s prints no line.
    assert frames - merged <= len(lines) <= frames - merged // 2, (len(lines), merged, frames)
    assert sum(int(r["value"]) for r in lines) == int(total[0]["value"]) > 2048   # 8 MB touched: 2048 faults and more
