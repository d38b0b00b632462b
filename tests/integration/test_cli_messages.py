"""The messages a new user meets name the true cause and the fix: empty lists, misspelt
events and metrics, reasons over files that speak of the file (not of this host), a cut
compressed recording, the Lua sandbox, tracefs closed to the user, and one capability line."""
import json
import os
import re
import shutil

import pytest

from conftest import fixture_env, run
from stat_output import counter_output

NOBODY = 65534
SETCAP = "sudo setcap cap_perfmon,cap_bpf,cap_sys_ptrace+ep $(command -v memscope)"


def as_nobody(cmd, **kw):
    return run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] + cmd, **kw)


@pytest.mark.parametrize("args,message", [
    (["-e", ""], "-e '': an empty list names nothing"),
    (["-e", "page-faults,,context-switches"], "an empty name (between two commas)"),
    (["-e", "page-faults,"], "an empty name (after the last comma)"),
    (["-m", ""], "-m '': an empty list names nothing"),
])
def test_empty_lists_are_usage_errors(memscope, args, message):
    res = run([memscope, "stat"] + args + ["--", "true"])
    assert res.returncode == 2, res
    assert message in res.stderr, res.stderr


def test_misspelt_names_suggest_the_closest(memscope):
    res = run([memscope, "stat", "-e", "proc.falts", "--", "true"])
    assert res.returncode == 2
    assert "unknown event 'proc.falts'; did you mean 'proc.faults'?" in res.stderr, res.stderr
    res = run([memscope, "stat", "-m", "numa_hit", "--", "true"])
    assert res.returncode == 2
    assert "unknown metric 'numa_hit'; did you mean 'numa.hit'?" in res.stderr, res.stderr


def write_replay(path, frames):
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    lines += [json.dumps({"t": t, "values": values}) for t, values in frames]
    path.write_text("\n".join(lines) + "\n")


def test_replay_reasons_speak_of_the_file(memscope, tmp_path):
    replay = tmp_path / "partial.jsonl"
    # SCCL1's first channel only: the other channels, and SCCL3 (node 1), are not in the file.
    write_replay(replay, [(1.0, {"hisi_sccl1_ddrc0/flux_rd/": 1000})])
    res = run([memscope, "stat", "--replay", str(replay), "-m", "mem.read_bw", "--per-node", "--json",
               "--self-describing"], env=fixture_env("kunpeng920-2s"))
    assert res.returncode == 0, res.stderr
    rows = json.loads(counter_output(res.stderr).splitlines()[-1])["rows"]
    whys = {r["scope"]: r["metrics"]["mem.read_bw"]["why"] for r in rows}
    for scope in ("node0", "node1"):
        assert whys[scope].startswith("not in this replay file"), whys
    for why in whys.values():
        assert "opened" not in why and "belongs to this scope" not in why, whys


def test_recording_reasons_speak_of_the_recording(memscope, tmp_path):
    rec = tmp_path / "k.rec"
    assert run([memscope, "record", "-o", str(rec), "-I", "100", "-m", "numa.hit", "--", "sleep", "0.3"]).returncode == 0
    res = run([memscope, "stat", "--input", str(rec), "-m", "numa.hit,numa.local"])
    assert res.returncode == 0, res.stderr
    line = next(l for l in counter_output(res.stderr).splitlines() if "numa.local" in l)
    assert "<not counted>" in line and "not in this recording" in line and "record it with -m" in line, line
    assert "could not be opened" not in counter_output(res.stderr)


def test_recorded_probe_series_are_read_without_the_recorded_hosts_btf(memscope, tmp_path):
    """A metric of the eBPF probes' series is computed from a recording that holds them (the host
    snapshot has no kernel BTF: it was taken for the recorded host's PMUs, not its kernel), and a
    recording without them says so, not that a kernel lacks BTF."""
    rec = tmp_path / "offcpu.rec"
    res = run([memscope, "record", "-o", str(rec), "-I", "100", "-m", "proc.offcpu_ratio", "--", "sleep", "0.5"])
    assert res.returncode == 0, res.stderr
    for cmd in (["stat", "--input", str(rec), "-m", "proc.offcpu_ratio", "-x", ","],
                ["report", "--regions", str(rec)]):
        res = run([memscope] + cmd)
        assert "BTF" not in res.stderr and "not available" not in res.stderr, (cmd, res.stderr)
    res = run([memscope, "stat", "--input", str(rec), "-m", "proc.offcpu_ratio", "-x", ","])
    assert res.returncode == 0, res.stderr
    # perf's CSV fields: value, unit, event, run time, percent running, metric value, metric unit;
    # sleep is off the CPU nearly all along.
    fields = next(l.split(",") for l in counter_output(res.stderr).splitlines() if "proc.offcpu_ratio" in l)
    assert fields[2] == "proc.offcpu_ratio", fields
    ratio = float(fields[5])
    assert 0.9 < ratio <= 1.0, fields
    other = tmp_path / "faults.rec"
    assert run([memscope, "record", "-o", str(other), "-I", "100", "-m", "kernel.faults", "--", "sleep", "0.2"]).returncode == 0
    res = run([memscope, "stat", "--input", str(other), "-m", "proc.offcpu_ratio"])
    assert "BTF" not in res.stderr + res.stdout, res.stderr
    line = next(l for l in counter_output(res.stderr).splitlines() if "proc.offcpu_ratio" in l)
    assert "<not counted>" in line and "not in this recording" in line, line


