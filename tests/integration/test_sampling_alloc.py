"""record --sample --alloc: heap data named by the line that allocated it.

contrib/bench/heaparrays mallocs a 4 MiB array (COLD-ALLOC) and a 32 MiB array (HOT-ALLOC) and writes
one byte in every page of the hot one only; with --reuse it then mallocs, touches and frees a 4 MiB block
(FIRST-ALLOC) and mallocs another (SECOND-ALLOC) that lands at the same address. The allocator probes are
uprobes through BPF: they need the privileges the BPF source needs.
"""
import json
import pathlib
import re
import resource
import shutil
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, run
from stat_output import counter_output

BENCH = BUILD / "contrib" / "bench"
HEAPARRAYS = BENCH / "heaparrays"
PAGE = 4096


def line_of(marker):
    for number, text in enumerate((ROOT / "contrib" / "bench" / "heaparrays.c").read_text().splitlines(), 1):
        if f"/* {marker} */" in text:
            return number
    raise AssertionError(marker)


def heap_name(mib, marker):
    return f"heap: {mib:.1f} MiB from main (heaparrays.c:{line_of(marker)})"


def record(memscope, tmp_path, *command, options=()):
    rec = tmp_path / "a.rec"
    res = run([memscope, "record", "--no-ctl", "--sample", "page-faults", "--alloc", *options, "-o", str(rec),
               "--", *command])
    assert res.returncode == 0, res.stderr
    return rec, res


def rows_by_obj(memscope, rec):
    res = run([memscope, "report", "--sort", "obj", "--format", "json", "--top", "0", str(rec)])
    assert res.returncode == 0, res.stderr
    j = json.loads(res.stdout)
    return j, {r["keys"]["obj"]: r["samples"] for r in j["rows"]}


def lost(j):
    return sum(n for why, n in j["lost"].items() if why != "throttled")


def test_the_hot_heap_array_is_named_by_its_allocating_line(memscope, tmp_path):
    rec, res = record(memscope, tmp_path, str(HEAPARRAYS))
    assert "--alloc" not in res.stderr, res.stderr   # no reason given: the probes attached
    j, rows = rows_by_obj(memscope, rec)
    hot = heap_name(32, "HOT-ALLOC")
    assert j["rows"][0]["keys"]["obj"] == hot, j["rows"][:3]
    # Every page but the first, which malloc itself touched (its chunk header) before returning.
    pages = 32 * 1024 * 1024 // PAGE - 1
    assert pages <= rows[hot] + lost(j) and rows[hot] <= pages + 2, (rows, j["lost"])
    assert rows[hot] >= 0.9 * j["samples"], (rows, j["samples"])
    # The cold array's one touched page, named by its own line.
    assert rows.get(heap_name(4, "COLD-ALLOC"), 0) == 1 or lost(j), rows
    # The records themselves: one alloc per array, sizes and the caller inside main.
    allocs = [json.loads(line)["alloc"] for line in rec.read_text().splitlines() if line.startswith('{"alloc"')]
    sizes = sorted(a[4] for a in allocs if a[4] >= 4 << 20)
    assert sizes == [4 << 20, 32 << 20], allocs


def test_an_address_reused_after_free_belongs_to_the_second_allocation(memscope, tmp_path):
    rec, res = record(memscope, tmp_path, str(HEAPARRAYS), "--reuse")
    addrs = json.loads(res.stdout)
    assert addrs["first"] == addrs["second"], addrs   # the test needs the address reused
    j, rows = rows_by_obj(memscope, rec)
    first, second = heap_name(4, "FIRST-ALLOC"), heap_name(4, "SECOND-ALLOC")
    pages = 4 * 1024 * 1024 // PAGE - 1
    for name in (first, second):
        assert pages <= rows.get(name, 0) + lost(j) and rows.get(name, 0) <= pages + 2, (name, rows, j["lost"])
    # The free is recorded between them.
    text = rec.read_text()
    addr = addrs["first"][2:].lstrip("0")
    free_at = text.index(f'{{"free":[')
    assert f'"{addr}"' in text[free_at:text.index("\n", free_at)], text[free_at:free_at + 200]


def test_json_csv_and_lua_see_the_heap_object(memscope, tmp_path):
    rec, _ = record(memscope, tmp_path, str(HEAPARRAYS))
    hot = heap_name(32, "HOT-ALLOC")
    res = run([memscope, "report", "--sort", "obj,sym", "--format", "csv", "--top", "1", str(rec)])
    assert res.returncode == 0, res.stderr
    assert hot in res.stdout.splitlines()[1], res.stdout
    script = tmp_path / "heap.lua"
    script.write_text('local n = {}\n'
                      'function on_sample(s) n[s.obj] = (n[s.obj] or 0) + 1 end\n'
                      'function on_end() for k, v in pairs(n) do if k:find("^heap: 32") then '
                      'print("HEAP " .. k .. " " .. v) end end end\n')
    res = run([memscope, "report", "--lua", str(script), str(rec)])
    assert res.returncode == 0, res.stderr
    got = re.search(r"HEAP (.*) (\d+)$", res.stdout, re.M)
    assert got and got.group(1) == hot and int(got.group(2)) >= 0.9 * 8192, res.stdout


def test_a_stripped_static_binary_gives_the_reason_and_sampling_goes_on(memscope, tmp_path):
    rec, res = record(memscope, tmp_path, str(BENCH / "heaparrays-static-stripped"))
    notes = [line for line in res.stderr.splitlines() if "--alloc" in line]
    assert len(notes) == 1 and "no uprobe on malloc" in notes[0] and "sampling goes on" in notes[0], res.stderr
    j, rows = rows_by_obj(memscope, rec)
    assert j["samples"] >= 0.9 * 8192 and not any(k.startswith("heap:") for k in rows), rows


