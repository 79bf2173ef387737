#!/usr/bin/env bash
# The real-clients lane: Claude Code and Codex CLI from npm, each in a throwaway home, are
# registered with `lean-beam-mcp config <client> --write` and asked with their own `mcp list`
# whether they see the server (Claude Code's also starts it and reports whether it connected).
# A client whose npm package cannot be installed is reported skipped, by name; installed, every
# check must pass. Installs under target/lanes/clients (scripts/lib/lanes.sh).
source "$(dirname "$0")/lib/lanes.sh"
cd "$LANES_ROOT"

CLAUDE_CODE_VERSION="2.1.328"
CODEX_VERSION="0.169.0"

lanes_ensure_venv
lanes_build
dir="$LANES_DIR/clients"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

# Installs npm package $1@$2 into $dir/$1; prints nothing and returns 1 when npm cannot.
install() {
  local target="$dir/${1//\//_}-$2"
  if [[ ! -f "$target/.installed" ]]; then
    rm -rf "$target"
    mkdir -p "$target"
    if ! (cd "$target" && npm_config_update_notifier=false npm_config_fund=false \
      npm_config_audit=false "$LANES_NPM" install --no-save --no-progress --loglevel=error \
      "$1@$2") >"$work/npm.log" 2>&1; then
      echo "SKIPPED real-clients lane: $1@$2 (npm could not install it: $(tail -n 1 "$work/npm.log"))" >&2
      return 1
    fi
    touch "$target/.installed"
  fi
  echo "$target/node_modules/.bin"
}

# A home of its own for each client, with the server on PATH as an installed one would be.
bin="$work/bin"
mkdir -p "$bin"
ln -s "$LANES_SERVER" "$bin/lean-beam-mcp"

if claude_bin="$(install @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION")"; then
  home="$work/claude-home"
  mkdir -p "$home"
  if HOME="$home" "$bin/lean-beam-mcp" config claude --write >"$work/out" 2>&1; then
    pass "claude/config-write"
  else
    fail "claude/config-write: $(cat "$work/out")"
  fi
  # `claude mcp list` starts each server and checks that it answers.
  if HOME="$home" PATH="$bin:$PATH" timeout 120 "$claude_bin/claude" mcp list >"$work/out" 2>&1 \
    && grep -q "lean-beam" "$work/out" && grep -qi "connected" "$work/out"; then
    pass "claude/mcp-list sees lean-beam connected: $(grep -m 1 "lean-beam" "$work/out")"
  else
    fail "claude/mcp-list: $(cat "$work/out")"
  fi
fi

if codex_bin="$(install @openai/codex "$CODEX_VERSION")"; then
  home="$work/codex-home"
  mkdir -p "$home/.codex"
  if HOME="$home" CODEX_HOME="$home/.codex" "$bin/lean-beam-mcp" config codex --write \
    >"$work/out" 2>&1; then
    pass "codex/config-write"
  else
    fail "codex/config-write: $(cat "$work/out")"
  fi
  if HOME="$home" CODEX_HOME="$home/.codex" timeout 120 "$codex_bin/codex" mcp list \
    >"$work/out" 2>&1 && grep -q "lean-beam" "$work/out"; then
    pass "codex/mcp-list sees lean-beam: $(grep -m 1 "lean-beam" "$work/out")"
  else
    fail "codex/mcp-list: $(cat "$work/out")"
  fi
  # Written twice, Codex still reads its configuration (the duplicate-key failure of issue 19).
  HOME="$home" CODEX_HOME="$home/.codex" "$bin/lean-beam-mcp" config codex --write >/dev/null 2>&1
  if HOME="$home" CODEX_HOME="$home/.codex" timeout 120 "$codex_bin/codex" mcp list \
    >"$work/out" 2>&1 && [[ "$(grep -c "lean-beam" "$work/out")" == 1 ]]; then
    pass "codex/mcp-list after a second --write: one lean-beam"
  else
    fail "codex/mcp-list after a second --write: $(cat "$work/out")"
  fi
fi

echo "$passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
