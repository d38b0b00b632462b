"""memscope record, replay (stat --input), the control socket and markers, run as a user would."""
import json
import os
import pathlib
import signal
import stat
import statistics
import subprocess
import tempfile
import time

import pytest

from conftest import BUILD, fixture_env, run
from stat_output import counter_output, intervals, parse_csv, totals

PAGE = 4096
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def read_recording(path):
    """(header, frames, other records) of a plain recording, parsed here independently of memscope."""
    lines = pathlib.Path(path).read_text().splitlines()
    header = json.loads(lines[0])
    frames, others = [], []
    for line in lines[1:]:
        rec = json.loads(line)
        (frames if "v" in rec else others).append(rec)
    return header, frames, others


def sums(header, frames):
    """Total of each series over the frames, by series name."""
    out = {}
    for i, s in enumerate(header["series"]):
        out[s["name"]] = sum(f["v"][i] for f in frames if f["v"][i] is not None)
    return out


def stat_input(memscope, path, *args, env=None):
    res = run([memscope, "stat", "-x,", "--self-describing", "--input", str(path)] + list(args), env=env)
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr}"
    return parse_csv(counter_output(res.stderr)), res


def record(memscope, path, args, **kw):
    res = run([memscope, "record", "-o", str(path)] + args, **kw)
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr}"
    return res


