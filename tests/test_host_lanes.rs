//! Names the suites that need the test host, so a run without `--features test-host` reports
//! them as skipped instead of passing silently. `scripts/test.sh` always enables the feature.

/// The suites built only with the `test-host` feature.
const LANES: &[&str] = &[
    "transcript_tools",
    "transcript_concurrency",
    "transcript_progress_logs",
    "load",
    "bridge_http",
];

#[test]
fn test_host_lanes() {
    if cfg!(feature = "test-host") {
        println!("test-host lanes enabled: {}", LANES.join(", "));
    } else {
        println!(
            "SKIPPED (build with --features test-host, as scripts/test.sh does): {}",
            LANES.join(", ")
        );
    }
}
