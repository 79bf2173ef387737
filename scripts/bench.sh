#!/usr/bin/env bash
# Benchmarks lean-beam-mcp against the peer MCP SDKs (rmcp, TypeScript, Python) over stdio, and
# its Lean host against lean-lsp-mcp on the same fake Lean server, in one run: builds the
# release binaries (and the fake `lake`), installs the pinned peers (scripts/lib/lanes.sh),
# measures the fake's own time per request (bench-lean-floor), runs every server of
# bench/servers.json with servers interleaved over several rounds, and writes bench/results.md
# (medians, ratios ours/peer, the Lean host's section, targets) and bench/results.svg.
#
#   scripts/bench.sh            the full benchmark (about 12 minutes on 2 cores)
#   scripts/bench.sh --smoke    a correctness pass for CI: one round, a few hundred calls per
#                               server; fails only if a server gives a wrong answer (or the
#                               unchanged lean_sync sends Lean more than its barrier request, or a
#                               storm or budget check fails)
#   scripts/bench.sh --only try-edit   lean_try_edit's benchmark alone (bench/results-try-edit.md)
#   scripts/bench.sh --only tool-list  what both servers' tool lists cost a model (bytes, o200k
#                               tokens), written into bench/results.md's tool-list section;
#                               fails when our seed tools pass the 4,000-token target (the smoke
#                               run checks it too)
#
# Further arguments go to the load generator (e.g. --rounds 5, --only rmcp); see
# `target/release/lean-beam-bench --help` and bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/lanes.sh
# Before this script builds or runs anything: the machine's load from other work, for the report.
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

smoke=false
rounds=3
only=()
args=("$@")
# The arguments the load generator gets: all but `--only try-edit`, which names no row of its.
pass=()
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --smoke) smoke=true ;;
    --rounds) rounds="${args[i + 1]:-3}" ;;
    --rounds=*) rounds="${args[i]#--rounds=}" ;;
    --only) only+=("${args[i + 1]:-}") ;;
    --only=*) only+=("${args[i]#--only=}") ;;
  esac
  if [[ "${args[i]}" == "--only" && "${args[i + 1]:-}" == "try-edit" ]]; then
    i=$((i + 1))
  elif [[ "${args[i]}" != "--only=try-edit" ]]; then
    pass+=("${args[i]}")
  fi
done

# What a model reads of each server's tool list (scripts/lib/tool_list_size.py) into $1.
tool_list() {
  lanes_ensure_tokenizer
  lanes_log "the tool lists of lean-beam-mcp and lean-lsp-mcp, as a model reads them; into $1"
  "$LANES_PYTHON" scripts/lib/tool_list_size.py --ours "$2" --peer "$LANES_LEAN_LSP_MCP" \
    --peer-name "lean-lsp-mcp $LEAN_LSP_MCP_VERSION" --node "$LANES_NODE" \
    --counter scripts/lib/count_tokens.mjs --md "$1" --target 4000
}

lanes_ensure_node_modules
lanes_ensure_lean_lsp_mcp
if [[ "${only[*]:-}" == "tool-list" ]]; then
  # The list does not depend on the build profile: the debug build the lanes use will do.
  lanes_build
  tool_list bench/results.md "$LANES_SERVER"
  exit 0
fi
if $smoke; then
  # Correctness only: the debug build the other lanes use (the workspace's binaries, all
  # features, the fake lake among them) is enough, and it is already there when they have run.
  lanes_build
  export BENCH_BIN="$PWD/target/debug"
  out="target/bench/smoke"
  logs="$out/logs"
else
  lanes_log "building the benchmark binaries, lean-beam-mcp and the fake lake (release)"
  cargo build --locked --quiet --release -p lean-beam-mcp-bench -p lean-beam-mcp \
    -p lean-beam-fake-lean --bins
  export BENCH_BIN="$PWD/target/release"
  out="target/bench"
  logs="$out/logs"
fi
export BENCH_DIR="$PWD/bench"
export LANES_NODE LANES_PYTHON LANES_LEAN_LSP_MCP

# The Lean host's rows: the fake lake, two fresh copies of the fixture project (the load rows
# spread over both), and a directory whose `lake` is the fake (lean-lsp-mcp finds lake on PATH).
export BENCH_FAKE_LAKE="$BENCH_BIN/fake-lake"
export BENCH_LEAN_ROOT="$PWD/$out/lean-project"
export BENCH_LEAN_ROOT2="$PWD/$out/lean-project-2"
export BENCH_FAKE_PATH="$PWD/$out/fake-path"
rm -rf "$BENCH_LEAN_ROOT" "$BENCH_LEAN_ROOT2" "$BENCH_FAKE_PATH"
mkdir -p "$out" "$logs" "$BENCH_FAKE_PATH"
cp -R tests/fixtures/lean-project "$BENCH_LEAN_ROOT"
cp -R tests/fixtures/lean-project "$BENCH_LEAN_ROOT2"
ln -s "$BENCH_FAKE_LAKE" "$BENCH_FAKE_PATH/lake"

