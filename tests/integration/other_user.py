"""Another user's side of the attacks on a root-run memscope: the user is `nobody` (setpriv), who owns a
directory of their own and keeps flipping a symbolic link in a shared sticky directory (like /tmp)
between a file of root's and a file of theirs while memscope opens it."""
import contextlib
import os
import pathlib
import subprocess
import tempfile
import time

NOBODY = 65534
# The other user runs Python as installed for everyone (a pyenv in root's home is not theirs).
SYSTEM_PYTHON = "/usr/bin/python3"

FLIPPER = r"""
import os, sys
link, stop, targets = sys.argv[1], sys.argv[2], sys.argv[3:]
tmp = link + ".flip"
i = 0
while not os.path.exists(stop):
    i += 1
    try:
        os.symlink(targets[i % len(targets)], tmp)
        os.rename(tmp, link)
    except OSError:
        pass
"""


def as_nobody(cmd):
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] + cmd


@contextlib.contextmanager
def places():
    """top (root's, 0755) holding root/ (root's, 0755), theirs/ (nobody's, 0755) and shared/ (root's, 1777)."""
    top = pathlib.Path(tempfile.mkdtemp(prefix="memscope-users-"))
    try:
        os.chmod(top, 0o755)
        for name, mode in (("root", 0o755), ("theirs", 0o755), ("shared", 0o1777)):
            (top / name).mkdir()
            os.chmod(top / name, mode)
        os.chown(top / "theirs", NOBODY, NOBODY)
        yield top
    finally:
        subprocess.run(["rm", "-rf", str(top)])


def write_as_nobody(path, text):
    subprocess.run(as_nobody(["sh", "-c", f"cat > '{path}'"]), input=text, text=True, check=True)


@contextlib.contextmanager
def flipping(link, *targets):
    """nobody flips `link` between the targets until the block ends."""
    stop = pathlib.Path(str(link) + ".stop")
    script = pathlib.Path(str(link) + ".py")
    script.write_text(FLIPPER)
    os.chmod(script, 0o644)
    flipper = subprocess.Popen(as_nobody([SYSTEM_PYTHON, str(script), str(link), str(stop), *map(str, targets)]))
    try:
        deadline = time.time() + 10
        while not os.path.lexists(link) and time.time() < deadline:
            time.sleep(0.01)
        assert flipper.poll() is None and os.path.lexists(link), "the other user's flipper did not start"
        yield
    finally:
        stop.touch()
        flipper.wait(timeout=30)
