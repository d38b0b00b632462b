#!/usr/bin/env python3
"""A long `memscope record`: does it stay the same size and speed as processes come and go?

One recorder runs for --minutes (60 by default): system-wide (-a) at -I --interval-ms (100: 10 Hz), counting
page faults and context switches, and the eBPF source's per-process series (proc.faults: one
series per process, added when the process is first seen and retired after it exits). Meanwhile
`churn` forks 20 short-lived processes a second, each touching a few pages and then running
/bin/true (an exec: the process takes a new name, which ends its series and starts another). At
1, 10, 30 and 60 minutes (those within the run) and at the end it reports memscope's resident
memory (VmRSS) and open descriptors, the frames written per second since the previous checkpoint,
and the recording's size; after the run, the forks (each with an exec) and the series the
recording added and retired.

With --live, the same churn is watched by `memscope live --no-ui` (the Prometheus exporter left
running), scraped once a second as Prometheus would: the frames come from its
memscope_frames_total and the last column is the stream history it holds (memscope_history_bytes).

A run that leaks shows it as RSS or descriptors growing from one checkpoint to the next; one that
falls behind, as a frame rate under 1000/--interval-ms per second. Not part of the test suite (an hour); its smoke test
runs it for about a second.

Usage: soak.py [--build DIR] [--minutes 60] [--interval-ms 100] [--live] [--write docs/performance.md]
"""
import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import perfdoc  # beside this script

