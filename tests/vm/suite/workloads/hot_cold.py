"""Two anonymous buffers of MIB MiB each: both written once, then only the hot one is written
again and again for SECONDS (or until the file --until names exists, SECONDS then only bounds a
hang), one byte of every page a pass; the cold one is never touched after the first write.
Prints one JSON line with the pid and both address ranges first, {"looping": 1} once the first
pass is done, and {"hot_passes": N} at the end; then it exits at once (os._exit: no interpreter
teardown, during which the mapped hot buffer would sit idle for seconds on a slow guest).

Each pass ends by flushing the CPU's TLB: DAMON sees an access through the page's Accessed bit,
which a CPU sets when it walks the page table. A real CPU's TLB holds a few thousand pages, so a
64 MiB loop walks for every page; QEMU's emulated TLB grows to hold the whole buffer, and a
process alone on its vCPU would then write it without ever setting an Accessed bit again (DAMON
read the hot buffer as idle for a whole run). Dropping the pages of a small mapping of its own
(64 pages, above the 33 past which Linux flushes the whole TLB rather than page by page:
MADV_DONTNEED) flushes it; MADV_POPULATE_WRITE puts them back for the next pass without a page
fault (a test samples page faults). mprotect would flush too, but each call is an mmap record
for perf, thousands a second."""
import argparse
import ctypes
import json
import mmap
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--mib", type=int, default=64)
parser.add_argument("--seconds", type=float, default=20)
parser.add_argument("--until", help="loop until this file exists")
parser.add_argument("--loop-factor", type=float, default=0,
                    help="loop at least this many times as long as the hot buffer took to be mapped and written "
                         "(its idle time before the loop): a share of time hot that does not depend on the guest's speed")
parser.add_argument("--in-child", action="store_true",
                    help="fork first: the child holds the buffers (and prints), the command waits for it")
parser.add_argument("--apart", action="store_true",
                    help="map the cold buffer MAP_NORESERVE, so the kernel does not merge the two mappings into "
                         "one (a sample's data object is then its own buffer)")
args = parser.parse_args()

if args.in_child:
    child = os.fork()
    if child:
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status))

libc = ctypes.CDLL(None, use_errno=True)
libc.memset.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
MADV_POPULATE_WRITE = 23   # Linux 5.14
size = args.mib << 20
buffers = {}
# The cold buffer first: the hot one is then idle only while it is itself mapped and written
# (page by page: a test samples those first-touch faults to name the buffers).
for name in ("cold", "hot"):
    if name == "hot":
        hot_start = time.monotonic()
    noreserve = getattr(mmap, "MAP_NORESERVE", 0x4000) if args.apart and name == "cold" else 0
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | noreserve)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc.memset(addr, 1, size)
    buffers[name] = (buf, addr)
print(json.dumps({"pid": os.getpid(), **{name: [addr, addr + size] for name, (_, addr) in buffers.items()}}),
      flush=True)
hot = buffers["hot"][0]
FLUSH_PAGES = 64
# Shared: never merged with the (private) buffers' mappings, whose objects tests name.
flusher = mmap.mmap(-1, FLUSH_PAGES * mmap.PAGESIZE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
flusher_addr = ctypes.addressof(ctypes.c_char.from_buffer(flusher))
libc.memset(flusher_addr, 1, FLUSH_PAGES * mmap.PAGESIZE)   # present pages: dropping them flushes
pages = size // mmap.PAGESIZE
patterns = (bytes([2]) * pages, bytes([3]) * pages)
setup = time.monotonic() - hot_start
end = time.monotonic() + max(args.seconds, args.loop_factor * setup)
i = 0
while time.monotonic() < end and not (args.until and os.path.exists(args.until)):
    hot[::mmap.PAGESIZE] = patterns[i & 1]   # a C loop over the pages
    for advice in (mmap.MADV_DONTNEED, MADV_POPULATE_WRITE):
        if libc.madvise(flusher_addr, FLUSH_PAGES * mmap.PAGESIZE, advice) != 0:
            sys.exit(f"madvise {advice}: {os.strerror(ctypes.get_errno())}")
    i += 1
    if i == 1:
        print(json.dumps({"looping": 1}), flush=True)
print(json.dumps({"hot_passes": i, "hot_setup_s": round(setup, 3)}), flush=True)
os._exit(0)
