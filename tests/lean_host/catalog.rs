//! The tools of the Lean host, as both families list them: exact schemas,
//! descriptions and annotations, in the documented order.

use serde_json::{Value, json};

use crate::assert_transcript;
use crate::support::{McpProcess, modern, request};

fn listing(response: &Value) -> String {
    serde_json::to_string_pretty(&response["result"]["tools"]).expect("JSON") + "\n"
}

#[test]
fn both_families_list_the_lean_tools_in_order() {
    let mut legacy = McpProcess::server(&[]);
    legacy.initialize_legacy();
    let legacy_list = legacy.ask(request(1, "tools/list", Value::Null));
    let names: Vec<&str> = legacy_list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "beam_version",
            "beam_stats",
            "beam_feedback_report",
            "lean_drop_workspace",
            "lean_run_at",
            "lean_run_at_handle",
            "lean_hover",
            "lean_signature_help",
            "lean_definition",
            "lean_references",
            "lean_document_symbols",
            "lean_workspace_symbols",
            "lean_goals",
            "lean_todo",
            "lean_code_action_resolve",
            "lean_run_with",
            "lean_run_with_linear",
            "lean_release",
            "lean_try_edit",
            "lean_lock",
            "lean_certify",
            "lean_update",
            "lean_sync",
            "lean_refresh",
            "lean_save",
            "lean_close_save",
            "lean_close",
            "lean_check_receipt",
        ]
    );
    let mut modern_server = McpProcess::server(&[]);
    let modern_list = modern_server.ask(modern(1, "tools/list", json!({})));
    assert_eq!(
        legacy_list["result"]["tools"], modern_list["result"]["tools"],
        "one catalog for both families"
    );
    assert_eq!(modern_list["result"]["ttlMs"], 3_600_000);
    assert_transcript!("lean_host", "catalog", listing(&legacy_list));
    legacy.finish_clean();
    modern_server.finish_clean();
}

#[test]
fn read_only_destructive_and_idempotent_hints_follow_the_design() {
    let mut server = McpProcess::server(&[]);
    server.initialize_legacy();
    let list = server.ask(request(1, "tools/list", Value::Null));
    for tool in list["result"]["tools"].as_array().expect("tools") {
        crate::receipts::in_one_census_set(tool);
        let name = tool["name"].as_str().unwrap();
        let read_only = [
            "beam_version",
            "beam_stats",
            "lean_run_at",
            "lean_hover",
            "lean_signature_help",
            "lean_definition",
            "lean_references",
            "lean_document_symbols",
            "lean_workspace_symbols",
            "lean_goals",
            "lean_todo",
            "lean_code_action_resolve",
            "lean_check_receipt",
            "lean_try_edit",
            "lean_lock",
        ]
        .contains(&name);
        assert_eq!(
            tool["annotations"]["readOnlyHint"] == true,
            read_only,
            "{name}"
        );
        // The seed: their Beam-managed effects are only additive (a fresh handle).
        let additive = ["lean_run_at_handle", "lean_run_with", "lean_certify"].contains(&name);
        assert_eq!(
            tool["annotations"]["destructiveHint"] == false,
            additive,
            "{name}"
        );
        let idempotent = ["lean_drop_workspace", "lean_close", "lean_certify"].contains(&name);
        assert_eq!(
            tool["annotations"]["idempotentHint"] == true,
            idempotent,
            "{name}"
        );
        let schema = &tool["inputSchema"];
        assert_eq!(schema["additionalProperties"], false, "{name}");
        if name.starts_with("lean_") {
            let required = schema["required"].as_array().unwrap();
            assert_eq!(required.last(), Some(&json!("workspace")), "{name}");
            // What every tool shares is said once, in the instructions, not in each description.
            let description = tool["description"].as_str().unwrap();
            assert!(!description.contains("progressToken"), "{name}");
            assert!(schema.get("$schema").is_none(), "{name}");
        }
    }
    server.finish_clean();
}

