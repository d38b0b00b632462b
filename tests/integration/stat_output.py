"""Parsing memscope stat's machine-readable outputs (CSV and JSON Lines)."""
import csv
import io
import json


def parse_csv(text, sep=","):
    """Rows of `memscope stat -x SEP` as dicts; values as floats where counted."""
    lines = [l for l in text.splitlines() if l.strip()]
    assert lines, "no CSV output"
    assert lines[0] == sep.join(["time", "scope", "event", "value", "unit", "coverage", "note"]), lines[0]
    rows = []
    for rec in csv.DictReader(io.StringIO("\n".join(lines)), delimiter=sep):
        if rec["value"].startswith("<") or rec["value"] == "n/a":
            rec["counted"] = False
        else:
            rec["counted"] = True
            rec["value"] = float(rec["value"])
            rec["coverage"] = float(rec["coverage"])
        rows.append(rec)
    return rows


def totals(rows):
    """{(scope, event): value} of the final totals."""
    return {(r["scope"], r["event"]): r["value"] for r in rows if r["time"] == "total"}


def intervals(rows):
    return [r for r in rows if r["time"] != "total"]


def parse_json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def perf_count(counter_value):
    """A whole count from perf's JSON counter-value, which perf writes as "%f" ("49.000000")."""
    whole, _, fraction = counter_value.partition(".")
    assert whole.isdigit() and fraction == "000000", counter_value
    return int(whole)


def counter_output(stderr):
    """memscope stat's counts from its standard error, where they go as perf's: the stream
    without memscope's own messages (each a line starting 'memscope stat:' or 'memscope:')."""
    return "".join(l for l in stderr.splitlines(keepends=True) if not l.startswith(("memscope ", "memscope:")))


def messages(stderr):
    """memscope's own notes and errors on standard error, without stat's counts beside them."""
    return "".join(l for l in stderr.splitlines(keepends=True) if l.startswith(("memscope ", "memscope:")))
