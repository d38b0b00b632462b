"""record --sample and report --sort on this machine: page faults sampled with
their addresses, attributed to the code (symbol, source line, binary, call
chain) and the data object, with the node of each page. The workload is
contrib/bench/hotarray: a known function writing one byte in every page of a
known array, so the number of its samples is known (one fault per page)."""
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, run
from test_record import runtime_dir, wait_for_frames, wait_for_socket  # noqa: F401 (runtime_dir: a fixture)

HOTARRAY = BUILD / "contrib" / "bench" / "hotarray"
STRIPPED = BUILD / "contrib" / "bench" / "hotarray-stripped"
PAGE = os.sysconf("SC_PAGE_SIZE")


def marked_line(source, marker="/* HOT-LINE */"):
    for number, text in enumerate((ROOT / "contrib" / "bench" / source).read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(f"no {marker} in {source}")


def call_line(text):
    for number, line in enumerate((ROOT / "contrib" / "bench" / "hotarray.c").read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(text)


def record(memscope, tmp_path, *command, sample="page-faults", options=(), name="s.rec", check=True):
    rec = tmp_path / name
    res = run([memscope, "record", "--no-ctl", "--sample", sample, *options, "-o", str(rec), "--", *command])
    if check:
        assert res.returncode == 0, res.stderr
    return rec, res


def report(memscope, rec, sort, *extra):
    res = run([memscope, "report", "--sort", sort, "--format", "json", "--top", "0", *extra, str(rec)])
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def build_id(path):
    out = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, check=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def test_hot_function_and_array_lead_the_report(memscope, tmp_path):
    mib = 32
    rec, res = record(memscope, tmp_path, str(HOTARRAY), str(mib))
    assert re.search(r"memscope record: \d+ samples", res.stderr), res.stderr
    j = report(memscope, rec, "sym,srcline,obj")
    top = j["rows"][0]
    assert top["keys"] == {"sym": "fill_table", "srcline": f"hotarray.c:{marked_line('hotarray.c')}",
                           "obj": "table (hotarray)"}, top
    # One fault per page of the table (THP is off in hotarray), each sampled (-c 1 by default).
    pages = mib * 1024 * 1024 // PAGE
    # A sampling thread kept off the CPU long enough (a loaded machine) lets the kernel's ring fill:
    # those samples are counted as lost, never silently missing.
    lost = sum(n for why, n in j["lost"].items() if why != "throttled")
    assert pages <= top["samples"] + lost and top["samples"] <= pages + 2, (top, j["lost"])
    assert top["samples"] >= 0.9 * j["samples"], j["samples"]
    # Its caller, at the line that calls it.
    assert top["call_chains"][0]["chain"].startswith(f"main (hotarray.c:{call_line('fill_table(p, mib')})"), top
    # Every page's node was read (this machine has one node), or the reason is counted.
    assert top["data_nodes"].get("0", 0) + top["data_nodes"].get("?", 0) == top["samples"]
    assert sum(j["node_from"].values()) == j["samples"]
    assert set(j["lost"]) == {"ring_full", "kernel", "throttled", "undelivered", "behind"}


COW_WORKLOAD = """
import mmap, os, time
n = 8 << 20
m = mmap.mmap(-1, n)
for i in range(0, n, 4096):
    m[i] = 1                  # first touch: one fault per page
pid = os.fork()
if pid == 0:
    for i in range(0, n, 4096):
        m[i] = 2              # copy on write: one fault per page, a new page each
    time.sleep(0.3)
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_nodes_of_faulting_pages_bound_to_node_0(memscope, tmp_path):
    """Memory bound to node 0 (numactl --membind=0): every sampled page of the
    8 MiB buffer, first touched by the parent and copied on write by its child,
    is on node 0, read after the batch from the page itself. None comes from the
    fault's physical address: for a copy on write that is the old page's."""
    if not shutil.which("numactl"):
        pytest.skip("numactl is not installed")
    script = tmp_path / "cow.py"
    script.write_text(COW_WORKLOAD)
    rec, _ = record(memscope, tmp_path, "numactl", "--membind=0", "python3", str(script))
    j = report(memscope, rec, "pid,obj")
    rows = [r for r in j["rows"] if r["keys"]["obj"].startswith("[anon") and " 8.0 MiB " in r["keys"]["obj"]]
    assert len({r["keys"]["pid"] for r in rows}) == 2, rows
    lost = sum(n for why, n in j["lost"].items() if why != "throttled")
    for row in rows:
        assert row["data_nodes"] == {"0": row["samples"]}, row
        assert row["samples"] == 8 * 1024 * 1024 // PAGE or lost > 0, (row, j["lost"])
    assert "phys" not in j["node_from"], j["node_from"]
    assert j["node_from"].get("page", 0) >= sum(r["samples"] for r in rows), j["node_from"]


def test_the_recording_keeps_what_perf_would_see(memscope, tmp_path):
    """The frames count the same faults the samples show (sample: series), and
    the header says how the event was opened."""
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "8")
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    header = lines[0]
    assert header["version"] == 5
    ev = header["sampling"]["events"][0]
    assert ev["event"] == "page-faults" and ev["decode"] == "page-fault" and ev["period"] == 1, ev
    assert ev["callchain"] is True
    names = [s["name"] for s in header["series"]]
    taken, faults = names.index("sample:page-faults"), names.index("page-faults")
    frames = [rec_ for rec_ in lines if "v" in rec_]
    samples = [rec_ for rec_ in lines if "s" in rec_]
    assert sum(f["v"][taken] for f in frames) == len(samples)
    # The counter and the sampled event are the same event on the same task: one sample per fault.
    counted = sum(f["v"][faults] for f in frames)
    assert abs(counted - len(samples)) <= 2, (counted, len(samples))
    # Mappings come from the kernel (MMAP2 with build-ids) for a command memscope starts.
    maps = [rec_["map"] for rec_ in lines if "map" in rec_]
    assert any(m[8] == str(HOTARRAY) for m in maps)
    assert any(rec_.get("b") == build_id(HOTARRAY) for rec_ in lines if "map" in rec_)


def test_shared_library_resolves(memscope, tmp_path):
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "16", "--lib")
    top = report(memscope, rec, "sym,srcline,dso,obj")["rows"][0]
    assert top["keys"] == {"sym": "hotlib_fill", "srcline": f"hotlib.c:{marked_line('hotlib.c')}",
                           "dso": "libhotlib.so", "obj": "table (hotarray)"}, top
    assert top["call_chains"][0]["chain"].startswith(f"main (hotarray.c:{call_line('hotlib_fill(p, mib')})")


def test_pie_binary_and_anonymous_memory_resolve(memscope, tmp_path):
    # The workload is position-independent: ELF type ET_DYN (3) at offset 16.
    assert HOTARRAY.read_bytes()[16] == 3
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "16", "--malloc")
    j = report(memscope, rec, "sym,obj")
    top = j["rows"][0]
    assert top["keys"]["sym"] == "fill_table", top
    # A malloc this large is its own anonymous mapping, named by address and size
    # (its first page holds malloc's header, touched before fill_table runs).
    assert re.fullmatch(r"\[anon 0x[0-9a-f]+ 16\.0 MiB rw-\]", top["keys"]["obj"]), top
    assert top["samples"] >= 16 * 1024 * 1024 // PAGE - 1


def test_stripped_binary_is_unknown_with_its_build_id(memscope, tmp_path):
    rec, _ = record(memscope, tmp_path, str(STRIPPED), "16")
    j = report(memscope, rec, "sym,dso")
    top = j["rows"][0]
    assert top["keys"]["dso"] == "hotarray-stripped", top
    assert top["keys"]["sym"] == f"[unknown] (hotarray-stripped build-id {build_id(STRIPPED)})", top
    assert top["samples"] >= 0.9 * j["samples"]


def test_report_never_opens_a_fifo_or_device_a_recording_names(memscope, tmp_path):
    """A recording is anyone's file: the binaries its mappings name are opened only when they are
    regular files. A FIFO (which used to hang report for ever), a link to one and a device are
    refused without being opened; their samples are unknown, with the build-id."""
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "16")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "to-fifo").symlink_to(fifo)
    os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    for name in ("fifo", "to-fifo", "null"):
        lines = [json.loads(line) for line in rec.read_text().splitlines()]
        for line in lines:
            if "map" in line and line["map"][8] == str(HOTARRAY):
                line["map"][8] = str(tmp_path / name)
        named = tmp_path / f"{name}.rec"
        named.write_text("".join(json.dumps(line) + "\n" for line in lines))
        start = time.monotonic()
        res = run([memscope, "report", "--sort", "sym,dso", "--format", "json", "--top", "0", str(named)], timeout=60)
        assert res.returncode == 0, res.stderr
        assert time.monotonic() - start < 50
        top = json.loads(res.stdout)["rows"][0]
        assert top["keys"]["dso"] == name, top
        assert top["keys"]["sym"] == f"[unknown] ({name} build-id {build_id(HOTARRAY)})", top
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_new_user_report_names_the_line_and_the_array(memscope, tmp_path):
    """memscope record --sample mem -- ./app && memscope report --sort sym,obj,node"""
    res = run([memscope, "record", "--no-ctl", "--sample", "mem", "--", str(HOTARRAY), "16"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    explain = run([memscope, "list", "--explain", "sample.mem"])
    used = re.search(r"this host uses: (.*)", explain.stdout).group(1)
    header = json.loads((tmp_path / "memscope.rec").read_text().splitlines()[0])
    assert [e["event"] for e in header["sampling"]["events"]] == used.split(", ")
    res = run([memscope, "report", "--sort", "sym,obj,node"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines() if not line.startswith("#")]
    assert "Symbol" in rows[0] and "Data object" in rows[0] and "Data node" in rows[0]
    assert "fill_table" in rows[1] and "table (hotarray)" in rows[1], res.stdout
    # The line: where in fill_table the samples are.
    assert f"at hotarray.c:{marked_line('hotarray.c')}" in res.stdout, res.stdout
    # Without --sort a recording with samples is reported by the same keys.
    default = run([memscope, "report"], cwd=tmp_path)
    assert default.returncode == 0 and default.stdout == res.stdout


def test_text_csv_and_samples_agree(memscope, tmp_path):
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "8")
    j = report(memscope, rec, "sym,obj")
    csv = run([memscope, "report", "--sort", "sym,obj", "--format", "csv", "--top", "0", str(rec)])
    assert csv.returncode == 0, csv.stderr
    head, first = csv.stdout.splitlines()[:2]
    assert head.startswith("samples,percent,remote,local,unknown,remote_percent,sym,obj,")
    assert first.split(",")[0] == str(j["rows"][0]["samples"])
    listed = run([memscope, "report", "--samples", "--format", "json", str(rec)])
    samples = json.loads(listed.stdout)
    assert len(samples) == j["samples"]
    hot = [s for s in samples if s["sym"] == "fill_table"]
    assert len(hot) == j["rows"][0]["samples"]
    # Each sample's address lies in the page it faulted on, one page each.
    assert len({int(s["addr"], 16) // PAGE for s in hot}) == len(hot)


def test_sampling_event_the_host_lacks_leaves_counting(memscope, tmp_path):
    rec = tmp_path / "nopmu.rec"
    res = run([memscope, "record", "--no-ctl", "--sample", "nosuchpmu/event=0x1/", "-e", "page-faults", "-o",
               str(rec), "--", str(HOTARRAY), "4"])
    assert res.returncode == 0, res.stderr
    assert "sampling event 'nosuchpmu/event=0x1/' is not available on this host" in res.stderr, res.stderr
    assert "counting goes on without samples" in res.stderr
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    names = [s["name"] for s in lines[0]["series"]]
    faults = sum(f["v"][names.index("page-faults")] for f in lines if "v" in f)
    assert faults >= 4 * 1024 * 1024 // PAGE
    rep = run([memscope, "report", "--sort", "sym", str(rec)])
    assert rep.returncode == 1
    assert "no samples" in rep.stderr and "nosuchpmu/event=0x1/" in rep.stderr, rep.stderr


def test_lost_samples_are_reported(memscope, tmp_path):
    # One data page per ring, read every 5 ms and when half of it is written:
    # the ring fills between two reads, as under a heavy fault rate.
    rec, res = record(memscope, tmp_path, str(HOTARRAY), "128", options=["--mmap-pages", "1"])
    assert "lost because the ring buffer was full" in res.stderr, res.stderr
    j = report(memscope, rec, "sym")
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    names = [s["name"] for s in lines[0]["series"]]
    counted = sum(f["v"][names.index("page-faults")] for f in lines if "v" in f)
    lost_series = sum(f["v"][names.index("sample.lost:page-faults")] for f in lines if "v" in f)
    lost = j["lost"]["ring_full"] + j["lost"]["undelivered"]
    assert lost > 0 and j["lost"]["ring_full"] >= lost_series
    # Every fault is a sample written or one counted as lost (lost records also
    # count side-band records, a handful).
    assert counted <= j["samples"] + lost <= counted + 50, (counted, j["samples"], j["lost"])
    text = run([memscope, "report", "--sort", "sym", str(rec)]).stdout
    assert "LOST: " in text, text


def test_process_exiting_mid_record(memscope, tmp_path):
    """Two processes that exit while the recording goes on: each is attributed
    by its own mappings, and a page whose process had gone says so."""
    script = f"{HOTARRAY} 8; {HOTARRAY} 8 --malloc; sleep 0.3"
    rec, _ = record(memscope, tmp_path, "sh", "-c", script)
    j = report(memscope, rec, "comm,sym,obj")
    rows = {(r["keys"]["comm"], r["keys"]["sym"]): r for r in j["rows"]}
    table = [r for r in j["rows"] if r["keys"]["sym"] == "fill_table"]
    assert {r["keys"]["obj"] for r in table} >= {"table (hotarray)"}, table
    assert any(r["keys"]["obj"].startswith("[anon ") for r in table), table
    assert all(r["keys"]["comm"] == "hotarray" for r in table)
    pids = report(memscope, rec, "pid,sym")
    assert len({r["keys"]["pid"] for r in pids["rows"] if r["keys"]["sym"] == "fill_table"}) == 2
    assert ("hotarray", "fill_table") in rows


def test_a_continued_file_attributes_its_samples_alone(memscope, tmp_path, runtime_dir):
    """ctl record FILE mid-run: the new file starts with the mappings and names of the processes
    sampled before it, so its samples are attributed without the first file."""
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    first, second = tmp_path / "one.rec", tmp_path / "two.rec"
    mib = 8
    # hotarray maps itself, then waits for a byte on stdin before it writes its table.
    proc = subprocess.Popen([memscope, "record", "-I", "20", "--sample", "page-faults", "-o", str(first), "--",
                             str(HOTARRAY), str(mib), "--wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        wait_for_socket(runtime_dir)
        wait_for_frames(first, 3)
        res = run([memscope, "ctl", "record", str(second)], env=env)
        assert res.returncode == 0 and res.stdout.startswith(f"ok: recording to {second}"), res
        _, err = proc.communicate("\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in second.read_text().splitlines()[1:]]
    # The mappings come before the first frame, at time 0.
    first_frame = next(i for i, rec in enumerate(lines) if "v" in rec)
    maps = [rec["map"] for rec in lines[:first_frame] if "map" in rec]
    assert any(m[8] == str(HOTARRAY) and m[0] == 0 for m in maps), maps
    j = report(memscope, second, "sym,obj")
    top = j["rows"][0]
    assert top["keys"] == {"sym": "fill_table", "obj": "table (hotarray)"}, top
    pages = mib * 1024 * 1024 // PAGE
    assert pages <= top["samples"] <= pages + 2, top
    assert top["samples"] >= 0.9 * j["samples"], j["samples"]


def test_a_process_that_moves_to_another_cpu_keeps_its_mappings(memscope, tmp_path):
    """The binary's mappings (MMAP2) land in the ring of the CPU that ran the exec; a process that
    then runs on another CPU has its samples in that CPU's ring. Its samples must still find them."""
    if len(os.sched_getaffinity(0)) < 2:
        import pytest
        pytest.skip("needs two CPUs")
    first, second = sorted(os.sched_getaffinity(0))[:2]
    rec = tmp_path / "moved.rec"
    mib = 8
    proc = subprocess.Popen(["taskset", "-c", str(first), memscope, "record", "--no-ctl", "--sample", "page-faults",
                             "-o", str(rec), "--", str(HOTARRAY), str(mib), "--wait"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # hotarray, exec'd on the first CPU, waiting for its go.
        deadline = time.monotonic() + 60
        child = None
        while child is None and time.monotonic() < deadline:
            for task in pathlib.Path(f"/proc/{proc.pid}/task").iterdir():
                for pid in (task / "children").read_text().split():
                    if pathlib.Path(f"/proc/{pid}/comm").read_text().strip() == "hotarray":
                        child = int(pid)
            time.sleep(0.05)
        assert child, "hotarray did not start"
        time.sleep(0.2)
        os.sched_setaffinity(child, {second})
        _, err = proc.communicate("\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    j = report(memscope, rec, "sym,obj")
    top = j["rows"][0]
    assert top["keys"] == {"sym": "fill_table", "obj": "table (hotarray)"}, [r["keys"] for r in j["rows"][:4]]
    pages = mib * 1024 * 1024 // PAGE
    lost = sum(n for why, n in j["lost"].items() if why != "throttled")
    assert pages <= top["samples"] + lost, (top, j["lost"])


SAMPLE_CPU, SAMPLE_PERIOD, SAMPLE_DATA_SRC, SAMPLE_IDENTIFIER = 1 << 7, 1 << 8, 1 << 15, 1 << 16


def test_page_fault_samples_carry_what_the_kernel_would_have_written(memscope, tmp_path):
    """The fault path writes only what memscope cannot know without it: no CPU (each ring is one
    CPU's), no period (fixed), no data source (a software event's is always "not available") and
    no event id (one event). The recorded samples still carry them: the CPU the process was held
    on, period 1, and the data source perf record -d reads for the same faults."""
    if len(os.sched_getaffinity(0)) < 2 or not shutil.which("perf"):
        pytest.skip("needs two CPUs and perf")
    for cpu in sorted(os.sched_getaffinity(0))[:2]:
        rec = tmp_path / f"cpu{cpu}.rec"
        res = run(["taskset", "-c", str(cpu), memscope, "record", "--no-ctl", "--sample", "page-faults",
                   "--no-callchain", "-o", str(rec), "--", str(HOTARRAY), "8"])
        assert res.returncode == 0, res.stderr
        lines = [json.loads(line) for line in rec.read_text().splitlines()]
        ev = lines[0]["sampling"]["events"][0]
        assert ev["sample_type"] & (SAMPLE_CPU | SAMPLE_PERIOD | SAMPLE_DATA_SRC | SAMPLE_IDENTIFIER) == 0, ev
        samples = [r["s"] for r in lines if "s" in r]
        assert len(samples) >= 8 * 1024 * 1024 // PAGE, len(samples)
        assert {s[3] for s in samples} == {cpu}, {s[3] for s in samples}
        assert {s[4] for s in samples} == {0} and {s[12] for s in samples} == {1}
        data_src = {s[9] for s in samples}
        perf_data = tmp_path / f"cpu{cpu}.data"
        res = run(["taskset", "-c", str(cpu), "perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o",
                   str(perf_data), "--", str(HOTARRAY), "8"])
        assert res.returncode == 0, res.stderr
        res = run(["perf", "script", "-i", str(perf_data), "-F", "data_src"])
        assert res.returncode == 0, res.stderr
        theirs = {m.group(1).lstrip("0") for m in re.finditer(r"^\s*([0-9a-f]+) \|", res.stdout, re.M)}
        assert theirs and data_src == theirs, (data_src, theirs)


def test_two_sampled_events_are_told_apart_and_a_frequency_keeps_its_periods(memscope, tmp_path):
    """Two events share each CPU's ring: their samples carry the event's id, and each event's
    samples count its own faults. Sampled by frequency, the period of each sample is the kernel's."""
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "8", sample="page-faults",
                    options=("--sample", "minor-faults", "--no-callchain"))
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    assert all(e["sample_type"] & SAMPLE_IDENTIFIER for e in lines[0]["sampling"]["events"])
    samples = [r["s"] for r in lines if "s" in r]
    by_event = {e: sum(1 for s in samples if s[4] == e) for e in (0, 1)}
    assert min(by_event.values()) >= 8 * 1024 * 1024 // PAGE, by_event
    assert abs(by_event[0] - by_event[1]) <= 2, by_event
    rec, _ = record(memscope, tmp_path, str(HOTARRAY), "8", options=("-F", "2000", "--no-callchain"), name="f.rec")
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    assert lines[0]["sampling"]["events"][0]["sample_type"] & SAMPLE_PERIOD
    periods = [r["s"][12] for r in lines if "s" in r]
    assert periods and len(set(periods)) > 1, periods[:20]


def test_the_frames_page_faults_are_the_sampling_events_own_count(memscope, tmp_path):
    """With page faults sampled, the frames' page-faults counter is read from the sampling event (it
    counts every fault, sampled or not): no second page-fault event in the process's fault path.
    The counts stay perf stat's, every 4th fault sampled too."""
    if not shutil.which("strace") or not shutil.which("perf"):
        pytest.skip("needs strace and perf")
    res = run(["perf", "stat", "-x,", "-e", "page-faults", "--", str(HOTARRAY), "32"])
    assert res.returncode == 0, res.stderr
    perf_count = int(next(line for line in res.stderr.splitlines() if "page-faults" in line).split(",")[0])
    ncpus = len(os.sched_getaffinity(0))
    # LeakSanitizer cannot run under ptrace: a sanitizer build is traced without it.
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    for period in ("1", "4"):
        rec = tmp_path / f"c{period}.rec"
        trace = tmp_path / f"c{period}.strace"
        res = run(["strace", "-f", "-e", "trace=perf_event_open", "-o", str(trace), memscope, "record", "--no-ctl",
                   "--sample", "page-faults", "-c", period, "--no-callchain", "-I", "10", "-o", str(rec), "--",
                   str(HOTARRAY), "32"], env=env)
        assert res.returncode == 0, res.stderr
        opened = [line for line in trace.read_text().splitlines()
                  if "config=PERF_COUNT_SW_PAGE_FAULTS," in line and not re.search(r"= -1 ", line)]
        # One sampling event per CPU, and no counting one (sample_period=0).
        assert len(opened) == os.cpu_count() or len(opened) == ncpus, opened
        assert not [line for line in opened if "sample_period=0," in line], opened
        lines = [json.loads(line) for line in rec.read_text().splitlines()]
        names = [s["name"] for s in lines[0]["series"]]
        faults, taken = names.index("page-faults"), names.index("sample:page-faults")
        frames = [r for r in lines if "v" in r]
        counted = sum(f["v"][faults] for f in frames)
        sampled = sum(f["v"][taken] for f in frames)
        assert len(frames) > 1, len(frames)
        # The workload's own faults, as perf stat counts them (a run differs by a few).
        assert abs(counted - perf_count) <= max(16, perf_count // 100), (counted, perf_count)
        assert counted // int(period) - 2 <= sampled <= counted // int(period) + 2, (counted, sampled, period)
