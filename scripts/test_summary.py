"""Adds up meson's unit test log and pytest's JUnit files into one closing line, after a line
for each test that failed (and each stage that left no results), so a failure is found by name."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

results = pathlib.Path(sys.argv[1])
passed = failed = skipped = 0
failures = []

# Meson's logs only (the stages name them *unit.json): other stages keep files of their own
# here too (the browser test's timings are JSON).
units = sorted(results.glob("*unit.json"))
for unit in units:
    for line in unit.read_text().splitlines():
        if not line.strip():
            continue
        outcome = json.loads(line).get("result")
        if outcome == "OK" or outcome == "EXPECTEDFAIL":
            passed += 1
        elif outcome == "SKIP":
            skipped += 1
        else:
            failed += 1
            failures.append(f"{unit.stem}: {json.loads(line).get('name')} ({outcome})")
if not units:
    failed += 1
    failures.append("unit: no meson test log (the unit tests did not run)")

for xml in sorted(results.glob("*.xml")):
    root = ET.parse(xml).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for suite in suites:
        total = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0))
        passed += total - bad - skip
        failed += bad
        skipped += skip
    for case in root.iter("testcase"):
        for kind in ("failure", "error"):
            if case.find(kind) is not None:
                failures.append(f"{xml.stem}: {case.get('classname')}::{case.get('name')} ({kind})")

for crash in sorted(results.glob("*.crash")):
    failed += 1
    failures.append(f"{crash.stem}: {crash.read_text().strip() or 'left no results'}")
for line in failures:
    print(f"FAILED {line}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
