#!/usr/bin/env bash
# memscope live against real components: Debian's Chromium driven through
# playwright-core (the page: charts, labels, pause, recordings, an hour of 50
# series) and Debian's Prometheus scraping two exporters. About 2 minutes
# (2 cores). scripts/setup.sh installs what it needs (chromium, prometheus,
# the npm modules of contrib/web and tests/web); a missing piece fails the
# stage here instead of skipping its tests.
set -uo pipefail
name=65-live
for need in /usr/bin/chromium /usr/bin/prometheus tests/web/node_modules/playwright-core \
	"$MEMSCOPE_TEST_BUILD/contrib/web/lib/uPlot.iife.min.js"; do
	if [ ! -e "$need" ]; then
		echo "$name: $need is missing (scripts/setup.sh installs it, then reconfigure the build)" |
			tee "$MEMSCOPE_TEST_RESULTS/$name.crash"
		exit 1
	fi
done
MEMSCOPE_BUILD=$MEMSCOPE_TEST_BUILD python3 -m pytest tests/web -q -rs \
	--junitxml="$MEMSCOPE_TEST_RESULTS/$name.xml" "$@"
