"""The Debian package: built from debian/ with dpkg-buildpackage, lintian
clean of errors, installed with apt, used, and removed again."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCK = "/run/lock/memscope-package-test.lock"


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 1200)
    return subprocess.run(cmd, **kw)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """Build from a copy of the tree (dpkg-buildpackage writes next to the source)."""
    work = tmp_path_factory.mktemp("deb")
    src = work / "memscope"
    files = run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout
    for rel in filter(None, files.split("\0")):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    res = run(["nice", "dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    debs = sorted(work.glob("memscope_*.deb"))
    assert len(debs) == 1, debs
    return work, debs[0]


def test_lintian_finds_no_error(package):
    work, _ = package
    changes = sorted(work.glob("memscope_*.changes"))
    res = run(["lintian", "--fail-on", "error", str(changes[0])])
    assert res.returncode == 0, res.stdout + res.stderr
    assert " E: " not in res.stdout and not res.stdout.startswith("E:")


def test_contents(package):
    _, deb = package
    listing = run(["dpkg-deb", "-c", str(deb)]).stdout
    paths = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    assert "/usr/bin/memscope" in paths and "/usr/bin/memscope-bench" in paths
    assert "/usr/share/memscope/catalog/metrics.yaml" in paths
    for script in (ROOT / "lua").glob("*.lua"):
        assert f"/usr/share/memscope/lua/{script.name}" in paths
    for page in (ROOT / "docs" / "man").glob("*.1"):
        assert f"/usr/share/man/man1/{page.name}.gz" in paths
    assert "/usr/share/bash-completion/completions/memscope" in paths
    assert "/usr/share/zsh/vendor-completions/_memscope" in paths
    assert UNIT in paths
    # The libraries memscope opens only when a command needs them (dlopen):
    # dpkg-shlibdeps cannot find those, so the package must name them.
    depends = run(["dpkg-deb", "-f", str(deb), "Depends"]).stdout
    assert "libmicrohttpd12" in depends and "libdw1" in depends, depends


UNIT = "/lib/systemd/system/memscope-exporter.service"


def test_exporter_unit_runs_the_installed_binary_and_is_never_enabled(package, tmp_path):
    """The unit names /usr/bin/memscope, and the maintainer scripts neither
    enable nor start it: it needs a token file first."""
    _, deb = package
    assert run(["dpkg-deb", "-x", str(deb), str(tmp_path / "root")]).returncode == 0
    unit = (tmp_path / "root" / UNIT.lstrip("/")).read_text()
    execs = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert len(execs) == 1 and execs[0].split("=", 1)[1].split()[:2] == ["/usr/bin/memscope", "live"], execs
    assert "--read-token-file /etc/memscope/token" in execs[0] and "--no-ctl" in execs[0]
    assert "ConditionPathExists=/etc/memscope/token" in unit
    assert "@bindir@" not in unit
    assert run(["dpkg-deb", "-e", str(deb), str(tmp_path / "control")]).returncode == 0
    scripts = "".join(p.read_text() for p in (tmp_path / "control").iterdir()
                      if p.name in ("postinst", "prerm", "postrm", "preinst"))
    # dh_installsystemd's own snippets: an upgrade keeps the unit enabled
    # when the administrator had enabled it ("was-enabled"), nothing enables
    # it otherwise, and nothing starts it.
    assert "memscope-exporter.service" in scripts
    lines = [line.strip() for line in scripts.splitlines() if line.strip() and not line.strip().startswith("#")]
    for i, line in enumerate(lines):
        if line.startswith("deb-systemd-helper enable"):
            assert "was-enabled" in lines[i - 1], lines[i - 1:i + 1]
    assert "deb-systemd-invoke start" not in scripts
    assert "deb-systemd-invoke restart" not in scripts and "deb-systemd-invoke $_dh_action" not in scripts


def test_installed_and_removed(package, tmp_path):
    _, deb = package
    if os.geteuid() != 0:
        pytest.skip("installing a package needs root")
    # One package test at a time on a machine (the package is system-wide).
    with open(LOCK, "w") as lock:
        import fcntl
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        res = run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq", "--no-install-recommends",
                   str(deb)], env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        try:
            smoke = run(["sh", "-ec", """
cd "$1"
/usr/bin/memscope --version
/usr/bin/memscope list --metrics > metrics.txt
/usr/bin/memscope stat -x, -e page-faults -o stat.csv -- true
/usr/bin/memscope record -o run.rec -I 50 -- sleep 0.2 2> record.txt
/usr/bin/memscope report --lua faults.lua run.rec > report.txt
/usr/bin/memscope live --input run.rec --listen 127.0.0.1:0 --no-ui --exit-at-end 2> live.txt
bash -c '. /usr/share/bash-completion/completions/memscope && complete -p memscope'
""", "sh", str(tmp_path)], env=dict(os.environ, PATH="/usr/bin:/bin"))
            assert smoke.returncode == 0, smoke.stdout + smoke.stderr
            assert smoke.stdout.startswith("memscope 0.")
            assert "complete -F _memscope memscope" in smoke.stdout
            assert "mem.read_bw" in (tmp_path / "metrics.txt").read_text()
            assert "page-faults" in (tmp_path / "stat.csv").read_text()
            assert "faults.lua: page faults" in (tmp_path / "report.txt").read_text()
            # live opened the libmicrohttpd the package depends on, served and ended.
            assert "memscope live: serving recording" in (tmp_path / "live.txt").read_text()
            # The unit is in place, valid, and neither enabled nor running.
            assert pathlib.Path(UNIT).is_file()
            if shutil.which("systemd-analyze"):
                # Its Documentation= page is checked too when man is there to read it.
                res = run(["systemd-analyze", "verify"] + ([] if shutil.which("man") else ["--man=no"]) + [UNIT])
                assert res.returncode == 0, res.stdout + res.stderr
                assert "memscope-exporter" not in res.stdout + res.stderr, res.stdout + res.stderr
            enabled = run(["systemctl", "--root=/", "is-enabled", "memscope-exporter.service"])
            assert enabled.stdout.strip() == "disabled", enabled.stdout + enabled.stderr
            assert not list(pathlib.Path("/etc/systemd/system").glob("*.wants/memscope-exporter.service"))
            running = run(["pgrep", "-f", "memscope live --no-ui --no-ctl --listen 0.0.0.0:9464"])
            assert running.returncode == 1, running.stdout
        finally:
            res = run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "purge", "-y", "-qq", "memscope"], env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert not pathlib.Path("/usr/bin/memscope").exists()
        assert not pathlib.Path("/usr/share/memscope").exists()
