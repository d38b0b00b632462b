"""Every Lua example in the docs runs, unchanged, in every command the docs say scripts run in
(report over a recording, record, stat and top -b, each with --lua; a metric the example defines
also with -m NAME), and none is disabled: the examples are the API's contract as users meet it."""
import json
import re
import subprocess
import time

import pytest

from conftest import ROOT, run
from stat_output import counter_output
from test_top import NO_RECORDING, parse_batch

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PAGES = 16 * 256          # touchmem 16: 16 MiB, one fault and one page placed per 4 KiB page


def lua_examples():
    found = []
    for doc in DOCS:
        for i, block in enumerate(re.findall(r"^```lua\n(.*?)^```", doc.read_text(), re.M | re.S)):
            found.append(pytest.param(block, id=f"{doc.name}#{i + 1}"))
    return found


def documented_commands():
    """The commands docs/lua-api.md says run scripts: `memscope stat|record|top --lua` and
    `memscope report --lua`."""
    text = (ROOT / "docs" / "lua-api.md").read_text()
    commands = set()
    for group in re.findall(r"`memscope ([a-z|]+) --lua", text):
        commands.update(group.split("|"))
    return commands


def defined_metrics(block):
    return re.findall(r'memscope\.metric\s*\{\s*name\s*=\s*"([^"]+)"', block)


def assert_ran(res, script):
    assert res.returncode == 0, res.stderr
    assert "is disabled" not in res.stderr and "attempt to" not in res.stderr, res.stderr
    assert script.name not in res.stderr, res.stderr


def test_the_docs_name_the_commands_and_have_examples():
    assert documented_commands() == {"stat", "record", "top", "report"}
    assert len(lua_examples()) >= 3


@pytest.mark.parametrize("block", lua_examples())
def test_doc_example_runs_in_every_documented_command(memscope, touchmem, tmp_path, block):
    script = tmp_path / "example.lua"
    script.write_text(block)
    metrics = defined_metrics(block)
    with_metrics = ["-m", ",".join(metrics)] if metrics else []
    commands = documented_commands()

    # record --lua (and -m for the metrics it defines): the recording the report reads.
    assert "record" in commands
    rec = tmp_path / "example.rec"
    res = run([memscope, "record", "-o", str(rec), "-e", "proc.faults,proc.pages_alloc", *with_metrics,
               "--lua", str(script), "--", touchmem, "16"])
    assert_ran(res, script)

    assert "report" in commands
    res = run([memscope, "report", "--format", "json", "--lua", str(script), str(rec)])
    assert_ran(res, script)
    tables = [json.loads(l) for l in res.stdout.splitlines() if '"title"' in l]
    if "function on_end" in block and "emit" in block:
        faults = [t for t in tables if t["title"] == "Faults"]
        assert faults and faults[0]["rows"][0]["faults"] >= PAGES, res.stdout

    assert "stat" in commands
    res = run([memscope, "stat", "-x,", "--self-describing", *with_metrics, "--lua", str(script), "--",
               touchmem, "16"])
    assert_ran(res, script)
    rows = {(f[1], f[2]): f[3] for f in (l.split(",") for l in counter_output(res.stderr).splitlines()) if f[0] == "total"}
    for name in metrics:
        # One fault per page touched, each page one allocation.
        assert abs(float(rows[("total", name)]) - 1.0) <= 0.05, rows
    if metrics:
        res = run([memscope, "stat", "-x,", "--self-describing", "--per-node", *with_metrics, "--lua", str(script),
                   "--", touchmem, "16"])
        assert_ran(res, script)
        # Nodes have pages placed but no fault counts (eBPF counts faults per task): no value, no error.
        for name in metrics:
            assert f"total,node0,{name},<not counted>," in counter_output(res.stderr), counter_output(res.stderr)

    assert "top" in commands
    top = subprocess.Popen([memscope, "top", "-b", "-I", "250", "-n", "6", "--lua", str(script)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=NO_RECORDING)
    time.sleep(0.6)
    assert run([touchmem, "64"]).returncode == 0
    out, err = top.communicate(timeout=120)
    assert_ran(subprocess.CompletedProcess(top.args, top.returncode, out, err), script)
    # top's blocks, without the scripts' reports that follow them.
    parts = [p for p in out.split("\n\n") if p.strip("\n").startswith(("top: update=", "NODE", "PID", "TID", "threads:"))]
    blocks = parse_batch("\n\n".join(parts))
    assert len(blocks) == 6, out
    for name in metrics:
        # A column for the metric; the system row has a value in at least one update (the
        # workload's faults), node rows none with the reason, never "failed".
        assert all(name not in b["na"] or "failed" not in b["na"][name] for b in blocks), [b["na"] for b in blocks]
        system = [r[name] for b in blocks for r in b["nodes"] if r["NODE"] == "all"]
        assert any(v not in ("n/a", "?") for v in system), system
