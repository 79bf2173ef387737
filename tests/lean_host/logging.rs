//! What a Lean call says while it runs: progress (preparation, Lake setup, file progress, one
//! `done`), the one `beam.status` notice, and live `lean.diagnostic` logs filtered by
//! `diagnostic_scope` and by the legacy session level or the modern per-request level.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::contract::Contract;
use crate::support::{McpProcess, call, modern, request};

fn logs(messages: &[Value], logger: &str) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message" && m["params"]["logger"] == logger)
        .map(|m| m["params"].clone())
        .collect()
}

fn progress(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect()
}

fn sync_with(lean: &mut Lean, id: i64, arguments: Value, meta: Value) -> Vec<Value> {
    let mut params = call("lean_sync", arguments);
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    lean.server.send(&request(id, "tools/call", params));
    lean.server.until_response(&json!(id))
}

#[test]
fn legacy_logs_follow_the_scope_and_the_session_level() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let errors = sync_with(
        &mut lean,
        101,
        args(&project, "Fixture/Holes.lean", json!({})),
        Value::Null,
    );
    let logged = logs(&errors, "lean.diagnostic");
    assert!(!logged.is_empty());
    assert!(logged.iter().all(|l| l["level"] == "error"), "{logged:?}");
    // A new version, so the diagnostics are new again; scope all adds the warnings.
    project.write(
        "Fixture/Holes.lean",
        &(project.read("Fixture/Holes.lean") + "\n"),
    );
    let all = sync_with(
        &mut lean,
        102,
        args(
            &project,
            "Fixture/Holes.lean",
            json!({"diagnostic_scope": "all"}),
        ),
        Value::Null,
    );
    let levels: Vec<String> = logs(&all, "lean.diagnostic")
        .iter()
        .map(|l| l["level"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        levels.iter().any(|l| l == "warning") && levels.iter().any(|l| l == "error"),
        "{levels:?}"
    );
    lean.server
        .ask(request(103, "logging/setLevel", json!({"level": "error"})));
    project.write(
        "Fixture/Holes.lean",
        &(project.read("Fixture/Holes.lean") + "\n"),
    );
    let quiet = sync_with(
        &mut lean,
        104,
        args(
            &project,
            "Fixture/Holes.lean",
            json!({"diagnostic_scope": "all"}),
        ),
        Value::Null,
    );
    assert!(
        logs(&quiet, "lean.diagnostic")
            .iter()
            .all(|l| l["level"] == "error"),
        "the session level filters after the scope"
    );
    crate::harness::snapshot("legacy_logs", lean.server.finish_clean());
}

#[test]
fn modern_logs_follow_only_the_request_level() {
    let project = Project::fixture();
    let lake = crate::harness::lake();
    let contract = Contract::new(&[]);
    let (trace, at) = contract.fake_env();
    let mut arguments = vec!["--lake".to_owned(), lake.display().to_string()];
    arguments.extend(contract.server_args(&[]));
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let mut server = McpProcess::server_with_env(&arguments, &[(trace, &at)]);
    server.replace(&project.root().display().to_string(), "[root]");
    let sync = |id: i64, level: Option<&str>| {
        let mut params = call(
            "lean_sync",
            args(
                &project,
                "Fixture/TypeError.lean",
                json!({"diagnostic_scope": "all"}),
            ),
        );
        if let Some(level) = level {
            params["_meta"] = json!({"io.modelcontextprotocol/logLevel": level});
        }
        modern(id, "tools/call", params)
    };
    server.send(&sync(1, None));
    let silent = server.until_response(&json!(1));
    assert!(
        logs(&silent, "lean.diagnostic").is_empty(),
        "no level, no logs"
    );
    project.write(
        "Fixture/TypeError.lean",
        &(project.read("Fixture/TypeError.lean") + "\n"),
    );
    server.send(&sync(2, Some("warning")));
    let warned = server.until_response(&json!(2));
    let logged = logs(&warned, "lean.diagnostic");
    assert!(!logged.is_empty());
    assert!(
        logged
            .iter()
            .all(|l| ["error", "warning"].contains(&l["level"].as_str().unwrap())),
        "{logged:?}"
    );
    crate::harness::snapshot("modern_logs", server.finish_clean());
}

