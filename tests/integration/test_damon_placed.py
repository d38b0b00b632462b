"""report --sort obj's hot share from physical regions: record --alloc of a command under the
host's own paddr kdamond (read passively) keeps the command's pages placed in each aggregation's
regions through /proc/PID/pagemap ("placed" damon records, format version 5); the 64 MiB block the
command writes over and over gets a high share, the one it wrote once a low one."""
import json
import sys

import pytest

from conftest import run
from test_damon import skip_without_kdamond_and_pagemap

MIB = 1 << 20

# Two 64 MiB blocks from two call sites (the interpreter's bytearray and libc's malloc through
# ctypes, so --alloc names them apart); the second is written once, the first over and over.
WORKLOAD = """
import ctypes, json, os, sys, time
size = 64 << 20
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
hot = bytearray(size)
cold = libc.malloc(size)
ctypes.memset(cold, 1, size)
hot_addr = ctypes.addressof((ctypes.c_char * size).from_buffer(hot))
print(json.dumps({"pid": os.getpid(), "hot": hot_addr, "cold": cold}), flush=True)
mv = memoryview(hot)
n = size // 4096
end = time.monotonic() + float(sys.argv[1])
i = 0
while time.monotonic() < end:
    i += 1
    mv[::4096] = bytes([i & 255]) * n
"""


@pytest.fixture
def running_kdamond(memscope):
    skip_without_kdamond_and_pagemap(memscope, "placing pages in physical regions reads pagemap's page frames: root only")


def test_hot_share_of_two_heap_blocks_from_physical_regions(memscope, running_kdamond, tmp_path):
    """The written block's share >= 80%, the idle one's <= 20%. --damon-hot 20: in the first
    aggregations DAMON's physical regions hold the block's pages together with other memory, so
    their access rate is the block's share of the region (measured at the default 50%, 45 s: 65%
    and 0%; at 20%: 85% and 1.3%). Huge pages (glibc.malloc.hugetlb) keep the blocks physically
    contiguous, which DAMON's regions separate sooner."""
    script = tmp_path / "hc.py"
    script.write_text(WORKLOAD)
    rec = tmp_path / "placed.rec"
    res = run([memscope, "record", "-o", str(rec), "-I", "1000", "--alloc", "--sample", "page-faults",
               "-e", "damon.hot_bytes", "--damon-hot", "20", "--",
               "env", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1", sys.executable, str(script), "60"], timeout=400)
    assert res.returncode == 0, res.stderr
    first = json.loads(res.stdout.splitlines()[0])
    assert json.loads(rec.read_text().splitlines()[0])["version"] == 5
    placed = [json.loads(l) for l in rec.read_text().splitlines() if l.startswith('{"damon"') and '"placed"' in l]
    assert placed and all(r["pid"] == first["pid"] for r in placed), "no placed region of the command"
    rep = run([memscope, "report", "--sort", "obj", "--format", "json", str(rec)])
    assert rep.returncode == 0, rep.stderr
    rows = json.loads(rep.stdout)["rows"]
    # The two blocks' rows, named by their call sites: the cold one was malloc'd through libffi.
    heap = [r for r in rows if r["keys"]["obj"].startswith("heap: 64.0 MiB")]
    assert len(heap) == 2, [r["keys"] for r in rows]
    by_site = {"libffi" in r["keys"]["obj"]: r["hot_share"] for r in heap}
    hot, cold = by_site[False], by_site[True]
    print("hot shares:", hot, cold)
    assert hot is not None and hot >= 0.8, (hot, cold)
    assert cold is not None and cold <= 0.2, (hot, cold)
