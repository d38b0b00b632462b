"""Every recording the integration suite makes adds up, as test_run_totals.py defines it.

Which recordings: every file a `memscope record` run of a test wrote and exited 0 on (whatever
started it: conftest's run(), subprocess.run or a Popen the test waited for). Checked right
after the test that made it, as record left it: a file the test rewrote, cut or removed
afterwards (a test that makes a bad file on purpose) is not checked, and is counted as such;
one a later record of the same name kept as NAME.old is checked there.
Recordings written to stdout (-o -) or to what is not a regular file (-o /dev/null), or by
`ctl record`, `top` or the live page are not included.

What holds for each: `memscope report` reads it without error with summary.lua and faults.lua,
and when it has per-process series:
- proc.faults of the Series table less its processes' sum (the remainder no process holds) is
  exactly 0, and faults.lua's rows (processes, "others", and "-" for what no process holds) add
  up to its "all faults" with a "-" row of 0, as test_run_totals.py has it;
- every other counter with per-process rows leaves a remainder of at least 0 (the processes
  never hold more than the total): what an exiting task without a slot does counts in the
  totals only (docs/bpf.md), e.g. a migration of an exiting task.
When the run's proc.bpf_drops is over 0 (the probes' task table was full, those threads count
in the totals only) the faults' remainder may be over 0 too, up to 1% of the total.

A recording that does not add up is an error of the test that made it, naming the file."""
import json
import os
import re
import stat
import subprocess
import time

import pytest

# Options of `memscope record` that take a value (the one after them is not the command).
RECORD_VALUE_OPTIONS = {"-e", "--events", "-m", "--metrics", "--damon-hot", "--damon-cold-age", "--lua",
                        "-p", "--pid", "--replay", "-I", "--interval", "-o", "--output", "--fifo",
                        "--sample", "-c", "--count", "-F", "--freq", "--mmap-pages", "--alloc-min"}

made = []             # (path, stat at record's exit, the test that ran record)
UNCHECKED = set()     # tests that changed or removed a recording they made
STATS = {"checked": 0, "changed": 0, "failed": 0, "seconds": 0.0}


def recording_of(args, cwd):
    """The file a `memscope ... record ...` command line writes, or None for anything else."""
    if isinstance(args, (str, bytes)) or not args:
        return None
    args = [os.fspath(a) if not isinstance(a, str) else a for a in args]
    at = next((i for i, a in enumerate(args) if os.path.basename(str(a)) == "memscope"), None)
    if at is None or at + 1 >= len(args) or args[at + 1] != "record":
        return None
    out, i = "memscope.rec", at + 2
    while i < len(args):
        a = args[i]
        if a == "--" or not a.startswith("-") or a == "-":
            break
        if a in ("-o", "--output") and i + 1 < len(args):
            out = args[i + 1]
        elif a.startswith("--output="):
            out = a[len("--output="):]
        elif a.startswith("-o") and not a.startswith("--"):
            out = a[2:]
        i += 2 if a in RECORD_VALUE_OPTIONS else 1
    if out == "-":
        return None
    return os.path.join(os.fspath(cwd) if cwd else os.getcwd(), out)


