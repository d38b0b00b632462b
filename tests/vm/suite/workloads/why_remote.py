"""A process on node 0's CPU whose pages end up (or stay) away from where it asks, each for one
cause "why is this page remote" names. Prints, as JSON, where its NPAGES pages are (move_pages(2)
with no target: the kernel's answer) and how /proc/vmstat's migration counters moved.

    why_remote.py first-touch NPAGES   the main thread maps the pages, a thread pinned to CPU 1
                                       (node 1) touches them first: the default policy puts
                                       them on node 1
    why_remote.py pinned NPAGES        the pages are touched on node 0, each is put into a pipe
                                       with vmsplice(2) (the pipe holds a reference on it), and
                                       move_pages(2) asks them onto node 1: every migration
                                       fails (the kernel cannot move a page others hold)"""
import ctypes
import fcntl
import json
import os
import sys
import threading

from move_pages import MPOL_MF_MOVE, SYS_move_pages, histogram
from pages import PAGE, Buffer, libc, no_thp, vmstat

SYS_vmsplice = 278  # x86_64
F_SETPIPE_SZ = 1031
KEYS = ("pgmigrate_success", "pgmigrate_fail", "numa_pages_migrated", "numa_hint_faults")


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def nodes_of(buf, targets=None):
    count = buf.npages
    pages = (ctypes.c_void_p * count)(*buf.pages())
    nodes = (ctypes.c_int * count)(*targets) if targets else None
    status = (ctypes.c_int * count)()
    rc = libc.syscall(SYS_move_pages, 0, ctypes.c_ulong(count), pages, nodes, status, MPOL_MF_MOVE if targets else 0)
    if rc < 0:
        raise OSError(ctypes.get_errno(), "move_pages")
    return rc, histogram(status)


def main():
    mode, npages = sys.argv[1], int(sys.argv[2])
    no_thp()
    os.sched_setaffinity(0, {0})
    buf = Buffer(npages)
    out = {"pid": os.getpid()}
    before = vmstat()
    if mode == "first-touch":
        def touch():
            os.sched_setaffinity(0, {1})
            buf.touch()
        t = threading.Thread(target=touch)
        t.start()
        t.join()
        out["where"] = nodes_of(buf)[1]
    elif mode == "pinned":
        buf.touch()
        out["before"] = nodes_of(buf)[1]
        r, w = os.pipe()
        fcntl.fcntl(w, F_SETPIPE_SZ, npages * PAGE)
        for address in buf.pages():
            iov = Iovec(address, PAGE)
            if libc.syscall(SYS_vmsplice, w, ctypes.byref(iov), ctypes.c_ulong(1), 0) != PAGE:
                raise OSError(ctypes.get_errno(), "vmsplice")
        before = vmstat()
        out["not_moved"], out["status"] = nodes_of(buf, [1] * npages)
        out["where"] = nodes_of(buf)[1]
        os.close(r)
        os.close(w)
    else:
        raise SystemExit(f"unknown mode {mode}")
    after = vmstat()
    out["vmstat"] = {k: after.get(k, 0) - before.get(k, 0) for k in KEYS}
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
