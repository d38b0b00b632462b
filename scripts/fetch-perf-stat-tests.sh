#!/usr/bin/env bash
# Fetches perf's own shell tests of `perf stat`'s output (tools/perf/tests/shell/
# stat+{csv,json,std}_output.sh and their lib/ helpers) from Debian's
# linux-source-VERSION into the cache, once per version. Test stage 42 runs them
# with memscope in perf's place. Idempotent: a complete copy is reused.
# Usage: fetch-perf-stat-tests.sh VERSION (6.1 or 6.12). Prints the directory
# that holds the scripts (tools/perf/tests/shell).
set -euo pipefail

version=${1:?usage: fetch-perf-stat-tests.sh VERSION (6.1 or 6.12)}
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
package=linux-source-$version
dest=$deps/perf-stat-tests/$package
shell=tools/perf/tests/shell

if [ -f "$dest/.complete" ]; then
  echo "$dest/$shell"
  exit 0
fi
"$(dirname "$0")/fetch-linux-source.sh" "$version" "$dest" "$shell/stat+*_output.sh" "$shell/lib/*"
echo "$dest/$shell"