#[test]
fn progress_reports_preparation_file_progress_and_one_done() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let seen = sync_with(
        &mut lean,
        101,
        args(&project, "Fixture/Basic.lean", json!({})),
        json!({"progressToken": "p"}),
    );
    let updates = progress(&seen);
    assert_eq!(
        updates[0]["message"],
        "lean_sync on Fixture/Basic.lean: preparing the Lean workspace"
    );
    let values: Vec<f64> = updates
        .iter()
        .map(|u| u["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let done = updates
        .iter()
        .filter(|u| u["message"].as_str().unwrap().contains("done=true"))
        .count();
    assert_eq!(done, 1, "{updates:?}");
    // Human-readable lines are the tools' 0-based ones, and say so.
    let ranged: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["message"].as_str())
        .filter(|m| m.contains("(lines "))
        .collect();
    assert!(!ranged.is_empty(), "{updates:?}");
    assert!(
        ranged.iter().all(|m| m.contains(", 0-based; ")),
        "{ranged:?}"
    );
    assert!(
        logs(&seen, "beam.status").is_empty(),
        "a token means no status notice"
    );
    lean.server.finish_clean();
}

#[test]
fn lake_setup_lines_are_progress_and_an_early_notice_never_a_diagnostic() {
    if crate::harness::fake_only(
        "lake_setup_lines_are_progress_and_an_early_notice_never_a_diagnostic",
    ) {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[(
            "FAKE_LEAN_SETUP_LINES",
            "✔ [1/2] Built Fixture.Basic\n✔ [2/2] Built Fixture.Uses",
        )],
    );
    let seen = sync_with(
        &mut lean,
        101,
        args(
            &project,
            "Fixture/Uses.lean",
            json!({"diagnostics_in_result": true, "diagnostic_scope": "all"}),
        ),
        Value::Null,
    );
    let notices = logs(&seen, "beam.status");
    assert_eq!(notices.len(), 1, "{seen:?}");
    assert_eq!(notices[0]["data"]["state"], "preparing_dependencies");
    assert_eq!(notices[0]["data"]["path"], "Fixture/Uses.lean");
    let result = &seen.last().unwrap()["result"]["structuredContent"];
    assert_eq!(
        result["diagnostics"]["counts"]["information"], 0,
        "{result}"
    );
    let with_token = sync_with(
        &mut lean,
        102,
        args(&project, "Fixture/Basic.lean", json!({})),
        json!({"progressToken": 7}),
    );
    let setup: Vec<Value> = progress(&with_token)
        .into_iter()
        .filter(|u| {
            u["message"]
                .as_str()
                .unwrap()
                .contains("preparing Lean dependencies")
        })
        .collect();
    assert_eq!(
        setup[0]["message"],
        "lean_sync on Fixture/Basic.lean: preparing Lean dependencies — ✔ [1/2] Built Fixture.Basic"
    );
    lean.server.finish_clean();
}

#[test]
fn a_slow_call_without_a_token_gets_one_notice_with_its_path() {
    if crate::harness::fake_only("a_slow_call_without_a_token_gets_one_notice_with_its_path") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/Gated.lean",
        "def slow : Nat := 1 -- fake: gate slow\n",
    );
    let mut lean = Lean::start(&[&project], &["--status-delay-ms", "30"], &[]);
    lean.server.send(&request(
        101,
        "tools/call",
        call("lean_sync", args(&project, "Fixture/Gated.lean", json!({}))),
    ));
    let notice = lean.server.wait_for("the liveness notice", |m| {
        m["params"]["logger"] == "beam.status"
    });
    assert_eq!(notice["params"]["data"]["state"], "running");
    assert_eq!(notice["params"]["data"]["path"], "Fixture/Gated.lean");
    assert_eq!(
        notice["params"]["data"]["message"],
        "lean_sync on Fixture/Gated.lean is still working."
    );
    lean.open_gate("slow");
    let seen = lean.server.until_response(&json!(101));
    assert!(logs(&seen, "beam.status").is_empty(), "only one notice");
    lean.server.finish_clean();
}
