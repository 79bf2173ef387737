#!/usr/bin/env bash
# PyPI mcp==2.3.0 (mcp.client.Client) over stdio against the real binary and the test host, in
# `auto` (must negotiate 2026-07-28), pinned "2026-07-28" and `legacy` (2025-11-25) modes.
# The real server (lean-beam-mcp) answers negotiation, discover, tools/list, beam_version and
# teardown; the test host (lean-beam-mcp-test-host) serves the progress and log tools.
# Prints one `PASS name` / `FAIL name: reason` line per check, then `N passed, M failed`;
# exits non-zero on any failure. Installs what it needs (scripts/lib/lanes.sh).
source "$(dirname "$0")/lib/lanes.sh"
cd "$LANES_ROOT"

lanes_ensure_venv
lanes_build
echo "real server: $LANES_SERVER (negotiation, discover, tools/list, beam_version, teardown)"
echo "test host:   $LANES_TEST_HOST (progress, per-request and session log levels, teardown)"

out="$LANES_DIR/python-client"
mkdir -p "$out"
status=0
timeout --kill-after=5 120 "$LANES_PYTHON" conformance/clients/python_client.py \
  --server "$LANES_SERVER" --test-host "$LANES_TEST_HOST" 2>"$out/python.stderr" | tee "$out/python.log" || status=1
if [[ -s "$out/python.stderr" ]]; then
  echo "-- python client stderr:"; cat "$out/python.stderr"
fi

passed=$(grep -c '^PASS ' "$out/python.log" || true)
failed=$(grep -c '^FAIL ' "$out/python.log" || true)
if [[ "$status" -ne 0 && "$failed" -eq 0 ]]; then
  echo "FAIL python-client/runner: the client exited non-zero without a FAIL line"
  failed=1
fi
echo "$passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
