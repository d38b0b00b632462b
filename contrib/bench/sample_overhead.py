#!/usr/bin/env python3
"""Cost of sampling page faults with `memscope record --sample` next to `perf record -e
page-faults -d`, on the same workload and period, measured in the same run.

The workload, `hotarray MIB --time`, writes one byte per page of an array (one page fault
each) and prints the wall time of that loop and its own CPU time. Each configuration runs
interleaved with the others (one round runs each once, in an order rotated every round),
repeated; the medians are reported with their distribution-free 95% confidence intervals, and the
load average before and after (the machine may be shared):

- workload loop: the loop's wall time; its ratio to the loop alone in the same round;
- workload CPU: the workload's own CPU time (faults handled, samples written in its context);
- collector CPU: CPU time of the tool's whole process tree minus the workload's own.

perf record post-processes its file at exit (build-ids); that is part of its cost, as
memscope's node lookups (move_pages) and call-chain symbolization inputs are part of memscope's.

The cost of `--alloc` (uprobes on the allocator) is measured apart, on `heaparrays --churn N
BYTES` (N malloc/free pairs, timed by the workload itself: wall time and its own CPU time): small
blocks (under --alloc-min, so only the probes' traps and a size compare) and large ones (every one
recorded), next to bpftrace with the same uprobes when it is installed, counting only, and doing
the same work as --alloc (each recorded block's address, size and return address sent to user
space, and its free).
With --baseline, the fault rows without and with call chains are also measured with that build.

Usage: sample_overhead.py [--build DIR] [--repeat N] [--mib M] [--pairs N] [--baseline DIR]
       [--write docs/performance.md]

--baseline: another build (the code before a change), measured in the same rounds.
"""
import shutil
import argparse
import json
import os
import pathlib
import resource
import subprocess
import tempfile

import perfdoc  # beside this script
from benchutil import with_ci  # beside this script

START, END = "<!-- sample-overhead:start -->", "<!-- sample-overhead:end -->"


def run_once(cmd):
    """(loop wall ms, workload CPU ms, whole tree CPU ms) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    tree = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1e3
    return report["fill_ms"], report["cpu_ms"], tree


def churn_once(cmd):
    """(wall ns, the process's own CPU ns) per malloc/free pair, as the workload measured them."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    return report["ns_per_pair"], report["cpu_ns_per_pair"]


def own_libc():
    for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1]
        if "/libc.so" in path or "/libc-" in path:
            return path
    return None