def test_alloc_needs_sample_and_a_size(memscope, tmp_path):
    res = run([memscope, "record", "--no-ctl", "--alloc", "-o", str(tmp_path / "x.rec"), "--", "true"])
    assert res.returncode == 2 and "--alloc" in res.stderr and "--sample" in res.stderr, res.stderr
    res = run([memscope, "record", "--no-ctl", "--sample", "page-faults", "--alloc-min", "4k",
               "-o", str(tmp_path / "x.rec"), "--", "true"])
    assert res.returncode == 2 and "--alloc-min '4k'" in res.stderr, res.stderr


def test_alloc_min_leaves_smaller_blocks_out(memscope, tmp_path):
    rec, _ = record(memscope, tmp_path, str(HEAPARRAYS), options=("--alloc-min", str(8 << 20)))
    sizes = [json.loads(line)["alloc"][4] for line in rec.read_text().splitlines() if line.startswith('{"alloc"')]
    assert sizes == [32 << 20], sizes


def test_a_recording_with_alloc_records_reads_as_before(memscope, tmp_path):
    rec, _ = record(memscope, tmp_path, str(HEAPARRAYS))
    res = run([memscope, "stat", "--input", str(rec)])
    assert res.returncode == 0, res.stderr
    assert "page-faults" in counter_output(res.stderr) or "sample:" in counter_output(res.stderr) or counter_output(res.stderr).strip(), counter_output(res.stderr)
    bad = tmp_path / "bad.rec"
    lines = rec.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('{"alloc"'))
    lines[at] = '{"alloc":[1,2,3,"zz",4096,"1"]}'
    bad.write_text("\n".join(lines) + "\n")
    res = run([memscope, "report", str(bad)])
    assert res.returncode == 1 and re.search(rf"bad\.rec:{at + 1}: address", res.stderr), res.stderr


def test_allocations_do_not_wake_memscope_one_by_one(memscope, tmp_path):
    """20,000 malloc/free pairs of 64 KiB blocks, every one recorded: every allocation and every
    free reaches the recording, while memscope is woken by its read timer, not by each event (the
    probes submit without a wake-up): its voluntary context switches stay far below one per pair."""
    pairs = 20000
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rec, _ = record(memscope, tmp_path, str(HEAPARRAYS), "--churn", str(pairs), "65536")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [json.loads(line) for line in rec.read_text().splitlines()[1:]]
    allocs = [r["alloc"] for r in lines if "alloc" in r and r["alloc"][4] == 65536]
    frees = [r["free"] for r in lines if "free" in r]
    # The churn's blocks, and the free of each; nothing the probes dropped.
    assert len(allocs) == pairs and len(frees) >= pairs, (len(allocs), len(frees))
    switches = after.ru_nvcsw - before.ru_nvcsw
    assert switches < pairs / 10, switches


def test_an_allocating_call_is_kept_in_its_threads_storage_not_a_hash_map(memscope, tmp_path):
    """What a recorded call costs the process beyond the uprobe traps: its size is kept in the
    thread's task storage from entry to return (no hash map update and delete per call), and the
    call's return address is the return probe's instruction pointer (no read of the user stack).
    The maps of the loaded probes say so; the churn's allocations all name the one call site."""
    bpftool = shutil.which("bpftool") or next((p for p in ("/usr/sbin/bpftool", "/sbin/bpftool")
                                                if pathlib.Path(p).exists()), None)
    if not bpftool:
        pytest.skip("bpftool is not installed")
    rec = tmp_path / "churn.rec"
    proc = subprocess.Popen([memscope, "record", "--no-ctl", "--sample", "page-faults", "--alloc", "-o", str(rec),
                             "--", str(HEAPARRAYS), "--churn", "100000", "65536"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    maps = None
    try:
        deadline = time.monotonic() + 60
        while maps is None and time.monotonic() < deadline and proc.poll() is None:
            # The BPF programs memscope holds open (its descriptors' fdinfo names them).
            prog_ids = set()
            for info in pathlib.Path(f"/proc/{proc.pid}/fdinfo").glob("*"):
                try:
                    found = re.search(r"^prog_id:\s+(\d+)", info.read_text(), re.M)
                except OSError:
                    continue
                if found:
                    prog_ids.add(found.group(1))
            for prog_id in prog_ids:
                shown = subprocess.run([bpftool, "prog", "show", "id", prog_id, "--json"], capture_output=True,
                                       text=True)
                prog = json.loads(shown.stdout) if shown.returncode == 0 else {}
                if prog.get("name") != "malloc_enter":
                    continue
                maps = {}
                for map_id in prog.get("map_ids", []):
                    m = json.loads(subprocess.run([bpftool, "map", "show", "id", str(map_id), "--json"],
                                                  capture_output=True, text=True, check=True).stdout)
                    maps[m.get("name", "")] = m["type"]
            time.sleep(0.05)
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert maps, "memscope's malloc_enter program was not seen while it ran"
    assert maps.get("calls") == "task_storage", maps
    assert "hash" not in maps.values(), maps
    allocs = [json.loads(line)["alloc"] for line in rec.read_text().splitlines() if line.startswith('{"alloc"')]
    churned = [a for a in allocs if a[4] == 65536]
    assert len(churned) == 100000, len(churned)
    assert len({a[5] for a in churned}) == 1, {a[5] for a in churned}
