#!/usr/bin/env python3
"""Size of a memscope recording: 10 Hz, 20 series, for 60 s, plain and zstd.

Two recorders run at the same time over the same busy system (-a, 9 software events and a tracepoint
on each of the CPUs; with 2 CPUs that is 20 series): one writes JSON Lines, the other the
same through zstd. A workload keeps the counters moving (page faults, context
switches), so the frames hold realistic numbers, not zeros.

Reports bytes per second (whole file / duration) and per frame, and the header's size,
which is paid once.

Usage: recording_size.py [--build DIR] [--seconds 60] [--write docs/performance.md]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import perfdoc  # beside this script

EVENTS = ("page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock,"
          "cpu-clock,alignment-faults,emulation-faults,exceptions:page_fault_user")
START, END = "<!-- recording-size:start -->", "<!-- recording-size:end -->"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--write", help="update this markdown file between the recording-size markers")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    memscope, touchmem = build / "memscope", build / "contrib" / "bench" / "touchmem"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="memscope-size-"))
    workload = subprocess.Popen(["sh", "-c", f"while :; do {touchmem} 32 >/dev/null; sleep 0.05; done"],
                                start_new_session=True)
    recorders = []
    for name in ("size.rec", "size.rec.zst"):
        recorders.append(subprocess.Popen(
            [str(memscope), "record", "--no-ctl", "-I", "100", "-a", "-e", EVENTS, "-o", str(tmp / name),
             "--", "sleep", str(args.seconds)], stderr=subprocess.PIPE, text=True))
    for r in recorders:
        r.wait()
        if r.returncode != 0:
            sys.exit(f"memscope record failed: {r.stderr.read()}")
    os.killpg(workload.pid, 9)
    workload.wait()

    plain = (tmp / "size.rec").read_text().splitlines()
    header = json.loads(plain[0])
    frames = [l for l in plain[1:] if l.startswith('{"t"')]
    nonzero = sum(1 for l in frames for v in json.loads(l)["v"] if v)
    sizes = {name: (tmp / name).stat().st_size for name in ("size.rec", "size.rec.zst")}
    nr_series = len(header["series"])
    lines = [
        START,
        "```",
        f"series: {nr_series} ({len(EVENTS.split(','))} events x {nr_series // len(EVENTS.split(','))} "
        f"CPUs, -a), -I 100 (10 Hz), {args.seconds} s, {len(frames)} frames, {nonzero} non-zero values",
        f"header: {len(plain[0]) + 1} bytes (once per file)",
        f"plain JSON Lines: {sizes['size.rec']:8d} bytes = {sizes['size.rec'] / args.seconds:7.0f} B/s, "
        f"{sum(len(l) + 1 for l in frames) / len(frames):5.1f} B per frame",
        f"zstd (level 3):   {sizes['size.rec.zst']:8d} bytes = {sizes['size.rec.zst'] / args.seconds:7.0f} B/s",
        "```",
        END,
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        perfdoc.write_section(args.write, "Recording size", START, END, text)
    subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
