"""Every hint states a fact about the host or file at hand, and the test checks that fact
beside it: -m treated as -e (the rest counted, the missing one named with the resolver's
reason), "the other events are still counted" only where some are, -C's scope named as the
CPUs it counts, a command that cannot be run exits as a shell's would, --explain's
formulas whole, and a misspelt metric gets a suggestion."""
import json
import os
import re
import shutil
import subprocess
import time

from conftest import FIXTURES, ROOT, run
from stat_output import counter_output, messages

def catalog_reason(memscope, metric):
    """The resolver's one-line reason for metric on this host, from list --explain."""
    res = run([memscope, "list", "--explain", metric])
    assert res.returncode == 0, res.stderr
    m = re.search(r"^  NOT AVAILABLE: (.*)$", res.stdout, re.M)
    return m.group(1) if m else None


def test_m_with_one_unavailable_metric_counts_the_rest(memscope, touchmem):
    """-m as -e: an unavailable metric is named with its reason, the rest is counted, exit 0."""
    reason = catalog_reason(memscope, "mem.remote_ratio")
    if reason is None:
        # A host that has the counters: both are counted; nothing to leave out.
        res = run([memscope, "stat", "-x,", "-m", "kernel.faults,mem.remote_ratio", "--", touchmem, "256"])
        assert res.returncode == 0, res.stderr
        return
    res = run([memscope, "stat", "-x,", "--self-describing", "-m", "kernel.faults,mem.remote_ratio", "--",
               touchmem, "256"])
    assert res.returncode == 0, res.stderr
    rows = {f[2]: f[3] for f in (l.split(",") for l in counter_output(res.stderr).splitlines()) if len(f) > 3 and f[0] == "total"}
    # 256 pages touched: at least 256 faults, counted although mem.remote_ratio is not.
    assert float(rows["kernel.faults"]) >= 256, counter_output(res.stderr)
    notes = [l for l in messages(res.stderr).splitlines() if "'mem.remote_ratio'" in l]
    assert len(notes) == 1, res.stderr
    # The reason is the resolver's, the same list --explain gives.
    assert reason in notes[0], (reason, notes)
    assert notes[0].startswith("memscope stat: note: metric 'mem.remote_ratio' is not available on this host: ")
    assert notes[0].endswith("; the other metrics are still counted"), notes


def test_m_with_nothing_countable_exits_1_naming_each(memscope):
    unavailable = [m for m in ("mem.read_bw", "mem.remote_ratio") if catalog_reason(memscope, m)]
    if len(unavailable) < 2:
        return   # a host with the counters counts them; nothing to assert about a failure
    res = run([memscope, "stat", "-m", ",".join(unavailable), "--", "true"])
    assert res.returncode == 1, res
    assert res.stdout == "" and counter_output(res.stderr) == ""
    reasons = "; ".join(f"'{m}': {catalog_reason(memscope, m)}" for m in unavailable)
    assert res.stderr == (f"memscope stat: none of the metrics asked for can be counted on this host: {reasons} "
                          "(memscope list --explain METRIC shows how each is computed)\n"), res.stderr
    # One alone: the message names it, as it always has.
    res = run([memscope, "stat", "-m", unavailable[0], "--", "true"])
    assert res.returncode == 1 and res.stdout == "" and counter_output(res.stderr) == "", res
    assert (f"memscope stat: metric '{unavailable[0]}' is not available on this host: "
            f"{catalog_reason(memscope, unavailable[0])} (memscope list --explain") in res.stderr, res.stderr
    # With an event beside them, the event is counted and they are notes.
    res = run([memscope, "stat", "-x,", "-e", "page-faults", "-m", ",".join(unavailable), "--", "true"])
    assert res.returncode == 0, res.stderr
    assert [l.split(",")[2] for l in counter_output(res.stderr).splitlines()] == ["page-faults"], counter_output(res.stderr)
    assert res.stderr.count("; the rest is still counted") == 2, res.stderr


def test_unknown_metric_beside_a_known_one_stays_a_usage_error(memscope):
    res = run([memscope, "stat", "-m", "kernel.faults,mem.readbw", "--", "true"])
    assert res.returncode == 2, res
    assert "unknown metric 'mem.readbw'; did you mean 'mem.read_bw'?" in res.stderr, res.stderr


def has_core_pmu():
    return os.path.exists("/sys/bus/event_source/devices/cpu") or any(
        d.startswith("armv8") for d in os.listdir("/sys/bus/event_source/devices"))


