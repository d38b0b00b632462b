#!/usr/bin/env bash
# Integration tests (pytest) against the sanitizer build; arguments go to pytest.
set -uo pipefail
MEMSCOPE_BUILD=$MEMSCOPE_TEST_BUILD python3 -m pytest tests/integration -q -rs \
	--junitxml="$MEMSCOPE_TEST_RESULTS/30-integration.xml" "$@"
