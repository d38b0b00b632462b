#!/bin/sh
# Runs inside the guest booted by run.sh: sets the guest up for the NUMA suite
# and runs it. Arguments are passed to pytest. The guest inherits nothing from
# the host's environment; run.sh passes MEMSCOPE_BUILD on the command line.
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export MEMSCOPE_VM_GUEST=1 PYTHONDONTWRITEBYTECODE=1 MEMSCOPE_VM_TIERED="${MEMSCOPE_VM_TIERED:-0}"
here=$(cd "$(dirname "$0")" && pwd)

# run.sh times the boot up to this line.
echo "vm: guest up: kernel $(uname -r), cpus $(nproc), nodes $(cat /sys/devices/system/node/online)"

# memscope resolves tracepoints through tracefs.
if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing
fi
# The guest is thrown away after the suite: turning THP off globally keeps
# every count one event per 4 KiB page, also for processes that do not opt
# out themselves (numactl, python).
echo never >/sys/kernel/mm/transparent_hugepage/enabled
ulimit -l unlimited

cd "$here/../.."
# The tiered guest (run.sh MEMSCOPE_VM_TIERED=1) boots the 6.12 kernel: it runs the memory tier
# tests and DAMON's active mode (the stock 6.1 kernel has no DAMON), nothing else.
if [ "${MEMSCOPE_VM_TIERED:-0}" = 1 ]; then
	exec python3 -m pytest -p no:cacheprovider -v "$here/suite/test_tiers.py" "$here/suite/test_damon.py" "$@"
fi
exec python3 -m pytest -p no:cacheprovider -v "$here/suite" "$@"