def test_still_counted_only_where_something_is(memscope):
    if has_core_pmu():
        return   # cycles is counted here: no refusal to word
    res = run([memscope, "stat", "-e", "cycles", "--", "true"])
    assert res.returncode == 1, res
    assert "none of the events can be counted here: 'cycles' <not supported>" in res.stderr, res.stderr
    assert "still counted" not in res.stderr, res.stderr
    # Beside an event that is counted, the note says so, and it is true: page-faults has a value.
    res = run([memscope, "stat", "-x,", "-e", "cycles,page-faults", "--", "true"])
    assert res.returncode == 0, res.stderr
    values = {f[2]: f[0] for f in (l.split(",") for l in counter_output(res.stderr).splitlines())}
    assert values["cycles"] == "<not supported>" and int(values["page-faults"]) > 0, counter_output(res.stderr)
    assert "'cycles' <not supported>: this kernel has no hardware PMU" in res.stderr
    assert messages(res.stderr).rstrip().endswith("; the other events are still counted"), res.stderr


def test_cpu_list_names_the_cpus_it_counts(memscope):
    res = run([memscope, "stat", "-C", "0", "-A", "-e", "page-faults", "--", "sleep", "0.05"])
    assert res.returncode == 0, res.stderr
    assert "Performance counter stats for 'CPU(s) 0':" in counter_output(res.stderr), counter_output(res.stderr)
    assert "system wide" not in counter_output(res.stderr)
    # Every row is CPU 0's: the header and the rows say the same.
    cpus = re.findall(r"^(CPU\d+)\s", counter_output(res.stderr), re.M)
    assert cpus == ["CPU0"], counter_output(res.stderr)


def test_a_command_that_cannot_run_exits_as_a_shell_would(memscope, tmp_path):
    missing = tmp_path / "missing"
    plain = tmp_path / "plain"
    plain.write_text("not a program\n")
    os.chmod(plain, 0o644)
    assert not missing.exists() and not os.access(plain, os.X_OK)
    sh_missing = run(["sh", "-c", f"exec {missing}"]).returncode
    sh_plain = run(["sh", "-c", f"exec {plain}"]).returncode
    assert (sh_missing, sh_plain) == (127, 126)
    for cmd in ("stat", "record"):
        extra = ["-o", str(tmp_path / "r.rec")] if cmd == "record" else []
        res = run([memscope, cmd, *extra, "-e", "page-faults", "--", str(missing)])
        assert res.returncode == sh_missing, (cmd, res)
        assert f"cannot run '{missing}': No such file or directory" in res.stderr
        res = run([memscope, cmd, *extra, "-e", "page-faults", "--", str(plain)])
        assert res.returncode == sh_plain, (cmd, res)
        assert f"cannot run '{plain}': Permission denied" in res.stderr


def test_explain_shows_formulas_whole(memscope, tmp_path):
    """A Zen 5 without its memory PMUs (as in a VM): every formula --explain gives as a
    reason is the catalog's own, whole, not cut in the middle of a name."""
    machine = tmp_path / "zen5-no-umc"
    shutil.copytree(FIXTURES / "epyc-zen5-2s", machine, symlinks=True)
    devices = machine / "sys" / "bus" / "event_source" / "devices"
    for pmu in os.listdir(devices):
        if pmu.startswith("amd_umc_") or pmu == "amd_df":
            path = devices / pmu
            path.unlink() if path.is_symlink() else shutil.rmtree(path)
    catalog = " ".join((ROOT / "catalog" / "pmu" / "amd-zen5.yaml").read_text().split())
    env = {**os.environ, "MEMSCOPE_SYSFS_ROOT": str(machine / "sys")}
    if (machine / "proc").exists():
        env["MEMSCOPE_PROCFS_ROOT"] = str(machine / "proc")
    res = run([memscope, "list", "--explain", "mem.read_bw"], env=env)
    assert res.returncode == 0, res.stderr
    formulas = []
    for line in res.stdout.splitlines():
        for m in re.finditer(r"amd-zen5 mapping \d+ \(", line):
            depth, i = 1, m.end()
            while i < len(line) and depth:
                depth += {"(": 1, ")": -1}.get(line[i], 0)
                i += 1
            assert depth == 0, line
            formulas.append(line[m.end():i - 1])
    # Both of Zen 5's read mappings are shown (UMC CAS, then the twelve DF read beats).
    assert len(formulas) >= 2 and any("df.read_beats_dram11" in f for f in formulas), res.stdout
    for f in formulas:
        assert f"formula: {f}" in catalog, f


