"""How record creates its file when it runs as root in a directory another user can write: links,
devices and FIFOs at the name are refused and never written through, also when the name is swapped
while record starts; a running recording is never moved away by a second record. The other user is
`nobody` (setpriv), the victim a root-owned 0600 file that must come out unchanged."""
import json
import os
import pathlib
import re
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import run

NOBODY = 65534
# The other user runs Python as installed for everyone (a pyenv in root's home is not theirs).
SYSTEM_PYTHON = "/usr/bin/python3"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the attacks are on a root-run memscope")


def as_nobody(cmd, **kw):
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] + cmd


@pytest.fixture
def shared_dir():
    """A sticky, world-writable directory like /tmp, with a root-owned secret beside it."""
    top = pathlib.Path(tempfile.mkdtemp(prefix="memscope-shared-"))
    os.chmod(top, 0o755)
    shared = top / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    victim = top / "secret"
    victim.write_text("root's secret\n")
    os.chmod(victim, 0o600)
    yield shared, victim
    subprocess.run(["rm", "-rf", str(top)])


def record(memscope, *args, cwd, timeout=60):
    return run([memscope, "record", "-I", "20", "-e", "page-faults", *args, "--", "true"], cwd=cwd, timeout=timeout)


def frames_in(path):
    return sum(1 for line in pathlib.Path(path).read_text().splitlines() if line.startswith('{"t":'))


def test_a_link_at_the_name_is_refused_and_its_target_untouched(memscope, shared_dir):
    shared, victim = shared_dir
    subprocess.run(as_nobody(["ln", "-s", str(victim), str(shared / "memscope.rec")]), check=True)
    subprocess.run(as_nobody(["ln", "-s", str(victim), str(shared / "other.rec")]), check=True)
    for args in ((), ("-o", "other.rec"), ("-o", str(shared / "other.rec"))):
        res = record(memscope, *args, cwd=shared)
        assert res.returncode == 1, res
        assert "is a symbolic link, not a recording: memscope never writes through it; remove it or " \
               "choose another file with -o" in res.stderr
        assert victim.read_text() == "root's secret\n"
        assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    # A link waiting at NAME.old: the real recording is moved over the link, never into its target.
    os.unlink(shared / "memscope.rec")
    assert record(memscope, cwd=shared).returncode == 0
    subprocess.run(as_nobody(["ln", "-s", str(victim), str(shared / "memscope.rec.old")]), check=True)
    res = record(memscope, cwd=shared)
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "root's secret\n"
    assert not (shared / "memscope.rec.old").is_symlink()
    assert frames_in(shared / "memscope.rec.old") >= 1
    # No temporary file is left behind.
    assert sorted(p.name for p in shared.iterdir()) == ["memscope.rec", "memscope.rec.old", "other.rec"]


