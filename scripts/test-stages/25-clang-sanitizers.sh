#!/usr/bin/env bash
# memscope built with clang under ASan+UBSan, as well as with gcc (stage 10):
# clang's UBSan also checks pointer arithmetic (-fsanitize=pointer-overflow:
# a pointer formed past the end of a buffer) and float-to-integer overflow.
# Runs the unit tests and the integration tests of the parsers, the catalog,
# the Lua engine and the recording files. About 3 minutes (2 cores).
set -uo pipefail
build=${MEMSCOPE_CLANG_BUILD:-$PWD/build-clang}
name=25-clang-sanitizers
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null ||
		{ echo "clang setup failed" > "$MEMSCOPE_TEST_RESULTS/$name.crash"; exit 1; }
fi
ninja -C "$build" >/dev/null || { ninja -C "$build" | tail -30; echo "clang build failed" > "$MEMSCOPE_TEST_RESULTS/$name.crash"; exit 1; }
meson test -C "$build" --print-errorlogs -q
cp "$build/meson-logs/testlog.json" "$MEMSCOPE_TEST_RESULTS/$name-unit.json" 2>/dev/null
MEMSCOPE_BUILD=$build python3 -m pytest -q -rs --junitxml="$MEMSCOPE_TEST_RESULTS/$name.xml" \
	tests/integration/test_bad_input.py tests/integration/test_catalog.py tests/integration/test_errors.py \
	tests/integration/test_lua.py tests/integration/test_lua_scripts_found.py \
	tests/integration/test_record_files.py
