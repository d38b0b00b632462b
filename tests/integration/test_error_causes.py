"""Errors name the true cause: running out of file descriptors while loading the eBPF probes is
the open-file limit (it was blamed on the verifier), and counting another user's process as an
unprivileged user is refused by ptrace access, not by perf_event_paranoid."""
import os
import subprocess

import pytest

from conftest import run

NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="loads eBPF probes")
def test_ebpf_out_of_file_descriptors_names_the_limit(memscope):
    for limit in (12, 16):
        res = run(["prlimit", f"--nofile={limit}", memscope, "stat", "-e", "proc.faults", "--", "true"])
        err = "\n".join(l for l in res.stderr.splitlines() if l.startswith("memscope"))
        assert f": too many open files: the open-file limit is {limit} (ulimit -n); " \
               "fix: ulimit -n 1024" in err, err
        assert "eBPF probes: loading failed (" in err and "they need about 24 descriptors" in err
        assert "verifier" not in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs another user to run as")
def test_another_users_process_is_a_matter_of_ptrace_access(memscope):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        res = run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", memscope, "stat",
                   "-p", str(sleeper.pid), "-e", "page-faults", "-I", "100"], timeout=30)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert res.returncode == 1, res
    assert f"no permission to count 'page-faults' in process {sleeper.pid}: it belongs to uid 0, and the kernel " \
           "lets perf count another user's process only with ptrace access to it (not a matter of " \
           "perf_event_paranoid); fix: run memscope as the process's owner (uid 0) or as root, or grant " \
           "CAP_SYS_PTRACE" in res.stderr, res.stderr
    assert "perf_event_paranoid is" not in res.stderr
