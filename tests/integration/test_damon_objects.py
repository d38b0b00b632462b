"""DAMON's virtual regions (format version 4: a "damon" record with "pid", written when memscope's
own vaddr kdamond monitors -- CMD or -p) give report --sort obj each data object's hot share: the
bytes of the object's range in hot regions (accessed in at least 50% of an aggregation's samples,
damon.hot_bytes' rule) over the bytes of it the regions covered, over the aggregations of its
process. A hand-made
recording, the shares computed by hand."""
import json

from conftest import run

MiB = 1 << 20
PID, OTHER, UNMONITORED = 4242, 4243, 5000
A = 0x7F0000000000        # 64 MiB anonymous mapping of PID: kept hot
B = 0x7F0010000000        # 64 MiB anonymous mapping of PID: mostly cold
C = 0x7F0020000000        # 16 MiB mapping of UNMONITORED: DAMON never saw it


def hx(v):
    return format(v, "x")


def region(t, start, end, nr_accesses, nr_regions, pid=PID):
    rec = {"damon": [t, hx(start), hx(end), nr_accesses, 1, 20, nr_regions], "nodes": []}
    if pid:
        rec["pid"] = pid
    return rec


def sample(t, pid, addr):
    return {"s": [t, pid, pid, 0, 0, "401000", hx(addr), 0, "page", "0", "0", 0, 1, 1]}


def anon(pid, start, length):
    return {"map": [0, pid, pid, hx(start), hx(length), "0", 3, 0x22, ""]}


HEADER = {"format": "memscope-recording", "version": 4, "memscope": "0.1.0", "interval_ns": 1000000000,
          "target": "hand", "series": [{"name": "damon.aggregations", "kind": "counter"}],
          "sampling": {"events": [{"event": "page-faults", "pmu": "software", "decode": "page-fault"}]}}

RECORDS = [
    {"comm": [0, PID, PID, "app"], "exec": True},
    {"comm": [0, UNMONITORED, UNMONITORED, "other"], "exec": True},
    anon(PID, A, 64 * MiB), anon(PID, B, 64 * MiB), anon(UNMONITORED, C, 16 * MiB),
    # Aggregation 1: A accessed in 20 of 20 samples, B in none.
    region(1000000000, A, A + 64 * MiB, 20, 2),
    region(1000000000, A + 64 * MiB, B + 64 * MiB, 0, 2),
    # Another process's region over the same addresses, hot: not PID's memory.
    region(1000000000, A, B + 64 * MiB, 20, 1, pid=OTHER),
    # A physical region (no pid): not a process's memory either.
    region(1000000000, A, B + 64 * MiB, 20, 1, pid=0),
    {"t": 1000000000, "d": 1000000000, "v": [1]},
    sample(1100000000, PID, A + 4096), sample(1200000000, PID, A + 8192), sample(1300000000, PID, B + 4096),
    sample(1400000000, UNMONITORED, C + 4096),
    # Aggregation 2: A's first 32 MiB at 10 of 20 (50%: hot), then 9 of 20 (45%: not) up to B + 48 MiB,
    # B's last 16 MiB at 20 of 20.
    region(2000000000, A, A + 32 * MiB, 10, 3),
    region(2000000000, A + 32 * MiB, B + 48 * MiB, 9, 3),
    region(2000000000, B + 48 * MiB, B + 64 * MiB, 20, 3),
    {"t": 2000000000, "d": 1000000000, "v": [1]},
    {"end": "the command exited", "frames": 2},
]


def write(path):
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [HEADER] + RECORDS))
    return path


def rows_by_object(memscope, rec):
    res = run([memscope, "report", "--sort", "obj,pid", "--format", "json", str(rec)])
    assert res.returncode == 0, res.stderr
    return {(r["keys"]["obj"], r["keys"]["pid"]): r for r in json.loads(res.stdout)["rows"]}


def test_hot_share_per_object_by_hand(memscope, tmp_path):
    rows = rows_by_object(memscope, write(tmp_path / "hand.rec"))
    a = rows[(f"[anon 0x{hx(A)} 64.0 MiB rw-]", PID)]
    b = rows[(f"[anon 0x{hx(B)} 64.0 MiB rw-]", PID)]
    c = rows[(f"[anon 0x{hx(C)} 16.0 MiB rw-]", UNMONITORED)]
    # A: 64 MiB hot in aggregation 1, 32 MiB in 2: (64 + 32) / (2 x 64) = 75%.
    assert a["hot_share"] == 0.75 and a["samples"] == 2
    # B: 0 in aggregation 1, 16 MiB in 2: 16 / 128 = 12.5%.
    assert b["hot_share"] == 0.125
    # DAMON never monitored UNMONITORED: no share, not 0.
    assert c["hot_share"] is None


def test_hot_column_in_text(memscope, tmp_path):
    res = run([memscope, "report", "--sort", "obj", str(write(tmp_path / "hand.rec"))])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert any("DAMON regions accessed in at least 50%" in l for l in lines), res.stdout
    head = next(l for l in lines if l.lstrip().startswith("Samples"))
    assert "Hot" in head.split()
    a = next(l for l in lines if f"[anon 0x{hx(A)} " in l)
    b = next(l for l in lines if f"[anon 0x{hx(B)} " in l)
    c = next(l for l in lines if f"[anon 0x{hx(C)} " in l)
    assert a.split()[-1] == "75%" and b.split()[-1] == "12%" and c.split()[-1] == "-", (a, b, c)


