#!/usr/bin/env bash
# The NUMA suite in a 2-node QEMU guest.
set -uo pipefail
[ -x tests/vm/run.sh ] || exit 0
MEMSCOPE_BUILD=$MEMSCOPE_TEST_BUILD tests/vm/run.sh --junitxml="$MEMSCOPE_TEST_RESULTS/90-numa-guest.xml"
status=$?
[ "$status" -eq 77 ] && { echo "(NUMA guest skipped: see the message above)"; exit 0; }
exit "$status"
