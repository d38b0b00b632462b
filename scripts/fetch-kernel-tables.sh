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
"$(dirname "$0")/fetch-linux-source.sh" 6.12 "$dest" "tools/perf/pmu-events/arch/*" "drivers/perf/*" \
  "arch/x86/events/*" "include/linux/perf/*" "include/linux/pci_ids.h" "Documentation/admin-guide/perf/*"
echo "$dest"
