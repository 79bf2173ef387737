#!/usr/bin/env bash
# The wheel lane: builds the PyPI wheel (pyproject.toml, maturin's `bin` bindings: the wheel
# carries the binary) with maturin from PyPI in a temporary venv, installs the wheel from its
# file into a fresh venv, as `pipx install` would, and runs the installed `lean-beam-mcp`:
# --version, `config codex` and `config claude`, and the self-check on a copy of the fixture
# project against the fake `lake`.
#
# It builds the dev profile into the workspace's target/ directory, so the dependencies the
# earlier lanes built are reused (the release profile's thin LTO takes minutes on CI's two
# cores, and what is checked here, the wheel's layout and its binary's answers, does not depend
# on it). LEAN_BEAM_WHEEL_RELEASE=1 builds exactly what would be published. A registry package
# that cannot be installed makes the lane report itself skipped, by name.
set -euo pipefail
cd "$(dirname "$0")/.."

MATURIN_VERSION="1.16.0"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$SECONDS

python3 -m venv "$work/build-venv"
if ! "$work/build-venv/bin/pip" install --quiet --disable-pip-version-check \
  "maturin==$MATURIN_VERSION" 2>"$work/pip.err"; then
  echo "SKIPPED wheel lane: maturin==$MATURIN_VERSION (pip could not install it: $(tail -n 1 "$work/pip.err"))"
  exit 0
fi

profile=(--profile dev)
if [[ "${LEAN_BEAM_WHEEL_RELEASE:-}" == 1 ]]; then
  profile=(--release)
fi
echo "== maturin build ${profile[*]} (bindings = bin)"
# --compatibility linux: the lane installs the wheel here, on this machine; a published wheel
# is built for a manylinux tag by the release job.
"$work/build-venv/bin/maturin" build --quiet --locked "${profile[@]}" --compatibility linux \
  --out "$work/dist"
wheel="$(ls "$work"/dist/lean_beam_mcp-*.whl)"
echo "built $(basename "$wheel")"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
bin="$work/venv/bin/lean-beam-mcp"
passed=0
failed=0
check() { # name, command...
  local name="$1"; shift
  if "$@" >"$work/out" 2>"$work/err"; then
    echo "PASS wheel/$name"; passed=$((passed + 1))
  else
    echo "FAIL wheel/$name:"; cat "$work/out" "$work/err"; failed=$((failed + 1))
  fi
}
expect() { # name, text the last output must contain
  if grep -qF -- "$2" "$work/out"; then echo "PASS wheel/$1"; passed=$((passed + 1)); else
    echo "FAIL wheel/$1: no \`$2\` in:"; cat "$work/out"; failed=$((failed + 1)); fi
}

check version "$bin" --version
expect version-names-the-crate "lean-beam-mcp $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
check config-codex "$bin" config codex
expect config-codex-names-the-wheel-binary "command = \"$bin\""
check config-claude "$bin" config claude
expect config-claude-names-the-wheel-binary "\"command\": \"$bin\""

# The self-check against the fake lake (the workspace build of the earlier lanes made it).
fake="target/debug/fake-lake"
if [[ ! -x "$fake" ]]; then
  cargo build --locked --quiet -p lean-beam-fake-lean --bins
fi
cp -R tests/fixtures/lean-project "$work/lean-project"
check self-check "$bin" --lake "$PWD/$fake" --self-check "$work/lean-project/Fixture/Basic.lean"
expect self-check-passes "phases passed"

echo "wheel lane in $((SECONDS - started)) s"
echo "$passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
