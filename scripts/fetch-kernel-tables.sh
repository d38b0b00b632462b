#!/usr/bin/env bash
# Fetches the kernel's own descriptions of PMUs into the cache, once: perf's
# event tables (tools/perf/pmu-events/arch), the PMU drivers (drivers/perf,
# arch/x86/events, include/linux/perf, include/linux/pci_ids.h for vendor ids
# such as the CXL PMU's) and their documentation
# (Documentation/admin-guide/perf), from Debian 12's linux-source-6.12
# (bookworm-security). The catalog cross-check (tests/upstream) reads them.
# Idempotent: a complete copy is reused. Prints the directory.
set -euo pipefail

deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
package=linux-source-6.12
dest=$deps/$package

# A copy made before pci_ids.h was part of it is fetched again.
if [ -f "$dest/.complete" ] && [ -f "$dest/include/linux/pci_ids.h" ]; then
  echo "$dest"
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
    tar -xJ --wildcards "$package/tools/perf/pmu-events/arch/*" "$package/drivers/perf/*" \
      "$package/arch/x86/events/*" "$package/include/linux/perf/*" "$package/include/linux/pci_ids.h" \
      "$package/Documentation/admin-guide/perf/*"
)
rm -rf "$dest"
mkdir -p "$deps"
mv "$work/$package" "$dest"
mv "$work/version" "$dest/DEBIAN_VERSION"
touch "$dest/.complete"
echo "$dest"
