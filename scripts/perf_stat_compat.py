"""Runs perf's own tests of `perf stat`'s output (tools/perf/tests/shell/
stat+{csv,json,std}_output.sh from Debian's linux-source-6.1 and -6.12) with
memscope in perf's place, one check at a time, and writes the results as
JUnit XML with a table of them on standard output.

Each script is bash with one function per check and a main part that calls
them in turn. A copy of the script (beside it in the cache, so that its
$(dirname $0)/lib/ paths hold) keeps everything up to that main part and ends
by calling the one check named on its command line: a failing check does not
hide the ones after it. `perf` on PATH is a wrapper that runs `memscope stat`
for `perf stat` (or the real perf with --real-perf, to see what perf itself
makes of the same checks on this machine).

Usage: perf_stat_compat.py --memscope BIN --junit FILE SHELL_DIR... """
import argparse
import os
import pathlib
import re
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

SCRIPTS = ("stat+csv_output.sh", "stat+json_output.sh", "stat+std_output.sh")

# Checks that cannot pass for a reason that is perf's own test, not memscope's:
# (linux-source version, script, check) -> the reason. Each is run all the same
# and reported; it counts as skipped, never as passed.
PERF_REASONS = {}

# A top-level call of a check in the main part: `check_x`, `check_x "CSV" "$perf_cmd"`.
CALL = re.compile(r"^\s*(check_\w+)\b(.*)$")
MAIN_START = re.compile(r"^(skip_test=\$\(check_for_topology\)|check_for_topology)\s*$")


def checks_of(text):
    """The checks the main part calls, in order, with their arguments as written."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if MAIN_START.match(line))
    calls = []
    for line in lines[start + 1:]:
        m = CALL.match(line)
        if m:
            calls.append((m.group(1), m.group(2).strip()))
    return start, calls


def driver_copy(script, start):
    """The script up to its main part, then the topology helper and the one check
    named by $MEMSCOPE_PERF_CHECK; written beside the script."""
    lines = script.read_text().splitlines()[:start]
    lines += [
        "# memscope: the main part is replaced by one check, named on the command line.",
        'skip_test=0',
        'if [ "$(check_for_topology)" = 1 ]; then skip_test=1; fi',
        'if [ "$skip_test" = 1 ] && [ "$MEMSCOPE_TOPOLOGY_CHECK" = 1 ]; then',
        '  echo "[Skip] socket id exposed via topology is invalid"; exit 0',
        'fi',
        '# The call as the main part writes it: its arguments are the script\'s own variables.',
        'eval "$MEMSCOPE_PERF_CHECK"',
        'if declare -F cleanup >/dev/null; then cleanup; fi',
        'exit 0',
    ]
    copy = script.with_name(".memscope-" + script.name)
    copy.write_text("\n".join(lines) + "\n")
    return copy


def perf_wrapper(directory, memscope, real_perf):
    """`perf` on PATH: perf stat ARGS runs memscope stat ARGS."""
    path = pathlib.Path(directory) / "perf"
    if real_perf:
        body = f'exec {real_perf} "$@"\n'
    else:
        body = (f'if [ "$1" = stat ]; then shift; exec {memscope} stat "$@"; fi\n'
                'echo "perf $1: only perf stat is run by memscope here" >&2\nexit 127\n')
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def version_of(shell_dir):
    m = re.search(r"linux-source-([0-9.]+)", str(shell_dir))
    return m.group(1) if m else str(shell_dir)


def run_check(copy, check, args, topology, env, timeout):
    env = dict(env, MEMSCOPE_TOPOLOGY_CHECK="1" if topology else "0",
               MEMSCOPE_PERF_CHECK=f"{check} {args}".strip())
    started = time.monotonic()
    try:
        p = subprocess.run(["bash", str(copy)], env=env, capture_output=True, text=True,
                           timeout=timeout, cwd=copy.parent)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out = f"{e.stdout or ''}{e.stderr or ''}\ntimed out after {timeout} s"
        rc = -1
    return rc, out, time.monotonic() - started


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memscope", help="the memscope binary that stands in for perf stat")
    ap.add_argument("--real-perf", help="run this perf instead (to compare)")
    ap.add_argument("--junit", help="write JUnit XML here")
    ap.add_argument("--only", help="run only checks whose name contains this")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("shell_dirs", nargs="+", help="tools/perf/tests/shell of each linux-source")
    a = ap.parse_args()
    if not a.memscope and not a.real_perf:
        ap.error("give --memscope BIN (or --real-perf PERF)")

    suite = ET.Element("testsuite", name="perf-stat-compat")
    rows, counts = [], {"passed": 0, "failed": 0, "skipped": 0}
    per_script = {}
    with tempfile.TemporaryDirectory() as bindir:
        perf_wrapper(bindir, os.path.abspath(a.memscope) if a.memscope else None, a.real_perf)
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
        for shell_dir in map(pathlib.Path, a.shell_dirs):
            version = version_of(shell_dir)
            for name in SCRIPTS:
                script = shell_dir / name
                if not script.exists():
                    continue  # 6.1 has no stat+std_output.sh
                text = script.read_text()
                start, calls = checks_of(text)
                copy = driver_copy(script, start)
                guarded = set()
                in_guard = False
                for line in text.splitlines()[start:]:
                    if re.match(r"^if \[ \$skip_test -ne 1 \]", line):
                        in_guard = True
                    elif line.startswith("else") or line.startswith("fi"):
                        in_guard = False
                    m = CALL.match(line)
                    if m and in_guard:
                        guarded.add(m.group(1))
                for check, args in calls:
                    if a.only and a.only not in check:
                        continue
                    rc, out, seconds = run_check(copy, check, args, check in guarded, env, a.timeout)
                    reason = PERF_REASONS.get((version, name, check))
                    case = ET.SubElement(suite, "testcase", classname=f"linux-{version}.{name}", name=check,
                                         time=f"{seconds:.2f}")
                    if rc == 0 and "[Skip]" in out:
                        outcome = "skipped"
                        ET.SubElement(case, "skipped", message=out.strip()[-300:])
                    elif rc == 0 and "[Success]" in out:
                        outcome = "passed"
                    elif reason:
                        outcome = "skipped"
                        ET.SubElement(case, "skipped", message=f"perf's: {reason}")
                    else:
                        outcome = "failed"
                        ET.SubElement(case, "failure", message=f"exit {rc}").text = out[-4000:]
                    ET.SubElement(case, "system-out").text = out[-4000:]
                    counts[outcome] += 1
                    key = (version, name)
                    per_script.setdefault(key, [0, 0])
                    per_script[key][1] += 1
                    per_script[key][0] += outcome == "passed"
                    last = [l for l in out.strip().splitlines() if l.strip()]
                    rows.append((version, name, check, outcome,
                                 (reason or (last[-1] if last and outcome != "passed" else ""))[:90]))
    for key in ("tests", "failures", "skipped"):
        suite.set(key, str({"tests": sum(counts.values()), "failures": counts["failed"],
                            "skipped": counts["skipped"]}[key]))
    suite.set("errors", "0")
    if a.junit:
        ET.ElementTree(suite).write(a.junit, encoding="unicode", xml_declaration=True)
    width = max((len(r[2]) for r in rows), default=10)
    for version, name, check, outcome, note in rows:
        print(f"{version:5} {name:20} {check:{width}} {outcome:7} {note}")
    for (version, name), (ok, total) in per_script.items():
        print(f"linux-source-{version} {name}: {ok}/{total} passed")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
