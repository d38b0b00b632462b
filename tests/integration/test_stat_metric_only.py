"""memscope stat --metric-only: perf's metric-only form (a column per metric, no events), checked
field by field on replayed Skylake-SP IMC counters whose bandwidths are computed by hand."""
import json

from conftest import fixture_env, run
from stat_output import counter_output

# Per IMC channel i (0..5) and frame k (1 at t=1 s, 3 at t=2 s): CAS reads (i+1)*1000*k through
# cpu0 (socket 0) and (i+1)*2000*k through cpu4 (socket 1); writes a tenth of those. 64 B per CAS.
SUM_I = sum(i + 1 for i in range(6))  # 21


def replay(tmp_path):
    path = tmp_path / "skx.jsonl"
    lines = [json.dumps({"format": "memscope-replay", "version": 1})]
    for t, k in ((1.0, 1), (2.0, 3)):
        values = {}
        for i in range(6):
            values[f"uncore_imc_{i}/cas_count_read/@cpu0"] = (i + 1) * 1000 * k
            values[f"uncore_imc_{i}/cas_count_read/@cpu4"] = (i + 1) * 2000 * k
            values[f"uncore_imc_{i}/cas_count_write/@cpu0"] = (i + 1) * 100 * k
            values[f"uncore_imc_{i}/cas_count_write/@cpu4"] = (i + 1) * 200 * k
        lines.append(json.dumps({"t": t, "values": values}))
    path.write_text("\n".join(lines) + "\n")
    return path


def read_bw(socket, k, seconds=1):
    return SUM_I * (1000 if socket == 0 else 2000) * k * 64 // seconds


def stat(memscope, tmp_path, *args):
    res = run([memscope, "stat", "--replay", str(replay(tmp_path)), "-m", "mem.read_bw,mem.write_bw",
               "--metric-only"] + list(args), env=fixture_env("skylake-sp-2s"))
    assert res.returncode == 0, res.stderr
    return counter_output(res.stderr)


def test_csv_totals_and_intervals(memscope, tmp_path):
    total_read = (read_bw(0, 1) + read_bw(1, 1) + read_bw(0, 3) + read_bw(1, 3)) // 2
    assert stat(memscope, tmp_path, "-x,").splitlines() == [
        "mem.read_bw (B/s),mem.write_bw (B/s),",
        "%d,%d," % (total_read, total_read // 10),
    ]
    lines = stat(memscope, tmp_path, "-x;", "-I", "1000").splitlines()
    assert lines[0] == "time;mem.read_bw (B/s);mem.write_bw (B/s);"
    for line, t, k in zip(lines[1:], ("1.000000000", "2.000000000"), (1, 3)):
        read = read_bw(0, k) + read_bw(1, k)
        assert line.split(";") == [t, str(read), str(read // 10), ""]
    assert len(lines) == 3                            # no totals after the intervals, as perf -I
    lines = stat(memscope, tmp_path, "-x,", "-I", "1000", "--per-socket").splitlines()
    assert lines[0] == "time,socket,cpus,mem.read_bw (B/s),mem.write_bw (B/s),"
    rows = [line.split(",") for line in lines[1:]]
    assert rows == [[t, "S%d" % s, "8", str(read_bw(s, k)), str(read_bw(s, k) // 10), ""]
                    for t, k in (("1.000000000", 1), ("2.000000000", 3)) for s in (0, 1)]


def test_json_one_object_per_row_and_interval(memscope, tmp_path):
    lines = stat(memscope, tmp_path, "-j", "-I", "1000", "--per-socket").splitlines()
    # Byte for byte as perf writes --metric-only -j: "key" : value, pairs joined by ", ".
    assert lines[0] == ('{"interval" : 1.000000000, "socket" : "S0", "aggregate-number" : 8, '
                        '"mem.read_bw (B/s)" : "%d", "mem.write_bw (B/s)" : "%d"}'
                        % (read_bw(0, 1), read_bw(0, 1) // 10)), lines
    objs = [json.loads(line) for line in lines]
    want = [{"interval": t, "socket": "S%d" % s, "aggregate-number": 8,
             "mem.read_bw (B/s)": str(read_bw(s, k)), "mem.write_bw (B/s)": str(read_bw(s, k) // 10)}
            for t, k in ((1.0, 1), (2.0, 3)) for s in (0, 1)]
    assert objs == want
    assert [list(o) for o in objs] == [list(w) for w in want]    # perf's key order
    total = [json.loads(line) for line in stat(memscope, tmp_path, "-j").splitlines()]
    read = (read_bw(0, 1) + read_bw(1, 1) + read_bw(0, 3) + read_bw(1, 3)) // 2
    assert total == [{"mem.read_bw (B/s)": str(read), "mem.write_bw (B/s)": str(read // 10)}]
    assert stat(memscope, tmp_path, "-j") == '{"mem.read_bw (B/s)" : "%d", "mem.write_bw (B/s)" : "%d"}\n' % (
        read, read // 10)


def test_text_has_a_column_per_metric(memscope, tmp_path):
    out = stat(memscope, tmp_path, "-I", "1000").splitlines()
    assert out[0].split() == ["#", "time", "mem.read_bw", "(B/s)", "mem.write_bw", "(B/s)"]
    assert out[1].split() == ["1.000", format(read_bw(0, 1) + read_bw(1, 1), ","),
                              format((read_bw(0, 1) + read_bw(1, 1)) // 10, ",")]
    assert out[2].split() == ["2.000", format(read_bw(0, 3) + read_bw(1, 3), ","),
                              format((read_bw(0, 3) + read_bw(1, 3)) // 10, ",")]
    # No event lines anywhere: only the metrics' columns.
    assert "cas_count" not in "\n".join(out)


def test_metric_only_without_metrics_shows_the_events_shadow_metrics(memscope, touchmem):
    """Without -m, the metrics are perf's shadow metrics of the events: per second of task time,
    CPUs utilized; unscaled (no K/M), a column each, no event lines."""
    res = run([memscope, "stat", "--metric-only", "-x,", "-e", "page-faults,task-clock", "--", touchmem, "8"])
    assert res.returncode == 0, res.stderr
    header, values = counter_output(res.stderr).splitlines()
    assert header == "page-faults (/sec),task-clock (CPUs utilized),", counter_output(res.stderr)
    rate, cpus = (float(v) for v in values.split(",")[:2])
    # 2048 faults within the task's own time, which is under a second here.
    assert rate >= 2048 and 0 < cpus <= 2.0, values
    res = run([memscope, "stat", "--metric-only", "-j", "-e", "page-faults,task-clock", "--", "true"])
    assert list(json.loads(counter_output(res.stderr))) == ["page-faults (/sec)", "task-clock (CPUs utilized)"], counter_output(res.stderr)


def test_metric_only_refusals(memscope):
    res = run([memscope, "stat", "--metric-only", "--self-describing", "-j", "-m", "numa.hit", "--", "true"])
    assert res.returncode == 2 and "it excludes --self-describing" in res.stderr
