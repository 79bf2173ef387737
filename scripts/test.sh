#!/usr/bin/env bash
# The one test command: formatting, lints, every Rust suite (unit, transcript, property, load,
# bridge, rmcp client, the Lean host against the fake Lean), a smoke run of each fuzz target
# (built by scripts/fuzz.sh with cargo-fuzz's flags, without installing cargo-fuzz), the install
# lane, the crate lane (cargo publish --dry-run), the wheel lane (the PyPI package built with
# maturin), the real-Lean lane (skipped by name without a `lake` on PATH), then the external
# lanes: the official MCP conformance suites through the HTTP bridge, the official SDK clients,
# the MCP Inspector over stdio, and the real clients (Claude Code, Codex CLI) registered by
# config --write. The lanes install what they need (Node 24 and Python mcp from PyPI, npm
# packages from conformance/package-lock.json and pinned ones) under target/lanes/ via
# scripts/lib/lanes.sh.
#
# Snapshots are never rewritten here: a changed snapshot fails the run and is reviewed with
# `cargo insta review` (or by reading the .snap.new file) before it is accepted.
set -euo pipefail
cd "$(dirname "$0")/.."

export INSTA_UPDATE="${INSTA_UPDATE:-no}"
# The test-host lanes must run here; tests/test_host_lanes.rs fails if they would be skipped.
export LEAN_BEAM_MCP_REQUIRE_TEST_HOST=1
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== cargo fmt --check"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

echo "== cargo clippy (all targets, all features, -D warnings)"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

echo "== cargo build (workspace, all features: the fake lake the Lean host suites drive)"
cargo build --workspace --all-features --locked

echo "== cargo test (workspace, all features)"
cargo test --workspace --all-features --locked

echo "== fuzz smoke: every libFuzzer target for 5 s (scripts/fuzz.sh runs them longer)"
FUZZ_PROFILE=smoke scripts/fuzz.sh 5

echo "== install lane: cargo install --locked --path . into a temporary root, then its binary"
scripts/test-install.sh

echo "== crate lane: cargo publish --dry-run (the package crates.io would get builds on its own)"
cargo publish --dry-run --locked --quiet --allow-dirty

echo "== wheel lane: the PyPI wheel (maturin, bin bindings) built, installed into a fresh venv, run"
scripts/test-wheel.sh

echo "== real-Lean lane (the Lean host scenarios and the self-check against a real lake, where one is on PATH)"
scripts/test-real-lean.sh

echo "== MCP conformance 0.1.16 at 2025-11-25 (legacy bridge)"
scripts/test-mcp-conformance.sh

echo "== MCP conformance 0.2.0-alpha.12 at 2026-07-28 (modern bridge)"
scripts/test-mcp-modern-conformance.sh

echo "== CONTRIBUTING.md conformance table is current"
scripts/conformance-table.sh --check

echo "== SDK clients: TypeScript client 2.4.0 (auto, pin) and SDK 1.32.2 (legacy)"
scripts/test-mcp-modern-sdk.sh

echo "== SDK client: Python mcp 2.3.0 (auto, pinned, legacy)"
scripts/test-mcp-python-client.sh

echo "== MCP Inspector 2.12.0 CLI over stdio: tools/list, beam_version, lean_sync (fake lake)"
scripts/test-mcp-inspector.sh

echo "== real clients: Claude Code and Codex CLI from npm see the server config --write registered"
scripts/test-real-clients.sh

echo "== benchmark smoke run (every server's answers checked; no timing)"
scripts/bench.sh --smoke
