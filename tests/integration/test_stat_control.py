"""stat --control fd:/fifo: and -D, as perf stat's: counting switched off and on while the command runs,
with acknowledgements, and only what happened while enabled counted."""
import os
import shutil
import stat as st
import subprocess

from conftest import run
from stat_output import counter_output

PAGE = 4096
PER_MIB = (1 << 20) // PAGE


def page_faults(text):
    """The page-faults value of perf stat's -x, form (value,unit,event,...), memscope's or perf's."""
    rows = [ln.split(",") for ln in text.splitlines() if ln.count(",") >= 2]
    values = [float(r[0]) for r in rows if r[2] == "page-faults"]
    assert len(values) == 1, text
    return values[0]


def workload_script(tmp_path, touchmem, ctl, ack, log, sizes):
    """A command that touches sizes[0] MiB, enables counting, touches sizes[1], disables, touches
    sizes[2]; it waits for each acknowledgement before going on and logs what it read."""
    script = tmp_path / "phases.sh"
    script.write_text(
        f"{touchmem} {sizes[0]}\n"
        f"echo enable > {ctl}; read a < {ack}; echo \"enable $a\" >> {log}\n"
        f"{touchmem} {sizes[1]}\n"
        f"echo ping > {ctl}; read a < {ack}; echo \"ping $a\" >> {log}\n"
        f"echo disable > {ctl}; read a < {ack}; echo \"disable $a\" >> {log}\n"
        f"{touchmem} {sizes[2]}\n")
    return script


def make_fifos(tmp_path):
    ctl, ack = tmp_path / "ctl.fifo", tmp_path / "ack.fifo"
    os.mkfifo(ctl, 0o600)
    os.mkfifo(ack, 0o600)
    return ctl, ack


def alone(memscope, touchmem, mib):
    """page-faults of touchmem MIB measured by itself: what the middle phase should count."""
    res = run([memscope, "stat", "-x,", "-e", "page-faults", "--", touchmem, str(mib)])
    assert res.returncode == 0, res.stderr
    return page_faults(counter_output(res.stderr))


def test_fifo_control_counts_only_while_enabled(memscope, touchmem, tmp_path):
    ctl, ack = make_fifos(tmp_path)
    log = tmp_path / "acks.log"
    script = workload_script(tmp_path, touchmem, ctl, ack, log, (16, 24, 40))
    res = run([memscope, "stat", "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-x,", "-e", "page-faults",
               "--", "sh", str(script)], timeout=120)
    assert res.returncode == 0, res.stderr
    counted = page_faults(counter_output(res.stderr))
    expected = alone(memscope, touchmem, 24)
    # 24 MiB's faults, not 16's or 40's before and after (80 MiB in all): within 3%.
    assert abs(counted - expected) <= 0.03 * expected, (counted, expected)
    assert abs(counted - 24 * PER_MIB) <= 0.03 * 24 * PER_MIB, counted
    # Each command was acknowledged, in order, before the script went on.
    assert log.read_text().splitlines() == ["enable ack", "ping ack", "disable ack"]
    # FIFOs memscope did not make are left where they are.
    assert st.S_ISFIFO(os.stat(ctl).st_mode) and st.S_ISFIFO(os.stat(ack).st_mode)


