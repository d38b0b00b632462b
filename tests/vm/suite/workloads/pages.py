"""Anonymous memory touched one byte per page, with THP off for this process, so that
one page of the buffer is exactly one 4 KiB page. Shared by the suite's workloads."""
import ctypes
import mmap
import os

PR_SET_THP_DISABLE = 41
PAGE = os.sysconf("SC_PAGESIZE")
libc = ctypes.CDLL(None, use_errno=True)


def no_thp():
    if libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_THP_DISABLE)")


class Buffer:
    """npages of private anonymous memory, each page written once."""

    def __init__(self, npages):
        self.npages = npages
        self.map = mmap.mmap(-1, npages * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        # The address, for move_pages and for finding the mapping in numa_maps.
        self.address = ctypes.addressof(ctypes.c_char.from_buffer(self.map))

    def touch(self):
        for offset in range(0, self.npages * PAGE, PAGE):
            self.map[offset] = 1

    def pages(self):
        return [self.address + i * PAGE for i in range(self.npages)]


def vmstat():
    with open("/proc/vmstat") as f:
        return {name: int(value) for name, value in (line.split() for line in f)}
