#!/usr/bin/env bash
# Boots one throw-away QEMU guest with two NUMA nodes (one CPU and
# MEMSCOPE_VM_NODE_MB of memory each, distances 10/20) and runs the NUMA suite
# (tests/vm/suite) in it with pytest; arguments are passed to pytest.
#
# The guest's root is the host's / shared read-only over 9p (writable tmpfs
# overlays on /tmp, /etc, ...), so it runs the binaries in MEMSCOPE_BUILD
# (default build/) as they were just built. Prints the suite's output and
# exits with its status: pytest's own, 124 when the timeout stopped the guest,
# 255 when the guest crashed, 77 (skipped) only where QEMU cannot run at all.
#
#   MEMSCOPE_BUILD         build directory to test (default: <repo>/build)
#   MEMSCOPE_DEPS          cache root (default: ~/.cache/memscope; the VM parts go to vm/)
#   MEMSCOPE_VM_TIMEOUT    seconds for the whole guest run (default 600)
#   MEMSCOPE_VM_NODE_MB    memory per node in MiB (default 1024)
#   MEMSCOPE_VM_VERBOSE=1  show the guest's boot console
#   MEMSCOPE_VM_KERNEL_PKG boot this Debian kernel package for this run (prepared beside the default)
#   MEMSCOPE_VM_TIERED=1   add node 2: MEMSCOPE_VM_SLOW_MB (default 512) MiB, no CPU, slower through
#                          HMAT (a lower memory tier on kernels that tier by HMAT), and run only
#                          suite/test_tiers.py and suite/test_damon.py
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
vm=$deps/vm
build=$(cd "${MEMSCOPE_BUILD:-$top/build}" 2>/dev/null && pwd) || build=${MEMSCOPE_BUILD:-$top/build}
timeout_s=${MEMSCOPE_VM_TIMEOUT:-600}
node_mb=${MEMSCOPE_VM_NODE_MB:-1024}

say() { printf 'vm: %s\n' "$*" >&2; }
skip() { say "skipped: $*"; exit 77; }
fail() { say "error: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

start=$(now)

case $(uname -m) in
x86_64) ;;
*) skip "the guest is an x86_64 Debian kernel running this host's x86_64 binaries; this host is $(uname -m)" ;;
esac

if ! "$here/prepare.sh"; then
	command -v qemu-system-x86_64 >/dev/null ||
		skip "qemu-system-x86_64 is not installed and could not be installed (tests/vm/prepare.sh failed above)"
	fail "tests/vm/prepare.sh failed (see above)"
fi

# Can QEMU run at all here (TCG: no KVM needed)? Starts a machine with no
# devices and quits it from the monitor.
if ! probe=$(echo quit | timeout 30 qemu-system-x86_64 -machine none -accel tcg -display none \
	-nodefaults -monitor stdio 2>&1); then
	skip "qemu-system-x86_64 cannot start a TCG machine here: $(printf '%s' "$probe" | tail -n 3)"
fi

# The private mount namespace needs root (or unprivileged user namespaces).
if [ "$(id -u)" -eq 0 ]; then
	unshare=(unshare --mount --propagation private)
else
	unshare=(unshare --user --map-root-user --mount --propagation private)
fi

[ -x "$build/memscope" ] || say "warning: $build/memscope is missing: tests that run memscope will fail (build first: scripts/setup.sh)"

kernel=$vm/kernel/current
if [ -n "${MEMSCOPE_VM_KERNEL_PKG:-}" ]; then
	kernel=${MEMSCOPE_VM_KERNEL_PKG#linux-image-}
	kernel=$vm/kernel/${kernel%-unsigned}
fi
kver=$(cat "$kernel/.complete")
vmlinux=$(readlink -f "$kernel")/boot/vmlinux-$kver

vng_args=(
	--run "$vmlinux"
	# /dev/kvm, where present, may only run paravirtual guests: TCG always works.
	--disable-kvm
	--cpus 2 --memory "$((2 * node_mb))M"
	--numa "${node_mb}M,cpus=0" --numa "${node_mb}M,cpus=1"
	--numa-distance 0,1=20 --numa-distance 1,0=20
	# Debian 12's virtiofsd is too old for virtme-ng: share / over 9p.
	--force-9p
	# Under TCG the TSC follows the host clock; without this the guest picks
	# the HPET, and every clock read becomes a slow emulated MMIO access.
	--append tsc=reliable
	--cwd "$top"
)
# The tiered guest: node 2 has memory and no CPU (CPU 0 is its initiator, as
# HMAT needs one per node), and HMAT says it is 10x slower and has a tenth of
# the bandwidth: mm/memory-tiers.c puts it in a lower tier from these (Linux
# 6.11 and later for a node that is plain RAM to the firmware).
tiered=${MEMSCOPE_VM_TIERED:-0}
if [ "$tiered" = 1 ]; then
	slow_mb=${MEMSCOPE_VM_SLOW_MB:-512}
	for i in "${!vng_args[@]}"; do
		[ "${vng_args[$i]}" = --memory ] && vng_args[i+1]="$((2 * node_mb + slow_mb))M"
	done
	vng_args+=(--numa "${slow_mb}M,initiator=0" --numa-distance 0,2=30 --numa-distance 2,0=30
		--numa-distance 1,2=40 --numa-distance 2,1=40
		--qemu-opt=-machine --qemu-opt=hmat=on)
	for init in 0 1; do
		for target in 0 1 2; do
			if [ "$target" = 2 ]; then lat=100 bw=1G
			elif [ "$target" = "$init" ]; then lat=10 bw=10G
			else lat=20 bw=5G
			fi
			vng_args+=(--qemu-opt=-numa
				--qemu-opt="hmat-lb,initiator=$init,target=$target,hierarchy=memory,data-type=access-latency,latency=$lat"
				--qemu-opt=-numa
				--qemu-opt="hmat-lb,initiator=$init,target=$target,hierarchy=memory,data-type=access-bandwidth,bandwidth=$bw")
		done
	done
fi
[ "${MEMSCOPE_VM_VERBOSE:-0}" = 1 ] && vng_args+=(--verbose)

# The guest sees the host read-only: pytest's --junitxml goes to a directory
# shared read-write, and is copied to where the caller asked afterwards.
junit_dest=
pytest_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--junitxml=*) junit_dest=${1#--junitxml=} ;;
	--junitxml) junit_dest=${2:-}; shift ;;
	*) pytest_args+=("$1") ;;
	esac
	shift
