"""Source plugins (docs/plugins.md): the loader refuses bad plugins with the file and the
cause and memscope counts on; the plugin directories; list --plugins; root's refusal of
plugins other users can write."""
import os
import shutil
import subprocess

import pytest

from conftest import run
from other_user import NOBODY, as_nobody, flipping, places
from stat_output import counter_output, parse_csv, totals


@pytest.fixture(scope="module")
def plugins(build_dir):
    return build_dir / "contrib" / "plugins"


@pytest.fixture(scope="module")
def broken(build_dir):
    return build_dir / "tests" / "plugins"


def isolated_env(tmp_path, **extra):
    """No plugin directory of the machine's user: XDG_DATA_HOME is the test's own."""
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    env.update(extra)
    return env


def page_faults(stdout):
    return totals(parse_csv(stdout))[("total", "page-faults")]


def bad_plugin_cases(broken, tmp_path):
    text = tmp_path / "notes.so"
    text.write_text("these are notes, not a plugin\n")
    return [
        (text, "not a shared object: not an ELF file"),
        (broken / "broken_no_descriptor.so", "no descriptor: the shared object has no 'memscope_plugin' symbol"),
        (broken / "broken_abi.so",
         "plugin ABI version mismatch: built for version 2, this memscope loads version 1"),
        (broken / "broken_size.so",
         "struct size mismatch: struct memscope_labels is 40 bytes in the plugin, 32 in this memscope"),
        (broken / "broken_init.so", "plugin 'broken' failed to start: the widget is not plugged in"),
        (tmp_path / "missing.so", "cannot open: No such file or directory"),
    ]


def test_bad_plugins_are_refused_with_the_cause_and_counting_goes_on(memscope, touchmem, broken, tmp_path):
    for path, cause in bad_plugin_cases(broken, tmp_path):
        res = run([memscope, "--plugin", str(path), "stat", "-x,", "--self-describing", "-e", "page-faults", "--", touchmem, "16"],
                  env=isolated_env(tmp_path))
        assert res.returncode == 0, (path, res.stderr)
        assert f"memscope: plugin {path}: {cause}" in res.stderr, res.stderr
        assert "going on without it" in res.stderr
        # The workload's own faults, counted as without any plugin.
        assert 16 * 256 <= page_faults(counter_output(res.stderr)) <= 16 * 256 + 400, counter_output(res.stderr)


def test_every_bad_plugin_in_one_run(memscope, touchmem, broken, plugins, tmp_path):
    cases = bad_plugin_cases(broken, tmp_path)
    args = [memscope]
    for path, _ in cases:
        args += ["--plugin", str(path)]
    args += ["--plugin", str(plugins / "cgroup_memory.so")]
    res = run(args + ["stat", "-x,", "--self-describing", "-e", "page-faults,cgroup.memory.current", "-a", "--", touchmem, "16"],
              env=isolated_env(tmp_path))
    assert res.returncode == 0, res.stderr
    for path, cause in cases:
        assert f"plugin {path}: {cause}" in res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert t[("total", "page-faults")] >= 16 * 256
    assert t[("total", "cgroup.memory.current")] > 0


