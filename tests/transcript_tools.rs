//! Transcripts of `tools/list` and `tools/call` through the test host, in both protocol families:
//! the catalog as declared, malformed calls as JSON-RPC errors, schema violations as
//! `invalidInput` tool results, host failures and panics.

mod support;

#[path = "test-host/host.rs"]
#[allow(dead_code)]
mod host;

use lean_beam_mcp::mcp::ToolHost;
use serde_json::{Value, json};
use support::*;

const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The family a scenario speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Legacy,
    Modern,
}

const FAMILIES: [Family; 2] = [Family::Legacy, Family::Modern];

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Legacy => "legacy",
            Family::Modern => "modern",
        }
    }

    /// A test host ready for tool traffic: after the handshake (legacy), or fresh (modern).
    fn start(self) -> McpProcess {
        let mut server = McpProcess::test_host(&[]);
        if self == Family::Legacy {
            let initialize = server.initialize_legacy();
            assert_eq!(initialize["result"]["protocolVersion"], "2025-11-25");
        }
        server
    }

    /// A request in this family (modern requests carry the reserved `_meta`).
    fn request(self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        match self {
            Family::Legacy => request(id, method, params),
            Family::Modern => modern(id, method, params),
        }
    }

    fn call(self, id: impl Into<Value>, tool: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", call(tool, arguments))
    }

    /// The snapshot name of `scenario` in this family.
    fn snapshot(self, scenario: &str) -> String {
        format!("{}_{scenario}", self.name())
    }

    /// Asserts the family's result envelope: modern results carry `resultType` and serverInfo,
    /// legacy results never do.
    fn assert_envelope(self, result: &Value) {
        match self {
            Family::Modern => {
                assert_eq!(result["resultType"], "complete", "{result}");
                assert_eq!(
                    result["_meta"][SERVER_INFO_KEY],
                    json!({"name": "lean-beam-mcp-test-host", "version": "0.0.0-test"}),
                    "{result}"
                );
            }
            Family::Legacy => {
                assert!(result.get("resultType").is_none(), "{result}");
                assert!(result.get("_meta").is_none(), "{result}");
            }
        }
    }

    /// Asserts a `tools/call` result in this family and returns its `structuredContent`.
    /// `content[0].text` must parse to exactly `structuredContent`.
    fn tool_result(self, response: &Value, is_error: bool) -> Value {
        assert!(response.get("error").is_none(), "{response}");
        let result = &response["result"];
        self.assert_envelope(result);
        assert_eq!(result["isError"], is_error, "{response}");
        let content = result["content"].as_array().expect("content");
        assert_eq!(content.len(), 1, "{response}");
        assert_eq!(content[0]["type"], "text");
        let text: Value = serde_json::from_str(content[0]["text"].as_str().expect("text"))
            .expect("content[0].text is JSON");
        let structured = result["structuredContent"].clone();
        assert!(structured.is_object(), "{response}");
        assert_eq!(text, structured, "text mirrors structuredContent");
        structured
    }

    /// Asserts an `invalidInput` result at `path` and returns its message.
    fn invalid_input(self, response: &Value, path: &str) -> String {
        let structured = self.tool_result(response, true);
        assert_eq!(structured["code"], "invalidInput", "{response}");
        assert_eq!(structured["data"], json!({"path": path}), "{response}");
        assert_eq!(
            sorted_keys(&structured),
            ["code", "data", "message"],
            "{response}"
        );
        structured["message"].as_str().expect("message").to_owned()
    }
}

/// The keys of a JSON object, sorted.
fn sorted_keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

fn workspace() -> Value {
    json!({"root": "/w"})
}

#[test]
fn tools_list_shows_the_catalog_exactly() {
    let declared = host::TestHost::new(std::env::temp_dir(), None).tools();
    for family in FAMILIES {
        let mut server = family.start();
        let response = server.ask(family.request(1, "tools/list", Value::Null));
        let result = &response["result"];
        family.assert_envelope(result);
        match family {
            Family::Modern => {
                assert_eq!(result["ttlMs"], 3_600_000);
                assert_eq!(result["cacheScope"], "public");
            }
            Family::Legacy => {
                assert_eq!(
                    sorted_keys(result),
                    ["tools"],
                    "legacy tools/list is {{tools}} only"
                );
            }
        }
        let tools = result["tools"].as_array().expect("tools");
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        let declared_names: Vec<&str> = declared.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, declared_names, "listed in declaration order");
        for core in ["echo", "shape", "fail", "panic"] {
            assert!(names.contains(&core), "{core} is listed");
        }
        assert_eq!(tools.len(), declared.len());
        for (listed, spec) in tools.iter().zip(&declared) {
            assert_eq!(listed["name"], spec.name.as_str());
            assert_eq!(listed["description"], spec.description.as_str());
            assert_eq!(listed["inputSchema"], spec.input_schema, "{}", spec.name);
            let keys = sorted_keys(listed);
            if spec.name == "echo" {
                assert_eq!(listed["annotations"], json!({"readOnlyHint": true}));
                assert_eq!(keys, ["annotations", "description", "inputSchema", "name"]);
            } else {
                assert!(listed.get("annotations").is_none(), "{listed}");
                assert_eq!(keys, ["description", "inputSchema", "name"]);
            }
        }
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("catalog"), transcript);
    }
}

