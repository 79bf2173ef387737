#!/usr/bin/env bash
# The official MCP conformance suite, @modelcontextprotocol/conformance 0.2.0-alpha.12, at
# --spec-version 2026-07-28 (the stateless wire) against target/debug/lean-beam-mcp behind a
# MODERN-mode lean-beam-mcp-bridge: a fresh bridge and server per scenario, stopped (and checked
# gone) after it. Checks that need fixture tools or capabilities lean-beam-mcp does not ship are
# listed, one by one with the reason, in conformance/expected-failures.yml and passed to the suite
# with --expected-failures. Every other check must pass (a WARNING counts as a failure) and a
# baseline entry that starts passing fails the run: keep the baseline true.
# Prints the suite's own per-check lines and one PASS/FAIL verdict per scenario; exits non-zero on
# any unexpected failure or stale entry.
# Results: target/conformance/modern-2026-07-28/<scenario>/ (checks.json, console.log).
# Installs what it needs (scripts/lib/lanes.sh). Scenarios: $MCP_CONFORMANCE_SCENARIOS or below;
# baseline: $MCP_CONFORMANCE_EXPECTED_FAILURES or conformance/expected-failures.yml.
source "$(dirname "$0")/lib/lanes.sh"
source "$LANES_ROOT/scripts/lib/conformance.sh"
cd "$LANES_ROOT"

lanes_ensure_node_modules
lanes_build

read -r -a scenarios <<<"${MCP_CONFORMANCE_SCENARIOS:-tools-list http-header-validation dns-rebinding-protection server-stateless caching}"
conformance_suite modern-2026-07-28 @modelcontextprotocol/conformance 0.2.0-alpha.12 \
  "$LANES_ROOT/conformance/node_modules/@modelcontextprotocol/conformance-alpha/dist/index.js" \
  modern 2026-07-28 "${MCP_CONFORMANCE_EXPECTED_FAILURES:-$LANES_ROOT/conformance/expected-failures.yml}" "${scenarios[@]}"
