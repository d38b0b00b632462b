"""meson install puts memscope, its data, man pages and completions under the
prefix, and the installed program finds its own data there: it runs with the
source and build trees hidden (a tmpfs mounted over them in a mount
namespace of its own), as on a machine that only has the installed files."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT, run

PREFIX = "usr/local"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("hiding the trees needs root (a mount namespace)")
    dest = tmp_path_factory.mktemp("destdir")
    res = run(["meson", "install", "-C", str(BUILD), "--destdir", str(dest), "--no-rebuild", "--quiet"], timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return dest / PREFIX


def hidden(prefix, script, cwd=None):
    """Run a shell script with the source tree (and the build trees in it) under an empty tmpfs."""
    env = dict(os.environ)
    # The sanitizers' suppressions live in the tree that is hidden: a copy outside it.
    supp = prefix.parent.parent / "lsan.supp"
    shutil.copy(ROOT / "tests" / "lsan.supp", supp)
    env["LSAN_OPTIONS"] = env.get("LSAN_OPTIONS", "").replace(str(ROOT / "tests" / "lsan.supp"), str(supp))
    cmd = ["unshare", "-m", "sh", "-ec", f"mount -t tmpfs memscope-hidden {ROOT}\nexport PATH={prefix}/bin:$PATH\n{script}"]
    return run(cmd, cwd=cwd, timeout=300, env=env)


def test_every_part_is_installed(installed):
    assert (installed / "bin" / "memscope").is_file()
    assert (installed / "bin" / "memscope-bench").is_file()
    data = installed / "share" / "memscope"
    assert (data / "catalog" / "metrics.yaml").is_file()
    assert sorted(p.name for p in (data / "catalog" / "pmu").glob("*.yaml")) == \
        sorted(p.name for p in (ROOT / "catalog" / "pmu").glob("*.yaml"))
    assert sorted(p.name for p in (data / "lua").glob("*.lua")) == sorted(p.name for p in (ROOT / "lua").glob("*.lua"))
    pages = sorted(p.name for p in (installed / "share" / "man" / "man1").glob("memscope*.1"))
    assert pages == sorted(p.name for p in (ROOT / "docs" / "man").glob("*.1"))
    assert (installed / "include" / "memscope" / "memscope_marker.h").is_file()
    bash = installed / "share" / "bash-completion" / "completions" / "memscope"
    zsh = installed / "share" / "zsh" / "site-functions" / "_memscope"
    assert bash.read_text() == run([str(BUILD / "memscope"), "completion", "bash"]).stdout
    assert zsh.read_text() == run([str(BUILD / "memscope"), "completion", "zsh"]).stdout
    assert run(["bash", "-n", str(bash)]).returncode == 0
    # The exporter's unit runs the binary installed with it.
    unit = (installed / "lib" / "systemd" / "system" / "memscope-exporter.service").read_text()
    execs = [line.split("=", 1)[1].split()[:2] for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert execs == [[f"/{PREFIX}/bin/memscope", "live"]]


def test_man_pages_render_without_warnings(installed):
    for page in (installed / "share" / "man" / "man1").glob("memscope*.1"):
        res = run(["groff", "-man", "-ww", "-z", str(page)])
        assert res.returncode == 0 and res.stderr == "", f"{page.name}: {res.stderr}"


def test_installed_memscope_runs_from_its_prefix_alone(installed, tmp_path):
    res = hidden(installed, """
test ! -e {root}/meson.build
memscope --version
memscope list --metrics > metrics.txt
memscope completion --list scripts > scripts.txt
memscope record -o run.rec -I 50 -e page-faults -- sh -c 'sleep 0.2'
memscope report --lua faults.lua run.rec > report.txt
memscope stat -e page-faults --lua summary.lua -- true > stat.txt 2>&1
""".format(root=ROOT), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("memscope ")
    assert "mem.read_bw" in (tmp_path / "metrics.txt").read_text()
    assert (tmp_path / "scripts.txt").read_text().split() == sorted(p.name for p in (ROOT / "lua").glob("*.lua"))
    assert "faults.lua: page faults" in (tmp_path / "report.txt").read_text()
    assert "page-faults" in (tmp_path / "stat.txt").read_text()


def test_installed_memscope_names_its_prefix_when_data_is_missing(installed, tmp_path):
    """A broken install says where it looked, not where the source tree was."""
    moved = tmp_path / "catalog-moved"
    catalog = installed / "share" / "memscope" / "catalog"
    catalog.rename(moved)
    try:
        res = hidden(installed, "memscope list --metrics")
    finally:
        moved.rename(catalog)
    assert res.returncode == 1
    assert str(installed / "bin" / ".." / "share" / "memscope" / "catalog") in res.stderr or \
        "share/memscope/catalog" in res.stderr, res.stderr
    assert str(ROOT) not in res.stderr.replace(str(installed), "")
    assert "MEMSCOPE_CATALOG_DIR" in res.stderr