#[test]
fn unknown_and_malformed_tool_calls_are_invalid_params() {
    for family in FAMILIES {
        let mut server = family.start();
        let text = json!({"text": "hi"});
        let cases: Vec<(Value, &str)> = vec![
            (family.call(1, "$/lean/runAt", json!({})), "unknown tool"),
            (family.call(2, "nope", text.clone()), "unknown tool"),
            (
                family.request(3, "tools/call", json!({"arguments": text})),
                "requires a tool name",
            ),
            (
                family.request(4, "tools/call", json!({"name": 5, "arguments": text})),
                "name must be a string",
            ),
            (
                family.request(5, "tools/call", json!({"name": null})),
                "name must be a string",
            ),
            (
                family.call(6, "echo", json!(["hi"])),
                "arguments must be an object, not an array",
            ),
            (
                family.call(7, "echo", json!("hi")),
                "arguments must be an object, not a string",
            ),
            (
                family.call(8, "echo", Value::Null),
                "arguments must be an object, not null",
            ),
            (
                family.request(
                    9,
                    "tools/call",
                    json!({"name": "echo", "arguments": text, "extra": 1}),
                ),
                "undeclared: extra",
            ),
        ];
        let responses: Vec<Value> = cases
            .into_iter()
            .map(|(message, mentions)| {
                let response = server.ask(message);
                assert_error(&response, -32602, mentions);
                response
            })
            .collect();
        // The data of an unknown tool names it.
        assert_eq!(
            responses[0]["error"]["data"],
            json!({"tool": "$/lean/runAt"})
        );
        assert_eq!(responses[1]["error"]["data"], json!({"tool": "nope"}));
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("malformed_calls"), transcript);
    }
}

#[test]
fn omitted_arguments_are_an_empty_object() {
    for family in FAMILIES {
        let mut server = family.start();
        let omitted = server.ask(family.request(1, "tools/call", json!({"name": "echo"})));
        let message = family.invalid_input(&omitted, "/text");
        assert_eq!(message, "echo requires argument /text");
        let empty = server.ask(family.call(2, "echo", json!({})));
        assert_eq!(
            empty["result"], omitted["result"],
            "omitted arguments behave as {{}}"
        );
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("omitted_arguments"), transcript);
    }
}

#[test]
fn progress_token_must_be_a_string_or_a_number() {
    for family in FAMILIES {
        let mut server = family.start();
        let with_token = |id: i64, token: Value| {
            let mut params = call("echo", json!({"text": "t"}));
            params["_meta"] = json!({"progressToken": token});
            family.request(id, "tools/call", params)
        };
        let boolean = server.ask(with_token(1, json!(true)));
        assert_error(&boolean, -32602, "progressToken");
        let object = server.ask(with_token(2, json!({"t": 1})));
        assert_error(&object, -32602, "progressToken");
        for (id, token) in [(3, json!(1.5)), (4, json!("tok")), (5, json!(7))] {
            let accepted = server.ask(with_token(id, token));
            let structured = family.tool_result(&accepted, false);
            assert_eq!(structured["text"], "t");
        }
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("progress_token"), transcript);
    }
}

