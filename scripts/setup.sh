#!/usr/bin/env bash
# Sets up a Debian 12 machine to build and test memscope, then builds it.
# Idempotent: packages already present are not reinstalled; libperf is built once
# from Debian's kernel source and cached (see MEMSCOPE_DEPS below).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
build=${MEMSCOPE_BUILD:-$top/build}

log() { printf 'setup: %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

packages=(
  # build
  build-essential meson ninja-build pkg-config
  libpfm4-dev libbpf-dev bpftool clang llvm libelf-dev libdw-dev zlib1g-dev
  liblua5.4-dev libyaml-dev libjansson-dev libmicrohttpd-dev libncurses-dev libzstd-dev libcap-dev
  # run and compare
  linux-perf bpftrace numactl util-linux xz-utils zstd
  # tests
  python3 python3-pytest python3-yaml tmux
  # memscope bench: its plots, and the peers its tests compare with
  python3-matplotlib likwid mbw
  # the aarch64 build of memscope-bench, run under qemu-user
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  # clang's sanitizer and libFuzzer runtimes (test stages 25 and 50)
  libclang-rt-14-dev
  # the 2-node NUMA guest
  qemu-system-x86 python3-venv kmod busybox-static
  # memscope live's tests: a real browser and a real Prometheus (stage 65)
  chromium chromium-driver prometheus
)

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
  as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# libperf (linux tools/lib/perf) is not packaged in Debian 12. Where pkg-config
# already knows it (Fedora's libperf-devel, or an earlier run of this script) we
# use that; otherwise build the static library from Debian's linux-source-6.1.
provide_libperf() {
  local prefix=$deps/libperf
  if PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config --exists libperf; then
    return 0
  fi
  log "building libperf from Debian's linux-source-6.1 into $prefix"
  local work; work=$(mktemp -d)
  chmod 755 "$work"  # apt-get download runs as _apt and must write here
  (
    cd "$work"
    apt-get -o DPkg::Lock::Timeout=600 download -qq linux-source-6.1
    local src=linux-source-6.1
    dpkg-deb --fsys-tarfile linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz |
      tar -xJ $src/tools/lib/perf $src/tools/lib/api $src/tools/lib/zalloc.c $src/tools/lib/str_error_r.c \
              $src/tools/include $src/tools/build $src/tools/scripts $src/tools/arch/x86/include
    make -s -C $src/tools/lib/perf install_lib install_headers install_pkgconfig \
         prefix="$prefix" libdir_relative=lib >/dev/null
    make -s -C $src/tools/lib/api >/dev/null
    cp $src/tools/lib/api/libapi.a "$prefix/lib/"
    # Static only: the binary then runs without LD_LIBRARY_PATH.
    rm -f "$prefix"/lib/libperf.so*
  )
  rm -rf "$work"
}

# The page's libraries (uPlot, fzstd) and the browser tests' driver
# (playwright-core, with Debian's chromium) from npm, as the lock files pin
# them; again only when a lock file changed. Node.js and npm come from
# Debian where the machine has none.
web_changed=0
# The browser tests' driver (playwright-core) wants Node.js 20 or later; Debian 12's
# nodejs is 18. Where the machine's node is older, Node.js 20's official build comes from
# the npm registry (node-linux-<arch>, checked against the registry's integrity hash) into
# the cache; $deps/node/bin goes first on PATH here and in test stage 65.
node_version=20.18.1
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
provide_node() {
  if ! command -v npm >/dev/null; then
    as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  [ -x "$deps/node/bin/node" ] && export PATH=$deps/node/bin:$PATH
  [ "$(node_major)" -ge 20 ] && return 0
  local arch
  case $(uname -m) in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) log "no Node.js 20 build for $(uname -m): the browser tests (stage 65) will say so"; return 0 ;;
  esac
  log "Node.js $(node --version) is older than 20: fetching Node.js $node_version into $deps/node"
  rm -rf "$deps/node.new"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$deps/node.new" \
    "node-linux-$arch@$node_version" >/dev/null
  mkdir -p "$deps/node.new/bin"
  ln -s "../node_modules/node-linux-$arch/bin/node" "$deps/node.new/bin/node"
  rm -rf "$deps/node" && mv "$deps/node.new" "$deps/node"
  export PATH=$deps/node/bin:$PATH
}

provide_npm_modules() {
  local dir
  for dir in "$top/contrib/web" "$top/tests/web"; do
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.memscope-lock"; then
      log "npm ci in ${dir#$top/}"
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
      cp "$dir/package-lock.json" "$dir/node_modules/.memscope-lock"
      web_changed=1
    fi
  done
}

build_memscope() {
  export PKG_CONFIG_PATH=$deps/libperf/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$top" ${MEMSCOPE_MESON_ARGS:-} >/dev/null
  elif [ "$web_changed" = 1 ]; then
    # The page is built only where its npm libraries are: look again.
    meson setup --reconfigure "$build" "$top" >/dev/null
  fi
  ninja -C "$build" >/dev/null
  log "built $build/memscope"
}

install_packages
provide_libperf
provide_node
provide_npm_modules
build_memscope