def test_devices_and_fifos_are_refused_without_blocking(memscope, shared_dir):
    shared, _ = shared_dir
    subprocess.run(as_nobody(["mkfifo", str(shared / "fifo.rec")]), check=True)
    subprocess.run(as_nobody(["ln", "-s", "fifo.rec", str(shared / "to-fifo.rec")]), check=True)
    subprocess.run(as_nobody(["ln", "-s", "/dev/null", str(shared / "to-null.rec")]), check=True)
    os.mknod(shared / "null.rec", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    (shared / "dir.rec").mkdir()
    cases = {"fifo.rec": "is a FIFO", "to-fifo.rec": "is a symbolic link", "to-null.rec": "is a symbolic link",
             "null.rec": "is a character device", "dir.rec": "is a directory"}
    for name, kind in cases.items():
        start = time.monotonic()
        res = record(memscope, "-o", name, cwd=shared, timeout=20)
        assert res.returncode == 1, (name, res)
        assert f"memscope record: {name} {kind}, not a recording" in res.stderr, res.stderr
        assert time.monotonic() - start < 10
    assert stat.S_ISFIFO((shared / "fifo.rec").lstat().st_mode)
    assert stat.S_ISCHR((shared / "null.rec").lstat().st_mode)


FLIPPER = r"""
import os, sys
target, victim = sys.argv[1], sys.argv[2]
d = os.path.dirname(target)
i = 0
while not os.path.exists(os.path.join(d, "stop")):
    i += 1
    tmp = os.path.join(d, "flip%d" % (i % 2))
    try:
        if i % 8 == 0:
            os.unlink(target)
        elif i % 8 != 1:
            os.symlink(victim, tmp)
            os.rename(tmp, target)
        else:
            with open(tmp, "w") as f:
                f.write("not a recording")
            os.rename(tmp, target)
    except OSError:
        pass
"""


def test_racing_the_name_never_writes_the_victim(memscope, shared_dir):
    """Another user swaps memscope.rec between a link to the victim (mostly), a file of theirs and
    nothing, as fast as they can, while root starts record again and again."""
    shared, victim = shared_dir
    flipper_py = shared.parent / "flipper.py"
    flipper_py.write_text(FLIPPER)
    os.chmod(flipper_py, 0o644)
    flipper = subprocess.Popen(as_nobody([SYSTEM_PYTHON, str(flipper_py), str(shared / "memscope.rec"),
                                          str(victim)]))
    outcomes = {"wrote": 0, "refused": 0}
    try:
        deadline = time.time() + 10
        while not os.path.lexists(shared / "memscope.rec") and time.time() < deadline:
            time.sleep(0.01)
        assert flipper.poll() is None, "the other user's flipper did not start"
        for _ in range(30):
            res = record(memscope, cwd=shared, timeout=30)
            assert victim.read_text() == "root's secret\n", res.stderr
            if res.returncode == 0:
                outcomes["wrote"] += 1
                assert re.search(r"wrote \d+ frames \(\d+ bytes\) to memscope.rec", res.stderr), res.stderr
            else:
                outcomes["refused"] += 1
                assert "memscope never writes through it" in res.stderr or \
                       "keeps appearing under that name" in res.stderr or \
                       "cannot be kept as" in res.stderr, res.stderr
    finally:
        (shared / "stop").touch()
        flipper.wait(timeout=10)
    assert victim.read_text() == "root's secret\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert outcomes["wrote"] + outcomes["refused"] == 30
    # Whatever root wrote is root's own 0600 file, never the other user's.
    for p in shared.iterdir():
        if p.is_file() and not p.is_symlink() and p.read_text().startswith('{"format"'):
            assert p.stat().st_uid == 0 and stat.S_IMODE(p.stat().st_mode) == 0o600


def test_a_second_record_never_moves_a_running_recording(memscope, tmp_path):
    """Two (or three) records in one directory: the one that starts while another writes memscope.rec
    refuses and says why; the first keeps its file and its frames; a later one keeps it as .old."""
    first = subprocess.Popen([memscope, "record", "-I", "20", "-e", "page-faults", "--", "sleep", "1.5"],
                             cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while not (tmp_path / "memscope.rec").exists() and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    for _ in range(2):
        res = record(memscope, cwd=tmp_path)
        assert res.returncode == 1, res
        assert "memscope record: memscope.rec is being written by another memscope record (it holds the " \
               "file's lock): it is not moved away; choose another file with -o or wait for that recording " \
               "to end" in res.stderr
    _, err = first.communicate(timeout=30)
    assert first.returncode == 0, err
    wrote = int(re.search(r"wrote (\d+) frames", err).group(1))
    assert wrote >= 20
    assert frames_in(tmp_path / "memscope.rec") == wrote
    assert not (tmp_path / "memscope.rec.old").exists()
    # Once it has ended, the next record keeps it as memscope.rec.old, as perf keeps perf.data.old.
    res = record(memscope, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert frames_in(tmp_path / "memscope.rec.old") == wrote
    assert json.loads((tmp_path / "memscope.rec").read_text().splitlines()[-1])["end"] == "the command exited"


def test_a_running_old_file_is_not_replaced(memscope, tmp_path):
    """memscope.rec.old being written (someone recorded to that name) is not replaced by keeping
    memscope.rec as .old."""
    (tmp_path / "memscope.rec").write_text("")
    running = subprocess.Popen([memscope, "record", "-o", "memscope.rec.old", "-I", "20", "-e", "page-faults",
                                "--", "sleep", "1"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while not (tmp_path / "memscope.rec.old").exists() and time.time() < deadline:
        time.sleep(0.02)
    res = record(memscope, cwd=tmp_path)
    assert res.returncode == 1, res
    assert "memscope.rec.old is being written by another memscope record" in res.stderr
    _, err = running.communicate(timeout=30)
    assert running.returncode == 0, err
    assert frames_in(tmp_path / "memscope.rec.old") == int(re.search(r"wrote (\d+) frames", err).group(1))


def test_ctl_record_to_a_link_is_refused_and_the_recording_goes_on(memscope, shared_dir):
    shared, victim = shared_dir
    rundir = pathlib.Path(tempfile.mkdtemp(prefix="memscope-run-"))
    env = dict(os.environ, XDG_RUNTIME_DIR=str(rundir))
    subprocess.run(as_nobody(["ln", "-s", str(victim), str(shared / "next.rec")]), check=True)
    try:
        proc = subprocess.Popen([memscope, "record", "-o", "first.rec", "-I", "20", "-e", "page-faults", "--",
                                 "sleep", "1.5"], cwd=shared, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while not list(rundir.glob("memscope/*.sock")) and time.time() < deadline:
            time.sleep(0.02)
        res = run([memscope, "ctl", "record", "next.rec"], cwd=shared, env=env, timeout=20)
        assert res.returncode == 1
        assert res.stderr.startswith(f"memscope ctl: error: {shared / 'next.rec'} is a symbolic link, not a recording"), res
        assert res.stderr.rstrip().endswith("(still recording to first.rec)"), res
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert victim.read_text() == "root's secret\n"
        assert frames_in(shared / "first.rec") >= 20
    finally:
        subprocess.run(["rm", "-rf", str(rundir)])


DIR_LOCKER = r"""
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)
"""


def test_another_user_locking_the_directory_never_stops_root(memscope, shared_dir):
    """nobody holds flock() on the shared directory (any user who can read it can): root's record
    and ctl record there still create their files (they used to give up after 2 s)."""
    shared, _ = shared_dir
    locker_py = shared.parent / "locker.py"
    locker_py.write_text(DIR_LOCKER)
    os.chmod(locker_py, 0o644)
    ready = shared / "locked"
    rundir = pathlib.Path(tempfile.mkdtemp(prefix="memscope-run-"))
    env = dict(os.environ, XDG_RUNTIME_DIR=str(rundir))
    locker = subprocess.Popen(as_nobody([SYSTEM_PYTHON, str(locker_py), str(shared), str(ready)]))
    try:
        deadline = time.time() + 10
        while not ready.exists() and time.time() < deadline:
            time.sleep(0.02)
        assert ready.exists() and locker.poll() is None, "the other user's lock was not taken"
        for _ in range(2):          # the second keeps the first as .old
            res = record(memscope, "-o", str(shared / "x.rec"), cwd=shared, timeout=30)
            assert res.returncode == 0, res.stderr
        assert frames_in(shared / "x.rec") >= 1 and frames_in(shared / "x.rec.old") >= 1
        proc = subprocess.Popen([memscope, "record", "-o", "first.rec", "-I", "20", "-e", "page-faults", "--",
                                 "sleep", "1.5"], cwd=shared, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while not list(rundir.glob("memscope/*.sock")) and time.time() < deadline:
            time.sleep(0.02)
        res = run([memscope, "ctl", "record", "next.rec"], cwd=shared, env=env, timeout=20)
        assert res.returncode == 0 and res.stdout.startswith(f"ok: recording to {shared / 'next.rec'}"), res
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert frames_in(shared / "next.rec") >= 1
    finally:
        locker.kill()
        locker.wait()
        subprocess.run(["rm", "-rf", str(rundir)])


def test_records_started_together_end_with_whole_files(memscope, tmp_path):
    """Eight records of one name started at once: each either writes its file or refuses because
    another is writing it; the files at the end are whole recordings and no temporary is left."""
    procs = [subprocess.Popen([memscope, "record", "-I", "20", "-e", "page-faults", "--", "sleep", "0.3"],
                              cwd=tmp_path, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    for p in procs:
        p.stderr.close()
    wrote = [err for code, err in results if code == 0]
    assert wrote, results
    for code, err in results:
        assert code == 0 or "is being written by another memscope record" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["memscope.rec", "memscope.rec.old"] if len(wrote) > 1
                                                          else ["memscope.rec"])
    for name in ("memscope.rec", "memscope.rec.old")[:len(wrote)]:
        lines = (tmp_path / name).read_text().splitlines()
        assert json.loads(lines[-1])["end"] == "the command exited", name


TREE_MOVER = r"""
import os, sys
tmpdir, victim, stop = sys.argv[1:4]
n = 0
while not os.path.exists(stop):
    for e in os.listdir(tmpdir):
        p = os.path.join(tmpdir, e)
        if e.startswith("memscope-host-") and not os.path.islink(p):
            n += 1
            try:
                os.rename(p, os.path.join(tmpdir, "moved-%d" % n))
                os.symlink(victim, p)
            except OSError:
                pass
"""


def test_report_never_writes_the_recorded_host_through_another_users_link(memscope, tmp_path):
    """TMPDIR writable by nobody (theirs, kept by sudo): while root's report puts a recording's host
    files back into a directory there, nobody renames that directory and puts a link to a directory
    of root's at its name. Root's directory stays empty: the files go through the descriptor of the
    directory memscope made, never through its name."""
    rec = tmp_path / "m.rec"
    res = run([memscope, "record", "-o", str(rec), "-I", "100", "-m", "numa.hit", "--", "sleep", "0.2"])
    assert res.returncode == 0, res.stderr
    lines = rec.read_text().splitlines()
    header = json.loads(lines[0])
    # The recording chooses the names and the texts: many of them make the writing take a while.
    for i in range(300):
        header["host"]["files"][f"sys/devices/padding/p{i // 100}/f{i}"] = "chosen by the recording\n"
    rec.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    top = pathlib.Path(tempfile.mkdtemp(prefix="memscope-tmpdir-"))
    try:
        os.chmod(top, 0o755)
        theirs, victim, stop = top / "theirs", top / "victim", top / "stop"
        theirs.mkdir()
        os.chown(theirs, NOBODY, NOBODY)
        victim.mkdir()
        mover_py = top / "mover.py"
        mover_py.write_text(TREE_MOVER)
        os.chmod(mover_py, 0o644)
        mover = subprocess.Popen(as_nobody([SYSTEM_PYTHON, str(mover_py), str(theirs), str(victim), str(stop)]))
        outcomes = {"done": 0, "refused": 0}
        try:
            for _ in range(20):
                res = run([memscope, "report", str(rec)], env=dict(os.environ, TMPDIR=str(theirs)), timeout=60)
                assert list(victim.iterdir()) == [], f"root wrote into {victim} through the other user's link"
                if res.returncode == 0:
                    outcomes["done"] += 1
                else:
                    assert res.returncode == 1, res.stderr
                    assert "was replaced as it was made (someone else can write" in res.stderr, res.stderr
                    outcomes["refused"] += 1
        finally:
            stop.touch()
            mover.wait(timeout=30)
        assert outcomes["done"] >= 1, outcomes
        # The directories memscope made, wherever they were moved, are left empty.
        for moved in theirs.iterdir():
            assert moved.is_symlink() or list(moved.iterdir()) == [], moved
    finally:
        subprocess.run(["rm", "-rf", str(top)])
