#!/usr/bin/env bash
# Benchmarks lean-beam-mcp against the peer MCP SDKs (rmcp, TypeScript, Python) over stdio, in
# one run: builds the release binaries, installs the pinned peers (scripts/lib/lanes.sh), runs
# every server of bench/servers.json with servers interleaved over several rounds, and writes
# bench/results.md (medians, ratios ours/peer, targets) and bench/results.svg.
#
#   scripts/bench.sh            the full benchmark (about 10 minutes on 2 cores)
#   scripts/bench.sh --smoke    a correctness pass for CI: one round, a few hundred calls per
#                               server; fails only if a server gives a wrong answer
#
# Further arguments go to the load generator (e.g. --rounds 5, --only rmcp); see
# `target/release/lean-beam-bench --help` and bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/lanes.sh

smoke=false
for arg in "$@"; do
  [[ "$arg" == "--smoke" ]] && smoke=true
done

lanes_ensure_node_modules
if $smoke; then
  # Correctness only: the debug build the other lanes use (the workspace's binaries, all
  # features) is enough, and it is already there when they have run.
  lanes_build
  export BENCH_BIN="$PWD/target/debug"
else
  lanes_log "building the benchmark binaries (release)"
  cargo build --locked --quiet --release -p lean-beam-mcp-bench --bins
  export BENCH_BIN="$PWD/target/release"
fi
export BENCH_DIR="$PWD/bench"
export LANES_NODE LANES_PYTHON

if $smoke; then
  out="target/bench/smoke"
  lanes_log "benchmark smoke run (correctness only); report in $out/results.md"
  exec "$BENCH_BIN/lean-beam-bench" --md "$out/results.md" --svg "$out/results.svg" \
    --json "$out/results.json" --logs "$out/logs" "$@"
fi

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty="$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' plus uncommitted changes' || true)"
lanes_log "benchmark run; writing bench/results.md and bench/results.svg"
exec "$BENCH_BIN/lean-beam-bench" --md bench/results.md --svg bench/results.svg \
  --json target/bench/results.json --logs target/bench/logs \
  --note "Measured at commit $commit$dirty; Node $("$LANES_NODE" --version), $("$LANES_PYTHON" --version)." "$@"
