#!/usr/bin/env bash
# Soak: two minutes of record -a -I 10 under fork churn (tests/soak); about 2.5 minutes.
set -uo pipefail
MEMSCOPE_BUILD=$MEMSCOPE_TEST_BUILD python3 -m pytest tests/soak -q -rs -s \
	--junitxml="$MEMSCOPE_TEST_RESULTS/55-soak.xml"
