#!/usr/bin/env bash
# Prepares what tests/vm/run.sh needs to boot a throw-away 2-node NUMA guest:
#   - Debian packages: QEMU (TCG), python3-venv, kmod (depmod), busybox-static
#     (virtme-ng's initramfs), numactl and pytest (used inside the guest);
#   - virtme-ng in a venv under the cache directory (never system-wide);
#   - Debian's stock kernel, unpacked with dpkg -x (not installed), with its
#     uncompressed vmlinux extracted from the bzImage and modules.dep built.
# Idempotent: every step is skipped when its result is already in the cache.
# Cache: ${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}/vm (see README.md).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
vm=$deps/vm
virtme_version=1.42
# Debian's metapackage for the current stock kernel; MEMSCOPE_VM_KERNEL_PKG
# names a specific linux-image-* package instead.
kernel_meta=linux-image-amd64

vm_packages=(qemu-system-x86 python3 python3-venv python3-pytest kmod busybox-static binutils zstd numactl util-linux)

log() { printf 'vm-prepare: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

start=$(now)
mkdir -p "$vm"
# One prepare at a time: CI and a developer may share the cache.
exec 9>"$vm/.lock"
flock 9

install_packages() {
	local missing=() p
	for p in "${vm_packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		log "packages: present"
		return 0
	fi
	log "packages: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
	as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

provide_virtme() {
	local venv=$vm/venv
	if [ -x "$venv/bin/vng" ] && "$venv/bin/vng" --version 2>/dev/null | grep -q "$virtme_version"; then
		log "virtme-ng $virtme_version: cached in $venv"
		return 0
	fi
	log "virtme-ng $virtme_version: creating $venv"
	rm -rf "$venv"
	# Debian's interpreter, not whichever python3 comes first in PATH: the venv
	# must keep working whatever the caller's PATH is.
	local python=/usr/bin/python3
	[ -x "$python" ] || python=$(command -v python3)
	"$python" -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check "virtme-ng==$virtme_version"
}

# Prints the linux-image-* package to use.
kernel_package() {
	if [ -n "${MEMSCOPE_VM_KERNEL_PKG:-}" ]; then
		echo "$MEMSCOPE_VM_KERNEL_PKG"
		return 0
	fi
	local pkg
	pkg=$(apt-cache depends "$kernel_meta" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	if [ -z "$pkg" ]; then
		as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
		pkg=$(apt-cache depends "$kernel_meta" | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	fi
	[ -n "$pkg" ] || die "apt knows no $kernel_meta: is this Debian with its main archive configured?"
	echo "$pkg"
}

# The bzImage carries the kernel as one XZ stream (Debian's 6.1) or one zstd
# frame (its 6.12); QEMU boots the plain ELF vmlinux directly, which saves the
# in-guest decompression (seconds under TCG).
extract_vmlinux() {
	python3 - "$1" "$2" <<'EOF'
import lzma, subprocess, sys
data = open(sys.argv[1], "rb").read()
start = data.find(b"\xfd7zXZ\x00")
zstd = data.find(b"\x28\xb5\x2f\xfd")
if start >= 0:
    elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[start:])
elif zstd >= 0:
    # The frame is followed by the bzImage's trailer, which zstd reports after writing the kernel.
    elf = subprocess.run(["zstd", "-dcq"], input=data[zstd:], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
else:
    sys.exit(f"{sys.argv[1]}: no XZ or zstd stream found (kernel compressed another way?)")
if elf[:4] != b"\x7fELF":
    sys.exit(f"{sys.argv[1]}: the XZ stream is not an ELF vmlinux")
with open(sys.argv[2], "wb") as out:
    out.write(elf)
EOF
}

provide_kernel() {
	local current=$vm/kernel/current
	if [ -z "${MEMSCOPE_VM_KERNEL_PKG:-}" ] && [ -f "$current/.complete" ]; then
		log "kernel $(cat "$current/.complete"): cached in $(readlink -f "$current")"
		return 0
	fi
	local pkg kver dir work
	pkg=$(kernel_package)
	kver=${pkg#linux-image-}
	kver=${kver%-unsigned}   # linux-image-6.12.N+deb12-amd64-unsigned holds vmlinuz-6.12.N+deb12-amd64
	dir=$vm/kernel/$kver
	if [ ! -f "$dir/.complete" ]; then
		log "kernel: downloading and unpacking $pkg"
		work=$(mktemp -d "$vm/tmp.XXXXXX")
		# shellcheck disable=SC2064
		trap "rm -rf '$work'" EXIT
		(cd "$work" && apt-get -o DPkg::Lock::Timeout=600 download -qq "$pkg" 2>/dev/null)
		dpkg-deb -x "$work"/"$pkg"_*.deb "$work/root"
		local vmlinuz=$work/root/boot/vmlinuz-$kver
		[ -f "$vmlinuz" ] || die "$pkg has no /boot/vmlinuz-$kver"
		extract_vmlinux "$vmlinuz" "$work/root/boot/vmlinux-$kver"
		rm -f "$vmlinuz"
		# Debian's package ships no modules.dep (its postinst makes it).
		PATH=$PATH:/usr/sbin:/sbin depmod -a -b "$work/root" "$kver"
		rm -rf "$dir"
		mkdir -p "$vm/kernel"
		mv "$work/root" "$dir"
		echo "$kver" >"$dir/.complete"
		rm -rf "$work"
		trap - EXIT
	fi
	# A kernel named for one run (run.sh boots kernel/<version>) leaves the default alone.
	[ -n "${MEMSCOPE_VM_KERNEL_PKG:-}" ] || ln -sfn "$kver" "$current"
	log "kernel $kver: ready in $dir"
}

install_packages
provide_virtme
provide_kernel
log "ready in $(since "$start") s (cache: $vm)"
