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
        ]
        .contains(&name);
        assert_eq!(
            tool["annotations"]["readOnlyHint"] == true,
            read_only,
            "{name}"
        );
        // The seed: their Beam-managed effects are only additive (a fresh handle).
        let additive = ["lean_run_at_handle", "lean_run_with"].contains(&name);
        assert_eq!(
            tool["annotations"]["destructiveHint"] == false,
            additive,
            "{name}"
        );
        let idempotent = ["lean_drop_workspace", "lean_close"].contains(&name);
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
            assert!(
                tool["description"]
                    .as_str()
                    .unwrap()
                    .ends_with("the client applies source edits."),
                "{name}"
            );
        }
    }
    server.finish_clean();
}
