"""Touches NPAGES pages, prints "ready" and waits for a line on stdin; then demotes them
through its cgroup's memory.reclaim (anonymous memory without swap can only be demoted) and
touches them again and again until node PROMOTE_TO's pgpromote_success has grown by half of
NPAGES or 90 s pass, prints "done PROMOTED" and exits after one more line on stdin.

    tiered.py NPAGES CGROUP_DIR PROMOTE_TO"""
import sys
import time

from pages import Buffer, no_thp


def promoted(node):
    for line in open(f"/sys/devices/system/node/node{node}/vmstat"):
        name, value = line.split()
        if name == "pgpromote_success":
            return int(value)
    raise SystemExit(f"node{node}/vmstat has no pgpromote_success: no memory tiering in this kernel")


def main():
    npages, cgroup, node = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    no_thp()
    buf = Buffer(npages)
    buf.touch()
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        # Demoted pages do not count as reclaimed (mm/vmscan.c): the write may end in EAGAIN
        # once the cgroup's pages are all on the slower node.
        with open(f"{cgroup}/memory.reclaim", "w") as f:
            f.write(f"{npages * 4096}\n")
    except OSError:
        pass
    start, deadline = promoted(node), time.monotonic() + 90
    while promoted(node) - start < npages // 2 and time.monotonic() < deadline:
        buf.touch()
    print(f"done {promoted(node) - start}", flush=True)
    sys.stdin.readline()   # holds its pages (and their nodes) until the test has read them


if __name__ == "__main__":
    main()
