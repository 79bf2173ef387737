#!/usr/bin/env bash
# Official TypeScript SDK clients over stdio against the real binary and the test host:
#   - @modelcontextprotocol/client 2.4.0 in `auto` and `pin` (2026-07-28) negotiation;
#   - @modelcontextprotocol/sdk 1.32.2 (legacy only, initialize at 2025-11-25).
# The real server (lean-beam-mcp) answers negotiation, discover, tools/list, beam_version and
# teardown; the test host (lean-beam-mcp-test-host) serves the progress and log tools.
# Prints one `PASS name` / `FAIL name: reason` line per check, then `N passed, M failed`;
# exits non-zero on any failure. Installs what it needs (scripts/lib/lanes.sh).
source "$(dirname "$0")/lib/lanes.sh"
cd "$LANES_ROOT"

lanes_ensure_node_modules
lanes_build
echo "real server: $LANES_SERVER (negotiation, discover, tools/list, beam_version, teardown)"
echo "test host:   $LANES_TEST_HOST (progress, per-request and session log levels, teardown)"

out="$LANES_DIR/modern-sdk"
mkdir -p "$out"
status=0
run() {
  local name="$1"; shift
  # Bounded by the client's own 90 s watchdog; `timeout` backs it up.
  timeout --kill-after=5 120 "$LANES_NODE" "$@" 2>"$out/$name.stderr" | tee "$out/$name.log" || status=1
  if [[ -s "$out/$name.stderr" ]]; then
    echo "-- $name stderr:"; cat "$out/$name.stderr"
  fi
}
clients="$LANES_ROOT/conformance/clients"
run ts-client-auto "$clients/modern-sdk-client.mjs" --mode auto --server "$LANES_SERVER" --test-host "$LANES_TEST_HOST"
run ts-client-pin "$clients/modern-sdk-client.mjs" --mode pin --server "$LANES_SERVER" --test-host "$LANES_TEST_HOST"
run ts-sdk-legacy "$clients/legacy-sdk-client.mjs" --server "$LANES_SERVER" --test-host "$LANES_TEST_HOST"

passed=$(cat "$out"/ts-*.log | grep -c '^PASS ' || true)
failed=$(cat "$out"/ts-*.log | grep -c '^FAIL ' || true)
if [[ "$status" -ne 0 && "$failed" -eq 0 ]]; then
  echo "FAIL modern-sdk/runner: a client exited non-zero without a FAIL line"
  failed=1
fi
echo "$passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
