#!/usr/bin/env bash
# memscope live against real components: Debian's Chromium driven through
# playwright-core (the page: charts, labels, pause, recordings, an hour of 50
# series) and Debian's Prometheus scraping two exporters. About 3 minutes.
set -uo pipefail
MEMSCOPE_BUILD=$MEMSCOPE_TEST_BUILD python3 -m pytest tests/web -q -rs \
	--junitxml="$MEMSCOPE_TEST_RESULTS/60-live.xml" "$@"
