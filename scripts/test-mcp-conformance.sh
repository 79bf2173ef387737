#!/usr/bin/env bash
# The official MCP conformance suite, @modelcontextprotocol/conformance 0.1.16, at spec 2025-11-25
# (the initialize-based wire) against target/debug/lean-beam-mcp behind a LEGACY-mode
# lean-beam-mcp-bridge: a fresh bridge and server per scenario, stopped (and checked gone) after
# it. Prints the suite's own per-check lines and one PASS/FAIL verdict per scenario; exits
# non-zero on any FAILURE or WARNING (no check is expected to fail at this revision).
# Results: target/conformance/legacy-2025-11-25/<scenario>/ (checks.json, console.log).
# Installs what it needs (scripts/lib/lanes.sh). Scenarios: $MCP_CONFORMANCE_SCENARIOS or below.
source "$(dirname "$0")/lib/lanes.sh"
source "$LANES_ROOT/scripts/lib/conformance.sh"
cd "$LANES_ROOT"

lanes_ensure_node_modules
lanes_build

read -r -a scenarios <<<"${MCP_CONFORMANCE_SCENARIOS:-server-initialize ping logging-set-level tools-list dns-rebinding-protection}"
conformance_suite legacy-2025-11-25 @modelcontextprotocol/conformance 0.1.16 \
  "$LANES_ROOT/conformance/node_modules/@modelcontextprotocol/conformance-0116/dist/index.js" \
  legacy 2025-11-25 "" "${scenarios[@]}"
