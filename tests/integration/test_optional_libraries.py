"""libmicrohttpd and libdw are opened by the commands that use them (memscope
live, symbols of samples), not at every start: memscope does not name them
in its ELF dependencies, a command that does not need them runs where they
are missing, and one that does says which library to install. A library is
made missing for one command by mounting an empty file over it in a mount
namespace of its own (unshare -m)."""
import json
import os
import pathlib
import subprocess

import pytest

from conftest import BUILD, run

HOTARRAY = BUILD / "contrib" / "bench" / "hotarray"


def needed(binary):
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def library_file(soname):
    """The file the dynamic loader would open for soname."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == soname:
            return os.path.realpath(path)
    raise AssertionError(f"{soname} is not installed")


def without(sonames, cmd):
    """Run cmd with the files of sonames replaced by an empty file."""
    if os.geteuid() != 0:
        pytest.skip("a mount namespace needs root")
    mounts = " && ".join(f"mount --bind /dev/null '{library_file(s)}'" for s in sonames)
    script = mounts + ' && exec "$@"'
    return run(["unshare", "-m", "sh", "-c", script, "sh", *[str(c) for c in cmd]])


@pytest.fixture(scope="module")
def short_recording(tmp_path_factory):
    rec = tmp_path_factory.mktemp("optional") / "short.rec"
    res = run([str(BUILD / "memscope"), "record", "--no-ctl", "-I", "50", "-o", str(rec), "--", "sleep", "0.3"])
    assert res.returncode == 0, res.stderr
    return rec


def test_neither_library_is_loaded_at_start(memscope):
    libs = needed(memscope)
    assert not [lib for lib in libs if lib.startswith(("libmicrohttpd", "libdw"))], libs
    # What is linked still is: the counters' and the recordings' libraries.
    assert {"libjansson.so.4", "liblua5.4.so.0", "libpfm.so.4"} <= set(libs), libs


def test_live_names_the_missing_library_and_report_runs_without_it(memscope, short_recording):
    res = without(["libmicrohttpd.so.12"], [memscope, "live", "--input", short_recording,
                                            "--listen", "127.0.0.1:0"])
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert "memscope live: cannot load libmicrohttpd.so.12: " in res.stderr, res.stderr
    assert "file too short; install the libmicrohttpd12 package" in res.stderr, res.stderr
    # A command that serves nothing runs as it does with the library there.
    hidden = without(["libmicrohttpd.so.12", "libdw.so.1"], [memscope, "report", short_recording])
    normal = run([memscope, "report", str(short_recording)])
    assert hidden.returncode == 0 and normal.returncode == 0, hidden.stderr
    assert hidden.stdout == normal.stdout and "7 frames" in normal.stdout, normal.stdout


def test_samples_without_libdw_say_why_they_have_no_symbols(memscope, tmp_path):
    rec = tmp_path / "s.rec"
    res = run([memscope, "record", "--no-ctl", "--sample", "page-faults", "-o", str(rec), "--", str(HOTARRAY), "8"])
    assert res.returncode == 0, res.stderr
    report = ["report", "--sort", "sym", "--format", "json", "--top", "0", str(rec)]
    normal = run([memscope, *report])
    hidden = without(["libdw.so.1"], [memscope, *report])
    assert hidden.returncode == 0, hidden.stderr
    assert ("memscope report: code and data are shown without symbols: cannot load libdw.so.1: " in hidden.stderr
            and "install the libdw1 package" in hidden.stderr), hidden.stderr
    with_symbols, without_symbols = json.loads(normal.stdout), json.loads(hidden.stdout)
    # The same samples; the hot function's, with every other function of the
    # program's, now in one row under the reason none has a name.
    assert with_symbols["samples"] == without_symbols["samples"]
    hot = with_symbols["rows"][0]
    assert hot["keys"] == {"sym": "fill_table"}, hot
    top = without_symbols["rows"][0]
    assert top["keys"] == {"sym": "[unknown: no elfutils]"}, top
    assert hot["samples"] <= top["samples"] <= without_symbols["samples"], (top, hot)
    assert "no elfutils" not in normal.stdout
