"""The check every recording of the suite goes through after the test that made it
(recordings_add_up.py): which file a record command line writes, that the check names a
recording whose processes do not add up to its total, and that a good one passes."""
import json
import os

import pytest

import recordings_add_up
from conftest import run


@pytest.mark.parametrize("args, cwd, expected", [
    (["/b/memscope", "record", "-a", "-o", "x.rec", "--", "true"], "/t", "/t/x.rec"),
    (["/b/memscope", "record", "--output=/r/y.rec", "sleep", "1"], "/t", "/r/y.rec"),
    (["/b/memscope", "record", "-o/r/z.rec", "-a"], None, "/r/z.rec"),
    (["/b/memscope", "record", "-e", "-o", "--", "true"], "/t", "/t/memscope.rec"),   # -o is -e's value
    (["taskset", "-c", "0", "/b/memscope", "record", "-I", "100", "--", "true"], "/t", "/t/memscope.rec"),
    (["/b/memscope", "record", "-o", "-", "--", "true"], "/t", None),                  # stdout
    (["/b/memscope", "report", "x.rec"], "/t", None),
    ("memscope record -o x.rec", "/t", None),                                          # a shell line
])
def test_the_file_a_record_command_line_writes(args, cwd, expected):
    assert recordings_add_up.recording_of(args, cwd) == expected


def test_only_regular_files_are_noted(tmp_path):
    """record -o /dev/null exits 0 and writes no recording: nothing to check there."""
    (tmp_path / "r.rec").write_text("x")
    assert recordings_add_up.file_state("/dev/null") is None
    assert recordings_add_up.file_state(tmp_path / "missing.rec") is None
    assert recordings_add_up.file_state(tmp_path / "r.rec") is not None


def test_a_recording_whose_processes_do_not_add_up_is_named(memscope, tmp_path, request):
    rec = tmp_path / "run.rec"
    res = run([memscope, "record", "-a", "-I", "100", "-o", str(rec), "--", "python3", "-c",
               "b = bytearray(8 << 20)"], timeout=300)
    if res.returncode != 0 and "eBPF" in res.stderr:
        pytest.skip(res.stderr.strip())
    assert res.returncode == 0, res.stderr
    # The run was noted, with this test as its maker (checked again after this test).
    path, state, test, _ = recordings_add_up.made[-1]
    assert (path, state, test) == (str(rec), recordings_add_up.file_state(rec), request.node.nodeid)
    assert recordings_add_up.problems_of(memscope, str(rec)) == []
    # 7 more faults for one process in one frame: its series no longer sums to the total.
    lines = rec.read_text().split("\n")
    first = next(json.loads(l) for l in lines if l.startswith('{"series"'))
    index = next(s["i"] for s in first["series"] if s["name"] == "proc.faults" and "pid" in s)
    at = next(i for i, l in enumerate(lines) if l.startswith('{"t"') and json.loads(l)["v"][index] is not None)
    frame = json.loads(lines[at])
    frame["v"][index] += 7
    lines[at] = json.dumps(frame, separators=(",", ":"))
    bad = tmp_path / "bad.rec"
    bad.write_text("\n".join(lines))
    problems = recordings_add_up.problems_of(memscope, str(bad))
    assert any(p.startswith("summary.lua: proc.faults totals ") and "(remainder -7," in p for p in problems), problems
    assert any(p.startswith("faults.lua: its rows sum to ") for p in problems), problems
    # A file report cannot read is a problem too, with report's reason.
    cut = tmp_path / "cut.rec"
    cut.write_text(lines[0][:40])
    problems = recordings_add_up.problems_of(memscope, str(cut))
    assert len(problems) == 1 and problems[0].startswith("`memscope report` exits "), problems
    os.unlink(bad)