def test_explain_suggests_the_closest_metric(memscope):
    res = run([memscope, "list", "--explain", "mem.readbw"])
    assert res.returncode == 1, res
    assert "unknown metric 'mem.readbw'; did you mean 'mem.read_bw'?" in res.stderr, res.stderr
    assert run([memscope, "list", "--explain", "mem.read_bw"]).returncode == 0


def test_list_events_names_every_ebpf_series_e_accepts(memscope):
    """--help says list --events lists every name -e accepts: the eBPF series (docs/bpf.md's
    table) are listed, and each listed one is accepted by -e."""
    res = run([memscope, "list", "--events"])
    assert res.returncode == 0, res.stderr
    section = res.stdout.split("# eBPF probes:")[1].split("\n# ")[0]
    listed = [l.strip() for l in section.splitlines()[1:] if l.strip()]
    documented = set()
    for row in (ROOT / "docs" / "bpf.md").read_text().splitlines():
        if row.startswith("| `proc."):
            documented.update(re.sub(r"\{.*?\}", "", n) for n in re.findall(r"`(proc\.[a-z_]+(?:\{\w+\})?)`",
                                                                          row.split("|")[1]))
    assert set(listed) == documented, (listed, documented)
    # -e takes each (the run may still say eBPF cannot start here; never "unknown event").
    res = run([memscope, "stat", "-e", ",".join(listed), "--", "true"])
    assert "unknown event" not in res.stderr and res.returncode != 2, res.stderr
    assert "# kernel statistics: vmstat/KEY" in counter_output(res.stderr) or "# kernel statistics: vmstat/KEY" in \
        run([memscope, "list", "--events"]).stdout
    # The metric of the same thing has the same name.
    metrics = run([memscope, "list", "--metrics"]).stdout
    assert re.search(r"^proc\.pages_alloc\s", metrics, re.M), metrics
    assert not re.search(r"^proc\.pages_placed\s", metrics, re.M), metrics


def recorded_series(memscope, rec):
    """The series names a recording holds (its header's series table)."""
    names = set()
    with open(rec) as f:
        for line in f:
            obj = json.loads(line)
            for s in obj.get("series", []):
                names.add(s["name"])
    return names


def test_script_hints_state_what_the_recording_holds(memscope, touchmem, tmp_path):
    """numa_balance.lua and remote_ratio.lua over a recording with eBPF series and kernel
    statistics: a missing eBPF series is not blamed on eBPF that did not run (it ran: the file
    has proc.* series), a kernel metric the recorded machine can measure is not sent to 'a host
    that has the counters', and 'per process' rows are there when the hint points at them."""
    rec = tmp_path / "r.rec"
    res = run([memscope, "record", "-o", str(rec), "-e", "proc.pages_alloc", "-m", "numa.local,numa.other", "--",
               touchmem, "20"])
    assert res.returncode == 0, res.stderr
    series = recorded_series(memscope, rec)
    assert "proc.pages_alloc" in series and "proc.migrations" not in series, series
    res = run([memscope, "report", "--lua", "numa_balance.lua", str(rec)])
    assert res.returncode == 0, res.stderr
    assert "which this recording did not run" not in res.stdout, res.stdout
    assert "proc.migrations was not asked of the eBPF probes, which this recording ran (record it: -e " \
        "proc.migrations)" in res.stdout, res.stdout
    # numa.hint_faults: a kernel statistic, available on the machine that made the file (this one).
    assert catalog_reason(memscope, "numa.hint_faults") is None
    assert "on a host that has the counters" not in res.stdout, res.stdout
    assert "numa.hint_faults was not measured in this recording, though its machine has what it needs " \
        "(record with -m numa.hint_faults)" in res.stdout, res.stdout
    res = run([memscope, "report", "--format", "json", "--lua", "remote_ratio.lua", str(rec)])
    assert res.returncode == 0, res.stderr
    objs = [json.loads(l) for l in res.stdout.splitlines()]
    assert not any("see the pid rows above" in o.get("note", "") for o in objs), objs
    by_pid = [o for o in objs if o.get("title", "").startswith("Pages by process")]
    assert len(by_pid) == 1, objs
    # The touchmem child made nearly all of the pages: its row, and shares that add up.
    rows = by_pid[0]["rows"]
    assert abs(sum(r["share"] for r in rows) - 1.0) < 1e-6, rows
    assert max(r["pages"] for r in rows) >= 20 * 256, rows
    # A recording without any eBPF series: then the eBPF did not run, and that is said.
    plain = tmp_path / "plain.rec"
    assert run([memscope, "record", "-o", str(plain), "-e", "page-faults", "--", "true"]).returncode == 0
    assert not any(n.startswith("proc.") for n in recorded_series(memscope, plain))
    res = run([memscope, "report", "--lua", "numa_balance.lua", str(plain)])
    assert "proc.migrations comes from the eBPF probes, which this recording did not run" in res.stdout, res.stdout


