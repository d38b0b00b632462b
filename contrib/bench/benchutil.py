"""What the benchmark scripts share: running a tool through contrib/bench/rusage (its own CPU time
and peak RSS, from wait4 of the tool rather than of the Python harness) and summarising repeated
runs as a median with its interquartile range."""
import json
import math
import pathlib
import statistics
import subprocess


class Usage:
    def __init__(self, fields, stderr):
        self.user_s = fields["user_s"]
        self.sys_s = fields["sys_s"]
        self.cpu_s = self.user_s + self.sys_s
        self.maxrss_kib = fields["maxrss_kib"]
        self.wall_s = fields["wall_s"]
        self.status = fields["status"]
        self.signal = fields["signal"]
        self.stderr = stderr


def measured(build, cmd, stdout=None, signal_after_ms=None, check=True):
    """Run cmd under contrib/bench/rusage; stdout to the file `stdout` (default: discarded)."""
    wrapper = [str(pathlib.Path(build) / "contrib/bench/rusage")]
    if signal_after_ms is not None:
        wrapper += ["--signal", "2", "--after", str(int(signal_after_ms))]
    if stdout:
        wrapper += ["--stdout", str(stdout)]
    res = subprocess.run(wrapper + ["--"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    at = res.stderr.rfind("rusage: ")
    if at < 0:
        raise SystemExit("%s: no usage line:\n%s" % (" ".join(cmd), res.stderr))
    usage = Usage(json.loads(res.stderr[at + 8:].splitlines()[0]), res.stderr[:at])
    if check and usage.status != 0 and usage.signal == 0 and signal_after_ms is None:
        raise SystemExit("%s exited with %d:\n%s" % (" ".join(cmd), usage.status, usage.stderr))
    return usage


def quartiles(values):
    """(first quartile, median, third quartile)."""
    values = list(values)
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def spread(values, fmt="%.1f", scale=1.0, unit=""):
    """'median unit [q1, q3]' of values times scale."""
    q1, med, q3 = quartiles(values)
    return (fmt % (med * scale)) + unit + " [" + (fmt % (q1 * scale)) + ", " + (fmt % (q3 * scale)) + "]"


def median_ci(values):
    """(median, low, high): the median and its distribution-free 95% confidence interval, the
    order statistics x(k) and x(n+1-k) with the largest k for which P(Binomial(n, 1/2) < k) <= 2.5%.
    Under 6 values no such k exists: the interval is then the whole range (min, max)."""
    xs = sorted(values)
    n = len(xs)
    k, below = 0, 0.0
    while True:
        below_next = below + math.comb(n, k) / 2.0 ** n   # P(B <= k)
        if below_next > 0.025:
            break
        below, k = below_next, k + 1
    # P(B <= k - 1) <= 2.5%: x(k) .. x(n + 1 - k), 1-based; k = 0 means none fits.
    if k == 0:
        return statistics.median(xs), xs[0], xs[-1]
    return statistics.median(xs), xs[k - 1], xs[n - k]


def with_ci(values, fmt="%.1f", unit=""):
    """'median unit [low, high]' with the median's 95% interval (median_ci)."""
    med, low, high = median_ci(values)
    return (fmt % med) + unit + " [" + (fmt % low) + ", " + (fmt % high) + "]"