done
outdir=
if [ -n "$junit_dest" ]; then
	outdir=$(mktemp -d "$vm/out.XXXXXX")
	trap 'rm -rf "$outdir"' EXIT
	vng_args+=(--rwdir "$outdir")
	pytest_args+=("--junitxml=$outdir/junit.xml")
fi

# The guest command goes on the kernel command line (2 KiB in all, base64
# encoded): keep it to the runner script, a few variables and pytest's
# arguments. The guest inherits no environment: pass on the build and the
# sanitizers' settings.
guest_cmd="MEMSCOPE_BUILD=$(printf '%q' "$build") MEMSCOPE_VM_TIERED=$tiered"
for var in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
	[ -n "${!var:-}" ] && guest_cmd+=" $var=$(printf '%q' "${!var}")"
done
guest_cmd+=" sh $(printf '%q' "$here/in-guest.sh")"
for arg in ${pytest_args[@]+"${pytest_args[@]}"}; do guest_cmd+=" $(printf '%q' "$arg")"; done
[ ${#guest_cmd} -le 900 ] ||
	fail "the guest command is ${#guest_cmd} characters, more than the kernel command line holds: fewer pytest arguments?"

# Inside a private mount namespace: the stand-in udevd over /usr/lib/systemd
# (created, empty, on a host without systemd), then virtme-ng (which execs QEMU in the same process group, so timeout's
# signal reaches it).
boot_script='
set -e
[ -d /usr/lib/systemd ] || mkdir -p /usr/lib/systemd
mount -t overlay memscope-vm-udev -o "lowerdir=$1:/usr/lib/systemd" /usr/lib/systemd
shift
exec "$@"'

nodes_said="a 2-node guest"
[ "$tiered" = 1 ] && nodes_said="a 3-node tiered guest (node 2: ${slow_mb} MiB, no CPU, slower by HMAT)"
say "booting $nodes_said (kernel $kver, ${node_mb} MiB per CPU node, TCG; timeout ${timeout_s} s)"
boot_start=$(now)
# QEMU makes its stdio non-blocking: give it /dev/null and a pipe of its own,
# never this script's terminal.
PATH=$vm/venv/bin:$PATH timeout -k 10 "$timeout_s" "${unshare[@]}" \
	sh -c "$boot_script" boot "$here/udev-standin" vng "${vng_args[@]}" -- "$guest_cmd" </dev/null 2>&1 |
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		case $line in
		"vm: guest up:"*) say "guest booted in $(since "$boot_start") s" ;;
		esac
	done
rc=${PIPESTATUS[0]}
if [ -n "$junit_dest" ]; then
	if [ -s "$outdir/junit.xml" ]; then
		cp "$outdir/junit.xml" "$junit_dest"
	else
		say "warning: the guest wrote no JUnit report for $junit_dest"
	fi
fi

case $rc in
0) say "suite passed; guest run took $(since "$boot_start") s, $(since "$start") s in all" ;;
124 | 137) say "error: the guest run exceeded ${timeout_s} s and was stopped (raise MEMSCOPE_VM_TIMEOUT?)" ;;
255) say "error: the guest crashed or QEMU stopped unexpectedly (exit 255); rerun with MEMSCOPE_VM_VERBOSE=1 to see its console" ;;
*) say "suite failed with status $rc; guest run took $(since "$boot_start") s" ;;
esac
exit "$rc"