START, END = "<!-- soak:start -->", "<!-- soak:end -->"
LIVE_START, LIVE_END = "<!-- soak-live:start -->", "<!-- soak-live:end -->"
CHECKPOINTS_MIN = (1, 10, 30, 60)
EVENTS = "page-faults,context-switches,proc.faults"
CHURN_RATE = 20


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class FrameCounter:
    """Frames in the recording, and the series it added and retired, read as it grows (whole lines only)."""

    def __init__(self, path):
        self.path, self.offset, self.frames, self.partial = path, 0, 0, b""
        self.added = self.retired = self.brief = 0

    def count(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.frames
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            if line.startswith(b'{"t"'):
                self.frames += 1
            elif line.startswith(b'{"brief"'):
                # Format 5: series whose whole life was one frame, each added and retired.
                n = len(json.loads(line)["brief"])
                self.added, self.retired, self.brief = self.added + n, self.retired + n, self.brief + n
            elif line.startswith((b'{"series"', b'{"retire"')):
                record = json.loads(line)
                if "retire" in record:
                    self.retired += len(record["retire"])
                elif "t" in record:   # the header's series have no time
                    self.added += len(record["series"])
        return self.frames


class Scraper:
    """`memscope live --no-ui` scraped once a second, as Prometheus would; the last scrape's
    frames and history bytes."""

    SAMPLE = re.compile(r"^(memscope_frames_total|memscope_history_bytes) ([0-9.e+]+)$", re.M)

    def __init__(self, proc):
        self.proc, self.url, self.values, self.scrapes = proc, None, {}, 0
        self.lines, self.stop = [], threading.Event()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._scrape, daemon=True).start()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.search(r"at (http://\S+/)\?token=(\w+)", line)
            if m and not self.url:
                self.url = f"{m.group(1)}metrics?token={m.group(2)}"

    def _scrape(self):
        while not self.stop.wait(1.0):
            if not self.url:
                continue
            try:
                text = urllib.request.urlopen(self.url, timeout=5).read().decode()
            except OSError:
                continue
            self.values = {k: float(v) for k, v in self.SAMPLE.findall(text)}
            self.scrapes += 1

    def frames(self):
        return int(self.values.get("memscope_frames_total", 0))

    def size(self):
        return int(self.values.get("memscope_history_bytes", 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--interval-ms", type=int, default=100, help="memscope record -I (frames every N ms)")
    ap.add_argument("--live", action="store_true", help="memscope live --no-ui (the exporter) instead of record")
    ap.add_argument("--write", help="update this markdown file between the soak markers")
    args = ap.parse_args()
    if args.minutes <= 0:
        sys.exit("soak.py: --minutes must be positive")
    if args.interval_ms <= 0:
        sys.exit("soak.py: --interval-ms must be positive")
    build = pathlib.Path(args.build).resolve()
    memscope, churn = build / "memscope", build / "contrib" / "bench" / "churn"
    seconds = args.minutes * 60
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="memscope-soak-"))
    rec = tmp / "soak.rec"
    checkpoints = [m * 60 for m in CHECKPOINTS_MIN if m * 60 < seconds] + [seconds]
    # THREADS 0, IDLE 0, EXEC 1: every child runs /bin/true.
    workload = subprocess.Popen([str(churn), str(CHURN_RATE), str(int(seconds) + 5), "0", "0", "1"],
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
    if args.live:
        recorder = subprocess.Popen([str(memscope), "live", "--no-ui", "--no-ctl", "--listen", "127.0.0.1:0",
                                     "--exit-at-end", "-a", "-I", str(args.interval_ms), "-e", EVENTS,
                                     "--", "sleep", "%.3f" % seconds], stderr=subprocess.PIPE, text=True)
        frames = Scraper(recorder)
        size_of = frames.size
    else:
        recorder = subprocess.Popen([str(memscope), "record", "--no-ctl", "-a", "-I", str(args.interval_ms), "-e",
                                     EVENTS, "-o", str(rec), "--", "sleep", "%.3f" % seconds], stderr=subprocess.PIPE,
                                    text=True)
        frames = FrameCounter(rec)
        size_of = lambda: rec.stat().st_size if rec.exists() else 0  # noqa: E731
    began = time.monotonic()
    rows, last_t, last_frames = [], 0.0, 0
    for at in checkpoints:
        # The last checkpoint is read just before the recorder's own end (it exits at `seconds`).
        time.sleep(max(0.0, began + min(at, seconds - 0.3) - time.monotonic()))
        if recorder.poll() is not None:
            break
        # Memory and descriptors first: counting a large file's new part takes seconds.
        rss, fds, now = rss_kib(recorder.pid), open_fds(recorder.pid), time.monotonic() - began
        if rss == 0:
            break   # already exiting (no memory left to show): not a reading
        n = frames.frames() if args.live else frames.count()
        rows.append((at, rss, fds, (n - last_frames) / (now - last_t), size_of()))
        last_t, last_frames = now, n
    if args.live:
        frames.stop.set()
        recorder.wait()
        err = "".join(frames.lines)
    else:
        _, err = recorder.communicate()
    workload.send_signal(signal.SIGTERM)   # churn stops and prints "forked N"
    try:
        out, _ = workload.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        out = ""
    try:
        os.killpg(workload.pid, 9)
    except ProcessLookupError:
        pass
    workload.wait()
    forked = int(out.split("forked ")[1].split()[0]) if "forked " in out else -1
    if not args.live:
        frames.count()
    subprocess.run(["rm", "-rf", str(tmp)], check=False)
    what = "live" if args.live else "record"
    if recorder.returncode != 0 or not rows:
        sys.exit(f"memscope {what} failed ({recorder.returncode}): {err}")
    if args.live:
        lines = [LIVE_START,
                 "Measured with `python3 contrib/bench/soak.py --build build --minutes %g --interval-ms %d --live`: "
                 "`memscope live --no-ui -a -I %d -e %s`, its /metrics scraped every second, while `churn %d` "
                 "forks %d short-lived processes a second, each of which runs /bin/true." % (
                     args.minutes, args.interval_ms, args.interval_ms, EVENTS, CHURN_RATE, CHURN_RATE),
                 "", "| after | RSS | open fds | frames/s since the previous row | stream history held |"]
    else:
        lines = [START,
                 "Measured with `python3 contrib/bench/soak.py --build build --minutes %g --interval-ms %d`: `memscope "
                 "record -a -I %d -e %s` while `churn %d` forks %d short-lived processes a second, each of which "
                 "runs /bin/true." % (args.minutes, args.interval_ms, args.interval_ms, EVENTS, CHURN_RATE,
                                      CHURN_RATE),
                 "", "| after | RSS | open fds | frames/s since the previous row | recording size |"]
    lines.append("|---|---|---|---|---|")
    for at, rss, fds, rate, size in rows:
        lines.append("| %s | %.1f MiB | %d | %.1f | %s |" % (
            "%g min" % (at / 60) if at >= 60 else "%.1f s" % at, rss / 1024, fds, rate,
            "%.1f MiB" % (size / 2 ** 20) if size >= 2 ** 20 else "%.0f KiB" % (size / 1024)))
    if args.live:
        lines += ["", "churn forked %d processes (each an exec too)." % forked, LIVE_END]
    else:
        lines += ["", "churn forked %d processes (each an exec too); the recording added %d series during the run "
                  "and retired %d." % (forked, frames.added, frames.retired)
                  + (" %d of them were brief (a whole life in one frame: one record, no place in the frames)."
                     % frames.brief if frames.brief else ""), END]
    text = "\n".join(lines)
    print(text)
    if args.write:
        if args.live:
            perfdoc.write_section(args.write, "Long runs", LIVE_START, LIVE_END, text)
        else:
            perfdoc.write_section(args.write, "Long runs", START, END, text)


if __name__ == "__main__":
    main()
