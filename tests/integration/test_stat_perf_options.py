"""perf stat's options that scripts rely on, each run with memscope and with perf on the same
workload where perf can run it here (software events, tracepoints), and checked for what the
workload caused: the modifiers, event groups, -n, -q, --log-fd, --append, --summary,
--no-csv-summary, -t, -M."""
import os
import re
import subprocess
import time

from conftest import run
from stat_output import counter_output, messages

PAGES_8MB = 8 * 256


def csv_rows(text):
    return [line.split(",") for line in text.splitlines() if line.strip() and not line.startswith("#")]


def both(memscope, args):
    """memscope's and perf's CSV rows for the same arguments (perf writes them to stderr)."""
    ours = run([memscope, "stat"] + args)
    theirs = run(["perf", "stat"] + [a for a in args if a != "--"])
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    return csv_rows(counter_output(ours.stderr)), csv_rows(theirs.stderr)


def test_user_and_kernel_modifiers_split_the_faults_as_perfs(memscope, touchmem):
    # A tracepoint name with a colon of its own keeps working beside the modifiers.
    for rows in both(memscope, ["-x,", "-e", "page-faults:u,page-faults:k,exceptions:page_fault_user", "--",
                                touchmem, "8"]):
        values = {r[2]: int(r[0]) for r in rows}
        assert set(values) == {"page-faults:u", "page-faults:k", "exceptions:page_fault_user"}, rows
        # touchmem's writes fault in user mode: 2048 of them there, few in the kernel.
        assert PAGES_8MB <= values["page-faults:u"] <= PAGES_8MB * 1.05 + 200, rows
        assert values["page-faults:k"] < PAGES_8MB // 10, rows
        assert abs(values["exceptions:page_fault_user"] - values["page-faults:u"]) <= 64, rows


def test_unknown_modifier_is_named(memscope):
    res = run([memscope, "stat", "-e", "page-faults:x", "--", "true"])
    assert res.returncode == 2
    assert "'page-faults:x': unknown modifier 'x' (perf's: u user, k kernel" in res.stderr, res.stderr


def test_event_group_counts_its_members(memscope, touchmem):
    ours, theirs = both(memscope, ["-x,", "-e", "{page-faults,minor-faults}:u", "--", touchmem, "8"])
    # perf names a group's members without the group's modifiers.
    assert [r[2] for r in ours] == [r[2] for r in theirs] == ["page-faults", "minor-faults"], (ours, theirs)
    for rows in (ours, theirs):
        assert all(PAGES_8MB <= int(r[0]) <= PAGES_8MB * 1.05 + 200 for r in rows), rows
    # A member's own modifiers stay in its name and add to the group's: page-faults:u in a :k
    # group counts user and kernel faults (touchmem's 2048 and more), minor-faults:k the kernel's few.
    ours, theirs = both(memscope, ["-x,", "-e", "{page-faults:u,minor-faults}:k,exceptions:page_fault_user",
                                   "--", touchmem, "8"])
    for rows in (ours, theirs):
        values = {r[2]: int(r[0]) for r in rows}
        assert list(values) == ["page-faults:u", "minor-faults", "exceptions:page_fault_user"], rows
        assert values["page-faults:u"] >= values["exceptions:page_fault_user"] >= PAGES_8MB, rows
        assert values["minor-faults"] < PAGES_8MB // 10, rows
    res = run([memscope, "stat", "-e", "{page-faults", "--", "true"])
    assert res.returncode == 2 and "no '}' closes" in res.stderr, res.stderr


def test_null_run_times_the_command_alone(memscope):
    res = run([memscope, "stat", "-n", "--", "sleep", "0.2"])
    theirs = run(["perf", "stat", "-n", "sleep", "0.2"])
    assert res.returncode == 0 and theirs.returncode == 0
    for text in (counter_output(res.stderr), theirs.stderr):
        assert "Performance counter stats for 'sleep 0.2':" in text
        elapsed = float(re.search(r"^ +(\d+\.\d{9}) seconds time elapsed$", text, re.M).group(1))
        assert 0.2 <= elapsed < 5, text
        assert not re.search(r"page-faults|task-clock", text)
    assert run([memscope, "stat", "-n", "--", "false"]).returncode == 1


