//! The hostile-input catalog: bad lines, envelopes and arguments, each with the precise answer it
//! gets, and the server answering a normal request after every one. The whole table is one
//! snapshot, so every error message is reviewed.
//!
//! Each case is sent, then a `ping` probe; everything the server writes up to the probe's answer
//! (and the case's own answer when it has an id and came later) is the case's answer.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, modern, request};

/// One bad input.
enum Input {
    /// Bytes as they go on the wire (a newline is added).
    Raw(Vec<u8>),
    /// A request's line as it goes on the wire (a newline is added), with its id: JSON no
    /// `Value` can hold as written (an integer beyond 64 bits, a lone surrogate escape).
    RawRequest(String, Value),
    /// A JSON message.
    Json(Value),
}

struct Catalog<'a> {
    lean: &'a mut Lean,
    root: String,
    table: String,
    probes: u64,
}

impl Catalog<'_> {
    fn case(&mut self, name: &str, input: Input) {
        let (shown, id) = match &input {
            Input::Raw(bytes) => (String::from_utf8_lossy(bytes).into_owned(), None),
            Input::RawRequest(line, id) => (line.clone(), Some(id.clone())),
            Input::Json(value) => (value.to_string(), value.get("id").cloned()),
        };
        let shown = shown.replace(&self.root, "[root]");
        match input {
            Input::Raw(mut bytes) => {
                bytes.push(b'\n');
                self.lean.server.write_bytes(&bytes);
            }
            Input::RawRequest(line, _) => {
                self.lean.server.write_bytes(format!("{line}\n").as_bytes())
            }
            Input::Json(value) => self.lean.server.send(&value),
        }
        self.probes += 1;
        let probe = json!(format!("probe-{}", self.probes));
        self.lean
            .server
            .send(&request(probe.clone(), "ping", Value::Null));
        let mut seen = self.lean.server.until_response(&probe);
        let pong = seen.pop().expect("the probe's answer");
        assert_eq!(
            pong["result"],
            json!({}),
            "{name}: the server stopped answering"
        );
        let answered = |seen: &[Value], id: &Value| {
            seen.iter()
                .any(|m| m.get("id") == Some(id) && m.get("method").is_none())
        };
        if let Some(id) = id.filter(|id| id.is_string() || id.is_number())
            && !answered(&seen, &id)
        {
            seen.push(self.lean.server.response(&id));
        }
        let answers: Vec<String> = seen.iter().map(summary).collect();
        self.table.push_str(&format!(
            "## {name}\n→ {}\n← {}\n",
            cut(&shown, 160),
            if answers.is_empty() {
                "(nothing)".to_owned()
            } else {
                answers.join("\n← ")
            }
        ));
    }
}

