#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ and runs each for SECONDS (default 60), one at a time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # every target when none is named
#   FUZZ_SANITIZER=address scripts/fuzz.sh 600 lsp_frames
#   FUZZ_PROFILE=smoke scripts/fuzz.sh 5       # what scripts/test.sh runs
#
# The targets are built the way `cargo fuzz build` builds them (the same RUSTFLAGS: sancov
# instrumentation with 8-bit counters, PC table, compare tracing and stack depth, `--cfg fuzzing`,
# dead code linked, one codegen unit, release with debug info), without installing cargo-fuzz:
# on this stable toolchain RUSTC_BOOTSTRAP=1 admits the nightly flags, and installing cargo-fuzz
# would add minutes to every CI run for a command line (fuzz/README.md has the measurements).
# FUZZ_PROFILE=smoke keeps the instrumentation but builds at opt-level 1 in 16 codegen units, for a
# shorter build at fewer executions per second. The sanitizer is `none` unless FUZZ_SANITIZER says
# otherwise (`address` finds memory errors in the unsafe code of dependencies, at a slower build
# and slower runs).
#
# Each target reads its committed corpus fuzz/corpus/TARGET (seeds and every input that once
# crashed it) and writes what it discovers to fuzz/target/corpus/TARGET (not committed). A crash
# leaves its input in fuzz/artifacts/TARGET and fails the script. Per target, the libFuzzer
# summary line (executions, coverage, corpus) is printed; the full log is in
# fuzz/target/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
all=(stdio_lines protocol schema lsp_frames lsp_client bridge_headers)
if [[ $# -gt 0 ]]; then targets=("$@"); else targets=("${all[@]}"); fi

sanitizer="${FUZZ_SANITIZER:-none}"
triple="$(rustc -vV | sed -n 's/^host: //p')"
flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
flags+=" -Cllvm-args=-simplifycfg-branch-fold-threshold=0"
flags+=" --cfg fuzzing -Clink-dead-code"
flags+=" -Cllvm-args=-sanitizer-coverage-stack-depth"
if [[ "$sanitizer" != none ]]; then flags+=" -Zsanitizer=$sanitizer"; fi
profile="${FUZZ_PROFILE:-release}"
case "$profile" in
  release) flags+=" -C codegen-units=1"; build=(--release --config profile.release.debug=true) ;;
  smoke) build=(--profile smoke) ;;
  *) echo "FUZZ_PROFILE must be release or smoke, not $profile"; exit 2 ;;
esac

echo "== building fuzz targets (profile: $profile, sanitizer: $sanitizer)"
start=$SECONDS
target_dir="fuzz/target/$profile-$sanitizer"
RUSTC_BOOTSTRAP=1 RUSTFLAGS="$flags" CARGO_TARGET_DIR="$target_dir" \
  cargo build --manifest-path fuzz/Cargo.toml --locked --target "$triple" "${build[@]}" --bins
echo "built in $((SECONDS - start)) s"

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"
failed=()
for target in "${targets[@]}"; do
  bin="$target_dir/$triple/$profile/$target"
  [[ -x "$bin" ]] || { echo "unknown fuzz target: $target (known: ${all[*]})"; exit 2; }
  mkdir -p "fuzz/target/corpus/$target" "fuzz/corpus/$target" "fuzz/artifacts/$target" fuzz/target/logs
  log="fuzz/target/logs/$target.log"
  dict=()
  [[ -f "fuzz/dict/$target.dict" ]] && dict=("-dict=fuzz/dict/$target.dict")
  echo "== fuzzing $target for ${seconds} s"
  # -timeout: an input that takes 10 s is a hang. -malloc_limit_mb: no input of at most
  # -max_len bytes has a reason to allocate 64 MiB at once (libFuzzer enforces it only under a
  # sanitizer, whose allocator it hooks; -rss_limit_mb holds in every build).
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
      -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$target/" ${dict[@]+"${dict[@]}"} \
      "fuzz/target/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
    grep -E '^#[0-9]+\s+DONE' "$log" | tail -1 || true
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" || true
  else
    echo "FAILED: $target (log: $log, inputs: fuzz/artifacts/$target/)"
    grep -E 'panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY' "$log" | head -5 || true
    failed+=("$target")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz targets that failed: ${failed[*]}"
  exit 1
fi