def test_record_a_command_then_replay_gives_the_recorded_totals(memscope, touchmem, tmp_path):
    rec = tmp_path / "touch.rec"
    res = record(memscope, rec, ["-I", "20", "--", touchmem, "200"])
    header, frames, others = read_recording(rec)
    assert header["format"] == "memscope-recording" and header["version"] == 5
    assert header["interval_ns"] == 20_000_000
    assert f"wrote {len(frames)} frames" in res.stderr
    assert others[-1]["end"] == "the command exited" and others[-1]["frames"] == len(frames)
    assert len(frames) >= 2, "touchmem 200 takes longer than two 20 ms frames"
    recorded = sums(header, frames)
    # 200 MiB touched page by page: one fault per page, within 2%.
    assert abs(recorded["page-faults"] - 200 * 1024 * 1024 // PAGE) <= 0.02 * 200 * 1024 * 1024 // PAGE
    # Times increase and each frame's interval is what elapsed since the one before.
    for prev, cur in zip(frames, frames[1:]):
        assert cur["t"] > prev["t"] and abs(cur["d"] - (cur["t"] - prev["t"])) < 1_000_000

    rows, _ = stat_input(memscope, rec)
    t = totals(rows)
    for name, value in recorded.items():
        scale = next(s.get("scale", 1.0) for s in header["series"] if s["name"] == name)
        assert t[("total", name)] == pytest.approx(value * scale, rel=1e-12), name
    # Interval lines replay frame by frame, with their recorded times.
    rows, _ = stat_input(memscope, rec, "-I", "20")
    faults = [r["value"] for r in intervals(rows) if r["event"] == "page-faults"]
    assert faults == [f["v"][0] for f in frames]
    times = sorted({float(r["time"]) for r in intervals(rows)})
    assert times == pytest.approx([f["t"] / 1e9 for f in frames], abs=1e-6)


def test_default_file_in_the_current_directory_and_a_backup_of_the_old_one(memscope, tmp_path):
    first = run([memscope, "record", "--", "true"], cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    start1 = json.loads((tmp_path / "memscope.rec").read_text().splitlines()[0])["start"]["unix_ns"]
    second = run([memscope, "record", "--", "true"], cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    start2 = json.loads((tmp_path / "memscope.rec").read_text().splitlines()[0])["start"]["unix_ns"]
    old = json.loads((tmp_path / "memscope.rec.old").read_text().splitlines()[0])["start"]["unix_ns"]
    assert old == start1 and start2 > start1
    assert stat.S_IMODE((tmp_path / "memscope.rec").stat().st_mode) == 0o600


def test_compressed_by_name_or_flag_replays_the_same(memscope, touchmem, tmp_path):
    record(memscope, tmp_path / "c.rec.zst", ["-I", "20", "--", touchmem, "64"])
    record(memscope, tmp_path / "flag.rec", ["-z", "-I", "20", "--", touchmem, "64"])
    for name in ("c.rec.zst", "flag.rec"):
        data = (tmp_path / name).read_bytes()
        assert data[:4] == ZSTD_MAGIC, name
        plain = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout
        header, frames, _ = read_recording_text(plain.decode())
        rows, _ = stat_input(memscope, tmp_path / name)
        assert totals(rows)[("total", "page-faults")] == sums(header, frames)["page-faults"]
        assert abs(sums(header, frames)["page-faults"] - 64 * 256) <= 0.03 * 64 * 256


def read_recording_text(text):
    path = tempfile.NamedTemporaryFile("w", delete=False, suffix=".rec")
    path.write(text)
    path.close()
    try:
        return read_recording(path.name)
    finally:
        os.unlink(path.name)


def kunpeng_replay(path):
    def ddrc(overrides):
        values = {f"hisi_sccl{s}_ddrc{c}/flux_rd/": 0 for s in (1, 3, 5, 7) for c in range(4)}
        values.update(overrides)
        return values
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    lines.append(json.dumps({"t": 1.0, "values": ddrc({"hisi_sccl1_ddrc0/flux_rd/": 1000,
                                                         "hisi_sccl5_ddrc1/flux_rd/": 500})}))
    lines.append(json.dumps({"t": 2.0, "values": ddrc({"hisi_sccl1_ddrc0/flux_rd/": 2000,
                                                         "hisi_sccl3_ddrc2/flux_rd/": 250})}))
    path.write_text("\n".join(lines) + "\n")


def test_a_fixture_recording_reports_identically_on_this_machine(memscope, tmp_path):
    """Recorded 'on' a Kunpeng 920 (its sysfs fixture and replayed counters), reported here without them."""
    replay, rec = tmp_path / "k.jsonl", tmp_path / "kunpeng.rec"
    kunpeng_replay(replay)
    env = fixture_env("kunpeng920-2s")
    metrics = ["-m", "mem.read_bw,mem.read_bytes", "--per-node", "-I", "1000"]
    there = run([memscope, "stat", "-x,", "--self-describing", "--replay", str(replay)] + metrics, env=env)
    assert there.returncode == 0, there.stderr
    record(memscope, rec, ["--replay", str(replay), "-m", "mem.read_bw,mem.read_bytes"], env=env)
    header, frames, _ = read_recording(rec)
    assert header["host"]["fixture"] is True and "hostname" not in header["host"]
    assert {m["name"] for m in header["catalog"]["metrics"] if m["requested"]} == {"mem.read_bw", "mem.read_bytes"}
    assert len(header["host"]["cpus"]) == 32 and header["host"]["nodes"] == [0, 1, 2, 3]

    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMSCOPE_")}
    here, _ = stat_input(memscope, rec, *metrics, env=clean)
    assert parse_csv(counter_output(there.stderr)) == here
    t = totals(here)
    assert t[("node0", "mem.read_bytes")] == 3000 * 32
    assert t[("node2", "mem.read_bytes")] == 500 * 32       # SCCL5 is node 2
    assert t[("node1", "mem.read_bw")] == 250 * 32 / 2.0
    # Without -m, the metrics the recording was made for.
    rows, _ = stat_input(memscope, rec, "--per-node", env=clean)
    assert totals(rows)[("node0", "mem.read_bytes")] == 3000 * 32
    # report names the file it read and counts its frames.
    res = run([memscope, "report", str(rec)], env=clean)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith(f"summary.lua: recording {rec}, {len(frames)} frames, "), res.stdout


def start_recording(memscope, path, args, env=None):
    return subprocess.Popen([memscope, "record", "-o", str(path)] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)


def wait_for_frames(path, n, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_text().count('{"t":') >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {n} frames after {timeout} s")


def test_sigkill_leaves_a_file_readable_up_to_its_last_frame(memscope, tmp_path):
    rec = tmp_path / "killed.rec"
    proc = start_recording(memscope, rec, ["-I", "10", "-a", "--", "sleep", "30"])
    wait_for_frames(rec, 30)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    rows, res = stat_input(memscope, rec)
    assert "it was cut (memscope killed or disk full)" in res.stderr
    n = int(res.stderr.split(" frames read")[0].split()[-1])
    assert n >= 30
    assert totals(rows)[("total", "task-clock")] > 0


def test_sigint_and_sigterm_finish_the_file(memscope, tmp_path):
    for sig in (signal.SIGINT, signal.SIGTERM):
        rec = tmp_path / f"{sig.name}.rec"
        proc = start_recording(memscope, rec, ["-I", "10", "--", "sleep", "30"])
        wait_for_frames(rec, 10)
        proc.send_signal(sig)
        proc.wait(timeout=10)
        assert proc.returncode == 0, proc.stderr.read()
        header, frames, others = read_recording(rec)
        briefs = sum(len(o["brief"]) for o in others if "brief" in o)
        assert others[-1] == {"end": sig.name, "frames": len(frames), "brief_series": briefs}
        _, res = stat_input(memscope, rec)
        assert "cut" not in res.stderr


@pytest.fixture
def small_tmpfs():
    mnt = tempfile.mkdtemp(prefix="memscope-full-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt]).returncode != 0:
        os.rmdir(mnt)
        pytest.skip("cannot mount a tmpfs (needs root)")
    yield pathlib.Path(mnt)
    subprocess.run(["umount", mnt])
    os.rmdir(mnt)


def test_a_full_disk_leaves_a_readable_file_and_says_so(memscope, tmp_path, small_tmpfs):
    # Leave about 24 KiB free, so the recording fills it within a second.
    filler = small_tmpfs / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * (1024 * 1024 - 24 * 1024))
    rec = small_tmpfs / "full.rec"
    # Small frames (-e): -a alone would record top's process table, a few KiB a frame.
    res = run([memscope, "record", "-I", "10", "-a", "-e", "task-clock,page-faults", "-o", str(rec), "--",
               "sleep", "60"], timeout=60)
    assert res.returncode == 1
    assert f"{rec}: the disk is full" in res.stderr
    assert "record to another file system (-o)" in res.stderr
    rows, rep = stat_input(memscope, rec)
    assert "it was cut (memscope killed or disk full)" in rep.stderr
    assert int(rep.stderr.split(" frames read")[0].split()[-1]) > 10
    assert totals(rows)[("total", "task-clock")] > 0


@pytest.fixture
def runtime_dir():
    """A runtime directory others may traverse (pytest's tmp_path is private to root)."""
    d = tempfile.mkdtemp(prefix="memscope-run-")
    os.chmod(d, 0o755)
    yield pathlib.Path(d)
    subprocess.run(["rm", "-rf", d])


def ctl(memscope, args, env, user=None):
    cmd = [memscope, "ctl"] + args
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + cmd
    return run(cmd, env=env, timeout=20)


def wait_for_socket(rundir, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        socks = list((rundir / "memscope").glob("*.sock")) if (rundir / "memscope").exists() else []
        if socks:
            return socks[0]
        time.sleep(0.02)
    raise AssertionError("no control socket appeared")


def test_ctl_pause_resume_interval_and_label_show_in_the_file(memscope, tmp_path, runtime_dir):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    rec = tmp_path / "ctl.rec"
    proc = start_recording(memscope, rec, ["-I", "20", "--", "sleep", "2.5"], env=env)
    sock = wait_for_socket(runtime_dir)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE((runtime_dir / "memscope").stat().st_mode) == 0o700
    wait_for_frames(rec, 5)

    res = ctl(memscope, ["label", "warm", "up", "done"], env)
    assert res.returncode == 0 and res.stdout.startswith("ok: label 'warm up done' at "), res
    res = ctl(memscope, ["pause"], env)
    assert res.returncode == 0 and res.stdout.startswith("ok: paused at "), res
    time.sleep(0.5)
    res = ctl(memscope, ["status"], env)
    assert res.returncode == 0 and ", paused, " in res.stdout and str(rec) in res.stdout, res
    res = ctl(memscope, ["resume"], env)
    assert res.returncode == 0 and res.stdout.startswith("ok: resumed at "), res
    res = ctl(memscope, ["interval", "200"], env)
    assert res.returncode == 0 and res.stdout.startswith("ok: interval 200 ms from "), res
    res = ctl(memscope, ["interval", "0"], env)
    assert res.returncode == 1 and "between 1 and" in res.stderr, res
    res = ctl(memscope, ["explode"], env)
    assert res.returncode == 1 and "unknown command 'explode'" in res.stderr, res
    proc.wait(timeout=20)
    assert proc.returncode == 0, proc.stderr.read()

    header, frames, others = read_recording(rec)
    label = next(o for o in others if "label" in o)
    pause = next(o for o in others if o.get("control") == "pause")
    resume = next(o for o in others if o.get("control") == "resume")
    change = next(o for o in others if o.get("control") == "interval")
    assert label["label"] == "warm up done" and label["t"] < pause["t"]
    assert change["interval_ns"] == 200_000_000
    # Paused: no frame was written; the gap is visible.
    assert not [f for f in frames if pause["t"] < f["t"] < resume["t"]]
    before = [f for f in frames if f["t"] < pause["t"]]
    after = [f for f in frames if f["t"] > resume["t"]]
    assert after[0]["t"] - before[-1]["t"] >= 450_000_000
    # The interval: 20 ms before the change, 200 ms after it (the last frame is partial).
    # Medians: on a busy machine a late tick makes one frame longer and the next shorter.
    assert abs(statistics.median(f["d"] for f in before[1:]) - 20_000_000) < 3_000_000, [f["d"] for f in before]
    late = [f for f in frames if f["t"] > change["t"]][1:-1]
    assert late and abs(statistics.median(f["d"] for f in late) - 200_000_000) < 20_000_000, late
    # The socket is gone with the recorder.
    assert not list((runtime_dir / "memscope").glob("*.sock"))


def fifo_write(path, text):
    """One writer, as `echo ... > FIFO` is: open, write, close."""
    with open(path, "w") as f:
        f.write(text)


def test_fifo_takes_the_control_commands(memscope, tmp_path):
    """--fifo: the socket's commands one per line, as NUMAscope's FIFO takes them. Lines may come
    in pieces and from several writers; a failed command is reported on stderr; the FIFO is
    created 0600 for this user and removed at the end."""
    rec, fifo = tmp_path / "fifo.rec", tmp_path / "ctl.fifo"
    proc = start_recording(memscope, rec, ["-I", "20", "--no-ctl", "--fifo", str(fifo), "--", "sleep", "2.5"])
    wait_for_frames(rec, 5)
    st = fifo.stat()
    assert stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid()
    fifo_write(fifo, "label warm up done\n")
    fifo_write(fifo, "pause\n")
    time.sleep(0.5)
    fifo_write(fifo, "res")               # a line in two writes
    fifo_write(fifo, "ume\nexplode now\n\ninterval 200\n")
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "memscope record: fifo: error: unknown command 'explode'" in err
    assert err.count("fifo:") == 1, err    # ok replies are not printed; a blank line is no command
    header, frames, others = read_recording(rec)
    label = next(o for o in others if "label" in o)
    pause = next(o for o in others if o.get("control") == "pause")
    resume = next(o for o in others if o.get("control") == "resume")
    change = next(o for o in others if o.get("control") == "interval")
    assert label["label"] == "warm up done" and label["t"] < pause["t"] < resume["t"] <= change["t"]
    assert change["interval_ns"] == 200_000_000
    assert not [f for f in frames if pause["t"] < f["t"] < resume["t"]]
    assert resume["t"] - pause["t"] >= 450_000_000
    assert not fifo.exists()


def test_a_label_that_is_not_utf8_is_refused_and_the_recording_goes_on(memscope, tmp_path, runtime_dir):
    """A Latin-1 label (from the FIFO or memscope ctl) is refused on its own with the byte that is
    wrong; the recording goes on, takes the next labels and ends with its end record. A long UTF-8
    label is cut at a whole character, never in the middle of one."""
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    rec, fifo = tmp_path / "latin1.rec", tmp_path / "ctl.fifo"
    proc = start_recording(memscope, rec, ["-I", "20", "--fifo", str(fifo), "--", "sleep", "2"], env=env)
    wait_for_socket(runtime_dir)
    wait_for_frames(rec, 3)
    with open(fifo, "wb") as f:
        f.write(b"label caf\xe9 ready\nphase begin \xff\nlabel after the fifo one\n")
    res = run([memscope, "ctl", "label", b"na\xefve"], env=env, timeout=20)
    assert res.returncode == 1, res
    assert "error: label: byte 3 (0xef) is not UTF-8 text; the label was not recorded" in res.stderr, res
    long_label = "xx" + "\u00e9" * 200         # 402 bytes: the event's 255 end inside an e-acute
    res = ctl(memscope, ["label", long_label], env)
    assert res.returncode == 0 and res.stdout.startswith("ok: label"), res
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "fifo: error: label: byte 4 (0xe9) is not UTF-8 text; the label was not recorded" in err, err
    assert "fifo: error: phase name: byte 1 (0xff) is not UTF-8 text; the phase name was not recorded" in err, err
    header, frames, others = read_recording(rec)
    labels = [o["label"] for o in others if "label" in o]
    assert labels == ["after the fifo one", "xx" + "\u00e9" * 126], labels
    assert others[-1]["end"] == "the command exited" and others[-1]["frames"] == len(frames)


def test_fifo_refuses_paths_others_could_use(memscope, tmp_path):
    rec = tmp_path / "r.rec"
    args = lambda path: [memscope, "record", "-o", str(rec), "--no-ctl", "--fifo", str(path), "--", "true"]
    plain = tmp_path / "plain"
    plain.write_text("keep me\n")
    res = run(args(plain))
    assert res.returncode == 1 and f"--fifo {plain} exists and is not a FIFO but a regular file" in res.stderr
    assert f"make the FIFO before starting memscope: mkfifo {plain}" in res.stderr
    assert plain.read_text() == "keep me\n"
    link = tmp_path / "link"
    os.mkfifo(tmp_path / "target", 0o600)
    link.symlink_to(tmp_path / "target")
    res = run(args(link))
    assert res.returncode == 1 and "is not a FIFO" in res.stderr, res.stderr
    open_fifo = tmp_path / "open.fifo"
    os.mkfifo(open_fifo)
    os.chmod(open_fifo, 0o622)
    res = run(args(open_fifo))
    assert res.returncode == 1 and "has mode 0622: other users may write to it" in res.stderr, res.stderr
    os.chmod(open_fifo, 0o620)
    res = run(args(open_fifo))
    assert res.returncode == 1 and "has mode 0620: other users may write to it" in res.stderr, res.stderr
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs.fifo"
        os.mkfifo(theirs, 0o600)
        os.chown(theirs, 65534, 65534)
        res = run(args(theirs))
        assert res.returncode == 1 and "belongs to uid 65534" in res.stderr, res.stderr
    # A safe FIFO that was there already is used, and left in place.
    mine = tmp_path / "mine.fifo"
    os.mkfifo(mine, 0o600)
    res = run(args(mine))
    assert res.returncode == 0, res.stderr
    assert stat.S_ISFIFO(mine.stat().st_mode)
    assert read_recording(rec)[2][-1]["end"] == "the command exited"


def test_fifo_that_others_may_only_read_is_taken(memscope, tmp_path):
    """mkfifo's default mode (0644 under umask 022): others can read it, not send commands."""
    rec, fifo = tmp_path / "r.rec", tmp_path / "run.fifo"
    os.mkfifo(fifo, 0o644)
    os.chmod(fifo, 0o644)
    res = run([memscope, "record", "-o", str(rec), "--no-ctl", "--fifo", str(fifo), "--", "true"])
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(fifo.stat().st_mode) == 0o644


def test_readme_fifo_example_runs_as_written(memscope, tmp_path):
    """The README's line, with ./app a program that runs a second: the FIFO is made first,
    so the write waits for memscope to open it instead of racing its creation."""
    line = next(l for l in (pathlib.Path(__file__).parents[2] / "README.md").read_text().splitlines()
                if "--fifo run.fifo" in l).split("#")[0].strip()
    assert line.startswith("mkfifo run.fifo;"), line
    app = tmp_path / "app"
    app.write_text("#!/bin/sh\nsleep 1\n")
    app.chmod(0o755)
    for attempt in range(3):
        for f in ("run.fifo", "memscope.rec"):
            (tmp_path / f).unlink(missing_ok=True)
        res = run(["bash", "-c", f"export PATH={pathlib.Path(memscope).parent}:$PATH; {line}; wait"], cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert "fifo" not in res.stderr, res.stderr
        others = read_recording(tmp_path / "memscope.rec")[2]
        assert any(o.get("control") == "pause" for o in others), others


def test_ctl_from_another_user_is_refused(memscope, tmp_path, runtime_dir):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    rec = tmp_path / "private.rec"
    proc = start_recording(memscope, rec, ["-I", "20", "--", "sleep", "2"], env=env)
    sock = wait_for_socket(runtime_dir)
    # The file system refuses first: the directory is 0700, the socket 0600.
    res = ctl(memscope, ["--socket", str(sock), "label", "intruder"], env, user=65534)
    assert res.returncode == 1 and "permission denied" in res.stderr, res
    # With the permissions opened up, the peer credential check still refuses.
    os.chmod(runtime_dir / "memscope", 0o755)
    os.chmod(sock, 0o666)
    res = ctl(memscope, ["--socket", str(sock), "label", "intruder"], env, user=65534)
    assert res.returncode == 1, res
    assert "refused: uid 65534 is neither the user running this memscope (uid 0) nor root" in res.stderr
    # The same user is served.
    res = ctl(memscope, ["--socket", str(sock), "label", "owner"], env)
    assert res.returncode == 0, res
    proc.wait(timeout=20)
    _, _, others = read_recording(rec)
    assert [o["label"] for o in others if "label" in o] == ["owner"]


def test_ctl_record_continues_in_a_new_file(memscope, tmp_path, runtime_dir):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    first, second = tmp_path / "one.rec", tmp_path / "two.rec"
    proc = start_recording(memscope, first, ["-I", "20", "--", "sleep", "1.5"], env=env)
    wait_for_socket(runtime_dir)
    wait_for_frames(first, 10)
    res = run([memscope, "ctl", "record", "two.rec"], env=env, cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith(f"ok: recording to {second}; {first} closed with "), res
    proc.wait(timeout=20)
    h1, f1, o1 = read_recording(first)
    h2, f2, o2 = read_recording(second)
    assert o1[-1]["end"] == "continued in another file" and o2[-1]["end"] == "the command exited"
    assert len(f1) >= 10 and len(f2) >= 10
    assert h1["series"] == h2["series"]


def test_markers_from_the_program_and_from_the_shell(memscope, tmp_path, runtime_dir):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    rec = tmp_path / "phases.rec"
    phases = str(BUILD / "contrib" / "marker" / "phases")
    record(memscope, rec, ["-I", "50", "--", phases, "64"], env=env)
    _, _, others = read_recording(rec)
    labels = [(o["label"], o.get("phase")) for o in others if "label" in o]
    assert labels == [("fill", "begin"), ("fill", "end"), ("scan", "begin"), ("scan", "end"), ("done", None)]
    # The documented shell one-liner, from a script memscope runs.
    script = f'sleep 0.2; {memscope} ctl label "from the shell"; sleep 0.2'
    rec2 = tmp_path / "shell.rec"
    record(memscope, rec2, ["-I", "50", "--", "sh", "-c", script], env=env)
    _, frames, others = read_recording(rec2)
    label = next(o for o in others if "label" in o)
    # After the first sleep, and a sleep before the run's end (ctl itself may take a while to
    # start on a busy machine).
    assert label["label"] == "from the shell", label
    assert 0.15e9 < label["t"] <= frames[-1]["t"] - 0.15e9, (label, frames[-1]["t"])
    # Without memscope the program runs unchanged.
    res = run([phases, "8"], env={k: v for k, v in env.items() if k != "MEMSCOPE_CTL_SOCKET"})
    assert res.returncode == 0 and res.stderr == ""


def test_bad_recordings_are_precise_errors(memscope, tmp_path):
    good = tmp_path / "good.rec"
    record(memscope, good, ["--", "true"])
    lines = good.read_text().splitlines()
    cases = {
        "garbage.rec": (lines[0] + "\n" + "not json at all\n", "garbage.rec:2:"),
        "version.rec": (lines[0].replace('"version":5', '"version":7') + "\n", "format version 7 is newer"),
        "type.rec": (lines[0] + "\n" + '{"t":1,"d":1,"v":"lots"}\n', 'type.rec:2: "v" is a string'),
        "notrec.rec": ("hello world\n", "notrec.rec:1:"),
        "empty.rec": ("", "the file is empty"),
    }
    for name, (content, needle) in cases.items():
        (tmp_path / name).write_text(content)
        res = run([memscope, "stat", "--input", str(tmp_path / name)])
        assert res.returncode == 1 and needle in res.stderr, (name, res.stderr)
        assert "Sanitizer" not in res.stderr


def test_damage_after_good_frames_ends_the_replay_there(memscope, tmp_path):
    """The file is read once, as it is replayed: damage deep in it is found when the replay gets
    there, named by line, and the command fails - a report prints nothing, stat -I has printed
    the intervals before it."""
    good = tmp_path / "good.rec"
    record(memscope, good, ["-I", "10", "--", "sleep", "0.3"])
    lines = good.read_text().splitlines()
    frames = [i for i, line in enumerate(lines) if line.startswith('{"t":')]
    assert len(frames) >= 10, lines
    bad_at = frames[5]    # 0-based: five whole frames come before it
    damaged = tmp_path / "damaged.rec"
    damaged.write_text("\n".join(lines[:bad_at] + ['{"t":1,"d":'] + lines[bad_at + 1:]) + "\n")
    res = run([memscope, "stat", "--input", str(damaged), "-I", "10", "-x,", "--self-describing"])
    assert res.returncode == 1, res.stderr
    assert f"damaged.rec:{bad_at + 1}:" in res.stderr and "after 5 frames" in res.stderr, res.stderr
    times = {r["time"] for r in intervals(parse_csv(counter_output(res.stderr)))}
    assert len(times) == 5, counter_output(res.stderr)
    res = run([memscope, "report", "--lua", "summary.lua", str(damaged)])
    assert res.returncode == 1 and f"damaged.rec:{bad_at + 1}:" in res.stderr, res.stderr
    assert res.stdout == "", res.stdout
    appended = tmp_path / "appended.rec"
    appended.write_text("\n".join(lines + [lines[frames[0]]]) + "\n")
    res = run([memscope, "report", "--lua", "summary.lua", str(appended)])
    assert res.returncode == 1, res.stderr
    assert f"appended.rec:{len(lines) + 1}: a record after the end record" in res.stderr, res.stderr
    res = run([memscope, "stat", "--input", str(tmp_path / "missing.rec")])
    assert res.returncode == 1 and "cannot open" in res.stderr and "memscope record" in res.stderr
    res = run([memscope, "stat", "--input", str(good), "-a"])
    assert res.returncode == 2 and "--input FILE replays a recording" in res.stderr


def test_the_host_description_holds_the_memory_tiers(memscope, tmp_path):
    """The recording says each node's tier, CPUs and kind, NUMA balancing and demotion, as a
    CXL machine's tree describes them, and keeps the tier files for a report."""
    replay, rec = tmp_path / "k.jsonl", tmp_path / "cxl.rec"
    replay.write_text(json.dumps({"format": "memscope-replay", "version": 1}) + "\n" +
                      json.dumps({"t": 1.0, "values": {}}) + "\n")
    record(memscope, rec, ["--replay", str(replay), "-m", "mem.read_bytes"], env=fixture_env("sapphire-rapids-cxl-2s"))
    header, _, _ = read_recording(rec)
    tiers = header["host"]["tiers"]
    assert tiers["nodes"] == [
        {"node": 0, "tier": 4, "cpus": True, "kind": "-"},
        {"node": 1, "tier": 4, "cpus": True, "kind": "-"},
        {"node": 2, "tier": 40, "cpus": False, "kind": "CXL (dax/kmem)"},
        {"node": 3, "tier": 40, "cpus": False, "kind": "CXL (dax/kmem)"},
    ]
    assert tiers["numa_balancing"] == 2 and tiers["demotion_enabled"] is True
    files = header["host"]["files"]
    assert files["sys/devices/virtual/memory_tiering/memory_tier40/nodelist"] == "2-3\n"
    assert files["sys/devices/system/node/node2/access0/initiators/read_latency"] == "250\n"
    assert files["sys/bus/cxl/devices/dax_region1/dax1.0/target_node"] == "3\n"
    assert files["proc/sys/kernel/numa_balancing"] == "2\n"
