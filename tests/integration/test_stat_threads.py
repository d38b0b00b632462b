"""stat --per-thread names each thread (perf's comm-TID), live and from a recording made with
record --per-thread; each row's count is what that thread itself touched."""
import json
import re

from conftest import run
from stat_output import counter_output, perf_count

# 2 threads now and 1 more after 200 ms, each touching 4 MB every 100 ms from 100 ms until 800 ms.
WORKLOAD_ARGS = ["2", "1", "200", "800", "4", "100"]


def workload(build_dir):
    return [str(build_dir / "contrib" / "bench" / "threads")] + WORKLOAD_ARGS


def own_lines(stdout):
    """What the workload printed (its pid, each thread's name, tid and pages) and memscope's lines."""
    pid = int(re.search(r"^ready (\d+)$", stdout, re.M).group(1))
    threads = {name: (int(tid), int(pages))
               for name, tid, pages in re.findall(r"^thread (\S+) (\d+) (\d+)$", stdout, re.M)}
    rest = [line for line in stdout.splitlines() if not re.match(r"^(ready|thread|pages) ", line)]
    return pid, threads, rest


def check_rows(rows, pid, threads):
    """rows: {"comm-tid": faults}. One row per thread, named by its own name and tid; a worker's
    faults are the pages it touched (plus its stack and start-up), the main thread's few."""
    assert set(threads) == {"early0", "early1", "late0"}, threads
    want = {f"{name}-{tid}" for name, (tid, _) in threads.items()} | {f"threads-{pid}"}
    assert set(rows) == want, (rows, threads)
    for name, (tid, pages) in threads.items():
        assert pages >= 1024, threads
        faults = rows[f"{name}-{tid}"]
        assert pages <= faults <= pages * 1.02 + 64, (name, faults, pages)
    assert rows[f"threads-{pid}"] < 1024, rows


def csv_rows(lines, event="proc.faults"):
    """perf's -x, shape: thread,counter-value,unit,event,..."""
    rows = {}
    for line in lines:
        fields = line.split(",")
        if len(fields) > 3 and fields[3] == event:
            assert fields[0] not in rows, f"two rows for {fields[0]}"
            rows[fields[0]] = int(fields[1])
    return rows


def test_per_thread_rows_carry_each_threads_name(memscope, build_dir):
    res = run([memscope, "stat", "-x,", "-e", "proc.faults", "--per-thread", "--"] + workload(build_dir))
    assert res.returncode == 0, res.stderr
    pid, threads, rest = own_lines(res.stdout + counter_output(res.stderr))
    check_rows(csv_rows(rest), pid, threads)


def test_per_thread_names_in_text_and_json(memscope, build_dir):
    res = run([memscope, "stat", "-e", "proc.faults", "--per-thread", "--"] + workload(build_dir))
    assert res.returncode == 0, res.stderr
    pid, threads, rest = own_lines(res.stdout + counter_output(res.stderr))
    text = {}
    for line in rest:
        # perf's lines: comm right-aligned to the dash, tid, the count, the event.
        m = re.match(r"^ *(\S+-\d+)\s+([\d,]+)      proc\.faults$", line)
        if m:
            text[m.group(1)] = int(m.group(2).replace(",", ""))
    check_rows(text, pid, threads)

    res = run([memscope, "stat", "-j", "-e", "proc.faults", "--per-thread", "--"] + workload(build_dir))
    assert res.returncode == 0, res.stderr
    pid, threads, rest = own_lines(res.stdout + counter_output(res.stderr))
    objs = [json.loads(line) for line in rest if line.startswith("{")]
    check_rows({o["thread"]: perf_count(o["counter-value"]) for o in objs if o["event"] == "proc.faults"}, pid, threads)

    # The self-describing JSON keeps the tid as a number and adds the name.
    res = run([memscope, "stat", "-j", "--self-describing", "-e", "proc.faults", "--per-thread", "--"]
              + workload(build_dir))
    assert res.returncode == 0, res.stderr
    pid, threads, rest = own_lines(res.stdout + counter_output(res.stderr))
    doc = [json.loads(line) for line in rest if line.startswith("{")][-1]
    named = {(r["tid"], r["comm"]) for r in doc["rows"] if "tid" in r}
    assert named == {(tid, name) for name, (tid, _) in threads.items()} | {(pid, "threads")}, named


