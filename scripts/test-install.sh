#!/usr/bin/env bash
# The install lane: `cargo install --locked --path .` into a temporary root, as the README's
# set-up does, then checks that the root holds the server alone and runs tests/install.rs on the
# installed binary (--version, --help, and `config` for every client: each snippet parses and
# names the installed binary).
#
# By default it installs the dev profile (`--debug`): the release profile's thin LTO with one
# codegen unit takes minutes on CI's two cores, and what is checked here (which binaries are
# installed, what they answer) does not depend on the profile. LEAN_BEAM_INSTALL_RELEASE=1
# installs exactly what a user gets.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=(--debug)
if [[ "${LEAN_BEAM_INSTALL_RELEASE:-}" == 1 ]]; then
  profile=()
fi
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT

echo "== cargo install --locked ${profile[*]-} --path . --root <temporary>"
started=$SECONDS
cargo install --locked --quiet ${profile[@]+"${profile[@]}"} --path . --root "$root"
echo "installed in $((SECONDS - started)) s"

installed="$(ls "$root/bin")"
if [[ "$installed" != "lean-beam-mcp" ]]; then
  echo "FAIL install: expected only lean-beam-mcp in the root's bin/, got: $installed"
  exit 1
fi
echo "PASS install: bin/ holds lean-beam-mcp alone"

LEAN_BEAM_INSTALLED_BIN="$root/bin/lean-beam-mcp" \
  cargo test --locked --all-features --quiet --test install
