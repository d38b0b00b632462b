"""Each benchmark script of contrib/bench runs for about a second (the smallest settings it
takes) and produces its table, so the scripts keep working as memscope changes. The figures
themselves are not checked: a benchmark prints numbers, it is not a timed test."""
import re
import shutil
import pathlib
import subprocess
import sys

import pytest

from conftest import ROOT

BENCH = ROOT / "contrib" / "bench"

SCRIPTS = {
    "stat_overhead.py": (["--repeat", "1", "--sampler-runs", "1", "--seconds", "0.3", "--mb", "4"],
                         "<!-- stat-overhead:start -->", "| memscope stat |"),
    "interval_rate.py": (["--runs", "1", "--seconds", "0.3", "--intervals", "1"],
                         "<!-- interval-rate:start -->", "| 1 ms | 8 tracepoints x"),
    # Each tool must print its first -I 100 line before it is stopped, also a sanitizer build
    # on a busy machine.
    "attach_startup.py": (["--threads", "4", "--runs", "1", "--stop-after-ms", "1500"],
                          "<!-- attach-startup:start -->", "| 4 | memscope |"),
    "slowdown.py": (["--rounds", "1", "--seconds", "0.1", "--mb", "2", "--rates", "100,1"],
                    "<!-- slowdown:start -->", "| 1 kHz (-I 1) | CPU time |"),
    "read_rate.py": (["--frames", "200", "--runs", "1", "--cpu", "0"], "<!-- read-rate:start -->", "| memscope report |"),
    "lua_report.py": (["--frames", "50", "--repeat", "1"], "<!-- lua_report.py begin -->", "summary.lua"),
    "recording_size.py": (["--seconds", "1"], "<!-- recording-size:start -->", "plain JSON Lines:"),
    "top_cpu.py": (["--seconds", "1", "--repeat", "1", "--intervals", "250"], "<!-- top-cpu:start -->",
                   "| memscope top batch |"),
    "top_scale.py": (["--idle", "20", "--active", "2", "--updates", "2", "--repeat", "1"],
                     "<!-- top-scale:start -->", "| memscope top |"),
    "live_overhead.py": (["--seconds", "1", "--repeat", "1", "--series", "8"], "<!-- live-overhead:start -->",
                         "| memscope live, one page streaming |"),
    "sample_overhead.py": (["--repeat", "1", "--mib", "8", "--pairs", "1000"], "<!-- sample-overhead:start -->",
                           "| `memscope record --sample page-faults` |"),
    "tier_cost.py": (["--repeat", "1", "--seconds", "0.5", "--procs", "4"], "<!-- tier-cost:start -->",
                     "| reads the tier files add per interval"),
    "soak.py": (["--minutes", "0.02"], "<!-- soak:start -->", "| after | RSS | open fds |"),
}


def test_every_script_is_covered():
    scripts = {p.name for p in BENCH.glob("*.py")} - {"perfdoc.py", "benchutil.py"}
    assert scripts == set(SCRIPTS) | {"bpf_overhead.py", "damon_cpu.py"}, scripts


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_bench_script_runs(script, build_dir, tmp_path):
    args, start, row = SCRIPTS[script]
    doc = tmp_path / "performance.md"
    res = subprocess.run([sys.executable, str(BENCH / script), "--build", str(build_dir), "--write", str(doc)] + args,
                         capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert start in res.stdout and row in res.stdout, res.stdout
    assert start in doc.read_text()


def test_soak_of_the_exporter_runs(build_dir, tmp_path):
    """soak.py --live: `memscope live --no-ui` scraped every second; its rows carry the frames
    /metrics counted and the history it held."""
    doc = tmp_path / "performance.md"
    res = subprocess.run([sys.executable, str(BENCH / "soak.py"), "--build", str(build_dir), "--write", str(doc),
                          "--minutes", "0.05", "--live"], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "<!-- soak-live:start -->" in doc.read_text()
    rows = [l.split("|") for l in res.stdout.splitlines() if l.startswith("| 3.0 s |")]
    assert len(rows) == 1, res.stdout
    frames_per_s, history = float(rows[0][4]), rows[0][5].strip()
    assert frames_per_s > 0 and history.endswith("KiB") and float(history.split()[0]) > 0, res.stdout


@pytest.mark.skipif(not shutil.which("bpftrace"), reason="bpftrace is not installed")
def test_bpf_overhead_runs(build_dir):
    res = subprocess.run([sys.executable, str(BENCH / "bpf_overhead.py"), "--build", str(build_dir), "--runs", "1",
                          "--mb", "1", "--rounds", "1"], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "memscope added cost / bpftrace added cost" in res.stdout


def running_kdamond():
    root = pathlib.Path("/sys/kernel/mm/damon/admin/kdamonds")
    try:
        return any((d / "state").read_text().strip() == "on" for d in root.iterdir() if d.name.isdigit())
    except OSError:
        return False


@pytest.mark.skipif(not running_kdamond(), reason="no kdamond runs here: damon_cpu.py reads a running one")
def test_damon_cpu_runs(build_dir):
    """The kdamond's CPU beside memscope's, one short pair of windows: the table with its three rows."""
    res = subprocess.run([sys.executable, str(BENCH / "damon_cpu.py"), "--build", str(build_dir), "--seconds", "1",
                          "--repeat", "1"], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    for row in ("| kdamond alone |", "| kdamond while memscope reads it |", "| memscope stat -a -I 1000 -e damon.* |"):
        assert row in res.stdout, res.stdout


def test_soak_counts_the_forks_and_the_series_of_its_churn(build_dir):
    """Three seconds of soak.py: churn's forks (each child runs /bin/true) and the process series the
    recording added and retired, counted from the recording itself."""
    res = subprocess.run([sys.executable, str(BENCH / "soak.py"), "--build", str(build_dir), "--minutes", "0.05",
                          "--interval-ms", "10"], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    m = re.search(r"churn forked (\d+) processes \(each an exec too\); the recording added (\d+) series during the "
                  r"run and retired (\d+)\.", res.stdout)
    assert m, res.stdout
    forked, added, retired = map(int, m.groups())
    # 20 a second for the 3 s run (and until the recorder has ended).
    assert 30 <= forked <= 200, forked
    # Each churned process has a series (more, with the other processes of the machine); those gone
    # before the last frame were retired.
    assert added >= forked * 0.9 and retired >= forked * 0.8, (forked, added, retired)