def file_state(path):
    """What tells the file as record left it from one changed since; None: no regular file there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class RecordWatchingPopen(subprocess.Popen):
    """Popen that notes a `memscope record` run exiting 0, with the file it wrote."""

    def __init__(self, args, *rest, **kw):
        self._recording = recording_of(args, kw.get("cwd"))
        # The environment the recording was made in (a test's own catalog or
        # fixture roots): the report that checks it runs in the same one.
        self._env = kw.get("env")
        super().__init__(args, *rest, **kw)

    @property
    def returncode(self):
        return self.__dict__.get("_returncode")

    @returncode.setter
    def returncode(self, value):
        self.__dict__["_returncode"] = value
        path = self.__dict__.get("_recording")
        if value == 0 and path:
            state = file_state(path)
            if state:
                test = os.environ.get("PYTEST_CURRENT_TEST", "(no test)").rsplit(" ", 1)[0]
                made.append((path, state, test, self.__dict__.get("_env")))


subprocess.Popen = RecordWatchingPopen


def remainders(objs):
    """Per counter with per-process rows: (series, labels, total, total less the processes' sum)."""
    series = next((o for o in objs if o.get("title") == "Series"), None)
    if series is None:
        return [], 0
    totals, per_process, drops = {}, {}, 0
    for r in series["rows"]:
        if r["kind"] != "counter":
            continue
        labels = r["labels"].split(",") if r["labels"] else []
        if any(l.startswith("tid=") for l in labels):
            continue   # a thread's own series (--per-thread): its process's series counts it
        pids = [l for l in labels if re.fullmatch(r"pid=\d+", l)]
        rest = ",".join(l for l in labels if l not in pids)
        if r["series"] == "proc.bpf_drops" and not labels:
            drops = r["total"]
        if pids:
            per_process[(r["series"], rest)] = per_process.get((r["series"], rest), 0) + r["total"]
        else:
            totals[(r["series"], rest)] = r["total"]
    return [(name, rest, totals[(name, rest)], totals[(name, rest)] - summed)
            for (name, rest), summed in sorted(per_process.items()) if (name, rest) in totals], drops


def allowed(remainder, total, drops, name="proc.faults"):
    if name != "proc.faults":
        return remainder >= 0
    if drops:
        return 0 <= remainder <= max(total, 0) / 100
    return remainder == 0


def problems_of(memscope, path, env=None):
    """What does not add up in one recording: a list of sentences, empty when it all does."""
    res = subprocess.run([memscope, "report", "--format", "json", "--lua", "summary.lua", "--lua", "faults.lua",
                          path], capture_output=True, text=True, timeout=300, env=env)
    if res.returncode != 0:
        return [f"`memscope report` exits {res.returncode}: {res.stderr.strip()[-600:]}"]
    objs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    out = []
    rows, drops = remainders(objs)
    for name, rest, total, remainder in rows:
        if not allowed(remainder, total, drops, name):
            out.append(f"summary.lua: {name}{'{' + rest + '}' if rest else ''} totals {total} but its processes "
                       f"sum to {total - remainder} (remainder {remainder}, proc.bpf_drops {drops})")
    faults = next((o for o in objs if o.get("title") == "Faults"), None)
    procs = next((o for o in objs if o.get("title") == "Faults per process"), None)
    if faults and procs:
        total = next(r["count"] for r in faults["rows"] if r["faults"] == "all faults")
        listed = sum(r["faults"] for r in procs["rows"])
        unattributed = sum(r["faults"] for r in procs["rows"] if r["pid"] == "-")
        if listed != total or not allowed(unattributed, total, drops):
            out.append(f"faults.lua: its rows sum to {listed} of all faults {total}, {unattributed} in no process "
                       f"(proc.bpf_drops {drops})")
    return out


@pytest.fixture(autouse=True)
def recordings_add_up(request):
    """After each test: the recordings it (or a fixture it set up) made add up."""
    yield
    if not made:
        return
    memscope = os.path.join(os.environ.get("MEMSCOPE_BUILD", ""), "memscope")
    if not os.path.exists(memscope):
        from conftest import BUILD
        memscope = str(BUILD / "memscope")
    mine = list(made)
    made.clear()
    failures = []
    for path, state, test, env in mine:
        # A second record to the same name keeps the first file as NAME.old.
        path = next((p for p in (path, path + ".old") if file_state(p) == state), None)
        if path is None:
            STATS["changed"] += 1
            UNCHECKED.add(test)
            continue
        STATS["checked"] += 1
        started = time.monotonic()
        for problem in problems_of(memscope, path, env):
            failures.append(f"{path} (recorded by {test}): {problem}")
        STATS["seconds"] += time.monotonic() - started
    if failures:
        STATS["failed"] += len(failures)
        pytest.fail("recordings that do not add up:\n" + "\n".join(failures), pytrace=False)


def pytest_terminal_summary(terminalreporter):
    if STATS["checked"] or STATS["changed"]:
        terminalreporter.write_line(
            f"recordings checked to add up: {STATS['checked']} in {STATS['seconds']:.1f} s "
            f"({STATS['failed']} did not); "
            f"{STATS['changed']} changed or removed by their test after record, not checked")
        if UNCHECKED and terminalreporter.config.option.verbose > 0:
            terminalreporter.write_line("  by: " + ", ".join(sorted(UNCHECKED)))
