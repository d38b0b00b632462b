#!/usr/bin/env bash
# C unit tests (meson test) under ASan+UBSan.
set -uo pipefail
[ -f "$MEMSCOPE_TEST_BUILD/build.ninja" ] || exit 1
meson test -C "$MEMSCOPE_TEST_BUILD" --print-errorlogs -q
cp "$MEMSCOPE_TEST_BUILD/meson-logs/testlog.json" "$MEMSCOPE_TEST_RESULTS/20-unit.json" 2>/dev/null
