#!/usr/bin/env python3
"""Short intervals: how many intervals `memscope stat -a -I MS` delivers per second and what
it costs, next to `perf stat -a -I MS`, in the same run.

Events: 16 software and tracepoint events, counted on every CPU (16 x CPUs counters), 16
tracepoints (as many counters, none of them needing a read on another CPU), the two of the quick
start (page-faults,context-switches), and 8 tracepoints. memscope counts tracepoints with eBPF
counters (one per CPU, read from memory) under -a; "memscope (perf tracepoints)" counts them with perf
(MEMSCOPE_PERF_TRACEPOINTS=1), as before, to show the difference in the same run. Each tool runs for --seconds
around `sleep`, alternating with the other, --runs times; its output goes to a file. Per
run: intervals delivered per second (interval lines / events / seconds) and CPU time of the
tool process (user + system, wait4 of the tool: contrib/bench/rusage) per second. Medians
with interquartile ranges. Each run is followed by the same command around `true`: its CPU time is
what starting and ending costs, which a run of a few seconds spreads over its intervals (about
10 ms for either tool: 0.3% of a CPU over 3 s); "CPU while sampling" subtracts its median.

--baseline DIR adds "memscope (baseline)": the same memscope commands from another build (before/after,
in the same alternation). --cases 16,16t,2,8 picks the event sets (16t: the 16 tracepoints).

Usage: interval_rate.py [--build DIR] [--baseline DIR] [--intervals 1,10] [--cases 16,16t,2,8] [--runs N] [--seconds S]
                        [--write docs/performance.md]
"""
import argparse
import os
import pathlib
import statistics
import tempfile

import perfdoc  # beside this script
from benchutil import measured, spread

EVENTS_16 = ("cpu-clock,task-clock,page-faults,minor-faults,major-faults,context-switches,cpu-migrations,"
             "alignment-faults,emulation-faults,sched:sched_switch,sched:sched_wakeup,sched:sched_migrate_task,"
             "sched:sched_process_fork,kmem:mm_page_alloc,kmem:mm_page_free,timer:hrtimer_expire_entry")
EVENTS_2 = "page-faults,context-switches"
TRACEPOINTS_8 = ("sched:sched_switch,sched:sched_wakeup,sched:sched_migrate_task,sched:sched_process_fork,"
                 "kmem:mm_page_alloc,kmem:mm_page_free,timer:hrtimer_expire_entry,irq:softirq_entry")
TRACEPOINTS_16 = TRACEPOINTS_8 + (",sched:sched_wakeup_new,sched:sched_process_exec,sched:sched_process_exit,"
                                  "sched:sched_process_free,timer:hrtimer_start,timer:timer_start,"
                                  "irq:irq_handler_entry,migrate:mm_migrate_pages")
DEFAULT_CASES = "16,16t,2,8"
FLOORS = (("timer", "floor: a timer wake-up alone"),
          ("ipi", "floor: + 7 software counters per CPU, IPIs"),
          ("local", "floor: + 7 software counters, a pinned thread per CPU"))
START, END = "<!-- interval-rate:start -->", "<!-- interval-rate:end -->"


