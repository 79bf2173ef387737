//! Names the suites that need the test host, so a run without `--features test-host` reports
//! them as skipped by name instead of passing silently, and fails outright where they are
//! required: `scripts/test.sh` (and so CI) sets `LEAN_BEAM_MCP_REQUIRE_TEST_HOST=1`.

/// The suites built only with the `test-host` feature (their `[[test]]` entries in Cargo.toml).
const LANES: &[&str] = &[
    "transcript_tools",
    "transcript_concurrency",
    "transcript_progress_logs",
    "transcript_seam",
    "shutdown",
    "load",
    "bridge_http",
];

#[test]
fn test_host_lanes_run_or_are_reported_skipped() {
    let manifest = include_str!("../Cargo.toml");
    for lane in LANES {
        let entry = format!("[[test]]\nname = \"{lane}\"\nrequired-features = [\"test-host\"]");
        assert!(
            manifest.contains(&entry),
            "{lane} is not declared as a test-host lane in Cargo.toml"
        );
    }
    if cfg!(feature = "test-host") {
        println!("test-host lanes enabled: {}", LANES.join(", "));
        return;
    }
    let required = std::env::var_os("LEAN_BEAM_MCP_REQUIRE_TEST_HOST").is_some_and(|v| v == "1");
    assert!(
        !required,
        "LEAN_BEAM_MCP_REQUIRE_TEST_HOST=1 but the test-host feature is off: these lanes would not run: {}",
        LANES.join(", ")
    );
    println!(
        "SKIPPED (build with --features test-host, as scripts/test.sh does): {}",
        LANES.join(", ")
    );
}
