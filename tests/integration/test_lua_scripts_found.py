"""Which file a --lua name runs: a bare name is the user's own script directory or a built-in script,
never a file that happens to lie in the current directory (another user's summary.lua there used to
run in place of the built-in, with --lua-unsafe as root); a path is that file; as root, a script
another user could change is refused."""
import json
import os
import pathlib
import subprocess
import tempfile

import pytest

from conftest import run
from other_user import flipping, places, write_as_nobody

NOBODY = 65534

HOSTILE = """
print('hostile script ran')
if io then local f = io.open('pwned', 'w') f:write('x') f:close() end
function on_end() print('hostile on_end') end
"""


@pytest.fixture(scope="module")
def recording(memscope, tmp_path_factory):
    path = tmp_path_factory.mktemp("rec") / "run.rec"
    res = run([memscope, "record", "-o", str(path), "-I", "20", "-e", "page-faults", "--", "true"])
    assert res.returncode == 0, res.stderr
    return path


def test_a_bare_name_is_never_the_file_in_the_current_directory(memscope, recording, tmp_path):
    for name in ("summary.lua", "faults.lua", "faults"):
        (tmp_path / (name if name.endswith(".lua") else name + ".lua")).write_text(HOSTILE)
    # memscope report runs summary.lua by default; --lua-unsafe gives io to whatever runs.
    for args in ([], ["--lua", "faults.lua"], ["--lua", "faults"], ["--lua-unsafe", "--lua", "summary.lua"]):
        res = run([memscope, "report", "--format", "json", *args, str(recording)], cwd=tmp_path)
        assert res.returncode == 0, (args, res.stderr)
        assert "hostile" not in res.stdout, args
        scripts = {json.loads(line)["script"] for line in res.stdout.splitlines()}
        assert scripts == {"summary.lua" if not args or "summary.lua" in args else "faults.lua"}, args
        assert not (tmp_path / "pwned").exists()
    # A path is that file, and says so by its name.
    res = run([memscope, "report", "--lua", "./faults.lua", str(recording)], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "hostile script ran" in res.stdout and "hostile on_end" in res.stdout


def test_a_bare_name_only_here_says_to_give_its_path(memscope, recording, tmp_path):
    (tmp_path / "mine.lua").write_text("function on_end() print('mine') end\n")
    res = run([memscope, "report", "--lua", "mine.lua", str(recording)], cwd=tmp_path,
              env=dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data")))
    assert res.returncode == 2
    assert "Lua script 'mine.lua' not found in " in res.stderr
    assert f"{tmp_path}/data/memscope/lua, " in res.stderr
    assert "to run the file in the current directory, give its path: --lua ./mine.lua" in res.stderr


def test_the_users_own_script_directory(memscope, recording, tmp_path):
    data = tmp_path / "data"
    (data / "memscope" / "lua").mkdir(parents=True)
    (data / "memscope" / "lua" / "mine.lua").write_text("function on_end() print('mine from my scripts') end\n")
    res = run([memscope, "report", "--lua", "mine", str(recording)], env=dict(os.environ, XDG_DATA_HOME=str(data)))
    assert res.returncode == 0, res.stderr
    assert "mine from my scripts" in res.stdout
    # Without XDG_DATA_HOME: ~/.local/share/memscope/lua.
    home = tmp_path / "home"
    (home / ".local/share/memscope/lua").mkdir(parents=True)
    (home / ".local/share/memscope/lua/other.lua").write_text("function on_end() print('from home') end\n")
    env = {k: v for k, v in os.environ.items() if k != "XDG_DATA_HOME"}
    res = run([memscope, "report", "--lua", "other.lua", str(recording)], env=dict(env, HOME=str(home)))
    assert res.returncode == 0, res.stderr
    assert "from home" in res.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="the check is for scripts run as root")
def test_as_root_a_script_another_user_can_change_is_refused(memscope, recording):
    top = pathlib.Path(tempfile.mkdtemp(prefix="memscope-scripts-"))
    try:
        os.chmod(top, 0o755)
        theirs = top / "theirs"
        theirs.mkdir()
        os.chown(theirs, NOBODY, NOBODY)
        script = theirs / "report.lua"
        subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "sh", "-c",
                        f"echo \"print('ran as root')\" > {script}"], check=True)
        res = run([memscope, "report", "--lua", str(script), str(recording)])
        assert res.returncode == 2, res
        assert "ran as root" not in res.stdout
        # Judged from / down: their directory is the first thing they can change.
        assert f"Lua script {script} is not run as root: the directory {theirs} can be changed by its owner " \
               f"(uid {NOBODY}, mode 0755)" in res.stderr
        assert "make it root's and writable only by root" in res.stderr
        # Their file in root's directory.
        os.rename(script, top / "report.lua")
        res = run([memscope, "report", "--lua", str(top / "report.lua"), str(recording)])
        assert res.returncode == 2, res
        assert "ran as root" not in res.stdout
        assert f"Lua script {top}/report.lua is not run as root: the file {top}/report.lua can be changed by its " \
               f"owner (uid {NOBODY}, mode 0644)" in res.stderr
        script = theirs / "report.lua"
        # Root's own file in that user's directory: they could replace it.
        script.write_text("print('ran as root')\n")
        res = run([memscope, "report", "--lua", str(script), str(recording)])
        assert res.returncode == 2
        assert f"the directory {theirs} can be changed by its owner (uid {NOBODY}, mode 0755)" in res.stderr
        # A world-writable directory without the sticky bit: anyone can replace the file.
        open_dir = top / "open"
        open_dir.mkdir()
        os.chmod(open_dir, 0o777)
        (open_dir / "x.lua").write_text("print('ran as root')\n")
        res = run([memscope, "report", "--lua", str(open_dir / "x.lua"), str(recording)])
        assert res.returncode == 2
        assert f"the directory {open_dir} can be changed by every user (uid 0, mode 0777)" in res.stderr
        # Sticky like /tmp: others cannot replace root's file there; it runs.
        os.chmod(open_dir, 0o1777)
        res = run([memscope, "report", "--lua", str(open_dir / "x.lua"), str(recording)])
        assert res.returncode == 0, res.stderr
        assert "ran as root" in res.stdout
        # Group-writable by a group other than root's.
        os.chmod(open_dir, 0o755)
        os.chown(open_dir / "x.lua", 0, NOBODY)
        os.chmod(open_dir / "x.lua", 0o664)
        res = run([memscope, "report", "--lua", str(open_dir / "x.lua"), str(recording)])
        assert res.returncode == 2
        assert "can be changed by its group" in res.stderr
    finally:
        subprocess.run(["rm", "-rf", str(top)])


