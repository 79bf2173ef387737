//! Keeps the README and CONTRIBUTING.md honest: their commands exist, their examples are real
//! runs, the flag table is the declared flags, and the README stays short enough to read.

mod support;

use serde_json::Value;

const README: &str = include_str!("../README.md");
const CONTRIBUTING: &str = include_str!("../CONTRIBUTING.md");

/// The README is for users and stays about 1,500 words (code blocks included); developer
/// material goes to CONTRIBUTING.md.
#[test]
fn the_readme_stays_short() {
    let words = README.split_whitespace().count();
    assert!(
        words <= 1_600,
        "the README has {words} words: move detail to CONTRIBUTING.md"
    );
    for section in [
        "## Install",
        "## Register",
        "## First call",
        "## Troubleshooting",
        "## Tools",
    ] {
        assert!(
            README.contains(&format!("\n{section}\n")),
            "the README lacks {section}"
        );
    }
    let first = README
        .find("\n## ")
        .map(|i| &README[i + 1..])
        .unwrap_or_default();
    assert!(first.starts_with("## Install\n"), "Install comes first");
}

#[test]
fn the_contributing_guide_names_its_two_set_up_commands() {
    assert!(CONTRIBUTING.contains("cargo run --release --quiet < examples/hello.jsonl"));
    assert!(CONTRIBUTING.contains("scripts/test.sh "));
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

/// Where CONTRIBUTING.md's flag table begins and ends.
const TABLE_START: &str = "<!-- flags: generated from the flag declarations by tests/readme.rs (UPDATE_README=1); do not edit by hand -->";
const TABLE_END: &str = "<!-- /flags -->";

/// The flag table, made from the declarations `--help` is made from: every flag, the
/// environment variable that sets it, its default and its meaning.
fn flag_table() -> String {
    use clap::CommandFactory;
    let one_line = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut rows = vec![
        "| flag | environment | default | meaning |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    let command = lean_beam_mcp::cli::args::Cli::command();
    for arg in command.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "version") {
            continue;
        }
        let flag = match arg.get_value_names() {
            Some([value, ..]) if arg.get_action().takes_values() => format!("`--{long} {value}`"),
            _ => format!("`--{long}`"),
        };
        let env = arg
            .get_env()
            .map_or("—".to_owned(), |e| format!("`{}`", e.to_string_lossy()));
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let default = if defaults.is_empty() {
            "—".to_owned()
        } else {
            format!("`{}`", defaults.join(" "))
        };
        let meaning = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| one_line(h.to_string()))
            .unwrap_or_default()
            .replace('|', "\\|");
        rows.push(format!("| {flag} | {env} | {default} | {meaning} |"));
    }
    rows.join("\n") + "\n"
}

/// CONTRIBUTING.md's flag table is the declarations' (`UPDATE_README=1` rewrites it), and `--help`
/// shows every flag with its environment variable and default: neither can drift.
#[test]
fn the_flag_table_is_the_declared_flags() {
    let expected = flag_table();
    let guide_path = concat!(env!("CARGO_MANIFEST_DIR"), "/CONTRIBUTING.md");
    let start = CONTRIBUTING
        .find(TABLE_START)
        .expect("CONTRIBUTING.md marks its flag table")
        + TABLE_START.len()
        + 1;
    let end = CONTRIBUTING
        .find(TABLE_END)
        .expect("CONTRIBUTING.md ends its flag table");
    if std::env::var_os("UPDATE_README").is_some() {
        let updated = format!(
            "{}{expected}{}",
            &CONTRIBUTING[..start],
            &CONTRIBUTING[end..]
        );
        std::fs::write(guide_path, updated).unwrap();
        return;
    }
    assert_eq!(
        &CONTRIBUTING[start..end],
        expected,
        "CONTRIBUTING.md's flag table is stale: regenerate it with UPDATE_README=1 cargo test --test readme"
    );
    let help = std::process::Command::new(support::server_bin())
        .arg("--help")
        .env_clear()
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    use clap::CommandFactory;
    for arg in lean_beam_mcp::cli::args::Cli::command().get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        assert!(help.contains(&format!("--{long}")), "--help lacks --{long}");
        if let Some(env) = arg.get_env() {
            let shown = format!("[env: {}=", env.to_string_lossy());
            assert!(help.contains(&shown), "--help lacks {shown} for --{long}");
        }
        for default in arg.get_default_values() {
            let shown = format!("[default: {}]", default.to_string_lossy());
            assert!(help.contains(&shown), "--help lacks {shown} for --{long}");
        }
    }
    for text in [&help, &README.to_string(), &CONTRIBUTING.to_string()] {
        assert!(text.contains("RUST_LOG"), "RUST_LOG is documented");
    }
}

