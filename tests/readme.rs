//! Keeps the README honest: its set-up commands exist and its example input gets real answers.

mod support;

use serde_json::Value;

const README: &str = include_str!("../README.md");

#[test]
fn the_readme_names_its_two_set_up_commands() {
    assert!(README.contains("cargo run --release --quiet < examples/hello.jsonl"));
    assert!(README.contains("scripts/test.sh "));
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    assert!(
        script.contains("scripts/test.sh"),
        ".ci/run must call the README's test command"
    );
}

#[test]
fn the_example_input_gets_three_answers_and_a_clean_exit() {
    let input = include_str!("../examples/hello.jsonl");
    let lines: Vec<&str> = input.lines().collect();
    let finished = support::one_shot(support::server_bin(), &[], &lines);
    assert!(finished.status.success());
    assert_eq!(finished.stderr, "");
    let answers: Vec<Value> = finished
        .transcript
        .lines()
        .filter_map(|l| l.strip_prefix("← "))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3, "{}", finished.transcript);
    assert_eq!(answers[0]["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(answers[1]["result"]["tools"][0]["name"], "beam_version");
    assert_eq!(
        answers[2]["result"]["structuredContent"]["name"],
        "lean-beam-mcp"
    );
    assert_eq!(answers[2]["result"]["isError"], false);
}

/// Every flag `--help` documents is in the README's flag table, and every flag there exists.
#[test]
fn the_readme_flag_table_matches_help() {
    let help = std::process::Command::new(support::server_bin())
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let flags = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| {
                w.starts_with("--") && w.as_bytes().get(2).is_some_and(u8::is_ascii_lowercase)
            })
            .map(str::to_owned)
            .collect()
    };
    let mut documented = flags(&help);
    documented.retain(|f| f != "--help" && f != "--version");
    let table: String = README
        .lines()
        .skip_while(|l| !l.starts_with("| flag |"))
        .take_while(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(flags(&table), documented, "README flag table vs --help");
}

/// The README's first `lean_sync`, run as it says (against the fake Lean: no toolchain here).
#[test]
fn the_readme_lean_sync_example_works() {
    assert!(README.contains(
        r#"{ sed "s|ROOT|$PWD/tests/fixtures/lean-project|" examples/lean-sync.jsonl; sleep 60; } | cargo run --release --quiet"#
    ));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lean-project");
    let input = include_str!("../examples/lean-sync.jsonl").replace("ROOT", root);
    let fake = std::path::Path::new(support::server_bin())
        .parent()
        .unwrap()
        .join("fake-lake");
    let mut server = support::McpProcess::server(&["--lake", fake.to_str().unwrap()]);
    for line in input.lines() {
        server.send_raw(line);
    }
    let sync = server.response(&serde_json::json!(1));
    let goals = server.response(&serde_json::json!(2));
    let sync = &sync["result"]["structuredContent"];
    assert_eq!(sync["version"], 1, "{sync}");
    assert_eq!(sync["readiness"]["save_ready"], true);
    assert_eq!(
        goals["result"]["structuredContent"]["goals"][0]["target"], "p",
        "{goals}"
    );
    server.finish_clean();
}