@pytest.mark.skipif(os.geteuid() != 0, reason="the attack is on a root-run memscope")
def test_as_root_a_flipped_link_never_runs_another_users_script(memscope, recording):
    """nobody flips a link in a sticky shared directory between root's script and theirs while root
    runs it with --lua-unsafe 100 times: root's runs, theirs is refused and never runs."""
    with places() as top:
        mine = top / "root" / "mine.lua"
        mine.write_text("function on_end() print('root script') end\n")
        mark = top / "mark"
        theirs = top / "theirs" / "evil.lua"
        write_as_nobody(theirs, f"local f = io.open('{mark}', 'a') f:write('ran as root') f:close()\n"
                                "print('ran as root')\n")
        link = top / "shared" / "x.lua"
        ran, refused = 0, []
        with flipping(link, mine, theirs):
            for _ in range(100):
                res = run([memscope, "report", "--lua-unsafe", "--lua", str(link), str(recording)])
                if "ran as root" in res.stdout or mark.exists():
                    break
                if res.returncode == 0:
                    assert "root script" in res.stdout, res
                    ran += 1
                else:
                    refused.append(res)
        assert "ran as root" not in res.stdout and not mark.exists(), f"the other user's script ran as root " \
            f"after {ran + len(refused)} runs"
        for res in refused:
            assert res.returncode == 2, res
            assert (f"Lua script {link} is not run as root: the directory {top}/theirs can be changed by "
                    f"its owner (uid {NOBODY}, mode 0755)") in res.stderr, res.stderr
        assert ran and refused, (ran, len(refused))