def interval_lines(path):
    count = 0
    for line in pathlib.Path(path).read_text().splitlines():
        try:
            float(line.split(",")[0])
            count += 1
        except ValueError:
            pass
    return count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help="another build directory to compare (e.g. the previous version)")
    ap.add_argument("--intervals", default="1,10")
    ap.add_argument("--cases", default=DEFAULT_CASES,
                    help="event sets: 16 events, 16t: 16 tracepoints, 2 events, 8 tracepoints")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--write")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    memscope = str(build / "memscope")
    intervals = [int(i) for i in args.intervals.split(",")]
    sets = {"16": EVENTS_16, "16t": TRACEPOINTS_16, "2": EVENTS_2, "8": TRACEPOINTS_8}
    cases = [(ms, sets[c]) for ms in intervals for c in args.cases.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out.csv"
        for ms, events in cases:
            nr = len(events.split(","))
            stat = [memscope, "stat", "-a", "-I", str(ms), "-x,", "-o", str(out), "-e", events, "--", "sleep",
                    str(args.seconds)]
            cmds = {
                "memscope": (stat, None, "0"),
                "perf": (["perf", "stat", "-a", "-I", str(ms), "-x,", "-o", str(out), "-e", events, "--", "sleep",
                          str(args.seconds)], None, "0"),
            }
            if args.baseline:
                cmds["memscope (baseline)"] = ([str(pathlib.Path(args.baseline) / "memscope")] + stat[1:], None, "0")
            if events in (TRACEPOINTS_8, TRACEPOINTS_16):
                cmds["memscope (perf tracepoints)"] = (stat, None, "1")
            if events == EVENTS_16:
                # The floor of any reader here, in the same alternation (read_floor.c): the
                # 16 events' 7 software counters per CPU, read with IPIs or from pinned threads.
                floor = str(build / "contrib/bench/read_floor")
                for mode, label in FLOORS:
                    cmds[label] = ([floor, mode, str(ms), "sleep", str(args.seconds)], None, "0")
            res = {name: ([], [], []) for name in cmds}
            names = list(cmds)
            for r in range(args.runs):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    cmd, stdout, perf_tp = cmds[name]
                    os.environ["MEMSCOPE_PERF_TRACEPOINTS"] = perf_tp
                    if cmd[0].endswith("read_floor"):
                        usage = measured(build, cmd[:3] + [cmd[4]])
                        res[name][0].append(float("nan"))
                        res[name][1].append(usage.cpu_s / args.seconds)
                        res[name][2].append(measured(build, cmd[:3] + ["0.001"]).cpu_s)
                        continue
                    usage = measured(build, cmd, stdout=stdout)
                    res[name][0].append(interval_lines(out) / nr / args.seconds)
                    res[name][1].append(usage.cpu_s / args.seconds)
                    # The same command around `true`: start-up and exit alone.
                    once = measured(build, cmd[:-2] + ["true"], stdout=stdout)
                    res[name][2].append(once.cpu_s)
            for name, (rate, cpu, fixed) in res.items():
                # CPU per second of sampling: the run's minus the median start-up and exit.
                startup = statistics.median(fixed)
                res[name] = (rate, cpu, [c - startup / args.seconds for c in cpu], startup)
            results[(ms, events)] = res
        os.environ.pop("MEMSCOPE_PERF_TRACEPOINTS", None)

    lines = [
        START,
        "Measured with `python3 contrib/bench/interval_rate.py --build build%s --intervals %s%s --runs %d "
        "--seconds %g` (%d CPUs; medians of %d alternating runs, interquartile range in brackets; CPU is the "
        "tool's user + system time per second of the run, 100%% = one CPU)." % (
            " --baseline BASE" if args.baseline else "", args.intervals,
            "" if args.cases == DEFAULT_CASES else " --cases " + args.cases, args.runs, args.seconds,
            os.cpu_count(), args.runs),
        "",
        "| -I | events | tool | intervals/s | CPU | CPU / perf's | start-up + exit | CPU while sampling |"
        " / perf's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {EVENTS_16: "16 software + tracepoint", TRACEPOINTS_16: "16 tracepoints",
              EVENTS_2: "page-faults, context-switches", TRACEPOINTS_8: "8 tracepoints"}
    for (ms, events), res in results.items():
        perf_cpu = statistics.median(res["perf"][1])
        perf_steady = statistics.median(res["perf"][2])
        for name, (rate, cpu, steady, startup) in res.items():
            lines.append("| %d ms | %s x %d CPUs | %s | %s | %s | %.2f | %.1f ms | %s | %.2f |" % (
                ms, labels[events], os.cpu_count(), name,
                "-" if rate[0] != rate[0] else spread(rate, "%.0f"), spread(cpu, "%.2f", 100, "%"),
                statistics.median(cpu) / perf_cpu, startup * 1000, spread(steady, "%.2f", 100, "%"),
                statistics.median(steady) / perf_steady))
    lines.append("")
    lines.append("Floors (`contrib/bench/read_floor`, no output): the least a reader costs here: a "
                 "timerfd wake-up every interval alone; with a read of one group of the 7 software counters "
                 "per CPU (another CPU's group is an IPI); with one pinned thread per CPU reading its own.")
    lines.append("Start-up + exit: median CPU time of the same command around `true` (run after each "
                 "measured run); CPU while sampling: the run's CPU minus it, per second.")
    lines.append("Events: 16 = `%s`; 16 tracepoints = `%s`; 8 tracepoints = its first 8." % (
        EVENTS_16, TRACEPOINTS_16))
    lines.append("Load average when the runs ended: %.1f." % os.getloadavg()[0])
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "memscope stat: short intervals", START, END, text)


if __name__ == "__main__":
    main()
