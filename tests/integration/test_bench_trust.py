"""memscope bench's figures can be trusted as far as it says: every point is a median of
repetitions with its 95% interval (recomputed here from the samples the JSON carries), drawn
as error bars; c2c's table and heat map are the same measurements; output files are never
overwritten silently and only the plot formats asked for are written."""
import json
import math
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import BUILD, run

BENCH = BUILD / "contrib" / "bench" / "suite" / "memscope-bench"


def bench(*args, timeout=300, **kw):
    res = run([str(BENCH), *map(str, args)], timeout=timeout, **kw)
    assert res.returncode == 0, f"memscope-bench {' '.join(map(str, args))}: {res.stderr}"
    return res


def rows(results, table="results"):
    t = results["tables"][table]
    names = [c["name"] for c in t["columns"]]
    return [dict(zip(names, r)) for r in t["rows"]]


def median_interval(samples, level=0.95):
    """The distribution-free interval on the median (95% unless asked), computed here on its
    own: the order statistics x(k) and x(n+1-k) with the largest k whose coverage
    1 - 2 P(Bin(n, 1/2) <= k-1) is at least the level (k = 1 when no k reaches it)."""
    x, n = sorted(samples), len(samples)
    k = 1
    for r in range(1, (n + 1) // 2 + 1):
        if 1 - 2 * sum(math.comb(n, i) for i in range(r)) / 2 ** n >= level:
            k = r
    return statistics.median(x), x[k - 1], x[n - k]


def check_spread(results, table, col):
    """Every row of the table: n, median, low and high recomputed from the row's samples."""
    t = results["tables"][table]
    samples = t["samples"][col]
    assert len(samples) == len(t["rows"])
    for row, raw in zip(rows(results, table), samples):
        # The table's first measured column's count is "n", a second one's NAME_n.
        assert row.get(f"{col}_n", row["n"]) == len(raw) >= 2, row
        med, low, high = median_interval(raw)
        assert row[f"{col}_low"] <= row[col] <= row[f"{col}_high"], row
        for name, want in ((col, med), (f"{col}_low", low), (f"{col}_high", high)):
            assert math.isclose(row[name], want, rel_tol=1e-5), (name, row[name], want, raw)


def test_bw_and_lat_points_carry_median_interval_and_samples():
    r = json.loads(bench("bw", "rd", "--sizes", "16K,4M", "--reps", 6, "--max-reps", 12, "--format", "json",
                         "--no-plot").stdout)
    check_spread(r, "results", "mb_s")
    # At least --reps, at most --max-reps.
    assert all(6 <= row["n"] <= 12 for row in rows(r)), rows(r)
    r = json.loads(bench("lat", "--sizes", "4K,64K,1M", "--reps", 7, "--max-reps", 9, "--format", "json",
                         "--no-plot").stdout)
    check_spread(r, "results", "ns")
    assert all(7 <= row["n"] <= 9 for row in rows(r)), rows(r)


def test_par_ctx_and_stream_points_carry_their_intervals():
    r = json.loads(bench("par", "--sizes", "64K", "--max-par", 3, "--reps", 6, "--max-reps", 8, "--format", "json",
                         "--no-plot").stdout)
    check_spread(r, "results", "lat_ns")
    check_spread(r, "results", "best_ns")
    check_spread(r, "chains", "ns")
    # The one-chain latency of the results is the k = 1 row of the chains table: the same samples.
    assert r["tables"]["results"]["samples"]["lat_ns"][0] == r["tables"]["chains"]["samples"]["ns"][0]
    # parallelism = one chain's median / the best k's; its interval is the ratio of the two
    # medians' opposite ends, each at 97.5% (at least 95% for the ratio).
    row, samples = rows(r)[0], r["tables"]["results"]["samples"]
    one, best = samples["lat_ns"][0], samples["best_ns"][0]
    _, one_low, one_high = median_interval(one, 0.975)
    _, best_low, best_high = median_interval(best, 0.975)
    assert math.isclose(row["parallelism"], statistics.median(one) / statistics.median(best), rel_tol=1e-5), row
    if row["chains"] == 1:
        assert row["parallelism_low"] == row["parallelism_high"] == 1, row
    else:
        assert math.isclose(row["parallelism_low"], one_low / best_high, rel_tol=1e-5), row
        assert math.isclose(row["parallelism_high"], one_high / best_low, rel_tol=1e-5), row
        assert row["parallelism_low"] <= row["parallelism"] <= row["parallelism_high"], row
    r = json.loads(bench("ctx", "--cpu", 0, "--rounds", 2000, "--reps", 6, "--max-reps", 8, "--format", "json").stdout)
    check_spread(r, "results", "roundtrip_us")
    r = json.loads(bench("stream", "--size", "1M", "--threads", 1, "--kernels", "triad", "--reps", 6, "--max-reps", 8,
                         "--format", "json", "--no-plot").stdout)
    check_spread(r, "results", "total_mb_s")


def test_text_and_csv_show_the_interval():
    res = bench("bw", "wr", "--sizes", "8K", "--reps", 6, "--max-reps", 6, "--format", "csv", "--no-plot")
    lines = [line for line in res.stdout.splitlines() if not line.startswith("#")]
    assert lines[0] == "op,size,mb_s,mb_s_low,mb_s_high,n"
    op, size, med, low, high, n = lines[1].split(",")
    assert (op, size, n) == ("wr", "8192", "6") and float(low) <= float(med) <= float(high), lines
    res = bench("lat", "--sizes", "4K", "--reps", 6, "--max-reps", 6, "--no-plot")
    assert re.search(r"ns \(ns\)\s+ns_low \(ns\)\s+ns_high \(ns\)\s+n$", res.stdout, re.M), res.stdout


def test_precision_decides_the_count():
    """A loose precision stops at --reps once the interval exists (n >= 6); an impossible one
    runs to --max-reps."""
    loose = json.loads(bench("lat", "--sizes", "4K", "--reps", 6, "--max-reps", 40, "--precision", 100,
                             "--format", "json", "--no-plot").stdout)
    assert rows(loose)[0]["n"] == 6, rows(loose)
    tight = json.loads(bench("lat", "--sizes", "4K", "--reps", 6, "--max-reps", 15, "--precision", 1e-9,
                             "--max-time", 100, "--format", "json", "--no-plot").stdout)
    assert rows(tight)[0]["n"] == 15, rows(tight)


def test_plot_has_error_bars(tmp_path):
    """The SVG has one group of error bars per curve: a vertical segment per point, from the
    interval's high to its low (SVG's y grows downwards)."""
    prefix = tmp_path / "lat"
    r = json.loads(bench("lat", "--sizes", "4K,64K,1M", "--reps", 6, "--max-reps", 8, "--format", "json",
                         "--plot-format", "svg", "-o", prefix).stdout)
    tree = ET.parse(f"{prefix}.svg")
    ns = {"svg": "http://www.w3.org/2000/svg"}
    group = tree.getroot().find(".//svg:g[@id='errorbars-64 B']", ns)
    assert group is not None, "no error bars in the SVG"
    paths = group.findall("svg:path", ns)
    assert len(paths) == len(rows(r)), len(paths)
    for p in paths:
        (x1, y1), (x2, y2) = [tuple(map(float, m)) for m in re.findall(r"([-0-9.]+) ([-0-9.]+)", p.get("d"))]
        assert x1 == x2 and y1 >= y2, p.get("d")


def test_c2c_table_and_heat_map_are_the_same_measurements():
    r = json.loads(bench("c2c", "--state", "M", "--sizes", "16K,256K", "--heat-size", "16K", "--reps", 6,
                         "--max-reps", 10, "--format", "json", "--no-plot").stdout)
    ref = r["params"]["ref"]
    heat = {(h["owner"], h["reader"]): (h, s) for h, s in
            zip(rows(r, "heatmap"), r["tables"]["heatmap"]["samples"]["lat_ns"])}
    table = [(row, s) for row, s in zip(rows(r), r["tables"]["results"]["samples"]["lat_ns"])
             if row["size"] == 16384]
    assert {row["reader"] for row, _ in table} == set(os.sched_getaffinity(0))
    for row, raw in table:
        h, hraw = heat[(ref, row["reader"])]
        assert raw == hraw, (row, h)
        for col in ("lat_ns", "lat_ns_low", "lat_ns_high", "bw_mb_s", "n"):
            assert h[col] == row[col], (col, h, row)
    check_spread(r, "results", "lat_ns")
    check_spread(r, "heatmap", "bw_mb_s")


def test_files_are_never_overwritten_without_force(tmp_path):
    prefix = tmp_path / "bw"
    args = ("bw", "rd", "--sizes", "16K", "--reps", 2, "--max-reps", 2, "-o", prefix)
    bench(*args, "--plot-format", "png,svg")
    first = (tmp_path / "bw.json").read_bytes()
    res = bench(*args)
    assert "writing" in res.stderr and f"{prefix}-1.*" in res.stderr, res.stderr
    assert (tmp_path / "bw.json").read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bw-1.json", "bw-1.png", "bw.json", "bw.png", "bw.svg"]
    bench(*args)
    assert (tmp_path / "bw-2.png").exists()
    # --force replaces the run at PREFIX: its json and png, and removes its svg (not asked for now).
    bench(*args, "--force")
    assert (tmp_path / "bw.json").read_bytes() != first
    assert not (tmp_path / "bw.svg").exists() and (tmp_path / "bw.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("bw.")) == ["bw.json", "bw.png"]


def test_plot_format_writes_exactly_what_was_asked(tmp_path):
    prefix = tmp_path / "lat"
    bench("lat", "--sizes", "4K", "--reps", 2, "--max-reps", 2, "-o", prefix, "--plot-format", "pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lat.json", "lat.pdf"]
    assert (tmp_path / "lat.pdf").read_bytes()[:5] == b"%PDF-"
    res = run([str(BENCH), "lat", "--plot-format", "gif"])
    assert res.returncode == 2 and "--plot-format: 'gif' is not png, svg or pdf" in res.stderr, res.stderr


# ---- a busy machine is detected and said ----

def proc_cpu_seconds(pid):
    """utime + stime of /proc/PID/stat, in seconds."""
    stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_busy_loops_of_the_test_are_seen_and_said():
    """Busy loops of this test, two on each CPU, run through a whole bench run: the CPU time
    they used over the run (from their own /proc/PID/stat) is a lower bound of what bench says
    other processes used (other work on the machine only adds to it), and the warning line says
    the figure."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    # Two per CPU: on a shared machine with a long run queue, a fair share of it is still plenty.
    spinners = [subprocess.Popen(["taskset", "-c", str(c), "sh", "-c", "while :; do :; done"])
                for c in cpus for _ in range(2)]
    try:
        time.sleep(0.3)
        before = [proc_cpu_seconds(p.pid) for p in spinners]
        t0 = time.monotonic()
        res = bench("lat", "--sizes", "4K,64K,1M", "--reps", 6, "--max-reps", 10, "--format", "json", "--no-plot")
        elapsed = time.monotonic() - t0
        used = sum(proc_cpu_seconds(p.pid) - b for p, b in zip(spinners, before)) / elapsed
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    r = json.loads(res.stdout)
    load = r["load"]
    print(f"the test's loops used {used:.2f} CPUs; bench says others used {load['during']['other_cpus']:.2f}", load)
    assert used > 0.15, f"the busy loops hardly ran ({used:.2f} CPUs): nothing to check"
    # The run's window is inside the test's (exec and the 200 ms probe before it are not in it),
    # and /proc/stat counts in ticks: 20% and 0.1 CPU of slack.
    assert load["during"]["other_cpus"] >= 0.8 * used - 0.1, (used, load)
    runnable = len(spinners) - 0.2      # the loops are always runnable: every sample counts them
    assert load["during"]["run_queue_others"] >= runnable, load
    assert load["before"]["seconds"] == pytest.approx(0.2, abs=0.1) and load["before"]["run_queue_others"] >= runnable
    assert not load["reliable"], load
    said = re.search(r"^memscope-bench: warning: other processes used ([0-9.]+) CPUs during this run: (.*)$",
                     res.stderr, re.M)
    assert said, res.stderr
    assert float(said.group(1)) == round(load["during"]["other_cpus"], 1), (said.group(0), load)
    assert said.group(0).endswith(load["warning"]) and load["warning"] in r["notes"], (said.group(0), load)
    assert "reliable" in said.group(2), said.group(0)


def test_a_run_records_its_load_and_warns_exactly_when_it_says_so():
    """Without load of the test's own the machine may still be busy (it is shared): the run's
    record must agree with itself: a warning exactly when others used a quarter CPU or more."""
    res = bench("bw", "rd", "--sizes", "16K", "--reps", 6, "--max-reps", 6, "--format", "json", "--no-plot")
    load = json.loads(res.stdout)["load"]
    during = load["during"]
    assert 0 < during["own_cpus"] <= len(os.sched_getaffinity(0)) + 0.1, load
    assert 0 <= during["other_cpus"] <= os.cpu_count() + 0.1, load
    busy = during["other_cpus"] >= 0.25 or during["steal_cpus"] >= 0.25
    assert bool(load["warning"]) == busy, load
    moved = during["freq_mhz_min"] is not None and during["freq_mhz_max"] > 1.05 * during["freq_mhz_min"]
    assert bool(load["freq_warning"]) == moved and load["reliable"] == (not busy and not moved), load
    assert ("warning: other processes used" in res.stderr) == busy, res.stderr


def test_isolate_pins_and_says_whether_it_runs_under_sched_fifo():
    cpu = max(os.sched_getaffinity(0))
    r = json.loads(bench("lat", "--sizes", "4K", "--reps", 2, "--max-reps", 2, "--isolate", cpu, "--format", "json",
                         "--no-plot").stdout)
    isolate = r["load"]["isolate"]
    assert isolate["cpus"] == [cpu] and r["params"]["cpu"] == cpu, r["params"]
    may_fifo = shutil.which("chrt") and run(["chrt", "-f", "1", "true"]).returncode == 0
    assert isolate["scheduler"] == ("fifo" if may_fifo else "other"), isolate
    assert (isolate["why"] == "") == bool(may_fifo), isolate
    res = run([str(BENCH), "lat", "--isolate", "1000"])
    assert res.returncode == 2 and "--isolate: CPU 1000 is not online here" in res.stderr, res.stderr


# ---- kernels at the machine's width ----

def disassembly(function):
    """The instructions of one function of memscope-bench (objdump; its static functions keep
    their symbols)."""
    out = run(["objdump", "-d", "--no-show-raw-insn", str(BENCH)]).stdout
    body = re.search(rf"^[0-9a-f]+ <{function}>:\n(.*?)\n\n", out, re.M | re.S)
    assert body, f"{function} is not in {BENCH}"
    return body.group(1)


def test_each_width_is_compiled_for_its_own_registers():
    """One binary, no build flag: the AVX-512 loops use zmm registers, the AVX2 ones ymm (and no
    zmm), SSE2 xmm only, and the scalar bandwidth loop no vector register at all."""
    if platform.machine() != "x86_64" or not shutil.which("objdump"):
        pytest.skip("x86-64 widths, read with objdump")
    regs = {name: set(re.findall(r"%([xyz]mm)\d+", disassembly(name)))
            for name in ("scalar_bw", "sse2_bw", "avx2_bw", "avx512_bw", "sse2_stream", "avx2_stream", "avx512_stream")}
    assert regs["scalar_bw"] == set(), regs
    assert regs["sse2_bw"] == {"xmm"} and regs["sse2_stream"] == {"xmm"}, regs
    assert "ymm" in regs["avx2_bw"] and "zmm" not in regs["avx2_bw"] | regs["avx2_stream"], regs
    assert "ymm" in regs["avx2_stream"], regs
    assert "zmm" in regs["avx512_bw"] and "zmm" in regs["avx512_stream"], regs


# ---- the clock ----

def clock_tree(tmp_path, khz):
    """A sysfs tree with this machine's online CPUs, each with a cpufreq clock (kHz) the test
    sets; the benchmark reads its topology and clocks from it (MEMSCOPE_SYSFS_ROOT)."""
    root = tmp_path / "sys"
    cpu = root / "devices" / "system" / "cpu"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text(pathlib.Path("/sys/devices/system/cpu/online").read_text())
    for c in sorted(os.sched_getaffinity(0)):
        if khz is not None:
            (cpu / f"cpu{c}" / "cpufreq").mkdir(parents=True)
            (cpu / f"cpu{c}" / "cpufreq" / "scaling_cur_freq").write_text(f"{khz}\n")
    return root


def set_clock(root, cpu, khz):
    path = root / "devices" / "system" / "cpu" / f"cpu{cpu}" / "cpufreq" / "scaling_cur_freq"
    tmp = path.with_suffix(".new")
    tmp.write_text(f"{khz}\n")
    tmp.replace(path)       # the benchmark never reads half a number


def bench_while(root, change, *args):
    """Runs a 4-size lat benchmark on CPU 0 of the tree and calls change() once its watch
    over the run has begun (its sampling thread exists: created after the 200 ms probe)."""
    env = dict(os.environ, MEMSCOPE_SYSFS_ROOT=str(root))
    p = subprocess.Popen([str(BENCH), "lat", "--cpu", "0", "--sizes", "4K,64K,1M,8M", "--reps", "8", "--max-reps", "8",
                          "--format", "json", "--no-plot", *map(str, args)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while len(os.listdir(f"/proc/{p.pid}/task")) < 2:
        assert p.poll() is None, "the run ended before its watch began"
        assert time.monotonic() < deadline, "no sampling thread after 120 s"
        time.sleep(0.01)
    change()
    alive = p.poll() is None
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert alive, "the run had ended when the clock changed: nothing to check"
    return json.loads(out), err


def test_a_clock_that_moves_under_the_run_is_said(tmp_path):
    """The clock of the CPU the benchmark runs on goes from 2.0 to 3.0 GHz mid-run: the JSON
    records the lowest and highest reading and the run warns, with the two figures."""
    root = clock_tree(tmp_path, 2000000)
    r, err = bench_while(root, lambda: set_clock(root, 0, 3000000))
    load = r["load"]
    assert load["before"]["freq_mhz_min"] == load["before"]["freq_mhz_max"] == 2000, load
    assert (load["during"]["freq_mhz_min"], load["during"]["freq_mhz_max"]) == (2000, 3000), load
    want = "the CPU clock moved between 2000 and 3000 MHz during this run: every figure scales with it"
    assert load["freq_warning"] == want and want in r["notes"] and not load["reliable"], load
    assert f"memscope-bench: warning: {want}\n" in err, err
    assert load["freq_unknown"] == "", load


def test_an_idle_cpus_clock_is_not_the_runs(tmp_path):
    """Only the clocks of the CPUs the benchmark's threads are on count: another CPU's clock
    moving (a power-saving governor lowers idle CPUs) is no reason to doubt the figures."""
    others = sorted(os.sched_getaffinity(0) - {0})
    if not others or 0 not in os.sched_getaffinity(0):
        pytest.skip("needs CPU 0 and another CPU to run on")

    def idle_clock_moves():
        for c in others:
            set_clock(root, c, 800000)

    root = clock_tree(tmp_path, 2000000)
    r, err = bench_while(root, idle_clock_moves)
    load = r["load"]
    assert (load["during"]["freq_mhz_min"], load["during"]["freq_mhz_max"]) == (2000, 2000), load
    assert load["freq_warning"] == "" and "CPU clock" not in err, (load, err)


def test_without_cpufreq_the_clock_is_unknown_and_says_why(tmp_path):
    root = clock_tree(tmp_path, None)
    r, err = bench_while(root, lambda: None)
    load = r["load"]
    for when in ("before", "during"):
        assert load[when]["freq_mhz_min"] is None and load[when]["freq_mhz_max"] is None, load
    cpu0 = sorted(os.sched_getaffinity(0))[0]
    assert load["freq_unknown"] == (f"the clock was not measured: {root}/devices/system/cpu/cpu{cpu0}/cpufreq/"
                                    "scaling_cur_freq is not there (no cpufreq driver in this kernel)"), load
    assert load["freq_warning"] == "" and "CPU clock" not in err, (load, err)