def test_fd_control_counts_only_while_enabled(memscope, touchmem, tmp_path):
    """fd:CTL,ACK: descriptors opened by the caller (perf's exec {ctl}<>FIFO), numbers on the command line."""
    ctl, ack = make_fifos(tmp_path)
    log = tmp_path / "acks.log"
    script = workload_script(tmp_path, touchmem, ctl, ack, log, (40, 16, 24))
    ctl_fd = os.open(ctl, os.O_RDWR)
    ack_fd = os.open(ack, os.O_RDWR)
    try:
        proc = subprocess.Popen([memscope, "stat", "-D", "-1", "--control", f"fd:{ctl_fd},{ack_fd}", "-x,",
                                 "-e", "page-faults", "--", "sh", str(script)], pass_fds=(ctl_fd, ack_fd),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(ctl_fd)
        os.close(ack_fd)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    counted = page_faults(counter_output(err))
    expected = alone(memscope, touchmem, 16)
    assert abs(counted - expected) <= 0.03 * expected, (counted, expected)
    assert log.read_text().splitlines() == ["enable ack", "ping ack", "disable ack"]


def test_control_agrees_with_perf_on_the_same_phases(memscope, touchmem, tmp_path):
    """perf stat -D -1 --control on the same script: memscope's count is perf's within 3%."""
    if not shutil.which("perf"):
        return
    ctl, ack = make_fifos(tmp_path)
    log = tmp_path / "acks.log"
    script = workload_script(tmp_path, touchmem, ctl, ack, log, (8, 32, 8))
    perf = run(["perf", "stat", "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-x,", "-e", "page-faults",
                "--", "sh", str(script)], timeout=120)
    assert perf.returncode == 0, perf.stderr
    perf_count = page_faults(perf.stderr)
    log.unlink()
    res = run([memscope, "stat", "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-x,", "-e", "page-faults",
               "--", "sh", str(script)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert abs(page_faults(counter_output(res.stderr)) - perf_count) <= 0.03 * perf_count, (counter_output(res.stderr), perf_count)


def test_delay_counts_from_that_long_after_the_start(memscope, touchmem):
    """-D MS: what the command does in its first MS milliseconds is not counted."""
    res = run([memscope, "stat", "-D", "1500", "-x,", "-e", "page-faults", "--", "sh", "-c",
               f"{touchmem} 40; sleep 3; {touchmem} 16"], timeout=120)
    assert res.returncode == 0, res.stderr
    counted = page_faults(counter_output(res.stderr))
    expected = alone(memscope, touchmem, 16)
    # The 40 MiB before the delay ended are not counted; sleep adds a few faults of its own.
    assert abs(counted - expected) <= 0.05 * expected, (counted, expected)


def test_bad_control_specs_name_the_argument(memscope, tmp_path):
    cmd = [memscope, "stat", "-e", "page-faults", "--control"]
    res = run(cmd + ["fd:x", "--", "true"])
    assert res.returncode == 2 and "--control fd:x" in res.stderr and "descriptor number" in res.stderr, res.stderr
    res = run(cmd + ["fd:987", "--", "true"])
    assert res.returncode == 2 and "descriptor 987 is not open" in res.stderr, res.stderr
    missing = tmp_path / "no.fifo"
    res = run(cmd + [f"fifo:{missing}", "--", "true"])
    assert res.returncode == 2 and str(missing) in res.stderr and "mkfifo" in res.stderr, res.stderr
    res = run(cmd + ["socket:1", "--", "true"])
    assert res.returncode == 2 and "--control socket:1" in res.stderr and "fifo:CTL" in res.stderr, res.stderr
    plain = tmp_path / "plain"
    plain.write_text("")
    res = run(cmd + [f"fifo:{plain}", "--", "true"])
    assert res.returncode == 2 and "not a FIFO" in res.stderr, res.stderr
    # -D -1 with nothing to send enable through; --control over a file.
    res = run([memscope, "stat", "-D", "-1", "-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and "--control" in res.stderr, res.stderr
    res = run([memscope, "stat", "-D", "abc", "-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and "-D abc" in res.stderr, res.stderr
    res = run([memscope, "stat", "--control", "fd:0", "--input", str(tmp_path / "x.rec")])
    assert res.returncode == 2 and "--input FILE" in res.stderr, res.stderr


def test_fifo_others_may_write_is_refused(memscope, tmp_path):
    ctl, ack = make_fifos(tmp_path)
    os.chmod(ctl, 0o622)
    res = run([memscope, "stat", "--control", f"fifo:{ctl},{ack}", "-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and "other users may write to it" in res.stderr and str(ctl) in res.stderr, res.stderr
    # The ack FIFO too: a forged ack misleads the controlling script.
    os.chmod(ctl, 0o600)
    os.chmod(ack, 0o666)
    res = run([memscope, "stat", "--control", f"fifo:{ctl},{ack}", "-e", "page-faults", "--", "true"])
    assert res.returncode == 2 and "other users may write to it" in res.stderr and str(ack) in res.stderr, res.stderr
    # Readable by others (mkfifo's 0644) is fine.
    os.chmod(ack, 0o644)
    res = run([memscope, "stat", "--control", f"fifo:{ctl},{ack}", "-e", "page-faults", "--", "true"])
    assert res.returncode == 0, res.stderr


def test_fd_control_whose_writers_closed_is_let_go(memscope):
    """fd:CTL on a pipe whose writer has closed: no busy loop on its end of file, and the run goes on."""
    import resource
    r, w = os.pipe()
    os.write(w, b"enable\n")
    os.close(w)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        res = run([memscope, "stat", "-D", "-1", "--control", f"fd:{r}", "-x,", "-e", "task-clock", "--",
                   "sleep", "1.5"], pass_fds=(r,), timeout=60)
    finally:
        os.close(r)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert res.returncode == 0, res.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 1.0, cpu
    # The enable read before the end of file took effect: sleep's task-clock was counted.
    rows = [ln.split(",") for ln in counter_output(res.stderr).splitlines() if ",task-clock," in ln]
    assert rows and float(rows[0][0]) > 0, counter_output(res.stderr)


def test_interval_lines_add_up_to_the_enabled_total(memscope, touchmem, tmp_path):
    """-I with --control: the lines cover only the enabled span (a disable ends a shorter line) and add
    up to the total."""
    ctl, ack = make_fifos(tmp_path)
    log = tmp_path / "acks.log"
    script = workload_script(tmp_path, touchmem, ctl, ack, log, (16, 24, 16))
    res = run([memscope, "stat", "-I", "50", "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-x,",
               "-e", "page-faults", "--", "sh", "-c", f"sh {script}; sleep 0.3"], timeout=120)
    assert res.returncode == 0, res.stderr
    lines = [ln.split(",") for ln in counter_output(res.stderr).splitlines() if ",page-faults," in ln]
    assert lines, counter_output(res.stderr)
    summed = sum(float(ln[1]) for ln in lines)
    expected = alone(memscope, touchmem, 24)
    assert abs(summed - expected) <= 0.03 * expected, (summed, expected, counter_output(res.stderr))
    times = [float(ln[0]) for ln in lines]
    assert times == sorted(times)


def test_elapsed_time_is_the_wall_time_as_perf_prints_it(memscope):
    """perf's "seconds time elapsed" is the run's wall time, the span before -D's delay included."""
    import re
    res = run([memscope, "stat", "-D", "1000", "-e", "page-faults", "--", "sleep", "1.6"], timeout=60)
    assert res.returncode == 0, res.stderr
    elapsed = float(re.search(r"([0-9.]+) +seconds time elapsed", counter_output(res.stderr)).group(1))
    assert 1.5 <= elapsed < 15, elapsed
