# Shared runner for the two conformance scripts (test-mcp-conformance.sh at 2025-11-25,
# test-mcp-modern-conformance.sh at 2026-07-28). Source it after scripts/lib/lanes.sh.
#
# conformance_suite SUITE_DIR PACKAGE VERSION CLI MODE SPEC BASELINE SCENARIO...
#   For each scenario: a fresh `lean-beam-mcp-bridge --mode MODE` in front of a fresh
#   target/debug/lean-beam-mcp, the suite CLI run against the bridge's URL with
#   `--scenario S --spec-version SPEC -o target/conformance/SUITE_DIR/S` (and
#   `--expected-failures BASELINE` unless BASELINE is empty), the suite's own per-check lines
#   printed, then the bridge stopped with SIGTERM (it closes the server's input and reaps it) and
#   both processes checked gone. Each scenario is judged twice, by the suite's exit code and by
#   conformance_results.py over its checks.json (WARNING counts as failure, stale baseline
#   entries fail, a vacuous run fails). Returns non-zero if any scenario failed.
#   Results: target/conformance/SUITE_DIR/{suite.json,S/{server-S-<time>/checks.json,
#   console.log,bridge.stderr}}.

CONFORMANCE_RESULTS="$LANES_ROOT/target/conformance"
CONFORMANCE_PY="$LANES_ROOT/scripts/lib/conformance_results.py"
_conf_bridge_pid=""
_conf_server_pid=""
_conf_suite_pid=""

# Stops the running bridge (if any) and makes sure it and its server are gone; 0 when the
# bridge exited 0 (its server ended successfully) and nothing was left behind.
_conf_stop_bridge() {
  local rc=0 pid="$_conf_bridge_pid" server="$_conf_server_pid" i
  _conf_bridge_pid="" _conf_server_pid=""
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  # The bridge waits up to 10 s for its server before killing it; give it a little more.
  for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "FAIL teardown: bridge $pid still running 15 s after SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    rc=1
  fi
  wait "$pid" 2>/dev/null || { echo "FAIL teardown: bridge exited $? (its server ended badly)"; rc=1; }
  if [[ -n "$server" ]] && kill -0 "$server" 2>/dev/null; then
    echo "FAIL teardown: server $server outlived its bridge; killing it"
    kill -KILL "$server" 2>/dev/null || true
    rc=1
  fi
  return "$rc"
}

_conf_cleanup() {
  if [[ -n "$_conf_suite_pid" ]]; then
    kill -TERM "$_conf_suite_pid" 2>/dev/null || true
    wait "$_conf_suite_pid" 2>/dev/null || true
  fi
  _conf_stop_bridge >/dev/null 2>&1 || true
}
trap _conf_cleanup EXIT
trap '_conf_cleanup; exit 130' INT TERM

# Prints the suite's console output without colour and, in its "Failed Checks" section, without
# the scenario description repeated under every failed check (console.log keeps everything).
_conf_print_console() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '
    /^=== Failed Checks ===/ { failed = 1; print; next }
    failed && /^(Expected failures|Stale baseline|Unexpected failures|Baseline check|Baseline is stale)/ { failed = 0; print "" }
    failed && !/^  - / && !/^    Error:/ { next }
    { print }' | cat -s
}

# conformance_scenario SUITE_DIR CLI MODE SPEC BASELINE SCENARIO
conformance_scenario() {
  local suite_dir="$1" cli="$2" mode="$3" spec="$4" baseline="$5" scenario="$6"
  local out="$CONFORMANCE_RESULTS/$suite_dir/$scenario" ready url i rc=0 suite_rc=0
  rm -rf "$out"
  mkdir -p "$out"
  ready="$out/bridge.ready"
  echo
  echo "== $suite_dir / $scenario"
  "$LANES_BRIDGE" --mode "$mode" --ready-file "$ready" -- "$LANES_SERVER" \
    >"$out/bridge.stdout" 2>"$out/bridge.stderr" &
  _conf_bridge_pid=$!
  for ((i = 0; i < 100; i++)); do
    [[ -s "$ready" ]] && break
    kill -0 "$_conf_bridge_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -s "$ready" ]]; then
    echo "FAIL $scenario: the bridge did not write $ready within 10 s"
    cat "$out/bridge.stderr"
    _conf_stop_bridge || true
    return 1
  fi
  url="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["url"])' "$ready")"
  _conf_server_pid="$(pgrep -P "$_conf_bridge_pid" | head -n1 || true)"
  local args=(server --url "$url" --scenario "$scenario" --spec-version "$spec" -o "$out")
  [[ -n "$baseline" ]] && args+=(--expected-failures "$baseline")
  # In the background so that a signal to this script runs the trap at once.
  timeout --kill-after=5 90 "$LANES_NODE" "$cli" "${args[@]}" >"$out/console.log" 2>&1 &
  _conf_suite_pid=$!
  wait "$_conf_suite_pid" || suite_rc=$?
  _conf_suite_pid=""
  _conf_print_console "$out/console.log"
  _conf_stop_bridge || rc=1
  if [[ -s "$out/bridge.stderr" ]]; then
    echo "-- bridge stderr ($out/bridge.stderr):"
    cat "$out/bridge.stderr"
  fi
  python3 "$CONFORMANCE_PY" verdict "$out" "$scenario" ${baseline:+"$baseline"} || rc=1
  if [[ "$suite_rc" -ne 0 ]]; then
    echo "FAIL $scenario: the suite exited $suite_rc"
    rc=1
  fi
  return "$rc"
}

# conformance_suite SUITE_DIR PACKAGE VERSION CLI MODE SPEC BASELINE SCENARIO...
conformance_suite() {
  local suite_dir="$1" package="$2" version="$3" cli="$4" mode="$5" spec="$6" baseline="$7"
  shift 7
  local started=$SECONDS scenario failed=() got
  got="$("$LANES_NODE" "$cli" --version)"
  if [[ "$got" != "$version" ]]; then
    echo "FAIL $suite_dir: $cli is $got, expected $version (run lanes_ensure_node_modules)"
    return 1
  fi
  rm -rf "${CONFORMANCE_RESULTS:?}/$suite_dir"
  mkdir -p "$CONFORMANCE_RESULTS/$suite_dir"
  python3 - "$CONFORMANCE_RESULTS/$suite_dir/suite.json" "$package" "$version" "$mode" "$spec" "$@" <<'EOF'
import json, sys
path, package, version, mode, spec, *scenarios = sys.argv[1:]
json.dump({"package": package, "version": version, "mode": mode, "spec": spec,
           "scenarios": scenarios}, open(path, "w"), indent=2)
EOF
  echo "== $package $version at $spec through a $mode bridge in front of $LANES_SERVER"
  [[ -n "$baseline" ]] && echo "== expected failures: $baseline"
  for scenario in "$@"; do
    conformance_scenario "$suite_dir" "$cli" "$mode" "$spec" "$baseline" "$scenario" || failed+=("$scenario")
  done
  echo
  echo "== $suite_dir: $(($# - ${#failed[@]}))/$# scenarios passed in $((SECONDS - started)) s; results under target/conformance/$suite_dir/"
  if ((${#failed[@]})); then
    echo "FAIL $suite_dir: ${failed[*]}"
    return 1
  fi
}
