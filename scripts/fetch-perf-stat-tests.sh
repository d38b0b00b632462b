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
if ! apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt-get download runs as _apt and must write here
(
  cd "$work"
  apt-get -o DPkg::Lock::Timeout=600 download -qq "$package"
  dpkg-deb -f "$package"_*.deb Version > version
  dpkg-deb --fsys-tarfile "$package"_*.deb | tar -xO "./usr/src/$package.tar.xz" |
    tar -xJ --wildcards "$package/$shell/stat+*_output.sh" "$package/$shell/lib/*"
)
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/$package" "$dest"
mv "$work/version" "$dest/DEBIAN_VERSION"
touch "$dest/.complete"
echo "$dest/$shell"