def test_list_plugins_shows_loaded_and_refused(memscope, broken, plugins, tmp_path):
    res = run([memscope, "--plugin", str(plugins / "cgroup_memory.so"), "--plugin", str(plugins / "resctrl.so"),
               "--plugin", str(broken / "broken_abi.so"), "list", "--plugins"], env=isolated_env(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""          # list --plugins says it all itself
    out = res.stdout
    assert f"plugin directories: {tmp_path}/xdg/memscope/plugins, " in out
    cg = out.split(f"{plugins}/cgroup_memory.so (named with --plugin)\n")[1].split("\n\n")[0]
    assert "loaded: plugin cgroup_memory 1.0" in cg
    assert "available here: yes" in cg
    assert "cgroup.memory.anon" in cg and "gauge" in cg
    assert "cgroup.memory.pressure.some_us" in cg
    assert "cgroup " in cg and "root " in cg          # its arguments
    assert f"catalog family: cgroup-memory ({plugins}/cgroup_memory.yaml), maps: mem.anon_bytes" in cg
    rc = out.split(f"{plugins}/resctrl.so (named with --plugin)\n")[1].split("\n\n")[0]
    assert "loaded: plugin resctrl" in rc
    if not os.path.exists("/sys/fs/resctrl/info/L3_MON"):
        assert "available here: no: resctrl is not mounted at /sys/fs/resctrl" in rc
    assert "catalog family: resctrl" in rc and "mem.total_bytes" in rc
    assert (f"{broken}/broken_abi.so (named with --plugin)\n  not loaded: plugin ABI version mismatch: "
            "built for version 2, this memscope loads version 1") in out


def test_list_plugins_without_any(memscope, tmp_path):
    res = run([memscope, "list", "--plugins"], env=isolated_env(tmp_path))
    assert res.returncode == 0
    assert "no plugins: name one with memscope --plugin PATH.so" in res.stdout


def test_unknown_argument_names_the_ones_it_takes(memscope, plugins, tmp_path):
    res = run([memscope, "--plugin", f"{plugins}/cgroup_memory.so:cgroup=/,bogus=1", "list", "--plugins"],
              env=isolated_env(tmp_path))
    assert ("not loaded: plugin 'cgroup_memory' takes no argument 'bogus' (it takes: cgroup, root)"
            in res.stdout)


def test_plugin_option_needs_a_path(memscope):
    res = run([memscope, "--plugin"])
    assert res.returncode == 2
    assert "memscope: option --plugin needs an argument (PLUGIN)" in res.stderr


def install(plugins, directory, name="cgroup_memory"):
    directory.mkdir(parents=True, exist_ok=True)
    for suffix in (".so", ".yaml"):
        shutil.copy(plugins / (name + suffix), directory / (name + suffix))
    return directory / (name + ".so")


def test_plugins_in_the_xdg_directory_load_without_naming(memscope, plugins, broken, touchmem, tmp_path):
    found = install(plugins, tmp_path / "xdg" / "memscope" / "plugins")
    shutil.copy(broken / "broken_init.so", found.parent / "zz_broken.so")
    (found.parent / "README").write_text("not a plugin: not *.so, never loaded\n")
    env = isolated_env(tmp_path)
    res = run([memscope, "list", "--plugins"], env=env)
    assert f"{found} (found in a plugin directory)\n  loaded: plugin cgroup_memory" in res.stdout
    assert f"{found.parent}/zz_broken.so (found in a plugin directory)\n  not loaded: plugin 'broken' failed " \
           "to start: the widget is not plugged in" in res.stdout
    assert "README" not in res.stdout
    # Its series and catalog metrics, with no --plugin; the broken one is said and skipped.
    res = run([memscope, "stat", "-x,", "--self-describing", "-e", "page-faults", "-m", "mem.used_bytes", "-a", "--", touchmem, "8"],
              env=env)
    assert res.returncode == 0, res.stderr
    assert f"memscope: plugin {found.parent}/zz_broken.so: plugin 'broken' failed to start" in res.stderr
    t = totals(parse_csv(counter_output(res.stderr)))
    assert t[("total", "mem.used_bytes")] > 0


def test_home_directory_when_xdg_is_unset(memscope, plugins, tmp_path):
    found = install(plugins, tmp_path / ".local" / "share" / "memscope" / "plugins")
    env = dict(os.environ)
    env.pop("XDG_DATA_HOME", None)
    env["HOME"] = str(tmp_path)
    res = run([memscope, "list", "--plugins"], env=env)
    assert f"plugin directories: {found.parent}, " in res.stdout
    assert f"{found} (found in a plugin directory)\n  loaded: plugin cgroup_memory" in res.stdout


def test_a_plugin_named_and_in_the_directory_loads_once(memscope, plugins, tmp_path):
    found = install(plugins, tmp_path / "xdg" / "memscope" / "plugins")
    res = run([memscope, "--plugin", str(found), "list", "--plugins"], env=isolated_env(tmp_path))
    assert res.stdout.count("loaded: plugin cgroup_memory") == 1
    assert f"{found} (named with --plugin)" in res.stdout


def test_two_plugins_of_one_name(memscope, plugins, tmp_path):
    other = install(plugins, tmp_path / "other")
    res = run([memscope, "--plugin", str(plugins / "cgroup_memory.so"), "--plugin", str(other),
               "list", "--plugins"], env=isolated_env(tmp_path))
    assert (f"{other} (named with --plugin)\n  not loaded: a plugin named 'cgroup_memory' is already loaded "
            f"from {plugins}/cgroup_memory.so") in res.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="the refusal applies to root")
def test_root_refuses_plugins_other_users_can_write(memscope, plugins, tmp_path):
    env = isolated_env(tmp_path)
    d = tmp_path / "mine"
    plugin = install(plugins, d)

    def listed(path):
        return run([memscope, "--plugin", str(path), "list", "--plugins"], env=env).stdout

    assert "loaded: plugin cgroup_memory" in listed(plugin)

    def refused(path, real, what, who, uid, mode):
        return (f"not loaded: refused: plugin {path} is not run as root: {what} {real} can be changed by {who} "
                f"(uid {uid}, mode {mode:04o}), who could make root run their code") in listed(path)

    os.chmod(plugin, 0o757)
    assert refused(plugin, plugin, "the file", "every user", 0, 0o757)
    os.chmod(plugin, 0o775)
    os.chown(plugin, 0, 4242)
    assert refused(plugin, plugin, "the file", "its group", 0, 0o775)
    os.chmod(plugin, 0o755)
    os.chown(plugin, 4242, 0)
    assert refused(plugin, plugin, "the file", "its owner", 4242, 0o755)
    os.chown(plugin, 0, 0)
    os.chmod(d, 0o777)
    assert refused(plugin, d, "the directory", "every user", 0, 0o777)
    os.chmod(d, 0o1777)                  # sticky: others cannot replace root's file
    assert "loaded: plugin cgroup_memory" in listed(plugin)
    os.chmod(d, 0o755)
    # Any directory on the way counts: whoever can rename it can put another plugin there.
    os.chmod(tmp_path, 0o757)
    assert refused(plugin, tmp_path, "the directory", "every user", 0, 0o757)
    os.chmod(tmp_path, 0o700)
    # A symlink is judged by the file it leads to.
    link = tmp_path / "link.so"
    link.symlink_to(plugin)
    os.chmod(plugin, 0o757)
    assert refused(link, plugin, "the file", "every user", 0, 0o757)
    # The directory search refuses the same way.
    xdg = install(plugins, tmp_path / "xdg" / "memscope" / "plugins")
    os.chmod(xdg, 0o757)
    res = run([memscope, "list", "--plugins"], env=env)
    assert f"{xdg} (found in a plugin directory)\n  not loaded: refused: plugin {xdg} is not run as root: the file " \
        f"{xdg} can be changed by every user" in res.stdout


def test_the_example_of_docs_plugins_md_builds_loads_and_reads(memscope, tmp_path):
    """docs/plugins.md's example, compiled as the page says, counts what the kernel says."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(root, "docs", "plugins.md")).read()
    code = text.split("```c\n")[1].split("```\n")[0]
    (tmp_path / "example.c").write_text(code)
    cc = run(["cc", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(root, "include"),
              "-o", str(tmp_path / "example.so"), str(tmp_path / "example.c")])
    assert cc.returncode == 0, cc.stderr
    res = run([memscope, "--plugin", str(tmp_path / "example.so"), "stat", "-x,", "--self-describing", "-e", "example.files_open",
               "-a", "--", "true"], env=isolated_env(tmp_path))
    assert res.returncode == 0, res.stderr
    value = totals(parse_csv(counter_output(res.stderr)))[("total", "example.files_open")]
    kernel = int(open("/proc/sys/fs/file-nr").read().split()[0])
    assert value > 0 and abs(value - kernel) <= 2000, (value, kernel)


EVIL_C = r"""
#include <stdio.h>
#include <unistd.h>

/* Runs as soon as the file is loaded, before any check of its descriptor. */
__attribute__((constructor)) static void evil(void)
{
	FILE *f = fopen(MARK, "a");

	if (f) {
		fprintf(f, "EVIL loaded uid=%d\n", (int)geteuid());
		fclose(f);
	}
}
"""


def build_evil(path, mark):
    src = path.parent / "evil.c"
    src.write_text(EVIL_C)
    res = run(["cc", "-shared", "-fPIC", f'-DMARK="{mark}"', "-o", str(path), str(src)])
    assert res.returncode == 0, res.stderr
    os.chown(path, NOBODY, NOBODY)
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="the attack is on a root-run memscope")
def test_root_never_loads_the_plugin_a_flipped_link_leads_to(memscope, plugins, tmp_path):
    """nobody flips a link in a sticky shared directory between root's plugin and theirs while root
    loads it 200 times: root's loads, theirs is refused, and theirs never runs."""
    with places() as top:
        good = install(plugins, top / "root")
        mark = top / "mark"
        evil = build_evil(top / "theirs" / "evil.so", mark)
        link = top / "shared" / "p.so"
        loaded, refused = 0, []
        with flipping(link, good, evil):
            for _ in range(200):
                out = run([memscope, "--plugin", str(link), "list", "--plugins"], env=isolated_env(tmp_path)).stdout
                if "loaded: plugin cgroup_memory" in out:
                    loaded += 1
                else:
                    refused.append(out)
        assert not mark.exists(), f"{mark.read_text().count('EVIL')} of 200 loads ran the other user's plugin"
        for out in refused:
            assert (f"not loaded: refused: plugin {link} is not run as root: the directory {top}/theirs "
                    f"can be changed by its owner (uid {NOBODY}, mode 0755)") in out, out
        # Both of the link's targets were met.
        assert loaded and refused, (loaded, len(refused))


@pytest.mark.skipif(os.geteuid() != 0, reason="the attack is on a root-run memscope")
def test_root_refuses_links_in_another_users_plugin_directory(memscope, plugins, tmp_path):
    """HOME or XDG_DATA_HOME of another user kept by sudo: their plugin directory, even a link there
    to root's own plugin, is refused (they could point the link elsewhere at any moment)."""
    with places() as top:
        good = install(plugins, top / "root")
        theirs = top / "theirs" / "memscope" / "plugins"
        subprocess.run(as_nobody(["mkdir", "-p", str(theirs)]), check=True)
        subprocess.run(as_nobody(["ln", "-s", str(good), str(theirs / "root_plugin.so")]), check=True)
        res = run([memscope, "list", "--plugins"], env=isolated_env(tmp_path, XDG_DATA_HOME=str(top / "theirs")))
        assert (f"{theirs}/root_plugin.so (found in a plugin directory)\n  not loaded: refused: plugin "
                f"{theirs}/root_plugin.so is not run as root: the directory {top}/theirs can be changed by its "
                f"owner (uid {NOBODY}, mode 0755)") in res.stdout, res.stdout
        res = run([memscope, "--plugin", str(theirs / "root_plugin.so"), "list", "--plugins"],
                  env=isolated_env(tmp_path))
        assert "loaded: plugin cgroup_memory" not in res.stdout
        assert f"the directory {top}/theirs can be changed by its owner" in res.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a plugin as nobody")
def test_another_user_loads_their_own_plugin(memscope, plugins, tmp_path):
    """As a user other than root nothing is judged: nobody loads the plugin in their own directory."""
    with places() as top:
        subprocess.run(as_nobody(["cp", str(plugins / "cgroup_memory.so"), str(plugins / "cgroup_memory.yaml"),
                                  str(top / "theirs")]), check=True)
        res = run(as_nobody([memscope, "--plugin", str(top / "theirs" / "cgroup_memory.so"), "list", "--plugins"]),
                  env=isolated_env(tmp_path))
        assert "loaded: plugin cgroup_memory" in res.stdout, res.stdout + res.stderr
