#!/usr/bin/env bash
# memscope live against real components: Debian's Chromium driven through
# playwright-core (the page: charts, labels, pause, recordings, an hour of 50
# series) and Debian's Prometheus scraping two exporters. About 2 minutes
# (2 cores). scripts/setup.sh installs what it needs (chromium, prometheus,
# the npm modules of contrib/web and tests/web); a missing piece fails the
# stage here instead of skipping its tests.
set -uo pipefail
name=65-live
# Node.js 20 where scripts/setup.sh had to fetch it (Debian 12's is 18).
deps=${MEMSCOPE_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/memscope}
[ -x "$deps/node/bin/node" ] && export PATH=$deps/node/bin:$PATH
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 20 ]; then
	echo "$name: Node.js 20 or later is needed by playwright-core, found $(node --version 2>&1)" \
		"(scripts/setup.sh fetches it)" | tee "$MEMSCOPE_TEST_RESULTS/$name.crash"
	exit 1
fi
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
