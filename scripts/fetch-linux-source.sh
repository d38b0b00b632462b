#!/usr/bin/env bash
# Extracts some paths of Debian's linux-source-VERSION package into DEST, for
# the scripts that cache the kernel's own files (fetch-kernel-tables.sh,
# fetch-perf-stat-tests.sh). DEST is replaced whole, then marked complete with
# the package's Debian version beside it (DEST/DEBIAN_VERSION, DEST/.complete).
# Usage: fetch-linux-source.sh VERSION DEST PATH... (PATHs inside the source tree,
# wildcards allowed, as tar takes them)
set -euo pipefail

version=${1:?usage: fetch-linux-source.sh VERSION DEST PATH...}
dest=${2:?usage: fetch-linux-source.sh VERSION DEST PATH...}
shift 2
[ $# -gt 0 ] || { echo "usage: fetch-linux-source.sh VERSION DEST PATH..." >&2; exit 2; }
package=linux-source-$version

if ! apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
fi
members=()
for path in "$@"; do members+=("$package/$path"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt-get download runs as _apt and must write here
(
  cd "$work"
  apt-get -o DPkg::Lock::Timeout=600 download -qq "$package"
  dpkg-deb -f "$package"_*.deb Version > version
  dpkg-deb --fsys-tarfile "$package"_*.deb | tar -xO "./usr/src/$package.tar.xz" | tar -xJ --wildcards "${members[@]}"
)
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/$package" "$dest"
mv "$work/version" "$dest/DEBIAN_VERSION"
touch "$dest/.complete"