/// What matters in an answer: the JSON-RPC error, or the tool error's code, message and data.
fn summary(message: &Value) -> String {
    if let Some(error) = message.get("error") {
        return format!("id {} error {error}", message["id"]);
    }
    let result = &message["result"];
    if result["isError"] == true {
        return format!(
            "id {} tool error {}",
            message["id"], result["structuredContent"]
        );
    }
    format!("id {} {}", message["id"], cut(&result.to_string(), 200))
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

fn tool(id: &str, name: &str, arguments: Value) -> Input {
    Input::Json(request(id, "tools/call", call(name, arguments)))
}

/// A `tools/call` of `name` whose argument `property` is `literal`, written as it stands.
fn tool_with_literal(
    id: &str,
    name: &str,
    mut arguments: Value,
    property: &str,
    literal: &str,
) -> Input {
    const MARK: &str = "@@literal@@";
    arguments[property] = json!(MARK);
    let line = request(id, "tools/call", call(name, arguments)).to_string();
    Input::RawRequest(line.replace(&format!("{MARK:?}"), literal), json!(id))
}

/// A value of the right type for a property, so a case breaks exactly one field.
fn valid(name: &str, schema: &Value, project: &Project) -> Value {
    if name == "workspace" {
        return project.descriptor();
    }
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    // A type list (`["string", "null"]`) takes its first.
    let kind = schema["type"]
        .as_str()
        .or_else(|| schema["type"][0].as_str());
    match kind {
        Some("string") if name == "path" => json!("Fixture/Basic.lean"),
        // A SHA-256 (the only fixed-length strings the catalog has).
        Some("string") if schema["minLength"] == 64 => json!("0".repeat(64)),
        Some("array") if name == "candidates" => json!([{"text": "rfl", "range": {
            "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]),
        Some("string") => json!("x"),
        Some("integer") => json!(0),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        // An object with the fields it requires (a receipt), each of the right type.
        _ => {
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            let fields = required.iter().filter_map(Value::as_str).map(|field| {
                let inner = &schema["properties"][field];
                (field.to_owned(), valid(field, inner, project))
            });
            Value::Object(fields.collect())
        }
    }
}

/// A value of the wrong type for a property.
fn wrong(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!(7),
        Some("integer") => json!("7"),
        Some("boolean") => json!("yes"),
        Some("array") => json!({}),
        _ => json!("x"),
    }
}

#[test]
fn every_hostile_input_gets_its_precise_answer_and_the_server_serves_on() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &["--max-message-bytes", "4096"], &[]);
    let tools =
        lean.server.ask(request("list", "tools/list", Value::Null))["result"]["tools"].clone();
    let mut catalog = Catalog {
        lean: &mut lean,
        root: project.root().display().to_string(),
        table: String::new(),
        probes: 0,
    };
    let raw = |text: &str| Input::Raw(text.as_bytes().to_vec());

    // Lines that are not JSON-RPC at all.
    catalog.case("empty line", raw(""));
    catalog.case("blank line", raw("   \t "));
    catalog.case(
        "truncated JSON",
        raw(r#"{"jsonrpc":"2.0","id":1,"method":"#),
    );
    catalog.case("not UTF-8", Input::Raw(vec![b'{', 0xff, 0xfe, b'}']));
    catalog.case(
        "a line longer than --max-message-bytes",
        raw(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(5000)
        )),
    );
    catalog.case(
        "deep nesting",
        raw(&format!("{}{}", "[".repeat(1500), "]".repeat(1500))),
    );
    catalog.case(
        "deep nesting inside a request",
        raw(&format!(
            r#"{{"jsonrpc":"2.0","id":31,"method":"ping","params":{{"a":{}1{}}}}}"#,
            "[".repeat(1000),
            "]".repeat(1000)
        )),
    );
    catalog.case("a JSON string", raw(r#""hello""#));
    catalog.case("a JSON number", raw("42"));
    catalog.case("null", raw("null"));
    catalog.case("an empty batch", raw("[]"));
    catalog.case(
        "a batch of one request",
        raw(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#),
    );
    // Envelopes.
    catalog.case("no jsonrpc", raw(r#"{"id":4,"method":"ping"}"#));
    catalog.case(
        "jsonrpc 1.0",
        raw(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#),
    );
    catalog.case(
        "method is a number",
        raw(r#"{"jsonrpc":"2.0","id":6,"method":42}"#),
    );
    catalog.case("no method, no result", raw(r#"{"jsonrpc":"2.0","id":7}"#));
    catalog.case(
        "id is true",
        raw(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#),
    );
    catalog.case(
        "id is an object",
        raw(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
    );
    catalog.case(
        "id is 1.5",
        raw(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
    );
    catalog.case(
        "id is 1e400",
        raw(r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#),
    );
    catalog.case(
        "id is a huge integer",
        raw(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#),
    );
    catalog.case(
        "id is null",
        raw(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
    );
    catalog.case(
        "duplicate keys",
        raw(r#"{"jsonrpc":"2.0","id":8,"id":9,"method":"ping"}"#),
    );
    catalog.case(
        "params is a string",
        raw(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"x"}"#),
    );
    catalog.case(
        "params is an array",
        raw(r#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[1]}"#),
    );
    catalog.case(
        "an unknown method",
        Input::Json(request(12, "tools/explode", json!({}))),
    );
    catalog.case(
        "an unknown notification",
        Input::Json(json!({"jsonrpc": "2.0", "method": "notifications/explode"})),
    );
    catalog.case(
        "a response nobody asked for",
        Input::Json(json!({"jsonrpc": "2.0", "id": 13, "result": {}})),
    );
    catalog.case(
        "a modern request on the legacy session",
        Input::Json(modern(14, "tools/list", json!({}))),
    );
    catalog.case(
        "server/discover on the legacy session",
        Input::Json(request(15, "server/discover", json!({}))),
    );
    catalog.case(
        "a second initialize",
        Input::Json(request(
            16,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
        )),
    );
    catalog.case(
        "multi-round-trip fields in a tools/call",
        Input::Json(request(
            17,
            "tools/call",
            json!({"name": "beam_version", "arguments": {}, "inputResponses": {"a": {}}, "requestState": "s"}),
        )),
    );
    catalog.case(
        "logging/setLevel to a level that does not exist",
        Input::Json(request(18, "logging/setLevel", json!({"level": "loud"}))),
    );
    // tools/call envelopes.
    catalog.case(
        "tools/call without a name",
        Input::Json(request(19, "tools/call", json!({"arguments": {}}))),
    );
    catalog.case(
        "a tool name that is a number",
        Input::Json(request(20, "tools/call", json!({"name": 7}))),
    );
    catalog.case("an unknown tool", tool("21", "lean_explode", json!({})));
    catalog.case(
        "arguments that are an array",
        Input::Json(request(
            22,
            "tools/call",
            json!({"name": "beam_version", "arguments": []}),
        )),
    );
    catalog.case(
        "an undeclared argument",
        tool("23", "beam_version", json!({"verbose": true})),
    );
    // Workspaces and paths.
    let basic = |more: Value| args(&project, "Fixture/Basic.lean", more);
    catalog.case(
        "no workspace",
        tool("24", "lean_sync", json!({"path": "Fixture/Basic.lean"})),
    );
    for (n, (what, root)) in [
        ("a relative root", json!("relative/project")),
        ("an empty root", json!("")),
        ("a root that does not exist", json!("/no/such/project")),
        ("a root that is not a Lake project", json!("/")),
        (
            "a root that is a file",
            json!(project.root().join("lakefile.toml")),
        ),
        ("a root that is a number", json!(7)),
    ]
    .into_iter()
    .enumerate()
    {
        catalog.case(
            what,
            tool(
                &format!("25-{n}"),
                "lean_sync",
                json!({"workspace": {"root": root}, "path": "Fixture/Basic.lean"}),
            ),
        );
    }
    catalog.case(
        "a descriptor with an extra field",
        tool(
            "26",
            "lean_sync",
            json!({"workspace": {"root": project.root(), "toolchain": "x"}, "path": "Fixture/Basic.lean"}),
        ),
    );
    for (n, (what, path)) in [
        ("a path escaping the workspace", "../../../../etc/passwd"),
        ("an absolute path outside the workspace", "/etc/hostname"),
        ("a path that does not exist", "Fixture/Missing.lean"),
        ("a path that is not Lean", "lakefile.toml"),
        ("a path that is a directory", "Fixture"),
        (
            "a path naming a twin",
            ".lake/beam/twins/1-1/Fixture/Basic.lean",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        catalog.case(
            what,
            tool(
                &format!("27-{n}"),
                "lean_sync",
                args(&project, path, json!({})),
            ),
        );
    }
    // Positions and versions.
    for (n, (what, more)) in [
        (
            "a negative version",
            json!({"version": -1, "line": 0, "character": 0}),
        ),
        (
            "a fractional version",
            json!({"version": 1.5, "line": 0, "character": 0}),
        ),
        (
            "a version that is a string",
            json!({"version": "1", "line": 0, "character": 0}),
        ),
        (
            "a stale version",
            json!({"version": 99, "line": 0, "character": 0}),
        ),
        (
            "a line beyond the document",
            json!({"version": 1, "line": 1000, "character": 0}),
        ),
        (
            "a line beyond any LSP position",
            json!({"version": 1, "line": 9007199254740991u64, "character": 0}),
        ),
        (
            "a line of 1e300",
            json!({"version": 1, "line": 1e300, "character": 0}),
        ),
        (
            "a version of 2^64",
            json!({"version": 18446744073709551616.0, "line": 0, "character": 0}),
        ),
        (
            "a character beyond the line",
            json!({"version": 1, "line": 0, "character": 500}),
        ),
        (
            "a decimal line",
            json!({"version": 1, "line": 1e2, "character": 0}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        catalog.case(what, tool(&format!("28-{n}"), "lean_hover", basic(more)));
    }
    // Every integer argument of every tool, beyond 64 bits as the client wrote it: an integer
    // literal of 2^64, and 1e300. The document is Basic.lean at version 1, so only the number
    // can be wrong.
    for listed in tools.as_array().unwrap() {
        let name = listed["name"].as_str().unwrap();
        let properties = listed["inputSchema"]["properties"].as_object().unwrap();
        let required = listed["inputSchema"]["required"].as_array().unwrap();
        for (property, _) in properties.iter().filter(|(_, s)| s["type"] == "integer") {
            let mut arguments = serde_json::Map::new();
            for other in required.iter().filter_map(Value::as_str) {
                let value = match other {
                    "version" => json!(1),
                    _ => valid(other, &properties[other], &project),
                };
                arguments.insert(other.to_owned(), value);
            }
            for literal in ["18446744073709551616", "1e300"] {
                catalog.case(
                    &format!("{name}: {property} of {literal}"),
                    tool_with_literal(
                        &format!("{name}/{property}={literal}"),
                        name,
                        Value::Object(arguments.clone()),
                        property,
                        literal,
                    ),
                );
            }
        }
    }
    // Strings holding an escape that names no character.
    catalog.case(
        "a lone leading surrogate in a tool's text",
        tool_with_literal(
            "31-0",
            "lean_run_at",
            basic(json!({"version": 1, "line": 26, "character": 0})),
            "text",
            r#""rfl \ud800""#,
        ),
    );
    catalog.case(
        "a lone trailing surrogate in a ping",
        Input::RawRequest(
            r#"{"jsonrpc":"2.0","id":"31-1","method":"ping","params":{"_meta":{"note":"\udc00"}}}"#
                .to_owned(),
            json!("31-1"),
        ),
    );
    catalog.case(
        "a lone surrogate as the id",
        raw(r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#),
    );
    // Closing what is not a file of the workspace, even when it does not exist.
    for (n, (what, path)) in [
        (
            "closing a missing file outside the workspace",
            "../../no-such-dir/Missing.lean",
        ),
        (
            "closing a missing absolute path outside the workspace",
            "/no/such/Missing.lean",
        ),
        (
            "closing a missing file that is not Lean",
            "Fixture/Missing.txt",
        ),
        (
            "closing a missing twin",
            ".lake/beam/twins/1-1/Fixture/Missing.lean",
        ),
        (
            "closing a missing Lean file of the workspace",
            "Fixture/Missing.lean",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        catalog.case(
            what,
            tool(
                &format!("32-{n}"),
                "lean_close",
                args(&project, path, json!({})),
            ),
        );
    }
    // Handles.
    for (n, (what, handle)) in [
        ("a made-up handle", json!({"handle": "lbh1.e30.AAAA"})),
        ("a handle that is a string", json!("lbh1.x.y")),
        ("a handle object without its token", json!({})),
        (
            "a handle from another server",
            json!({"workspaceId": "local:/x", "backend": "lean", "raw": {"value": "runAt:1"}}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        catalog.case(
            what,
            tool(
                &format!("29-{n}"),
                "lean_run_with",
                basic(json!({"handle": handle, "text": "rfl"})),
            ),
        );
    }
    // Feedback evidence.
    for (n, name) in [
        "../escape.txt",
        "/etc/passwd",
        "a/b.txt",
        ".hidden",
        "..",
        "con",
        "",
    ]
    .into_iter()
    .enumerate()
    {
        catalog.case(
            &format!("an evidence name {name:?}"),
            tool(
                &format!("30-{n}"),
                "beam_feedback_report",
                json!({
                    "workspace": project.descriptor(), "title": "t", "summary": "s",
                    "reproduction": "r", "expected": "e", "actual": "a", "bundle": "dir",
                    "evidence": [{"name": name, "content": "x"}]
                }),
            ),
        );
    }
    // Every property of every tool, with a value of the wrong type.
    for listed in tools.as_array().unwrap() {
        let name = listed["name"].as_str().unwrap();
        let properties = listed["inputSchema"]["properties"].as_object().unwrap();
        let required = listed["inputSchema"]["required"].as_array().unwrap();
        for (property, schema) in properties {
            let mut arguments = serde_json::Map::new();
            for other in required.iter().filter_map(Value::as_str) {
                arguments.insert(other.to_owned(), valid(other, &properties[other], &project));
            }
            arguments.insert(property.clone(), wrong(schema));
            catalog.case(
                &format!("{name}: {property} of the wrong type"),
                tool(
                    &format!("{name}/{property}"),
                    name,
                    Value::Object(arguments),
                ),
            );
        }
    }
    let count = catalog.table.matches("\n## ").count() + 1;
    let table = catalog.table;
    assert!(count >= 100, "the catalog has {count} cases");
    // After all of it, a normal call works.
    let version = lean.ok("beam_version", json!({}));
    assert_eq!(version["name"], "lean-beam-mcp");
    lean.server.finish_clean();
    if crate::harness::real_lake().is_none() {
        crate::assert_transcript!(
            "lean_host",
            "hostile_inputs",
            format!("{count} cases\n\n{table}")
        );
    }
}

/// Where a hostile project plants a link under `.lake`, and where it points.
enum Plant {
    /// `at` (relative to the root) links to a directory outside the project, before Lean starts.
    Outside(&'static str),
    /// `at` links to the relative `target`, before Lean starts.
    Relative(&'static str, &'static str),
    /// This server's own twin directory (`.lake/beam/twins/<pid>-1`) links outside the project,
    /// planted once the server runs (its pid names it).
    OwnerOutside,
    /// The twin's own name in this server's twin directory links to `target`, relative.
    TwinName(&'static str),
}

#[cfg(unix)]
#[test]
fn a_link_planted_under_lake_never_lets_a_twin_be_written_or_removed_through_it() {
    use std::os::unix::fs::symlink;
    const VICTIM: &str = "theorem victim : True := trivial\n";
    for plant in [
        Plant::Outside(".lake"),
        Plant::Outside(".lake/beam"),
        Plant::Outside(".lake/beam/twins"),
        Plant::Relative(".lake/beam/twins", "../.."),
        Plant::OwnerOutside,
        Plant::TwinName("../../../../../Victim.lean"),
    ] {
        let project = Project::fixture();
        project.write("Victim.lean", VICTIM);
        let outside = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(project.root()).unwrap();
        let plant_at = |at: &str, target: &std::path::Path| {
            let link = root.join(at);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            symlink(target, &link).unwrap();
            link
        };
        let mut link = match plant {
            Plant::Outside(at) => Some(plant_at(at, outside.path())),
            Plant::Relative(at, target) => Some(plant_at(at, std::path::Path::new(target))),
            _ => None,
        };
        let mut lean = Lean::start(&[&project], &[], &[]);
        let owner = format!(".lake/beam/twins/{}-1", lean.server.pid());
        match plant {
            Plant::OwnerOutside => link = Some(plant_at(&owner, outside.path())),
            Plant::TwinName(target) => {
                let at = format!("{owner}/Fixture/Basic.lean");
                link = Some(plant_at(&at, std::path::Path::new(target)));
            }
            _ => {}
        }
        let link = link.unwrap();
        let case = link.strip_prefix(&root).unwrap().display().to_string();
        lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
        let at = json!({"version": 1, "line": 26, "character": 0, "text": "#check 1"});
        let refused = lean.fails(
            "lean_run_at",
            args(&project, "Fixture/Basic.lean", at),
            "invalidParams",
        );
        assert_eq!(
            refused["data"]["reason"], "twinPathUnsafe",
            "{case}: {refused}"
        );
        assert_eq!(
            refused["data"]["path"],
            format!("[root]/{case}"),
            "{case}: the link is named"
        );
        lean.ok(
            "lean_close",
            args(&project, "Fixture/Basic.lean", json!({})),
        );
        let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert!(
            left.is_empty(),
            "{case}: written outside the project: {left:?}"
        );
        assert_eq!(project.read("Victim.lean"), VICTIM, "{case}");
        assert!(
            !root.join(format!("{}-1", lean.server.pid())).exists(),
            "{case}: written among the project's sources"
        );
        assert!(
            link.symlink_metadata().is_ok(),
            "{case}: the link was removed"
        );
        lean.server.finish_clean();
    }
}

#[test]
fn lean_todo_asks_lean_once_per_command_however_many_comment_lines() {
    if crate::harness::fake_only("lean_todo_asks_lean_once_per_command_however_many_comment_lines")
    {
        return;
    }
    let comments = "-- a line of commentary\n".repeat(300);
    let text = format!(
        "theorem a : True := by\n  trivial\n{comments}\n/-- Documented. -/\ntheorem b : True := by\n  \
         trivial -- fake: code-action \"Try this: exact True.intro\" \"exact True.intro\"\n\
         {comments}/- a block\ncomment -/\ntheorem c : True := by\n  trivial\n{comments}"
    );
    let project = Project::fixture();
    project.write("Fixture/Comments.lean", &text);
    let mut lean = Lean::start(&[&project], &[], &[]);
    let path = "Fixture/Comments.lean";
    lean.ok("lean_sync", args(&project, path, json!({})));
    let before = lean.received_after_handshake().len();
    let lines = text.lines().count() as u64;
    let todo = lean.ok(
        "lean_todo",
        args(
            &project,
            path,
            json!({"version": 1, "start_line": 0, "start_character": 0, "end_line": lines,
                   "end_character": 0, "kinds": ["code_action"], "suggest": "none"}),
        ),
    );
    let asked = lean.received()[before..]
        .iter()
        .filter(|m| *m == "textDocument/codeAction")
        .count();
    assert_eq!(asked, 3, "one request per command, not per comment line");
    let items = todo["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{todo}");
    assert_eq!(items[0]["range"]["start"]["line"], 305, "{todo}");
    lean.finish_without_violations();
}

#[test]
fn a_scoping_line_of_its_own_joins_the_command_below_it_in_a_run() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    for text in [
        "set_option maxHeartbeats 400000 in\ntheorem t : True := by\n  trivial",
        "open Nat in\ntheorem t : True := by\n  trivial",
    ] {
        let at = json!({"version": 1, "line": 26, "character": 0, "text": text});
        let ran = lean.ok("lean_run_at", args(&project, "Fixture/Basic.lean", at));
        assert_eq!(ran["success"], true, "{text}: {ran}");
        assert_eq!(ran["messages"], json!([]), "{text}: {ran}");
    }
    lean.server.finish_clean();
}
