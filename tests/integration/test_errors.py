"""Every error a user can hit in stat names the thing, the cause and the fix."""
import shutil

import pytest

from conftest import fixture_env, run
from stat_output import counter_output


def stat(memscope, *args, **kw):
    return run([memscope, "stat"] + list(args), **kw)


def test_unknown_event_suggests_close_names(memscope):
    res = stat(memscope, "-e", "page-fault", "--", "true")
    assert res.returncode == 2
    assert "unknown event 'page-fault'" in res.stderr
    assert "did you mean 'page-faults'" in res.stderr


def test_unknown_tracepoint_suggests(memscope):
    res = stat(memscope, "-e", "sched:sched_swich", "--", "true")
    assert res.returncode == 2
    assert "unknown tracepoint 'sched:sched_swich'" in res.stderr
    assert "'sched:sched_switch'" in res.stderr


def test_unknown_pmu_and_alias(memscope):
    res = stat(memscope, "-e", "mrs/tsc/", "--", "true")
    assert res.returncode == 2 and "no PMU named 'mrs'" in res.stderr and "'msr'" in res.stderr
    res = stat(memscope, "-e", "msr/tcs/", "--", "true")
    assert res.returncode == 2 and "PMU msr has no event 'tcs'" in res.stderr
    assert "'msr/tsc/'" in res.stderr


@pytest.mark.parametrize("value,message", [
    ("0", "between 1 ms"),
    ("abc", "not a number of milliseconds"),
    ("-100", "between 1 ms"),
])
def test_bad_interval(memscope, value, message):
    res = stat(memscope, "-I", value, "-e", "page-faults", "--", "true")
    assert res.returncode == 2
    assert f"-I {value}" in res.stderr and message in res.stderr


def test_top_interval_below_its_minimum(memscope):
    res = run([memscope, "top", "-b", "-I", "5"])
    assert res.returncode != 0
    assert "-I 5" in res.stderr and "at most every 10 ms" in res.stderr and "stat -I" in res.stderr


def test_no_target_is_a_usage_error(memscope):
    res = stat(memscope, "-e", "page-faults")
    assert res.returncode == 2
    assert "say what to measure" in res.stderr


def test_pid_and_system_wide_exclude_each_other(memscope):
    # -p PID -- CMD is perf's (the processes while CMD runs); -p with -a is not.
    res = stat(memscope, "-p", "1", "-a", "--", "true")
    assert res.returncode == 2 and "-p excludes -a" in res.stderr


def test_bad_pid_text(memscope):
    res = stat(memscope, "-e", "page-faults", "-p", "12x")
    assert res.returncode == 2 and "'12x' is not a process id" in res.stderr


def test_permission_denied_names_paranoid_and_capability(memscope, tmp_path):
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    if paranoid < 1:
        pytest.skip("perf_event_paranoid < 1 lets everyone count system-wide here")
    res = run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
               "--inh-caps=-all", memscope, "stat", "-a", "-e", "page-faults", "--", "true"],
              cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert "no permission to count 'page-faults' system-wide" in res.stderr
    assert f"perf_event_paranoid is {paranoid}" in res.stderr
    assert "CAP_PERFMON" in res.stderr and "sysctl kernel.perf_event_paranoid=0" in res.stderr


def test_open_file_limit(memscope):
    events = ",".join(["page-faults", "minor-faults", "major-faults", "context-switches",
                       "cpu-migrations", "task-clock", "cpu-clock", "alignment-faults"] * 3)
    res = run(["prlimit", "--nofile=12", memscope, "stat", "-a", "-e", events, "--", "true"])
    assert res.returncode == 1, res.stderr
    assert "too many open files" in res.stderr
    assert "open-file limit is 12" in res.stderr and "ulimit -n" in res.stderr


def test_fixture_machine_cannot_be_counted_live(memscope):
    env = fixture_env("westmere-ep-2s")
    res = stat(memscope, "-e", "uncore/clockticks/", "--", "true", env=env)
    assert res.returncode == 1
    assert "describes another machine" in res.stderr


def test_modifier_on_uncore_pmu(memscope):
    env = fixture_env("westmere-ep-2s")
    res = stat(memscope, "-e", "uncore/clockticks/u", "--", "true", env=env)
    assert res.returncode == 2
    assert "uncore PMU, which counts for all privilege levels" in res.stderr


def test_unprivileged_user_counts_user_space_and_says_so(memscope, touchmem, tmp_path):
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    if int(open("/proc/sys/kernel/perf_event_paranoid").read()) < 2:
        pytest.skip("perf_event_paranoid < 2: unprivileged users may count the kernel here")
    res = run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all",
               memscope, "stat", "-x,", "--self-describing", "-e", "page-faults", "--", touchmem, "20"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "counting user space only (perf_event_paranoid is 2" in res.stderr
    faults = [l for l in counter_output(res.stderr).splitlines() if l.startswith("total,total,page-faults,")][0]
    # Faults are taken from user mode, so user-only counting still sees them all.
    assert abs(float(faults.split(",")[3]) - 5120) <= 0.05 * 5120


def test_record_refuses_pid_with_a_command(memscope, tmp_path):
    # stat counts -p PID for a command's duration (perf's); record has no such form.
    res = run([memscope, "record", "-p", "1", "-o", str(tmp_path / "r.rec"), "--", "true"])
    assert res.returncode == 2 and "memscope record: -p excludes a command; choose one" in res.stderr
