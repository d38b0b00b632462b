#!/usr/bin/env bash
# The Debian package: dpkg-buildpackage from debian/, lintian, then installed
# with apt, used and purged (tests/package); systemd-analyze verifies the
# exporter's unit. About 2 minutes: one plain build
# of memscope inside dpkg-buildpackage.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
for p in debhelper lintian fakeroot dpkg-dev groff-base systemd; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
	as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The package build runs without sanitizers: theirs would be in the package.
env -u ASAN_OPTIONS -u LSAN_OPTIONS -u UBSAN_OPTIONS \
	python3 -m pytest tests/package -q -rs --junitxml="$MEMSCOPE_TEST_RESULTS/60-debian-package.xml"