def test_per_thread_from_a_recording(memscope, build_dir, tmp_path):
    rec = tmp_path / "threads.rec"
    res = run([memscope, "record", "--per-thread", "-o", str(rec), "-I", "200", "-e", "proc.faults", "--"]
              + workload(build_dir))
    assert res.returncode == 0, res.stderr
    pid, threads, _ = own_lines(res.stdout)
    res = run([memscope, "stat", "-x,", "--input", str(rec), "--per-thread"])
    assert res.returncode == 0, res.stderr
    check_rows(csv_rows(counter_output(res.stderr).splitlines()), pid, threads)
    # Lines by interval add up to the totals, thread by thread.
    res_i = run([memscope, "stat", "-x,", "--input", str(rec), "--per-thread", "-I", "400"])
    assert res_i.returncode == 0, res_i.stderr
    sums = {}
    for line in counter_output(res_i.stderr).splitlines():
        fields = line.split(",")
        if len(fields) > 4 and fields[4] == "proc.faults":
            sums[fields[1]] = sums.get(fields[1], 0) + int(fields[2])
    assert sums == csv_rows(counter_output(res.stderr).splitlines())


def test_per_thread_from_a_recording_without_thread_series_names_the_recording(memscope, build_dir, tmp_path):
    rec = tmp_path / "process.rec"
    res = run([memscope, "record", "-o", str(rec), "-e", "proc.faults", "--"] + workload(build_dir))
    assert res.returncode == 0, res.stderr
    res = run([memscope, "stat", "--input", str(rec), "--per-thread"])
    assert res.returncode == 2
    assert res.stdout == "" and counter_output(res.stderr) == ""
    assert f"not in this recording ({rec})" in res.stderr
    assert "memscope record --per-thread" in res.stderr
    # Not a live-host cause: nothing about eBPF or perf counts of a process.
    assert "eBPF" not in res.stderr and "perf" not in res.stderr


def test_per_thread_counts_perf_events_of_a_command(memscope, touchmem):
    """perf's --per-thread for any event: the command's own counters (its children inherit them),
    one row named comm-TID, the count of the pages it touched."""
    res = run([memscope, "stat", "-x,", "--per-thread", "-e", "page-faults,task-clock", "--", touchmem, "8"])
    assert res.returncode == 0, res.stderr
    rows = [line.split(",") for line in counter_output(res.stderr).splitlines() if line]
    assert [r[3] for r in rows] == ["page-faults", "task-clock"], rows
    assert rows[0][0] == rows[1][0] and re.fullmatch(r"\S+-\d+", rows[0][0]), rows
    assert 2048 <= int(rows[0][1]) <= 2048 * 1.05 + 200, rows      # 8 MB: 2048 pages
    assert rows[1][2] == "msec" and float(rows[1][1]) > 0, rows


def test_per_thread_system_wide_has_a_line_per_counting_thread(memscope, touchmem):
    """--per-thread -a: every thread of the system, those that counted nothing left out (perf's);
    the workload's faults are among them; perf's CSV fields (7 separators)."""
    res = run([memscope, "stat", "-x,", "--per-thread", "-a", "-e", "page-faults", "--", touchmem, "8"])
    assert res.returncode == 0, res.stderr
    rows = [line.split(",") for line in counter_output(res.stderr).splitlines() if line]
    assert rows and all(len(r) == 8 and r[3] == "page-faults" and int(r[1]) > 0 for r in rows), rows
    # The workload's thread has its line, named as when counting began (before its exec, as
    # perf names it), with its faults. Names are not asserted unique: on a busy machine a thread
    # id may be reused under the same name within the run.
    assert any(r[0].startswith("memscope-") and int(r[1]) >= 2048 for r in rows), rows
    # perf's thread lines (name-TID first; not its "Couldn't resolve comm name" notes) have the
    # same 7 separators.
    theirs = run(["perf", "stat", "-x,", "--per-thread", "-a", "-e", "page-faults", "sleep", "0.01"]).stderr
    assert {line.count(",") for line in theirs.splitlines() if re.match(r"[^,]*-\d+,", line)} == {7}, theirs


def test_per_thread_system_wide_leaves_out_a_zombie(memscope, touchmem):
    """A zombie (ended, not yet reaped) is listed in /proc but has no counters to open: it is left
    out, as perf leaves it out, rather than failing the run."""
    import subprocess
    import time
    zombie = subprocess.Popen(["true"])
    try:
        for _ in range(100):
            with open(f"/proc/{zombie.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.01)
        res = run([memscope, "stat", "-x,", "--per-thread", "-a", "-e", "page-faults", "--", touchmem, "8"])
        assert res.returncode == 0, res.stderr
        assert not any(line.startswith(f"true-{zombie.pid},") for line in counter_output(res.stderr).splitlines())
        assert max(int(line.split(",")[1]) for line in counter_output(res.stderr).splitlines() if line) >= 2048
    finally:
        zombie.wait()
