#!/usr/bin/env bash
# The real-Lean lane: the Lean host's end-to-end scenarios (tests/lean_host) against a real
# `lake` instead of the fake, wherever one is on PATH (as elan installs it). Scenarios that need
# the fake's fault modes or its exact answers (snapshots) report themselves skipped by name; the
# rest check the same behaviour against Lean itself.
#
#   scripts/test-real-lean.sh            uses `lake` from PATH, or reports the lane skipped
#   LEAN_BEAM_TEST_LAKE=/path/to/lake scripts/test-real-lean.sh
set -euo pipefail
cd "$(dirname "$0")/.."

lake="${LEAN_BEAM_TEST_LAKE:-$(command -v lake || true)}"
if [[ -z "$lake" ]]; then
  echo "SKIPPED real-Lean lane: no \`lake\` on PATH (install Lean with elan to run it: https://github.com/leanprover/elan)"
  exit 0
fi
echo "== real-Lean lane: $lake ($("$lake" --version 2>&1 | head -n 1))"
LEAN_BEAM_TEST_LAKE="$lake" cargo test --locked --all-features --test lean_host -- --test-threads 1 "$@"
