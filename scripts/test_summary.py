"""Adds up meson's unit test log and pytest's JUnit files into one closing line."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

results = pathlib.Path(sys.argv[1])
passed = failed = skipped = 0

units = sorted(results.glob("*.json"))
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
if not units:
    failed += 1  # the unit tests did not run at all

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

failed += len(list(results.glob("*.crash")))
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
