#!/usr/bin/env bash
# The one test command: formatting, lints, and every suite (unit, transcript, property, load).
# Snapshots are never rewritten here: a changed snapshot fails the run and is reviewed with
# `cargo insta review` (or by reading the .snap.new file) before it is accepted.
set -euo pipefail
cd "$(dirname "$0")/.."

export INSTA_UPDATE="${INSTA_UPDATE:-no}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (all targets, all features, -D warnings)"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

echo "== cargo test (workspace, all features)"
cargo test --workspace --all-features --locked
