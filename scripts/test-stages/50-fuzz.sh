#!/usr/bin/env bash
# Fuzzing (tests/fuzz, docs/fuzzing.md): each libFuzzer harness - catalog
# loader, formula parser, event parser, recording reader, replay reader,
# sampling decode tables, HTTP requests, the Lua JSON conversion, the Lua
# sandbox's pattern matcher against Lua's, a plugin's series and labels - runs
# MEMSCOPE_FUZZ_SECONDS (60) from its seed corpus under ASan+UBSan, two at a
# time. A crash, a sanitizer report, a leak, a hang (20 s) or 2 GB of memory
# is a failure; the input that caused it is kept in BUILD/findings/ and named
# in the JUnit report and on stderr. About 8 minutes with the build.
set -uo pipefail
top=$PWD
build=${MEMSCOPE_FUZZ_BUILD:-$top/build-fuzz}
seconds=${MEMSCOPE_FUZZ_SECONDS:-60}
name=50-fuzz
results=$MEMSCOPE_TEST_RESULTS
harnesses=(catalog formula event recording replay decode http lua_json lua_pattern plugin)
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Db_sanitize=address,undefined -Db_lundef=false -Dfuzzing=true -Dtests=false \
		>/dev/null || { echo "fuzz build setup failed" > "$results/$name.crash"; exit 1; }
fi
ninja -C "$build" >/dev/null || { ninja -C "$build" | tail -30; echo "fuzz build failed" > "$results/$name.crash"; exit 1; }

findings=$build/findings
mkdir -p "$findings"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_one() {
	local h=$1 log=$work/$1.log start
	mkdir -p "$work/corpus-$h"
	start=$(date +%s)
	# The seeds are read, new inputs go to a scratch corpus: the repository is not touched.
	(cd "$work" && "$build/tests/fuzz/fuzz_$h" -dict="$top/tests/fuzz/dict/$h.dict" -max_total_time="$seconds" \
		-timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/$h-" \
		"$work/corpus-$h" "$top/tests/fuzz/corpus/$h") >"$log" 2>&1
	echo $? > "$work/$h.status"
	echo $(( $(date +%s) - start )) > "$work/$h.time"
}
for ((i = 0; i < ${#harnesses[@]}; i += 2)); do
	run_one "${harnesses[i]}" &
	[ $((i + 1)) -lt ${#harnesses[@]} ] && run_one "${harnesses[i + 1]}" &
	wait
done

failed=0
{
	echo '<?xml version="1.0" encoding="utf-8"?>'
	bad=$(for h in "${harnesses[@]}"; do [ "$(cat "$work/$h.status")" = 0 ] || echo x; done | wc -l)
	echo "<testsuite name=\"fuzz\" tests=\"${#harnesses[@]}\" failures=\"$bad\" errors=\"0\" skipped=\"0\">"
	for h in "${harnesses[@]}"; do
		runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$h.log" | grep -o '[0-9]*$')
		echo "<testcase classname=\"fuzz\" name=\"fuzz_$h\" time=\"$(cat "$work/$h.time")\">"
		if [ "$(cat "$work/$h.status")" != 0 ]; then
			what=$(grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written to' "$work/$h.log" | head -6 |
				sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g')
			echo "<failure message=\"fuzz_$h found a problem\">$what</failure>"
		fi
		echo "<system-out>${runs:-0} inputs in ${seconds} s</system-out></testcase>"
	done
	echo "</testsuite>"
} > "$results/$name.xml"
for h in "${harnesses[@]}"; do
	if [ "$(cat "$work/$h.status")" != 0 ]; then
		failed=1
		echo "fuzz_$h: a finding (the input is kept in $findings/; replay it: $build/tests/fuzz/fuzz_$h FILE):"
		grep -E 'ERROR: |SUMMARY: |runtime error' "$work/$h.log" | head -5
	else
		echo "fuzz_$h: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$h.log" | grep -o '[0-9]*$') inputs, no finding"
	fi
done
exit $failed
