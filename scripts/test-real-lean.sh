#!/usr/bin/env bash
# The real-Lean lane: the Lean host's end-to-end scenarios (tests/lean_host, the self-check's
# included) against a real `lake` instead of the fake, wherever one is on PATH (as elan installs
# it), then `lean-beam-mcp --self-check` itself on a copy of the fixture project, as the README
# tells a user to. Scenarios that need the fake's fault modes or its exact answers (snapshots)
# report themselves skipped by name; the rest check the same behaviour against Lean itself. Each
# scenario's harness turns the host's LSP trace on (--trace-dir) and holds what Lean sent to the
# Lean contract (tests/lean-contract, the fake's README "Lean contract") when the scenario ends.
#
#   scripts/test-real-lean.sh            uses `lake` from PATH, or reports the lane skipped
#   LEAN_BEAM_TEST_LAKE=/path/to/lake scripts/test-real-lean.sh
set -euo pipefail
cd "$(dirname "$0")/.."

lake="${LEAN_BEAM_TEST_LAKE:-$(command -v lake || true)}"
if [[ -z "$lake" ]]; then
  echo "SKIPPED real-Lean lane (the Lean host scenarios and the self-check): no \`lake\` on PATH (install Lean with elan to run it: https://github.com/leanprover/elan)"
  exit 0
fi
echo "== real-Lean lane: $lake ($("$lake" --version 2>&1 | head -n 1))"
LEAN_BEAM_TEST_LAKE="$lake" cargo test --locked --all-features --test lean_host -- --test-threads 1 "$@"

echo "== real-Lean lane: lean-beam-mcp --self-check on the fixture project"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -R tests/fixtures/lean-project "$work/lean-project"
cargo run --locked --quiet --all-features --bin lean-beam-mcp -- \
  --lake "$lake" --self-check "$work/lean-project/Fixture/Basic.lean"