/// The facts every tool shares (the workspace descriptor, positions, the source-edit invariant,
/// progress, receipts) stand once, in the instructions both families announce.
#[test]
fn the_instructions_state_what_every_tool_shares() {
    let mut server = McpProcess::server(&[]);
    let initialized = server.initialize_legacy();
    let instructions = initialized["result"]["instructions"].as_str().unwrap();
    for fact in [
        "workspace: {\"root\":",
        "0-based",
        "UTF-16",
        "never edits .lean files",
        "persist nothing",
        "_meta.progressToken",
        "receipt",
        "diagnostics_in_result",
    ] {
        assert!(instructions.contains(fact), "{fact}: {instructions}");
    }
    let mut modern_server = McpProcess::server(&[]);
    let discovered = modern_server.ask(modern(1, "server/discover", json!({})));
    assert_eq!(discovered["result"]["instructions"], instructions);
    server.finish_clean();
    modern_server.finish_clean();
}

/// `--tools` (or `LEAN_BEAM_TOOLS`) chooses the tools served, in listing order; a tool left out
/// is unknown to a call; an unknown name stops the server at startup, naming the tools there are.
#[test]
fn the_served_tools_can_be_chosen_and_an_unknown_one_is_refused() {
    let names = |list: &Value| -> Vec<String> {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut server = McpProcess::server(&["--tools", "lean_goals,lean_sync"]);
    server.initialize_legacy();
    let list = server.ask(request(1, "tools/list", Value::Null));
    assert_eq!(names(&list), ["lean_goals", "lean_sync"]);
    let hover = server.ask(request(
        2,
        "tools/call",
        json!({"name": "lean_hover", "arguments": {}}),
    ));
    assert_eq!(hover["error"]["code"], -32602, "{hover}");
    server.finish_clean();

    let mut server = McpProcess::server_with_env(&[], &[("LEAN_BEAM_TOOLS", "beam_version")]);
    server.initialize_legacy();
    let list = server.ask(request(1, "tools/list", Value::Null));
    assert_eq!(names(&list), ["beam_version"]);
    server.finish_clean();

    let refused = std::process::Command::new(crate::support::server_bin())
        .args(["--tools", "lean_sync,lean_nope"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("names no such tool: lean_nope; the tools are: beam_version, "),
        "{said}"
    );
}

/// What the 24 seed tools' listing costs a model stays within its budget.
///
/// The target is 4,000 o200k tokens for the compact JSON of `[{name, description,
/// input_schema}]` (what a client puts before the model). Counting tokens needs the tokenizer,
/// which `scripts/bench.sh` runs (`--only tool-list`, and its smoke run in `scripts/test.sh`,
/// which fails past the target). This test guards the same text by bytes, without the
/// tokenizer: our list measured 4.48 bytes per token (16,012 bytes, 3,575 tokens), so 17,000
/// bytes stands for about 3,800 tokens, a margin of 5% below the target for a change that packs
/// fewer bytes into a token. It fails when the list grows past that.
/// The tools later issues added to the seed's 24 (`scripts/lib/tool_list_size.py` names them
/// too).
const SEED_EXTRAS: [&str; 4] = [
    "lean_try_edit",
    "lean_check_receipt",
    "lean_lock",
    "lean_certify",
];

#[test]
fn the_seed_tools_fit_the_listing_budget() {
    const BUDGET_BYTES: usize = 17_000;
    let mut server = McpProcess::server(&[]);
    server.initialize_legacy();
    let list = server.ask(request(1, "tools/list", Value::Null));
    let seed: Vec<Value> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !SEED_EXTRAS.contains(&t["name"].as_str().unwrap()))
        .map(|t| json!({"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}))
        .collect();
    assert_eq!(seed.len(), 24);
    // Compact JSON as the benchmark counts it (member order differs, not the byte count).
    let bytes = serde_json::to_string(&seed).unwrap().len();
    assert!(
        bytes <= BUDGET_BYTES,
        "the seed tools' listing is {bytes} bytes, over its {BUDGET_BYTES}-byte budget"
    );
    server.finish_clean();
}
