"""docs/studies: every command a study page gives still runs (briefly) and writes the files the
page names, so the pages stay reproducible as memscope changes. The figures themselves are not
checked here (a study reports numbers; the benchmarks' own tests check them)."""
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT, run

STUDIES = ROOT / "docs" / "studies"
# Brief: two repetitions, short ones, of a few small sizes.
BRIEF = ["--reps", "2", "--max-reps", "2", "--min-time", "1", "--max-time", "0.2", "--quiet"]
SIZES = {"lat": "16K,1M", "bw": "16K,1M", "par": "16K,256K", "c2c": "16K,256K"}


def commands(page):
    """The lines of the page's ```sh blocks."""
    text = page.read_text()
    return [line.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S) for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def pages():
    return sorted(p for p in STUDIES.glob("*.md") if p.name != "README.md")


def test_every_page_is_in_the_index_and_has_commands():
    index = (STUDIES / "README.md").read_text()
    assert pages(), "no study pages"
    for page in pages():
        assert f"({page.name})" in index, f"{page.name} is not in docs/studies/README.md"
        assert commands(page), f"{page.name} has no ```sh block of commands"


def single_node():
    return len(list(pathlib.Path("/sys/devices/system/node").glob("node[0-9]*"))) < 2


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.stem)
def test_study_commands_run_and_write_the_files_the_page_names(page, memscope, tmp_path):
    text = page.read_text()
    for line in commands(page):
        argv = shlex.split(line)
        if argv[:2] == ["memscope", "bench"]:
            bench = argv[2]
            args = [memscope, *argv[1:], *BRIEF]
            if bench in SIZES and "--sizes" not in argv:
                args += ["--sizes", SIZES[bench]]
            if bench in ("stream", "numa-triad") and "--size" not in argv:
                args += ["--size", "1M"]
            res = run(args, cwd=tmp_path, timeout=300)
            if bench == "numa-triad" and single_node():
                assert res.returncode == 1 and "needs two NUMA nodes" in res.stderr, res.stderr
                continue
            assert res.returncode == 0, f"{line}: {res.stderr}"
            if "-o" in argv:
                prefix = argv[argv.index("-o") + 1]
                for ext in ("json", "png"):
                    name = f"{prefix}.{ext}"
                    assert f"`{name}`" in text, f"{page.name} does not name {name}, which its command writes"
                    assert (tmp_path / name).is_file(), f"{line}: no {name}"
        elif argv[:2] == ["python3", "contrib/bench/slowdown.py"]:
            res = subprocess.run([sys.executable, str(ROOT / argv[1]), "--build", str(BUILD), "--rounds", "1",
                                  "--seconds", "0.1", "--mb", "2", "--rates", "100,1"],
                                 capture_output=True, text=True, timeout=180, cwd=tmp_path)
            assert res.returncode == 0, res.stdout + res.stderr
            assert "| 1 kHz (-I 1) |" in res.stdout, res.stdout
        else:
            pytest.fail(f"{page.name}: a command this test does not know how to run briefly: {line}")
