//! What `cargo install --locked --path .` gives a user: the server binary and nothing test-only,
//! answering `--version`, `--help` and `config <client>` for every client, each snippet in its
//! client's format (it parses) naming the binary by its absolute path.
//!
//! These tests run on the binary `cargo test` built, or, when `LEAN_BEAM_INSTALLED_BIN` names
//! one, on an installed binary: `scripts/test-install.sh` installs into a temporary root and
//! runs them there.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// What `config` adds for clients that do not show the model log notifications.
const DIAGNOSTICS_IN_RESULTS: [&str; 3] = ["--diagnostics-in-result", "--diagnostic-scope", "all"];

/// The binary under test.
fn binary() -> PathBuf {
    let path = std::env::var_os("LEAN_BEAM_INSTALLED_BIN")
        .map_or_else(|| PathBuf::from(support::server_bin()), PathBuf::from);
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// The binary's command, without the settings of this environment a snippet would carry.
fn command() -> Command {
    let mut command = Command::new(binary());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("LEAN_BEAM_") {
            command.env_remove(name);
        }
    }
    command
}

fn run(args: &[&str]) -> Output {
    command().args(args).output().expect("the binary runs")
}

/// `config <client> --write <args…>` with HOME (and the working directory) `home`.
fn write(home: &Path, args: &[&str]) -> Output {
    command()
        .args(["config", args[0], "--write"])
        .args(&args[1..])
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .current_dir(home)
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 stdout")
}

/// The server entry of a snippet, parsed in the client's format.
fn server_entry(client: &str, snippet: &str) -> Value {
    match client {
        "codex" => {
            let table: toml::Table = snippet.parse().unwrap_or_else(|e| panic!("{e}\n{snippet}"));
            let entry = &table["mcp_servers"]["lean-beam"];
            serde_json::to_value(entry).expect("TOML values are JSON values")
        }
        _ => {
            let json: Value =
                serde_json::from_str(snippet).unwrap_or_else(|e| panic!("{e}\n{snippet}"));
            let key = if client == "vscode" {
                "servers"
            } else {
                "mcpServers"
            };
            json[key]["lean-beam"].clone()
        }
    }
}

#[test]
fn version_and_help_answer() {
    let version = run(&["--version"]);
    assert!(version.status.success());
    assert_eq!(
        stdout(&version),
        format!("lean-beam-mcp {}\n", env!("CARGO_PKG_VERSION"))
    );
    let help = run(&["--help"]);
    assert!(help.status.success());
    let help = stdout(&help);
    for words in [
        "config",
        "--self-check <FILE>",
        "--trace-dir <DIR>",
        "Exit status",
        "Receipts:",
        "stale_imports",
        "lean_check_receipt",
        "lean_try_edit verdicts",
        "first_closed",
    ] {
        assert!(help.contains(words), "--help lacks {words:?}:\n{help}");
    }
}

#[test]
fn every_client_gets_a_snippet_it_can_parse_naming_this_binary() {
    let binary = binary().display().to_string();
    for client in ["claude", "codex", "vscode", "cursor", "json"] {
        let output = run(&["config", client]);
        assert!(output.status.success(), "config {client}: {output:?}");
        let snippet = stdout(&output);
        let entry = server_entry(client, &snippet);
        assert_eq!(
            entry["command"],
            binary.as_str(),
            "config {client}:\n{snippet}"
        );
        // The clients that do not show the model log notifications get diagnostics in results.
        let args = if matches!(client, "claude" | "codex" | "cursor") {
            serde_json::json!(DIAGNOSTICS_IN_RESULTS)
        } else {
            serde_json::json!([])
        };
        assert_eq!(entry["args"], args, "config {client}");
        if matches!(client, "claude" | "vscode") {
            assert_eq!(entry["type"], "stdio", "config {client}");
        }
        // The explanation goes to stderr, so stdout is the snippet alone.
        let guide = String::from_utf8_lossy(&output.stderr);
        assert!(!guide.trim().is_empty(), "config {client} explains itself");
        assert!(
            !snippet.contains(guide.lines().next().unwrap()),
            "config {client}"
        );
    }
}

#[test]
fn codex_runs_the_tools_in_parallel_and_waits_as_long_as_the_server() {
    let output = run(&["config", "codex"]);
    let entry = server_entry("codex", &stdout(&output));
    assert_eq!(entry["supports_parallel_tool_calls"], true);
    assert_eq!(entry["tool_timeout_sec"], 1800);
    let output = run(&[
        "config",
        "codex",
        "--",
        "--lean-timeout-ms",
        "90000",
        "--trace-dir",
        "/tmp/lean beam traces",
    ]);
    assert!(output.status.success(), "{output:?}");
    let entry = server_entry("codex", &stdout(&output));
    assert_eq!(entry["tool_timeout_sec"], 90);
    assert_eq!(
        entry["args"],
        serde_json::json!([
            "--lean-timeout-ms",
            "90000",
            "--trace-dir",
            "/tmp/lean beam traces",
            "--diagnostics-in-result",
            "--diagnostic-scope",
            "all"
        ])
    );
    let guide = String::from_utf8_lossy(&output.stderr);
    assert!(guide.contains("'/tmp/lean beam traces'"), "{guide}");
}

