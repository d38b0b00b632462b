#!/usr/bin/env bash
# The ASan+UBSan build every later stage tests.
set -uo pipefail
san=$MEMSCOPE_TEST_BUILD
if [ ! -f "$san/build.ninja" ]; then
	meson setup "$san" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || exit 1
fi
ninja -C "$san" >/dev/null || { ninja -C "$san" | tail -30; echo "sanitizer build failed" > "$MEMSCOPE_TEST_RESULTS/10-build-sanitizers.crash"; exit 1; }
