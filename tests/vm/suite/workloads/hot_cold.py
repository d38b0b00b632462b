"""Two anonymous buffers of MIB MiB each: both written once, then only the hot one is written
again and again for SECONDS, one byte of every page a pass (so that a pass takes about a
millisecond, even under TCG, and every DAMON sample finds each page accessed); the cold one is
never touched after the first write. Prints one JSON line with both address ranges first."""
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
parser.add_argument("--apart", action="store_true",
                    help="map the cold buffer MAP_NORESERVE, so the kernel does not merge the two mappings into "
                         "one (a sample's data object is then its own buffer)")
args = parser.parse_args()

libc = ctypes.CDLL(None, use_errno=True)
libc.memset.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
size = args.mib << 20
buffers = {}
for name in ("hot", "cold"):
    noreserve = getattr(mmap, "MAP_NORESERVE", 0x4000) if args.apart and name == "cold" else 0
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | noreserve)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc.memset(addr, 1, size)
    buffers[name] = (buf, addr)
print(json.dumps({"pid": os.getpid(), **{name: [addr, addr + size] for name, (_, addr) in buffers.items()}}),
      flush=True)
hot = buffers["hot"][0]
pages = size // mmap.PAGESIZE
patterns = (bytes([2]) * pages, bytes([3]) * pages)
end = time.monotonic() + args.seconds
i = 0
while time.monotonic() < end:
    hot[::mmap.PAGESIZE] = patterns[i & 1]   # a C loop over the pages
    i += 1
print(json.dumps({"hot_passes": i}), flush=True)
sys.exit(0)
