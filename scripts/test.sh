#!/usr/bin/env bash
# Runs every memscope test: C unit tests and integration tests against an
# ASan+UBSan build, then the NUMA suite in a 2-node guest. Ends with one line:
#   N passed, N failed, N skipped
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
export PKG_CONFIG_PATH=$deps/libperf/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
san=${MEMSCOPE_TEST_BUILD:-$top/build-san}
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# Packages, libperf and the plain build (the quick start's binary).
scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

# Sanitizers stay on for everything memscope runs in the tests.
if [ ! -f "$san/build.ninja" ]; then
  meson setup "$san" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null ||
    { echo "0 passed, 1 failed"; exit 1; }
fi
ninja -C "$san" >/dev/null || { ninja -C "$san" | tail -30; echo "0 passed, 1 failed"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86
export LSAN_OPTIONS=suppressions=$top/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87

echo "== unit tests (meson test, ASan+UBSan)"
meson test -C "$san" --print-errorlogs -q
cp "$san/meson-logs/testlog.json" "$results/unit.json" 2>/dev/null

echo "== integration tests (pytest, ASan+UBSan build)"
MEMSCOPE_BUILD=$san python3 -m pytest tests/integration -q -rs --junitxml="$results/integration.xml" "$@"

if [ -x tests/vm/run.sh ]; then
  echo "== NUMA suite in a 2-node guest"
  MEMSCOPE_BUILD=$san tests/vm/run.sh --junitxml="$results/vm.xml"
  vm_status=$?
  [ "$vm_status" -eq 77 ] && echo "(NUMA guest skipped: see the message above)"
  [ "$vm_status" -ne 0 ] && [ "$vm_status" -ne 77 ] && [ ! -s "$results/vm.xml" ] && echo "vm-suite-crashed" > "$results/vm.crash"
fi

python3 scripts/test_summary.py "$results"
