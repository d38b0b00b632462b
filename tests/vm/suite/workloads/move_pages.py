"""move_pages(2) on exactly NPAGES pages: touches them, moves them all to node TARGET and
prints, as JSON, where they were before and after and how /proc/vmstat's migration
counters moved around the call.

    move_pages.py NPAGES TARGET"""
import ctypes
import json
import sys

from pages import Buffer, libc, no_thp, vmstat

SYS_move_pages = 279  # x86_64
MPOL_MF_MOVE = 1 << 1


def move_pages(addresses, nodes):
    """Returns the node (or -errno) of each page; nodes=None only queries."""
    count = len(addresses)
    pages = (ctypes.c_void_p * count)(*addresses)
    targets = (ctypes.c_int * count)(*nodes) if nodes is not None else None
    status = (ctypes.c_int * count)()
    rc = libc.syscall(SYS_move_pages, 0, ctypes.c_ulong(count), pages, targets, status,
                      MPOL_MF_MOVE)
    if rc < 0:
        raise OSError(ctypes.get_errno(), "move_pages")
    return list(status)


def histogram(values):
    counts = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return counts


def main():
    npages, target = int(sys.argv[1]), int(sys.argv[2])
    no_thp()
    buf = Buffer(npages)
    buf.touch()
    before = move_pages(buf.pages(), None)
    stat_before = vmstat()
    moved = move_pages(buf.pages(), [target] * npages)
    stat_after = vmstat()
    after = move_pages(buf.pages(), None)
    json.dump({
        "before": histogram(before),
        "status": histogram(moved),
        "after": histogram(after),
        "vmstat": {k: stat_after[k] - stat_before[k]
                   for k in ("pgmigrate_success", "pgmigrate_fail", "numa_pages_migrated")},
    }, sys.stdout)
    print()


if __name__ == "__main__":
    main()
