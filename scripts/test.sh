#!/usr/bin/env bash
# Runs every memscope test and ends with one line:
#   N passed, N failed, N skipped
# Setup (packages, libperf, the plain build), then each stage in
# scripts/test-stages/ in name order. A stage writes its results into
# $MEMSCOPE_TEST_RESULTS: meson's testlog as NN-NAME-unit.json (or NN-unit.json), JUnit XML as *.xml,
# and a NAME.crash file when it could not produce results at all. Arguments
# are passed to pytest in the integration stage.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
export PKG_CONFIG_PATH=$deps/libperf/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export MEMSCOPE_TEST_BUILD=${MEMSCOPE_TEST_BUILD:-$top/build-san}
export MEMSCOPE_TEST_RESULTS; MEMSCOPE_TEST_RESULTS=$(mktemp -d)
trap 'rm -rf "$MEMSCOPE_TEST_RESULTS"' EXIT

# Packages, libperf and the plain build (the quick start's binary).
scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

# Sanitizers stay on for everything memscope runs in the tests.
# intercept_tls_get_addr=0: in the sanitizer runtimes of GCC 12 and clang 14 (stages 10
# and 25) the __tls_get_addr interceptor takes a dynamic TLS block at page offset 16 for a
# glibc 2.19 block and reads its "start" and "size" from the 16 bytes before it, which since
# glibc 2.25 are the heap chunk's header. memscope dlopens libdw, whose TLS is such a block
# (a 16-byte heap chunk, at offset 16 in 1 of 128 heap layouts), and LeakSanitizer's tracer
# then scans that garbage range at exit and dies ("Tracer caught signal 11", exit 86).
# Leaks are still checked; only dynamic TLS is no longer a root (libdw keeps an error
# number there).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$top/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87

for stage in scripts/test-stages/*.sh; do
	name=$(basename "$stage" .sh)
	echo "== ${name#[0-9][0-9]-}"
	if ! bash "$stage" "$@"; then
		# A stage that failed without writing results still counts as a failure.
		compgen -G "$MEMSCOPE_TEST_RESULTS/${name}*" >/dev/null || echo "$name failed" > "$MEMSCOPE_TEST_RESULTS/$name.crash"
	fi
done

python3 scripts/test_summary.py "$MEMSCOPE_TEST_RESULTS"