def test_input_interval_adds_frames_up(memscope, touchmem, tmp_path):
    rec = tmp_path / "b.rec"
    res = run([memscope, "record", "-o", str(rec), "-I", "50", "-e", "page-faults", "--", touchmem, "32",
               "--sleep-ms", "800"])
    assert res.returncode == 0, res.stderr
    res = run([memscope, "stat", "--input", str(rec), "-I", "200", "-x,", "--self-describing"])
    assert res.returncode == 0, res.stderr
    rows = [l.split(",") for l in counter_output(res.stderr).splitlines()[1:]]
    lines = [(float(r[0]), int(r[3])) for r in rows if r[0] != "total"]
    total = int(next(r[3] for r in rows if r[0] == "total"))
    assert sum(v for _, v in lines) == total
    times = [t for t, _ in lines]
    gaps = [b - a for a, b in zip(times, times[1:-1])]
    # Four 50 ms frames a line (give or take a late one); the last line is what is left.
    assert gaps and all(0.15 <= g <= 0.3 for g in gaps), times
    res = run([memscope, "stat", "--input", str(rec), "-I", "20"])
    assert res.returncode == 2
    assert "has a frame every 50 ms; its lines can add frames up (-I 50, 100, ...)" in res.stderr


def test_cut_compressed_recording_is_called_cut(memscope, tmp_path):
    rec = tmp_path / "z.rec.zst"
    assert run([memscope, "record", "-o", str(rec), "-I", "50", "--", "sleep", "0.2"]).returncode == 0
    for size in (4, 300):
        cut = tmp_path / f"cut{size}.rec.zst"
        cut.write_bytes(rec.read_bytes()[:size])
        res = run([memscope, "stat", "--input", str(cut)])
        assert res.returncode == 1
        assert f"the compressed recording is cut: its {size} bytes of zstd data end before its first line" in \
            res.stderr, res.stderr
        assert "empty" not in res.stderr
    empty = tmp_path / "empty.rec"
    empty.write_bytes(b"")
    assert "the file is empty" in run([memscope, "stat", "--input", str(empty)]).stderr


def test_sandbox_names_what_it_refuses_and_the_way_in(memscope, tmp_path):
    """What the sandbox leaves out stays nil (scripts may test `if io then`), and a script that
    calls it anyway is told why and how to get it."""
    script = tmp_path / "escape.lua"
    script.write_text('function on_start() print(io == nil, os.time() > 0); os.execute("true") end\n')
    res = run([memscope, "stat", "--lua", str(script), "-e", "page-faults", "--", "true"])
    assert "true\ttrue" in res.stdout, res.stdout
    assert "attempt to call a nil value (field 'execute') (scripts are sandboxed: no io, os.execute and " \
        "the like, package or require; --lua-unsafe gives them io, os and package)" in res.stderr, res.stderr
    res = run([memscope, "stat", "--lua", str(script), "--lua-unsafe", "-e", "page-faults", "--", "true"])
    assert "sandboxed" not in res.stderr and "false\ttrue" in res.stdout


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to act as another user")
def test_tracefs_closed_to_the_user_is_not_called_unmounted(memscope):
    mode = os.stat("/sys/kernel/tracing").st_mode & 0o777
    if mode & 0o005:
        pytest.skip("tracefs is open to others here")
    res = as_nobody([memscope, "stat", "-e", "sched:sched_switch", "--", "true"])
    assert res.returncode != 0
    assert f"tracefs is mounted at /sys/kernel/tracing, but this user (uid {NOBODY}) cannot read it: it is mode " \
        f"{mode:04o}" in res.stderr, res.stderr
    assert "sudo mount -o remount,mode=755 /sys/kernel/tracing" in res.stderr
    assert "not mounted" not in res.stderr
    # doctor states the same fact: mounted (this test's stat of the directory), mode, owner.
    owner = os.stat("/sys/kernel/tracing").st_uid
    res = as_nobody([memscope, "doctor"])
    out = res.stdout + res.stderr
    assert f"tracefs is mounted at /sys/kernel/tracing but closed to this user (uid {NOBODY}): mode {mode:04o}, " \
        f"owned by uid {owner}" in out, out
    assert "sudo mount -o remount,mode=755 /sys/kernel/tracing" in out
    assert "tracefs is not mounted" not in out, out


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to act as another user")
def test_one_capability_line_everywhere(memscope):
    said = []
    res = as_nobody([memscope, "stat", "-e", "proc.faults", "--", "true"])
    said.append(res.stderr)
    res = as_nobody([memscope, "doctor"])
    said.append(res.stdout + res.stderr)
    res = as_nobody([memscope, "stat", "-e", "page-faults", "-p", "1"])
    said.append(res.stderr)
    for text in said:
        assert SETCAP in text, text
        assert not re.search(r"setcap (?!cap_perfmon,cap_bpf,cap_sys_ptrace\+ep \$\(command -v memscope\))", text), text
