#!/usr/bin/env bash
# memscope-bench for aarch64: built with Debian's cross compiler (static, so
# qemu-user needs no sysroot) and run under qemu-aarch64: its self-test (the
# kernels, NEON and SVE at two vector lengths, chains, cntvct_el0 timer, dc civac, c2c plans) and a short run of
# each benchmark. Takes ~20 s. Writes JUnit XML.
set -uo pipefail
out=$MEMSCOPE_TEST_RESULTS/45-aarch64.xml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=aarch64-linux-gnu-gcc
for tool in $cc qemu-aarch64; do
	command -v "$tool" >/dev/null || { echo "$tool is missing: scripts/setup.sh installs it" > "$MEMSCOPE_TEST_RESULTS/45-aarch64.crash"; exit 1; }
done
src=contrib/bench/suite
bin=$work/memscope-bench
cases=() failures=0
# name, command...: one test case each.
case_run() {
	local name=$1 start end status
	local log=$work/$name.log
	shift
	start=$(date +%s.%N)
	"$@" >"$log" 2>&1
	status=$?
	end=$(date +%s.%N)
	local t; t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
	if [ "$status" -eq 0 ]; then
		cases+=("<testcase classname=\"aarch64\" name=\"$name\" time=\"$t\"/>")
		echo "ok   $name"
	else
		failures=$((failures + 1))
		cases+=("<testcase classname=\"aarch64\" name=\"$name\" time=\"$t\"><failure message=\"exit $status\"><![CDATA[$(tail -c 4000 "$log")]]></failure></testcase>")
		echo "FAIL $name (exit $status)"; tail -20 "$log"
	fi
}
# The same warnings as the native build, and -Werror.
case_run build $cc -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -Wno-format-truncation -fno-tree-loop-distribute-patterns \
	-DBENCH_SOURCE_DIR="\"$PWD\"" -DBENCH_DATADIR="\"/usr/share/memscope\"" -Icontrib/marker -Icollector \
	-static -pthread -o "$bin" $(ls $src/*.c | grep -v test_c2c_plan.c) collector/util/plot_launch.c -lm
is_aarch64() { file -b "$bin" | grep -q 'ARM aarch64'; }
case_run is-an-aarch64-binary is_aarch64
q() { qemu-aarch64 "$bin" "$@"; }
case_run selftest q selftest
case_run c2c-plan-test sh -c "$cc -std=c11 -Wall -Werror -D_GNU_SOURCE -static -o $work/test_c2c_plan $src/test_c2c_plan.c $src/c2c_plan.c && qemu-aarch64 $work/test_c2c_plan"
case_run bw q bw all --sizes 16K,1M --reps 1 --max-reps 1 --min-time 1 --no-plot
case_run lat q lat --pattern window --sizes 16K,256K --reps 1 --max-reps 1 --min-time 1 --no-plot
case_run par q par --sizes 64K --max-par 4 --reps 1 --max-reps 1 --min-time 1 --no-plot
case_run stream q stream --size 1M --reps 1 --max-reps 1 --no-plot
case_run ctx q ctx --rounds 200 --reps 1
case_run c2c q c2c --state M --sizes 16K --reps 1 --max-reps 1 --no-plot
case_run touch q touch --pages 64 --no-plot
json_ok() { q lat --sizes 16K --reps 1 --min-time 1 --format json --no-plot | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["host"]["arch"]=="aarch64" and d["timer"]["name"] in ("cntvct_el0","clock_gettime"), d; print(d["timer"])'; }
case_run json-names-the-arch json_ok
# SVE: qemu's -cpu max has it; its vector length set to 256 bits, the default kernel is sve at 32
# bytes and does the selftest's work; with SVE off, neon is the widest and --kernel sve says why.
sve_default() { qemu-aarch64 -cpu max,sve256=on,sve512=off "$bin" bw rd --sizes 16K --reps 1 --max-reps 1 --min-time 1 --format json --no-plot | python3 -c 'import json,sys; p=json.load(sys.stdin)["params"]; assert (p["kernel"], p["vector_bytes"]) == ("sve", 32), p; print(p["kernel"], p["vector_bytes"])'; }
case_run sve-is-the-default-at-the-cpus-length sve_default
case_run sve-selftest-at-128-bits qemu-aarch64 -cpu max,sve-default-vector-length=16 "$bin" selftest
sve_off() {
	local out
	out=$(qemu-aarch64 -cpu max,sve=off "$bin" selftest) || return 1
	grep -q '^skip: sve kernels' <<<"$out" || return 1
	out=$(qemu-aarch64 -cpu max,sve=off "$bin" bw rd --kernel sve --sizes 16K 2>&1) && return 1
	grep -q 'this CPU does not have it (HWCAP); the widest here is neon' <<<"$out"
}
case_run without-sve-neon-is-the-widest sve_off
{
	echo '<?xml version="1.0" encoding="utf-8"?>'
	echo "<testsuites><testsuite name=\"aarch64\" tests=\"${#cases[@]}\" failures=\"$failures\">"
	printf '%s\n' "${cases[@]}"
	echo '</testsuite></testsuites>'
} > "$out"
[ "$failures" -eq 0 ]