/// Every client `config` knows is named in the README.
#[test]
fn the_readme_names_every_client_config_knows() {
    use clap::ValueEnum;
    for client in lean_beam_mcp::cli::args::Client::value_variants() {
        let name = client.to_possible_value().unwrap().get_name().to_owned();
        let command = format!("lean-beam-mcp config {name}");
        assert!(README.contains(&command), "the README shows `{command}`");
    }
}

/// The README's first `lean_sync`, run as it says (against the fake Lean: no toolchain here).
#[test]
fn the_contributing_lean_sync_example_works() {
    assert!(CONTRIBUTING.contains(
        r#"{ sed "s|ROOT|$PWD/tests/fixtures/lean-project|" examples/lean-sync.jsonl; sleep 60; } | cargo run --release --quiet"#
    ));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lean-project");
    let input = include_str!("../examples/lean-sync.jsonl").replace("ROOT", root);
    let fake = std::path::Path::new(support::server_bin())
        .parent()
        .unwrap()
        .join("fake-lake");
    let contract = support::contract::Contract::new(&[]);
    let (trace, at) = contract.fake_env();
    let mut server =
        support::McpProcess::server_with_env(&["--lake", fake.to_str().unwrap()], &[(trace, &at)]);
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

/// The binary path the README's snippets show.
const README_BINARY: &str = "/home/you/.cargo/bin/lean-beam-mcp";

/// The README starts a user at `cargo install`, and shows each client's snippet exactly as
/// `config <client>` prints it (with the README's stand-in for the binary's path).
#[test]
fn the_readme_installs_and_shows_each_snippet_as_config_prints_it() {
    assert!(README.contains("cargo install --locked --path ."));
    let binary = std::fs::canonicalize(support::server_bin()).unwrap();
    for client in ["claude", "codex", "vscode", "cursor", "json"] {
        let output = std::process::Command::new(&binary)
            .args(["config", client])
            .env_remove("LEAN_BEAM_LEAN_TIMEOUT_MS")
            .output()
            .unwrap();
        assert!(output.status.success());
        let snippet = String::from_utf8(output.stdout)
            .unwrap()
            .replace(&binary.display().to_string(), README_BINARY);
        assert!(
            README.contains(&snippet),
            "the README does not show `config {client}` as it prints:\n{snippet}"
        );
    }
}

/// The README's self-check example is what the self-check prints on the fixture project (run
/// here against the fake Lean, as the README says), times aside.
#[test]
fn the_readme_self_check_example_is_a_real_run() {
    const MARK: &str =
        "<!-- self-check example: tests/readme.rs checks it against a run -->\n```text\n";
    const ROOT: &str = "/home/you/lean-beam-mcp/tests/fixtures/lean-project";
    let start = README.find(MARK).expect("the README marks its example") + MARK.len();
    let end = start + README[start..].find("```").expect("the example ends");
    let shown: String = README[start..end]
        .lines()
        .map(|line| support::hide_times(line) + "\n")
        .collect();
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path().join("lean-project");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lean-project");
    std::process::Command::new("cp")
        .arg("-R")
        .arg(&fixture)
        .arg(&root)
        .status()
        .unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    let fake = std::path::Path::new(support::server_bin())
        .parent()
        .unwrap()
        .join("fake-lake");
    let mut contract = support::contract::Contract::new(&[]);
    let (trace, at) = contract.fake_env();
    let output = std::process::Command::new(support::server_bin())
        .arg("--lake")
        .arg(&fake)
        .arg("--self-check")
        .arg(root.join("Fixture/Basic.lean"))
        .env(trace, at)
        .output()
        .unwrap();
    contract.check();
    assert!(output.status.success(), "{output:?}");
    let ran: String = String::from_utf8(output.stdout)
        .unwrap()
        .replace(&root.display().to_string(), ROOT)
        .replace(&fake.display().to_string(), "lake")
        .lines()
        .map(|line| support::hide_times(line) + "\n")
        .collect();
    assert_eq!(shown, ran);
}