#[test]
fn schema_violations_are_invalid_input_results() {
    for family in FAMILIES {
        let mut server = family.start();
        let shape = |fields: Value| {
            let mut arguments = json!({"path": "A.lean", "workspace": workspace()});
            for (key, value) in fields.as_object().expect("object") {
                arguments[key] = value.clone();
            }
            arguments
        };
        let cases: Vec<(Value, &str, Option<&str>)> = vec![
            (
                shape(json!({"b": 1, "a": 2})),
                "/a",
                Some("shape accepts no undeclared input fields: a, b"),
            ),
            (
                // Undeclared fields are reported before missing and ill-typed ones.
                json!({"zeta": 1, "line": "x"}),
                "/zeta",
                Some("shape accepts no undeclared input fields: zeta"),
            ),
            (
                shape(json!({"workspace": {"root": "/w", "x": 1}})),
                "/workspace/x",
                Some("argument /workspace accepts no undeclared fields: x"),
            ),
            (
                json!({"path": "A.lean"}),
                "/workspace",
                Some("shape requires argument /workspace"),
            ),
            (
                shape(json!({"workspace": {}})),
                "/workspace/root",
                Some("shape requires argument /workspace/root"),
            ),
            (shape(json!({"line": "3"})), "/line", None),
            (shape(json!({"mode": "during"})), "/mode", None),
            (shape(json!({"line": -1})), "/line", None),
            (shape(json!({"tags": ["a", "b", "c", "d"]})), "/tags", None),
            (shape(json!({"tags": ["a", 2]})), "/tags/1", None),
            (shape(json!({"line": 1.5})), "/line", None),
        ];
        for (id, (arguments, path, message)) in (1..).zip(cases) {
            let response = server.ask(family.call(id, "shape", arguments));
            let got = family.invalid_input(&response, path);
            match message {
                Some(message) => assert_eq!(got, message),
                None => assert!(
                    got.starts_with(&format!("argument {path} is invalid: ")),
                    "{got:?}"
                ),
            }
        }
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("schema_violations"), transcript);
    }
}

#[test]
fn valid_shape_call_echoes_its_arguments() {
    for family in FAMILIES {
        let mut server = family.start();
        let minimal = json!({"path": "A.lean", "workspace": workspace()});
        let full = json!({
            "path": "A.lean",
            "line": 0,
            "mode": "after",
            "tags": ["a", "b", "c"],
            "workspace": workspace()
        });
        for (id, arguments) in [(1, minimal), (2, full)] {
            let response = server.ask(family.call(id, "shape", arguments.clone()));
            let structured = family.tool_result(&response, false);
            assert_eq!(structured, json!({"arguments": arguments}));
        }
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("shape_ok"), transcript);
    }
}

#[test]
fn fail_tool_is_an_error_result_with_code_message_and_data() {
    for family in FAMILIES {
        let mut server = family.start();
        let arguments = json!({"code": "contentModified", "message": "the file changed"});
        let response = server.ask(family.call(1, "fail", arguments.clone()));
        let structured = family.tool_result(&response, true);
        assert_eq!(
            structured,
            json!({
                "code": "contentModified",
                "message": "the file changed",
                "data": {"echo": arguments}
            })
        );
        let defaulted = server.ask(family.call(2, "fail", json!({"code": "x"})));
        let structured = family.tool_result(&defaulted, true);
        assert_eq!(structured["message"], "the fail tool failed");
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("fail"), transcript);
    }
}

#[test]
fn panic_is_an_internal_error_and_the_server_keeps_serving() {
    for family in FAMILIES {
        let mut server = family.start();
        let panicked = server.ask(family.call(1, "panic", json!({"message": "boom"})));
        assert_error(&panicked, -32603, "panic failed internally: boom");
        assert_eq!(panicked["id"], 1);
        let next = server.ask(family.call(2, "echo", json!({"text": "still here"})));
        let structured = family.tool_result(&next, false);
        assert_eq!(structured["text"], "still here");
        let again = server.ask(family.call(3, "panic", json!({})));
        assert_error(&again, -32603, "test panic");
        let last = server.ask(family.call(4, "echo", json!({"text": "and still"})));
        assert_eq!(family.tool_result(&last, false)["text"], "and still");
        let finished = server.finish();
        assert!(finished.status.success(), "{:?}", finished.status);
        assert_transcript!("tools", family.snapshot("panic"), finished.transcript);
    }
}

#[test]
fn error_results_keep_the_family_envelope() {
    for family in FAMILIES {
        let mut server = family.start();
        let invalid = server.ask(family.call(1, "echo", json!({"text": 1})));
        family.invalid_input(&invalid, "/text");
        let failed = server.ask(family.call(2, "fail", json!({"code": "boom"})));
        family.tool_result(&failed, true);
        let ok = server.ask(family.call(3, "echo", json!({"text": "ok"})));
        let structured = family.tool_result(&ok, false);
        assert_eq!(structured, json!({"text": "ok", "during_fence": false}));
        if family == Family::Legacy {
            for response in [&invalid, &failed, &ok] {
                assert_eq!(
                    sorted_keys(&response["result"]),
                    ["content", "isError", "structuredContent"]
                );
            }
        }
        let transcript = server.finish_clean();
        assert_transcript!("tools", family.snapshot("error_envelope"), transcript);
    }
}
