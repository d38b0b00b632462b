#!/usr/bin/env bash
# perf's own tests of perf stat's output (stat+csv_output.sh, stat+json_output.sh,
# stat+std_output.sh with their lib/) from Debian's linux-source-6.1 and -6.12,
# with memscope in perf's place: `perf` on PATH runs `memscope stat` for
# `perf stat`. Each check runs on its own; the table of them is printed.
# Fetches the two source packages once into the cache (~150 MB each).
set -uo pipefail
shells=()
for version in 6.1 6.12; do
	dir=$(scripts/fetch-perf-stat-tests.sh "$version") || {
		echo "fetching linux-source-$version failed" > "$MEMSCOPE_TEST_RESULTS/42-perf-stat-compat.crash"
		exit 1
	}
	shells+=("$dir")
done
python3 scripts/perf_stat_compat.py --memscope "$MEMSCOPE_TEST_BUILD/memscope" \
	--junit "$MEMSCOPE_TEST_RESULTS/42-perf-stat-compat.xml" "${shells[@]}"
