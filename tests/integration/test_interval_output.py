"""How stat's interval lines reach their reader at short intervals: a file or a pipe gets them
in batches (one write per wake-up of the printer, not one per interval), a terminal line by line,
and either way every interval, in order, adding up to the totals, also when the run is
interrupted."""
import os
import pty
import select
import signal
import subprocess
import time

from stat_output import counter_output, intervals, parse_csv, totals


def write_calls(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("syscw:"):
                return int(line.split()[1])
    raise AssertionError(f"no syscw in /proc/{pid}/io")


def test_a_file_gets_the_intervals_in_batches(memscope, tmp_path, touchmem):
    """-I 1 into a file: every interval line, in order, adding up to the totals, in a fraction
    of the write calls that one write per interval would take."""
    out = tmp_path / "out.csv"
    with open(out, "w") as f:
        proc = subprocess.Popen([memscope, "stat", "-x,", "--self-describing", "-a", "-I", "1",
                                 "-e", "page-faults,context-switches", "--", touchmem, "10",
                                 "--repeat", "8", "--sleep-ms", "150"],
                                stdout=subprocess.PIPE, stderr=f, text=True)
        writes = 0
        while proc.poll() is None:
            try:
                writes = write_calls(proc.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            time.sleep(0.02)
        proc.communicate()
    err = out.read_text()
    assert proc.returncode == 0, err
    rows = parse_csv(counter_output(err))
    lines = intervals(rows)
    times = sorted({float(r["time"]) for r in lines})
    assert len(times) >= 100, len(times)
    assert [float(r["time"]) for r in lines] == sorted(float(r["time"]) for r in lines)
    for ev in ("page-faults", "context-switches"):
        assert sum(r["value"] for r in lines if r["event"] == ev) == totals(rows)[("total", ev)]
    # The writes counted until shortly before the end (the sampler's own few eventfd writes
    # included) against the intervals written by then: one write per interval would be >= 1.
    assert writes * 4 <= len(times), (writes, len(times))


def test_an_interrupted_run_writes_every_interval(memscope, tmp_path):
    """SIGINT ends the run: what was buffered is written, up to the last interval."""
    out = tmp_path / "out.csv"
    with open(out, "w") as f:
        proc = subprocess.Popen([memscope, "stat", "-x,", "--self-describing", "-a", "-I", "1",
                                 "-e", "page-faults", "--", "sleep", "30"],
                                stdout=subprocess.PIPE, stderr=f, text=True)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    err = out.read_text()
    rows = parse_csv(counter_output(err))
    lines = intervals(rows)
    assert len(lines) >= 100, (len(lines), err)
    # The totals line comes after the last interval, and the intervals add up to it.
    assert sum(r["value"] for r in lines) == totals(rows)[("total", "page-faults")]


def test_a_terminal_gets_each_interval_as_it_ends(memscope):
    """On a terminal the printer is woken for every interval (at -I 10 a file gets them in
    batches of ten): the lines arrive in many separate reads, not a few large ones."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([memscope, "stat", "-x,", "-a", "-I", "10", "-e", "page-faults",
                             "--", "sleep", "1.5"], stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    reads, data = 0, b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:              # the terminal closed: the run ended
            break
        if not chunk:
            break
        reads += 1
        data += chunk
    proc.wait(timeout=30)
    os.close(master)
    assert proc.returncode == 0, data[-2000:]
    lines = [l for l in data.decode().splitlines() if l and l[0].isdigit()]
    assert len(lines) >= 60, data[:500]
    # Batched, ~150 intervals would come in ~15 writes.
    assert reads >= len(lines) // 3, (reads, len(lines))