def test_report_of_a_recording_being_written_says_so(memscope, tmp_path):
    rec = tmp_path / "live.rec"
    writer = subprocess.Popen([memscope, "record", "-o", str(rec), "-I", "100", "-e", "page-faults", "--",
                               "sleep", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if rec.exists() and sum(1 for l in rec.read_text().splitlines() if '"v"' in l) >= 2:
                break
            time.sleep(0.1)
        res = run([memscope, "report", str(rec)])
        assert writer.poll() is None     # the fact: the recording is still being written
    finally:
        writer.terminate()
        writer.communicate(timeout=60)
    assert f"{rec} is still being written (a memscope record holds its lock)" in res.stderr, res.stderr
    assert "cut" not in res.stderr, res.stderr
    # Ended (SIGTERM: a complete recording): nothing to warn about.
    res = run([memscope, "report", str(rec)])
    assert res.returncode == 0 and "warning" not in res.stderr, res.stderr


def plugin_so(build_dir, name):
    return str(build_dir / "contrib" / "plugins" / f"{name}.so")


def test_plugin_metrics_name_their_plugin_not_the_cpu(memscope, build_dir):
    """A metric only a plugin's family maps (contrib/plugins/*.yaml) is not blamed on the
    CPU when that plugin is not loaded; loaded and unusable here, its own reason (the one
    list --plugins gives) is the one stat gives."""
    import yaml   # the catalog's format: the test reads which metrics each plugin family maps
    maps = {name: set(yaml.safe_load((ROOT / "contrib" / "plugins" / f"{name}.yaml").read_text())["metrics"])
            for name in ("cgroup_memory", "resctrl")}
    res = run([memscope, "list", "--metrics"])
    rows = {l.split()[0]: l for l in res.stdout.splitlines() if l and not l.startswith(" ")}
    for name, metrics in maps.items():
        for metric in metrics:
            row = rows[metric]
            if " no " not in row:
                continue   # this CPU's family maps it and can count it here
            assert "no catalog family for this CPU" not in row, row
            assert (f"a metric of plugin {name}, which is not loaded (memscope --plugin {name}.so" in row or
                    f"; also plugin {name} (not loaded)" in row), row
    # resctrl loaded: what list --plugins says about it is what stat says about its metrics.
    so = plugin_so(build_dir, "resctrl")
    listed = run([memscope, "--plugin", so, "list", "--plugins"]).stdout
    m = re.search(r"available here: (yes|no: ([^;\n]*))", listed)
    assert m, listed
    if m.group(1) == "yes":
        return   # resctrl works here: nothing unavailable to explain
    res = run([memscope, "--plugin", so, "stat", "-m", "mem.total_bw", "--", "true"])
    assert res.returncode == 1, res
    assert m.group(2) in res.stderr, (m.group(2), res.stderr)


def test_top_input_gives_the_recorded_machines_reason(memscope, tmp_path):
    """top --input: a node column n/a because the recorded machine has no PMU for it says
    that (the resolver's reason, as list --explain gives it on that machine: this one), not
    that the recording left it out."""
    rec = tmp_path / "top.rec"
    res = run([memscope, "record", "-a", "-I", "200", "-o", str(rec), "--", "sleep", "0.5"],
              env=dict(os.environ, MEMSCOPE_CTL_SOCKET="/nonexistent/memscope.sock"))
    assert res.returncode == 0, res.stderr
    res = run([memscope, "top", "-b", "--input", str(rec)])
    assert res.returncode == 0, res.stderr
    na = dict(re.findall(r"^na: ([^:]+): (.*)$", res.stdout, re.M))
    for column, metric in (("READ_B/s", "mem.read_bw"), ("REMOTE%", "mem.remote_ratio")):
        reason = catalog_reason(memscope, metric)
        if reason is None:
            assert column not in na or "not in the recording" in na[column], na
            continue
        assert na[column] == f"{metric}: {reason} (on the recorded machine)", na
