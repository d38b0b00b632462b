"""A process's own figures from /proc/PID/status, for tests that assert on the memory of the
process they started (never system-wide totals)."""
import pathlib


def status_kib(pid, field):
    """The value in KiB of one line of /proc/PID/status (VmRSS, RssAnon, ...); an assertion
    error naming the field when the kernel gives no such line (the process is a zombie)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no {field}")
