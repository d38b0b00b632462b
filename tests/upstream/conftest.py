"""The kernel source tree the upstream checks read (scripts/fetch-kernel-tables.sh puts it in the cache)."""
import os

import pytest

import kernel_tables

COUNTS = {}


@pytest.fixture(scope="session")
def src():
    path = kernel_tables.kernel_source()
    if not os.path.isdir(os.path.join(path, "tools", "perf", "pmu-events", "arch")):
        pytest.fail("%s has no tools/perf/pmu-events/arch: run scripts/fetch-kernel-tables.sh (the test stage "
                    "40-upstream-tables does)" % path)
    return path


def pytest_terminal_summary(terminalreporter):
    """How many catalog events and metrics were compared with perf's tables, per family."""
    if not COUNTS:
        return
    tr = terminalreporter
    tr.write_line("catalog events and metrics compared with perf's tables (linux-source-6.12):")
    for family in sorted(COUNTS):
        c = COUNTS[family]
        tr.write_line("  %-24s %3d events compared (%d differ, with upstream_differs), %d metric scales; "
                      "tables: %s" % (family, c.get("events", 0), c.get("differs", 0), c.get("metrics", 0),
                                      ", ".join(c.get("tables", [])) or "none"))