#[test]
fn server_flags_are_checked_and_must_follow_the_client() {
    let bad = run(&["config", "json", "--", "--no-such-flag"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(bad.stdout.is_empty());
    let misplaced = run(&["--lake", "/opt/lake", "config", "json"]);
    assert_eq!(misplaced.status.code(), Some(2), "{misplaced:?}");
    let said = String::from_utf8_lossy(&misplaced.stderr);
    assert!(
        said.contains("error: --lake would not reach the configuration: put server flags after `config <client> --`"),
        "{said}"
    );
    let unknown = run(&["config", "emacs"]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// `cargo install --path .` installs the package's binaries whose required features are on by
/// default: that must be the server alone (the test host needs `test-host`; the bridge, the
/// benchmark and the fake Lean are packages of their own).
#[test]
fn only_the_server_is_installable() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let metadata = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(metadata.status.success(), "{metadata:?}");
    let metadata: Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "lean-beam-mcp")
        .expect("the root package");
    let default_features = package["features"]["default"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let installable: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .filter(|t| {
            t["required-features"]
                .as_array()
                .is_none_or(|needed| needed.iter().all(|f| default_features.contains(f)))
        })
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(installable, ["lean-beam-mcp"]);
}

#[test]
fn writing_twice_leaves_one_entry_keeps_the_rest_and_backs_the_old_file_up() {
    let home = tempfile::tempdir().unwrap();
    let codex = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    // No final newline, a comment and another server: all kept.
    let old = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"";
    std::fs::write(&codex, old).unwrap();
    for _ in 0..2 {
        let output = write(home.path(), &["codex"]);
        assert!(output.status.success(), "{output:?}");
    }
    let again = write(home.path(), &["codex", "--", "--lean-timeout-ms", "60000"]);
    assert!(again.status.success(), "{again:?}");
    let text = std::fs::read_to_string(&codex).unwrap();
    assert_eq!(text.matches("[mcp_servers.lean-beam]").count(), 1, "{text}");
    assert!(text.starts_with(old), "{text}");
    let entry = server_entry("codex", &text);
    let mut args = vec!["--lean-timeout-ms", "60000"];
    args.extend(DIAGNOSTICS_IN_RESULTS);
    assert_eq!(entry["args"], serde_json::json!(args));
    assert_eq!(entry["tool_timeout_sec"], 60);
    let backup = std::fs::read_to_string(codex.with_extension("toml.bak")).unwrap();
    assert_eq!(
        backup.matches("[mcp_servers.lean-beam]").count(),
        1,
        "{backup}"
    );

    let claude = home.path().join(".mcp.json");
    std::fs::write(
        &claude,
        "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}, \"z\": 1}",
    )
    .unwrap();
    for _ in 0..2 {
        let output = write(home.path(), &["claude", "--scope", "project"]);
        assert!(output.status.success(), "{output:?}");
    }
    let text = std::fs::read_to_string(&claude).unwrap();
    assert_eq!(text.matches("\"lean-beam\"").count(), 1, "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["z"], 1);
    assert_eq!(json["mcpServers"]["other"]["command"], "x");
    // A project's file is shared: it names the command on PATH, not this user's binary.
    assert_eq!(json["mcpServers"]["lean-beam"]["command"], "lean-beam-mcp");
    assert!(home.path().join(".mcp.json.bak").exists());
}

#[test]
fn a_file_that_does_not_parse_is_refused_and_left_unchanged() {
    let home = tempfile::tempdir().unwrap();
    let cursor = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, "{\"mcpServers\": {").unwrap();
    let output = write(home.path(), &["cursor"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("left unchanged: it does not parse as a JSON object"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(&cursor).unwrap(),
        "{\"mcpServers\": {"
    );
    assert!(!home.path().join(".cursor/mcp.json.bak").exists());

    // The duplicate table an appended snippet once made breaks Codex; it is named, not fixed.
    let codex = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    let broken =
        "[mcp_servers.lean-beam]\ncommand = \"a\"\n[mcp_servers.lean-beam]\ncommand = \"b\"\n";
    std::fs::write(&codex, broken).unwrap();
    let output = write(home.path(), &["codex"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("does not parse as TOML"), "{said}");
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), broken);
}
