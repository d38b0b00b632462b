"""Touches NPAGES pages on its own node, prints "ready" and waits for a line on stdin; then fills
node FAST (the node its pages are on) from a child bound to it (numactl --membind), growing up to
as many pages as FAST has free plus 4 times NPAGES, so that FAST's own reclaim (kswapd, or the child's
direct reclaim) must make room: anonymous memory without swap can only be demoted, to the slower
node the kernel picks. It waits until move_pages(2) finds at least 9/10 of its pages on another
node (or 120 s pass), ends the child (FAST has room again), then touches its pages again and again
until node FAST's pgpromote_success has grown by half of NPAGES or 90 s pass. It prints
"done PROMOTED {WHERE}" (WHERE: its pages by node after the fill, as the kernel says) and exits
after one more line on stdin.

    tiered.py NPAGES FAST
    tiered.py --fill NPAGES CHUNK  (the child: touches NPAGES pages, CHUNK at a time, and holds
                                    them until killed)"""
import ctypes
import json
import signal
import subprocess
import sys
import time

from pages import PAGE, Buffer, libc, no_thp

SYS_move_pages = 279  # x86_64


def where(buf):
    """Node of each page of buf (move_pages with no target nodes: a query)."""
    count = buf.npages
    pages = (ctypes.c_void_p * count)(*buf.pages())
    status = (ctypes.c_int * count)()
    if libc.syscall(SYS_move_pages, 0, ctypes.c_ulong(count), pages, None, status, 0) < 0:
        raise OSError(ctypes.get_errno(), "move_pages")
    counts = {}
    for node in status:
        counts[node] = counts.get(node, 0) + 1
    return counts


def node_value(node, name, file="vmstat"):
    for line in open(f"/sys/devices/system/node/node{node}/{file}"):
        words = line.split()
        if file == "vmstat" and words[0] == name:
            return int(words[1])
        if file == "meminfo" and words[2] == name + ":":
            return int(words[3]) * 1024
    raise SystemExit(f"node{node}/{file} has no {name}: no memory tiering in this kernel")


def fill(npages, chunk):
    """Touches npages pages, chunk pages at a time (so pressure grows while the parent watches),
    then holds them until killed."""
    no_thp()
    held = []
    while len(held) * chunk < npages:
        held.append(Buffer(chunk))
        held[-1].touch()
    signal.pause()


def main():
    if sys.argv[1] == "--fill":
        return fill(int(sys.argv[2]), int(sys.argv[3]))
    npages, fast = int(sys.argv[1]), int(sys.argv[2])
    no_thp()
    buf = Buffer(npages)
    buf.touch()
    print("ready", flush=True)
    sys.stdin.readline()
    # At most what FAST has free and 4 times NPAGES more: reclaim demotes other pages of FAST
    # too, so the child grows until the parent sees its own pages gone and ends it.
    fill_pages = node_value(fast, "MemFree", "meminfo") // PAGE + npages * 4
    filler = subprocess.Popen(["numactl", f"--membind={fast}", sys.executable, __file__, "--fill", str(fill_pages),
                               str(npages // 8)],
                              stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    placed = where(buf)
    while placed.get(fast, 0) > npages // 10 and time.monotonic() < deadline:
        time.sleep(0.2)
        placed = where(buf)
    filler.kill()
    filler.wait()
    start, deadline = node_value(fast, "pgpromote_success"), time.monotonic() + 90
    while node_value(fast, "pgpromote_success") - start < npages // 2 and time.monotonic() < deadline:
        buf.touch()
    print(f"done {node_value(fast, 'pgpromote_success') - start} {json.dumps(placed)}", flush=True)
    sys.stdin.readline()   # holds its pages (and their nodes) until the test has read them


if __name__ == "__main__":
    main()