# The receipt the lean_check_receipt row checks: Fixture/Basic.lean, the Lake configuration and
# the toolchain of the copy, hashed as receipts name them (src/lean/session/fingerprint.rs).
read -r BENCH_BASIC_SHA256 BENCH_CONFIG_SHA256 BENCH_TOOLCHAIN < <(python3 - "$BENCH_LEAN_ROOT" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
config = hashlib.sha256()
for name in ["lakefile.toml", "lakefile.lean", "lake-manifest.json", "lean-toolchain"]:
    config.update(name.encode() + b"\0")
    path = root / name
    if path.exists():
        contents = path.read_bytes()
        config.update(b"\1" + len(contents).to_bytes(8, "little") + contents)
    else:
        config.update(b"\0")
basic = hashlib.sha256((root / "Fixture/Basic.lean").read_bytes()).hexdigest()
print(basic, config.hexdigest(), (root / "lean-toolchain").read_text().strip())
PY
)
export BENCH_BASIC_SHA256 BENCH_CONFIG_SHA256 BENCH_TOOLCHAIN

# The floor (the fake's own time per request), unless --only leaves out every Lean row.
floor_rows="$(python3 -c 'import json, sys
print(" ".join(r["name"] for r in json.load(open(sys.argv[1]))["servers"] if "floor" in r))' \
  bench/servers.json)"
want_floor=true
if ((${#only[@]} > 0)); then
  want_floor=false
  for name in "${only[@]}"; do
    [[ " $floor_rows " == *" $name "* ]] && want_floor=true
  done
fi
extra=()
if $want_floor; then
  floor_mode=(--rounds "$rounds")
  $smoke && floor_mode=(--smoke)
  lanes_log "measuring the fake Lean server's own time per request (the floor)"
  rm -f "$logs/lean-floor.log"
  "$BENCH_BIN/bench-lean-floor" --lake "$BENCH_FAKE_LAKE" --root "$BENCH_LEAN_ROOT" \
    --out "$out/lean-floor.json" --log "$logs/lean-floor.log" "${floor_mode[@]}"
  extra=(--lean-floor "$out/lean-floor.json")
fi

# The Lean host at scale (the storm and the budget scenario), unless --only names servers.
if ((${#only[@]} == 0)); then
  scenario_mode=(--rounds "$rounds")
  $smoke && scenario_mode=(--smoke)
  lanes_log "the Lean host at scale: the storm and the budget scenario"
  "$BENCH_BIN/bench-lean-scenarios" --server "$BENCH_BIN/lean-beam-mcp" --lake "$BENCH_FAKE_LAKE" \
    --fixture tests/fixtures/lean-project --work "$out/scenarios" --logs "$logs" \
    --out "$out/lean-scenarios.json" "${scenario_mode[@]}"
  extra+=(--lean-scenarios "$out/lean-scenarios.json")
fi

# lean_try_edit's own benchmark (bench/src/bin/try_edit/), unless --only leaves it out; with
# --only try-edit alone, nothing else runs.
want_try_edit=true
only_try_edit=false
if ((${#only[@]} > 0)); then
  want_try_edit=false
  [[ " ${only[*]} " == *" try-edit "* ]] && want_try_edit=true
  [[ "${only[*]}" == "try-edit" ]] && only_try_edit=true
fi
if $want_try_edit; then
  try_edit_md="bench/results-try-edit.md"
  try_edit_rounds=(--rounds "$rounds")
  if $smoke; then
    try_edit_md="$out/results-try-edit.md"
    try_edit_rounds=(--rounds 1)
  fi
  lanes_log "lean_try_edit against lean_run_at and lean-lsp-mcp's lean_multi_attempt; report in $try_edit_md"
  note=""
  $smoke || note="Measured at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
  "$BENCH_BIN/bench-try-edit" --server "$BENCH_BIN/lean-beam-mcp" --lake "$BENCH_FAKE_LAKE" \
    --lean-lsp-mcp "$LANES_LEAN_LSP_MCP" --fake-path "$BENCH_FAKE_PATH" \
    --fixture tests/fixtures/lean-project --work "$out/try-edit" --md "$try_edit_md" \
    --note "$note" "${try_edit_rounds[@]}" >/dev/null
  $only_try_edit && exit 0
fi

if $smoke; then
  lanes_log "benchmark smoke run (correctness only); report in $out/results.md"
  "$BENCH_BIN/lean-beam-bench" --md "$out/results.md" --svg "$out/results.svg" \
    --json "$out/results.json" --logs "$logs" "${extra[@]}" "${pass[@]}"
  tool_list "$out/results.md" "$BENCH_BIN/lean-beam-mcp"
  exit 0
fi

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty="$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' plus uncommitted changes' || true)"
lanes_log "benchmark run; writing bench/results.md and bench/results.svg"
# Sections measured by hand (between `<!-- by-hand: … -->` and `<!-- /by-hand -->`, each saying
# how to measure it again) outlive the regeneration: kept aside, put back after it.
by_hand="$(sed -n '/^<!-- by-hand: /,/^<!-- \/by-hand -->/p' bench/results.md 2>/dev/null || true)"
"$BENCH_BIN/lean-beam-bench" --md bench/results.md --svg bench/results.svg \
  --json target/bench/results.json --logs "$logs" "${extra[@]}" \
  --note "Measured at commit $commit$dirty; Node $("$LANES_NODE" --version), $("$LANES_PYTHON" --version); lean-lsp-mcp $LEAN_LSP_MCP_VERSION. Load average (1, 5, 15 min) before the run began, from other work on the machine: $load_before." "${pass[@]}"
if [[ -n "$by_hand" ]]; then
  printf '\n%s\n' "$by_hand" >>bench/results.md
fi
tool_list bench/results.md "$BENCH_BIN/lean-beam-mcp"
