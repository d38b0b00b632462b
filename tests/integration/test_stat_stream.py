"""Where stat's counts go, as perf's: standard error unless -o FILE or --log-fd N is given; the
command's own standard output is left alone. Each way is run with memscope and with perf on the
same command and the CSV compared field by field."""
import subprocess

from conftest import run


def csv_rows(text):
    return [line.split(",") for line in text.splitlines() if line.strip()]


def same_fields(ours, theirs):
    """One page-faults row each, alike in every field but the two measured ones (count, runtime)."""
    assert len(ours) == len(theirs) == 1, (ours, theirs)
    for row in (ours[0], theirs[0]):
        assert len(row) == 7, row
        assert int(row[0]) > 0 and int(row[3]) > 0, row
    assert [ours[0][i] for i in (1, 2, 4, 5, 6)] == [theirs[0][i] for i in (1, 2, 4, 5, 6)], (ours, theirs)
    assert ours[0][2] == "page-faults" and ours[0][4] == "100.00", ours


def shell(tool, redirect, tmp_path):
    """`TOOL stat ... -- echo from-the-command REDIRECT` in a shell, as a script writes it."""
    return run(["bash", "-c", f'"$@" {redirect}', "sh", *tool, "stat", "-x,", "-e", "page-faults", *(
        ["--log-fd", "3"] if "3>" in redirect else []), "--", "echo", "from-the-command"], cwd=tmp_path)


def test_counts_go_to_stderr_and_the_commands_stdout_stays_its_own(memscope, tmp_path):
    rows = {}
    for name, tool in (("memscope", [memscope]), ("perf", ["perf"])):
        res = shell(tool, "2>stats.csv", tmp_path)
        assert res.returncode == 0, (name, res.stderr, (tmp_path / "stats.csv").read_text())
        assert res.stdout == "from-the-command\n", (name, res.stdout)
        rows[name] = csv_rows((tmp_path / "stats.csv").read_text())
    same_fields(rows["memscope"], rows["perf"])


def test_output_file_and_log_fd_take_the_counts_instead(memscope, tmp_path):
    for redirect, target in (("-o stats.csv", "stats.csv"), ("3>stats.csv", "stats.csv")):
        rows = {}
        for name, tool in (("memscope", [memscope]), ("perf", ["perf"])):
            args = [*tool, "stat", "-x,", "-e", "page-faults"]
            if redirect.startswith("-o"):
                res = run(args + ["-o", target, "--", "echo", "from-the-command"], cwd=tmp_path)
            else:
                res = shell(tool, redirect, tmp_path)
            assert res.returncode == 0, (name, redirect, res.stderr)
            # Nothing of the counts on either stream: stdout is the command's, stderr empty.
            assert res.stdout == "from-the-command\n", (name, redirect, res.stdout)
            assert res.stderr == "", (name, redirect, res.stderr)
            text = (tmp_path / target).read_text()
            # perf's -o file starts with a '# started on' line; its rows are the same.
            rows[name] = csv_rows("".join(l for l in text.splitlines(keepends=True) if not l.startswith("#")))
        same_fields(rows["memscope"], rows["perf"])


def test_null_run_prints_on_stderr_as_perfs(memscope):
    res = run([memscope, "stat", "-n", "--", "echo", "from-the-command"])
    theirs = run(["perf", "stat", "-n", "echo", "from-the-command"])
    for r in (res, theirs):
        assert r.returncode == 0 and r.stdout == "from-the-command\n", r
        assert "Performance counter stats for 'echo from-the-command':" in r.stderr, r.stderr