def test_pid_region_in_a_version_3_file_is_refused(memscope, tmp_path):
    rec = tmp_path / "v3.rec"
    rec.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n"
                           for r in [dict(HEADER, version=3)] + RECORDS))
    res = run([memscope, "report", "--sort", "obj", str(rec)])
    assert res.returncode != 0
    line = 1 + 1 + RECORDS.index(region(1000000000, A, A + 64 * MiB, 20, 2))
    assert f"v3.rec:{line}: a \"damon\" region record with a \"pid\"" in res.stderr, res.stderr
    assert "version 4" in res.stderr


def test_heatmap_of_virtual_regions_only_says_so(memscope, tmp_path):
    rec = tmp_path / "v.rec"
    records = [r for r in RECORDS if not ("damon" in r and "pid" not in r)]
    rec.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [HEADER] + records))
    res = run([memscope, "report", "--heatmap", str(rec)])
    assert res.returncode != 0
    assert "virtual memory only (6;" in res.stderr, res.stderr


def test_the_recorded_damon_hot_threshold_is_used(memscope, tmp_path):
    """record --damon-hot 40 keeps 40 in the header: the 45% region of aggregation 2 is hot too."""
    rec = tmp_path / "hot40.rec"
    header = json.loads(json.dumps(HEADER))
    header["sampling"]["damon_hot_pct"] = 40
    rec.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [header] + RECORDS))
    rows = rows_by_object(memscope, rec)
    # A: 64 + (32 + 32) MiB of 2 x 64 MiB = 100%; B: 0 + (48 + 16) MiB of 128 MiB = 50%.
    assert rows[(f"[anon 0x{hx(A)} 64.0 MiB rw-]", PID)]["hot_share"] == 1.0
    assert rows[(f"[anon 0x{hx(B)} 64.0 MiB rw-]", PID)]["hot_share"] == 0.5


# Version 5: a paddr kdamond's regions (no pid) and, per aggregation, the process's virtual pages
# placed in them through pagemap ("placed": runs of its pages whose frames lie in regions of one
# access count). By hand, 10 samples an aggregation: aggregation 1 places A's 64 MiB at 8 of 10
# (hot) and B's at 0; aggregation 2 places A's first 48 MiB at 6 of 10 (hot), its last 16 MiB at
# 2 of 10, B's first 8 MiB at 9 of 10 and the rest of B at 0; B's last 32 MiB are not resident in
# aggregation 2 (no run covers them).
def placed(t, start, end, nr_accesses, nr_regions):
    return {"damon": [t, hx(start), hx(end), nr_accesses, 1, 10, nr_regions], "nodes": [0], "pid": PID,
            "placed": True}


PLACED = [
    {"comm": [0, PID, PID, "app"], "exec": True},
    anon(PID, A, 64 * MiB), anon(PID, B, 64 * MiB),
    {"damon": [1000000000, "100000000", "140000000", 8, 1, 10, 1], "nodes": [0]},   # physical
    placed(1000000000, A, A + 64 * MiB, 8, 2),
    placed(1000000000, B, B + 64 * MiB, 0, 2),
    {"t": 1000000000, "d": 1000000000, "v": [1]},
    sample(1100000000, PID, A + 4096), sample(1200000000, PID, B + 4096),
    placed(2000000000, A, A + 48 * MiB, 6, 4),
    placed(2000000000, A + 48 * MiB, A + 64 * MiB, 2, 4),
    placed(2000000000, B, B + 8 * MiB, 9, 4),
    placed(2000000000, B + 8 * MiB, B + 32 * MiB, 0, 4),
    {"t": 2000000000, "d": 1000000000, "v": [1]},
    {"end": "the command exited", "frames": 2},
]


def test_hot_share_from_physical_regions_by_hand(memscope, tmp_path):
    rec = tmp_path / "placed.rec"
    rec.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n"
                           for r in [dict(HEADER, version=5)] + PLACED))
    rows = rows_by_object(memscope, rec)
    # A: (64 + 48) MiB hot of (64 + 64) MiB placed = 87.5%.
    assert rows[(f"[anon 0x{hx(A)} 64.0 MiB rw-]", PID)]["hot_share"] == 0.875
    # B: (0 + 8) MiB hot of (64 + 32) MiB placed = 8 / 96.
    assert abs(rows[(f"[anon 0x{hx(B)} 64.0 MiB rw-]", PID)]["hot_share"] - 8 / 96) < 1e-9


def test_placed_region_in_a_version_4_file_is_refused(memscope, tmp_path):
    rec = tmp_path / "v4.rec"
    rec.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [HEADER] + PLACED))
    res = run([memscope, "report", "--sort", "obj", str(rec)])
    assert res.returncode != 0
    line = 1 + 1 + PLACED.index(placed(1000000000, A, A + 64 * MiB, 8, 2))
    assert f"v4.rec:{line}: a \"damon\" region record with \"placed\"" in res.stderr, res.stderr
    assert "version 5" in res.stderr
