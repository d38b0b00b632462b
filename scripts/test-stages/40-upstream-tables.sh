#!/usr/bin/env bash
# The catalog against the kernel's and perf's own tables (tests/upstream):
# event encodings, bandwidth scales, sysfs alias names and format fields.
# Fetches Debian 12's linux-source-6.12 once into the cache (~150 MB download,
# ~15 s to extract); the checks take a few seconds. The top-down cross-check runs
# memscope (the sanitizer build) on replays.
set -uo pipefail
src=$(scripts/fetch-kernel-tables.sh) || { echo "fetching linux-source-6.12 failed" > "$MEMSCOPE_TEST_RESULTS/40-upstream-tables.crash"; exit 1; }
MEMSCOPE_BUILD=${MEMSCOPE_TEST_BUILD:-build-san} MEMSCOPE_KERNEL_SOURCE=$src python3 -m pytest tests/upstream -q -rs \
	--junitxml="$MEMSCOPE_TEST_RESULTS/40-upstream-tables.xml"