def test_quiet_prints_nothing(memscope):
    for tool in ([memscope, "stat"], ["perf", "stat"]):
        res = run(tool + ["--quiet", "-e", "page-faults,cycles", "--", "true"])
        assert res.returncode == 0 and res.stdout == "" and res.stderr == "", (tool, res)


def test_log_fd_and_append(memscope, tmp_path):
    out = tmp_path / "log"
    with open(out, "w") as f:
        res = subprocess.run([memscope, "stat", "--log-fd", str(f.fileno()), "-x,", "-e", "page-faults", "--",
                              "true"], pass_fds=(f.fileno(),), capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == "" and counter_output(res.stderr) == "", res.stderr
    rows = csv_rows(out.read_text())
    assert [r[2] for r in rows] == ["page-faults"] and int(rows[0][0]) > 0, rows
    # perf's --log-fd writes the same fields there.
    theirs = tmp_path / "perf-log"
    with open(theirs, "w") as f:
        subprocess.run(["perf", "stat", "--log-fd", str(f.fileno()), "-x,", "-e", "page-faults", "true"],
                       pass_fds=(f.fileno(),), check=True)
    assert [len(r) for r in csv_rows(theirs.read_text())] == [len(r) for r in rows] == [7]
    for _ in range(2):
        assert run([memscope, "stat", "-o", str(out), "--append", "-e", "page-faults", "--", "true"]).returncode == 0
    text = out.read_text()
    assert text.startswith("page-faults") or text.splitlines()[0].split(",")[2] == "page-faults"
    assert text.count("Performance counter stats for 'true':") == 2, text


def test_summary_after_intervals_as_perfs(memscope):
    args = ["-x,", "-I", "100", "--summary", "-e", "page-faults", "--", "sleep", "0.35"]
    for rows in both(memscope, args):
        intervals = [r for r in rows if re.fullmatch(r" *\d+\.\d{9}", r[0])]
        summary = [r for r in rows if r[0].strip() == "summary"]
        assert len(intervals) >= 3 and len(summary) == 1, rows
        assert len(summary[0][0]) == 16 and summary[0][3] == "page-faults", summary
        # perf says <not counted> for an interval its task did not run in
        assert int(summary[0][1]) == sum(int(r[1]) for r in intervals if r[1] != "<not counted>"), rows
    for rows in both(memscope, args[:4] + ["--no-csv-summary"] + args[4:]):
        totals = [r for r in rows if not re.fullmatch(r" *\d+\.\d{9}", r[0])]
        assert len(totals) == 1 and totals[0][2] == "page-faults" and len(totals[0]) == 7, rows


def test_tid_counts_that_thread(memscope, touchmem):
    busy = subprocess.Popen([touchmem, "4", "--repeat", "1000000"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        for tool in ([memscope, "stat"], ["perf", "stat"]):
            res = run(tool + ["-x,", "-t", str(busy.pid), "-e", "page-faults", "--", "sleep", "0.3"])
            assert res.returncode == 0, res.stderr
            rows = csv_rows(counter_output(res.stderr) if tool[0] == memscope else res.stderr)
            assert len(rows) == 1 and int(rows[0][0]) > 1024, (tool, rows)
        assert busy.poll() is None
    finally:
        busy.kill()
        busy.wait()


def test_capital_m_is_memscopes_metrics(memscope, touchmem):
    rows = {}
    for flag in ("-m", "-M"):
        res = run([memscope, "stat", "-x,", flag, "kernel.faults", "--", touchmem, "8"])
        assert res.returncode == 0, res.stderr
        rows[flag] = [r for r in csv_rows(counter_output(res.stderr)) if r[2] == "kernel.faults"]
        assert len(rows[flag]) == 1 and PAGES_8MB <= float(rows[flag][0][5]) <= PAGES_8MB * 1.05 + 200, rows


def test_memory_flag_counts_the_memory_set(memscope, touchmem):
    res = run([memscope, "stat", "-x,", "--memory", "--", touchmem, "8"])
    assert res.returncode == 0 and messages(res.stderr) == "", res.stderr
    rows = {r[2]: r for r in csv_rows(counter_output(res.stderr))}
    assert list(rows) == ["page-faults", "minor-faults", "major-faults", "context-switches", "cpu-migrations",
                          "task-clock"], rows
    assert PAGES_8MB <= int(rows["page-faults"][0]) <= PAGES_8MB * 1.05 + 200, rows
    assert int(rows["minor-faults"][0]) + int(rows["major-faults"][0]) == int(rows["page-faults"][0]), rows


def test_detailed_levels_add_perfs_cache_events(memscope):
    for flag in ("-d", "-dd", "-ddd"):
        ours, theirs = both(memscope, ["-x,", flag, "--", "true"])
        # perf's lines first, as perf's; memscope's memory-system detail after them.
        assert [r[2] for r in ours[:len(theirs)]] == [r[2] for r in theirs], (flag, ours, theirs)
        assert len(theirs) == {"-d": 12, "-dd": 18, "-ddd": 20}[flag], theirs
        assert all(r[2].startswith(("proc.", "mem.")) for r in ours[len(theirs):]), ours
    # Named with -e, the cache events are perf's encodings: a host without PMU says so for each.
    res = run([memscope, "stat", "-x,", "-e", "page-faults,LLC-load-misses,dTLB-loads", "--", "true"])
    assert res.returncode == 0, res.stderr
    assert [r[2] for r in csv_rows(counter_output(res.stderr))] == ["page-faults", "LLC-load-misses", "dTLB-loads"], counter_output(res.stderr)
    theirs = run(["perf", "stat", "-x,", "-e", "page-faults,LLC-load-misses,dTLB-loads", "true"])
    assert [r[0] for r in csv_rows(counter_output(res.stderr))][1:] == [r[0] for r in csv_rows(theirs.stderr)][1:]


def test_no_big_num_drops_the_thousands_separators(memscope, touchmem):
    lines = {}
    for flag in ([], ["--no-big-num"]):
        res = run([memscope, "stat"] + flag + ["-e", "page-faults", "--", touchmem, "8"])
        assert res.returncode == 0, res.stderr
        lines[bool(flag)] = re.search(r"^ +([\d,]+)      page-faults", counter_output(res.stderr), re.M).group(1)
    assert re.fullmatch(r"\d,\d{3}", lines[False]) and re.fullmatch(r"\d{4}", lines[True]), lines


def test_no_merge_changes_nothing_here(memscope):
    """perf merges an event's PMU instances unless --no-merge; memscope's lines are the same either way
    (perf's own lines, with and without it, name the same events)."""
    args = ["-x,", "-a", "-A", "-e", "page-faults,cpu-clock"]
    for tool in ([memscope, "stat"], ["perf", "stat"]):
        shapes = []
        for extra in ([], ["--no-merge"]):
            res = run(tool + args + extra + ["--", "true"])
            assert res.returncode == 0, res.stderr
            text = counter_output(res.stderr) if tool[0] == memscope else res.stderr
            shapes.append([(r[0], r[3]) for r in csv_rows(text)])
        assert shapes[0] == shapes[1] and len(shapes[0]) >= 4, (tool, shapes)


# Spins until its own CPU time reaches 0.3 s (CPU time, not wall time: the same under any load), then
# prints its own user and system time just before it exits.
SPIN = ("import resource\n"
        "while resource.getrusage(resource.RUSAGE_SELF).ru_utime < 0.3:\n"
        "    sum(range(1000))\n"
        "r = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print(r.ru_utime, r.ru_stime)\n")


def footer(text):
    """From the elapsed time on."""
    return text[text.rindex("\n", 0, text.rindex("seconds time elapsed")) + 1:]


def test_seconds_user_and_sys_are_the_commands_rusage_as_perfs(memscope):
    ours = run([memscope, "stat", "-e", "page-faults", "--", "python3", "-c", SPIN])
    theirs = run(["perf", "stat", "-e", "page-faults", "python3", "-c", SPIN])
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    # perf's footer, byte for byte but the numbers: elapsed, blank, user, sys, two blank lines.
    shape = "N seconds time elapsed\n\n N seconds user\n N seconds sys\n\n\n"
    for text in (counter_output(ours.stderr), theirs.stderr):
        assert re.sub(r" +\d+\.\d{9}", " N", footer(text)).lstrip() == shape, text
    user, sys_ = map(float, re.search(r"^ +(\d+\.\d{6})000 seconds user\n +(\d+\.\d{6})000 seconds sys$",
                                      ours.stderr, re.M).groups())
    own_user, own_sys = map(float, ours.stdout.split())
    # wait4's rusage is the whole process: at least what it saw of itself just before exiting, and
    # the little it spent after (interpreter teardown).
    assert own_user >= 0.3 and own_user <= user <= own_user + 0.1, (user, own_user)
    assert own_sys <= sys_ <= own_sys + 0.1, (sys_, own_sys)


def test_seconds_user_and_sys_only_where_perf_prints_them(memscope):
    cases = [["-n"], ["-a"], ["-r", "2"], ["-x,"], ["-j"], ["-I", "100"], ["-C", "0"]]
    for args in cases:
        events = [] if args == ["-n"] else ["-e", "page-faults"]
        ours = run([memscope, "stat", *args, *events, "--", "sleep", "0.15"])
        theirs = run(["perf", "stat", *args, *events, "sleep", "0.15"])
        assert ours.returncode == 0 and theirs.returncode == 0, (args, ours.stderr, theirs.stderr)
        for text in (counter_output(ours.stderr), theirs.stderr):
            has = bool(re.search(r"^ +\d+\.\d{9} seconds user\n +\d+\.\d{9} seconds sys$", text, re.M))
            assert has == (args == ["-n"]), (args, text)


def test_detailed_adds_the_memory_system_detail_this_host_can_count(memscope, touchmem):
    """-d after perf's cache events: the pages the command placed, in all and on each node (touchmem 64
    writes 64 MiB: at least 16,384 pages), the share of its accesses that went remote, DRAM bandwidth. What
    this host cannot count is named with the reason memscope list --metrics gives for it."""
    res = run([memscope, "stat", "-d", "-x,", "--", touchmem, "64"])
    assert res.returncode == 0, res.stderr
    rows = {r[2]: r for r in csv_rows(counter_output(res.stderr))}
    nodes = sorted(int(d[4:]) for d in os.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", d))
    placed = {n: float(rows[f"proc.pages_alloc@node{n}"][5]) for n in nodes}
    total = float(rows["proc.pages_alloc"][5])
    assert total >= 64 * 256 and sum(placed.values()) == total, rows
    assert rows["proc.pages_alloc"][6] == "pages", rows
    if nodes == [0]:
        assert placed[0] >= 16384, rows
    listing = {line.split()[0]: line for line in run([memscope, "list", "--metrics"]).stdout.splitlines()
               if line.strip()}
    for metric in ("mem.remote_ratio", "mem.read_bw", "mem.write_bw"):
        if metric in rows:
            continue
        why = re.split(r" +(?:yes|no) +", listing[metric], maxsplit=1)[1]
        assert f"note: metric '{metric}' is not available on this host: {why}" in messages(res.stderr), \
            (metric, why, res.stderr)
    # With -e, -d adds nothing of memscope's (perf's -d extends its default set only).
    res = run([memscope, "stat", "-d", "-x,", "-e", "page-faults", "--", "true"])
    assert [r[2] for r in csv_rows(counter_output(res.stderr))] == ["page-faults"], res.stderr