def alloc_lines(build, memscope, repeat, pairs, tmp, baseline=None):
    out = str(tmp / "a.rec")
    lines = ["", "`--alloc` (allocator uprobes): per `malloc`+`free` pair of `heaparrays --churn %d BYTES`, the "
             "wall time and the process's own CPU time (its traps and probes, not the time it waited for a CPU), "
             "median [95%% confidence interval] of %d rounds (each round runs every configuration once, in an "
             "order rotated every round); the ratios to bpftrace are taken per round:" % (pairs, repeat), "",
             "| run | 64 B blocks (not recorded): wall | CPU | 64 KiB blocks (each recorded): wall | CPU |",
             "|---|---|---|---|---|"]
    libc = own_libc()
    configs = {
        "alone": [],
        "memscope record --sample page-faults": [memscope, "record", "--no-ctl", "--sample", "page-faults",
                                                 "-o", out, "--"],
        "memscope record --sample page-faults --alloc": [memscope, "record", "--no-ctl", "--sample",
                                                         "page-faults", "--alloc", "-o", out, "--"],
    }
    if baseline:
        configs["memscope record --sample page-faults --alloc (baseline)"] = [
            baseline, "record", "--no-ctl", "--sample", "page-faults", "--alloc", "-o", out, "--"]
    if shutil.which("bpftrace") and libc:
        prog = ("uprobe:%s:malloc,uprobe:%s:free { @calls = count(); } uretprobe:%s:malloc { @rets = count(); }"
                % (libc, libc, libc))
        configs["bpftrace, uprobes on malloc (entry, return) and free"] = ["bpftrace", "-q", "-e", prog, "-c"]
        # The same work as --alloc in bpftrace's words: the size of a call of at least 4096 bytes kept
        # per thread, its address, size and return address sent at return, the free of a sent address sent.
        record = ("uprobe:%s:malloc /arg0 >= 4096/ { @size[tid] = arg0; } "
                  "uretprobe:%s:malloc /@size[tid]/ { @sent[pid, retval] = 1; "
                  "printf(\"%%d %%d %%lx %%d %%lx\\n\", pid, tid, retval, @size[tid], reg(\"ip\")); delete(@size[tid]); } "
                  "uprobe:%s:free /@sent[pid, arg0]/ { printf(\"free %%d %%lx\\n\", pid, arg0); "
                  "delete(@sent[pid, arg0]); }" % (libc, libc, libc))
        configs["bpftrace recording each block as --alloc does (printf)"] = ["bpftrace", "-q", "-e", record, "-c"]
    runs = {}
    names = list(configs)
    for size in (64, 65536):
        work = [str(build / "contrib/bench/heaparrays"), "--churn", str(pairs), str(size)]
        for round_ in range(repeat):
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                cmd = configs[name]
                full = cmd + [" ".join(work)] if name.startswith("bpftrace") else cmd + work
                runs.setdefault((name, size), []).append(churn_once(full))
    for name in names:
        lines.append("| `%s` | %s |" % (name, " | ".join(with_ci([r[k] for r in runs[(name, size)]], "%.0f", " ns")
                                                         for size in (64, 65536) for k in (0, 1))))
    for ours in [n for n in names if n.startswith("memscope") and "--alloc" in n]:
        for other in [n for n in names if n.startswith("bpftrace")]:
            ratio = {(size, k): with_ci([o[k] / t[k] for o, t in zip(runs[(ours, size)], runs[(other, size)])], "%.2f")
                     for size in (64, 65536) for k in (0, 1)}
            lines.append("")
            lines.append("- `%s` / `%s`, per round: wall %s (64 B), %s (64 KiB); CPU %s (64 B), %s (64 KiB)" % (
                ours, other, ratio[(64, 0)], ratio[(65536, 0)], ratio[(64, 1)], ratio[(65536, 1)]))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--pairs", type=int, default=200000)
    ap.add_argument("--baseline", help="another build's directory: its memscope is measured too, in the same "
                    "rounds (before and after a change)")
    ap.add_argument("--write")
    args = ap.parse_args()
    baseline = str(pathlib.Path(args.baseline).resolve() / "memscope") if args.baseline else None
    build = pathlib.Path(args.build).resolve()
    memscope = str(build / "memscope")
    work = [str(build / "contrib/bench/hotarray"), str(args.mib), "--time"]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="sample-overhead-"))
    perf_out, ms_out = str(tmp / "perf.data"), str(tmp / "m.rec")
    configs = {
        "alone": work,
        "perf record -e page-faults -c 1 -d": ["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d",
                                               "-o", perf_out, "--"] + work,
        "memscope record --sample page-faults --no-callchain": [
            memscope, "record", "--no-ctl", "--sample", "page-faults", "--no-callchain", "-o", ms_out, "--"] + work,
        # What the frames' own fault counters (page-faults, minor-faults) add to the fault path.
        "memscope record --sample page-faults --no-callchain -e context-switches,cpu-migrations,task-clock": [
            memscope, "record", "--no-ctl", "--sample", "page-faults", "--no-callchain", "-e",
            "context-switches,cpu-migrations,task-clock", "-o", ms_out, "--"] + work,
        "perf record -e page-faults -c 1 -d -g": ["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d",
                                                  "-g", "-o", perf_out, "--"] + work,
        "memscope record --sample page-faults": [memscope, "record", "--no-ctl", "--sample", "page-faults", "-o",
                                                 ms_out, "--"] + work,
    }
    if baseline:
        configs["memscope record --sample page-faults --no-callchain (baseline)"] = [
            baseline, "record", "--no-ctl", "--sample", "page-faults", "--no-callchain", "-o", ms_out, "--"] + work
        configs["memscope record --sample page-faults (baseline)"] = [
            baseline, "record", "--no-ctl", "--sample", "page-faults", "-o", ms_out, "--"] + work
    for cmd in configs.values():  # warm up
        run_once(cmd)
    load_before = os.getloadavg()
    runs = {name: [] for name in configs}
    names = list(configs)
    for round_ in range(args.repeat):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            runs[name].append(run_once(configs[name]))
    load_after = os.getloadavg()
    pages = args.mib * 1024 * 1024 // 4096
    lines = [
        START,
        "Measured with `python3 contrib/bench/sample_overhead.py --build build --repeat %d --mib %d --pairs %d%s` "
        "(workload: `hotarray %d --time`, %s page faults, each one sampled: `-c 1`; %d rounds, each running "
        "every configuration once, in an order rotated every round). Medians with their 95%% confidence "
        "intervals (distribution-free: order statistics); load average %.1f before, %.1f after." % (
            args.repeat, args.mib, args.pairs, " --baseline BASELINE" if baseline else "", args.mib,
            format(pages, ","), args.repeat, load_before[0],
            load_after[0]),
        "",
        "| run | workload loop | loop / alone, same round | workload CPU | collector CPU |",
        "|---|---|---|---|---|",
    ]
    for name, values in runs.items():
        ratio = [v[0] / a[0] for v, a in zip(values, runs["alone"])]
        collector = "-" if name == "alone" else with_ci([v[2] - v[1] for v in values], "%.0f", " ms")
        lines.append("| `%s` | %s | %s | %s | %s |" % (
            name, with_ci([v[0] for v in values], "%.1f", " ms"), with_ci(ratio, "%.2f"),
            with_ci([v[1] for v in values], "%.1f", " ms"), collector))
    pairs = (("memscope record --sample page-faults --no-callchain", "perf record -e page-faults -c 1 -d"),
             ("memscope record --sample page-faults --no-callchain -e context-switches,cpu-migrations,task-clock",
              "perf record -e page-faults -c 1 -d"),
             ("memscope record --sample page-faults", "perf record -e page-faults -c 1 -d -g"))
    lines.append("")
    alone_cpu = [v[1] for v in runs["alone"]]
    for ours, theirs in pairs:
        # Per round: what each tool adds to the workload's CPU time, ours / theirs.
        added = [(o[1] - a) / max(t[1] - a, 1e-3) for o, t, a in zip(runs[ours], runs[theirs], alone_cpu)]
        lines.append("- `%s` / `%s`, per round: loop time %s, workload CPU added %s, collector CPU %s" % (
            ours, theirs, with_ci([o[0] / t[0] for o, t in zip(runs[ours], runs[theirs])], "%.2f"),
            with_ci(added, "%.2f"),
            with_ci([(o[2] - o[1]) / (t[2] - t[1]) for o, t in zip(runs[ours], runs[theirs])], "%.2f")))
    against_baseline = ("memscope record --sample page-faults --no-callchain", "memscope record --sample page-faults")
    for ours in against_baseline if baseline else ():
        theirs = ours + " (baseline)"
        added = [(o[1] - a) / max(t[1] - a, 1e-3) for o, t, a in zip(runs[ours], runs[theirs], alone_cpu)]
        lines.append("- `%s` / baseline, per round: loop time %s, workload CPU added %s" % (
            ours, with_ci([o[0] / t[0] for o, t in zip(runs[ours], runs[theirs])], "%.2f"), with_ci(added, "%.2f")))
    lines += alloc_lines(build, memscope, args.repeat, args.pairs, tmp, baseline)
    lines.append(END)
    text = "\n".join(lines)
    print(text)
    subprocess.run(["rm", "-rf", str(tmp)], check=False)
    if args.write:
        perfdoc.write_section(args.write, "memscope record --sample: sampling overhead", START, END, text)


if __name__ == "__main__":
    main()
