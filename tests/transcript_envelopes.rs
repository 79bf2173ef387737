//! Transcripts of the JSON-RPC envelope rules against the shipped binary: framing (blank lines,
//! CRLF, a final line without newline, the line cap), parse errors, closed envelopes and ids.
//!
//! Every exchange is read back with `recv`, so each transcript also pins that nothing else was
//! written in between (blank lines and notifications get no answer).

mod support;

use serde_json::{Value, json};
use support::*;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// Asserts that `response` answers a `ping` with `id` (an empty result).
#[track_caller]
fn assert_pong(response: &Value, id: Value) {
    assert_eq!(response.get("id"), Some(&id), "{response}");
    assert_eq!(response["result"], json!({}), "{response}");
    assert!(response.get("error").is_none(), "{response}");
}

/// Sends a raw line and returns the very next message from the server.
fn exchange(server: &mut McpProcess, line: &str) -> Value {
    server.send_raw(line);
    server.recv()
}

/// Sends a `ping` (answered in every lifecycle state) and checks that it is the next message.
fn ping(server: &mut McpProcess, id: impl Into<Value>) {
    let id = id.into();
    server.send(&request(id.clone(), "ping", Value::Null));
    let response = server.recv();
    assert_pong(&response, id);
}

/// A `ping` line exactly `len` bytes long (padded inside `params._meta`).
fn ping_of_length(id: i64, len: usize) -> String {
    let bare = request(id, "ping", json!({"_meta": {"pad": ""}})).to_string();
    let pad = len.checked_sub(bare.len()).expect("len fits a ping");
    let line = request(id, "ping", json!({"_meta": {"pad": "x".repeat(pad)}})).to_string();
    assert_eq!(line.len(), len);
    line
}

#[test]
fn invalid_json_is_a_parse_error_with_null_id_and_reading_continues() {
    let mut server = McpProcess::server(&[]);
    for line in [r#"{"jsonrpc":"2.0","id":1,"method":"#, "not json", "{]"] {
        let response = exchange(&mut server, line);
        assert_error_for(&response, PARSE_ERROR, Value::Null, "Parse error");
    }
    ping(&mut server, 2);
    assert_transcript!("envelopes", "invalid_json", server.finish_clean());
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let mut server = McpProcess::server(&[]);
    server.note(r"sent the bytes \xff\xfe and a newline");
    server.write_bytes(b"\xff\xfe\n");
    assert_error_for(&server.recv(), PARSE_ERROR, Value::Null, "Parse error");
    server.note(r#"sent {"jsonrpc":"2.0","id":1,"method":"p\xffing"} and a newline (raw byte 0xff in the method)"#);
    server.write_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n");
    assert_error_for(&server.recv(), PARSE_ERROR, Value::Null, "Parse error");
    ping(&mut server, 2);
    assert_transcript!("envelopes", "invalid_utf8", server.finish_clean());
}

#[test]
fn empty_and_whitespace_only_lines_are_skipped() {
    let mut server = McpProcess::server(&[]);
    server.note(r"sent an empty line, a line of spaces and tabs, a lone \r\n and a line of \r\r");
    server.write_bytes(b"\n \t  \t\n\r\n\r\r\n");
    // The next message is the answer to this ping: the blank lines were not answered.
    ping(&mut server, 1);
    assert_transcript!("envelopes", "blank_lines", server.finish_clean());
}

#[test]
fn crlf_line_endings_are_accepted() {
    let mut server = McpProcess::server(&[]);
    let line = request(1, "ping", Value::Null).to_string();
    server.note(&format!("sent {line} terminated by \\r\\n"));
    server.write_bytes(format!("{line}\r\n").as_bytes());
    assert_pong(&server.recv(), json!(1));
    let line = request("two", "ping", json!({})).to_string();
    server.note(&format!("sent {line} terminated by \\r\\n"));
    server.write_bytes(format!("{line}\r\n").as_bytes());
    assert_pong(&server.recv(), json!("two"));
    assert_transcript!("envelopes", "crlf", server.finish_clean());
}

#[test]
fn batches_are_invalid_requests_with_null_id() {
    let mut server = McpProcess::server(&[]);
    let batch = json!([
        request(1, "ping", Value::Null),
        request(2, "ping", Value::Null)
    ]);
    let response = exchange(&mut server, &batch.to_string());
    assert_error_for(
        &response,
        INVALID_REQUEST,
        Value::Null,
        "batches are not supported",
    );
    let response = exchange(&mut server, "[]");
    assert_error_for(
        &response,
        INVALID_REQUEST,
        Value::Null,
        "batches are not supported",
    );
    // Neither batched request was answered on its own: the next message answers this ping.
    ping(&mut server, 3);
    assert_transcript!("envelopes", "batches", server.finish_clean());
}

#[test]
fn non_object_messages_are_invalid_requests_with_null_id() {
    let mut server = McpProcess::server(&[]);
    for line in ["42", r#""ping""#, "null", "true"] {
        let response = exchange(&mut server, line);
        assert_error_for(
            &response,
            INVALID_REQUEST,
            Value::Null,
            "must be a JSON object",
        );
    }
    ping(&mut server, 1);
    assert_transcript!("envelopes", "non_objects", server.finish_clean());
}

#[test]
fn client_responses_are_invalid_requests_keeping_their_id() {
    let mut server = McpProcess::server(&[]);
    let cases = [
        (json!({"jsonrpc": "2.0", "id": 3, "result": {}}), json!(3)),
        (
            json!({"jsonrpc": "2.0", "id": "r", "error": {"code": -1, "message": "no"}}),
            json!("r"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "result": {}}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "result": {}}), Value::Null),
    ];
    for (message, id) in cases {
        server.send(&message);
        let response = server.recv();
        assert_error_for(
            &response,
            INVALID_REQUEST,
            id,
            "client responses are not accepted",
        );
    }
    ping(&mut server, 4);
    assert_transcript!("envelopes", "client_responses", server.finish_clean());
}

#[test]
fn undeclared_members_are_invalid_requests() {
    let mut server = McpProcess::server(&[]);
    // On a request the id is kept, so the client can correlate the error.
    let response = exchange(
        &mut server,
        r#"{"jsonrpc":"2.0","id":5,"method":"ping","extra":true}"#,
    );
    assert_error_for(
        &response,
        INVALID_REQUEST,
        json!(5),
        "undeclared JSON-RPC members: extra",
    );
    let response = exchange(
        &mut server,
        r#"{"jsonrpc":"2.0","id":"s","method":"ping","params":{},"b":1,"a":2}"#,
    );
    assert_error_for(
        &response,
        INVALID_REQUEST,
        json!("s"),
        "undeclared JSON-RPC members: a, b",
    );
    // A notification with an undeclared member is not a valid notification either: it is an
    // invalid request object, answered with id null (as JSON-RPC 2.0 answers {"foo":"boo"}).
    let response = exchange(
        &mut server,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","extra":true}"#,
    );
    assert_error_for(
        &response,
        INVALID_REQUEST,
        Value::Null,
        "undeclared JSON-RPC members: extra",
    );
    ping(&mut server, 6);
    assert_transcript!("envelopes", "undeclared_members", server.finish_clean());
}

#[test]
fn method_must_be_a_present_string() {
    let mut server = McpProcess::server(&[]);
    let response = exchange(&mut server, r#"{"jsonrpc":"2.0","id":1,"method":7}"#);
    assert_error_for(
        &response,
        INVALID_REQUEST,
        json!(1),
        "method must be a string",
    );
    let response = exchange(&mut server, r#"{"jsonrpc":"2.0","id":2}"#);
    assert_error_for(&response, INVALID_REQUEST, json!(2), "must have a method");
    let response = exchange(&mut server, r#"{"jsonrpc":"2.0"}"#);
    assert_error_for(
        &response,
        INVALID_REQUEST,
        Value::Null,
        "must have a method",
    );
    ping(&mut server, 3);
    assert_transcript!("envelopes", "method_member", server.finish_clean());
}

#[test]
fn jsonrpc_member_must_be_the_string_2_0() {
    let mut server = McpProcess::server(&[]);
    let cases = [
        (r#"{"id":1,"method":"ping"}"#, json!(1)),
        (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, json!(2)),
        (
            r#"{"jsonrpc":2.0,"id":"three","method":"ping"}"#,
            json!("three"),
        ),
        (r#"{"jsonrpc":null,"id":4,"method":"ping"}"#, json!(4)),
        (r#"{"method":"notifications/initialized"}"#, Value::Null),
    ];
    for (line, id) in cases {
        let response = exchange(&mut server, line);
        assert_error_for(
            &response,
            INVALID_REQUEST,
            id,
            r#"jsonrpc member must be the string "2.0""#,
        );
    }
    ping(&mut server, 5);
    assert_transcript!("envelopes", "jsonrpc_member", server.finish_clean());
}

#[test]
fn null_fractional_boolean_and_structured_ids_are_invalid_with_null_id() {
    let mut server = McpProcess::server(&[]);
    let cases = [
        ("null", "not null"),
        ("1.5", "fractional or out of that range"),
        ("true", "not a boolean"),
        ("[1]", "not an array"),
        (r#"{"n":1}"#, "not an object"),
    ];
    for (id, words) in cases {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let response = exchange(&mut server, &line);
        assert_error_for(&response, INVALID_REQUEST, Value::Null, words);
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("must be a string or an integer"),
            "{message}"
        );
    }
    ping(&mut server, 1);
    assert_transcript!("envelopes", "unusable_ids", server.finish_clean());
}

#[test]
fn integral_decimal_ids_are_answered_as_integers() {
    let mut server = McpProcess::server(&[]);
    let response = exchange(
        &mut server,
        r#"{"jsonrpc":"2.0","id":1.0e1,"method":"ping"}"#,
    );
    assert_pong(&response, json!(10));
    assert!(
        response["id"].is_i64() || response["id"].is_u64(),
        "{response}"
    );
    let response = exchange(
        &mut server,
        r#"{"jsonrpc":"2.0","id":-3.0,"method":"ping"}"#,
    );
    assert_pong(&response, json!(-3));
    assert!(response["id"].is_i64(), "{response}");
    assert_transcript!("envelopes", "integral_decimal_ids", server.finish_clean());
}

#[test]
fn string_and_integer_ids_are_distinct() {
    let mut server = McpProcess::server(&[]);
    // Both sent before either answer is read: one is not mistaken for a reuse of the other.
    server.send(&request("7", "ping", Value::Null));
    server.send(&request(7, "ping", Value::Null));
    let first = server.recv();
    let second = server.recv();
    assert_pong(&first, json!("7"));
    assert!(first["id"].is_string(), "{first}");
    assert_pong(&second, json!(7));
    assert!(second["id"].is_number(), "{second}");
    assert_transcript!("envelopes", "string_vs_integer_ids", server.finish_clean());
}

#[test]
fn lines_over_max_message_bytes_are_rejected_and_reading_continues() {
    let mut server = McpProcess::server(&["--max-message-bytes", "256"]);
    // Exactly at the cap (the terminator is not counted): accepted.
    let response = exchange(&mut server, &ping_of_length(1, 256));
    assert_pong(&response, json!(1));
    // One byte over: rejected without reading its id, so the answer has id null.
    let response = exchange(&mut server, &ping_of_length(2, 257));
    assert_error_for(
        &response,
        INVALID_REQUEST,
        Value::Null,
        "a line may hold at most 256 bytes",
    );
    assert_eq!(response["error"]["data"], json!({"maxMessageBytes": 256}));
    // Non-JSON over the cap is also a cap error, not a parse error.
    let response = exchange(&mut server, &"z".repeat(300));
    assert_error_for(&response, INVALID_REQUEST, Value::Null, "at most 256 bytes");
    assert_eq!(response["error"]["data"], json!({"maxMessageBytes": 256}));
    ping(&mut server, 3);
    assert_transcript!("envelopes", "max_message_bytes", server.finish_clean());
}

#[test]
fn a_20_mb_line_is_rejected_against_the_default_16_mib_cap() {
    let mut server = McpProcess::server(&[]);
    let huge = request(1, "ping", json!({"_meta": {"pad": "x".repeat(20_000_000)}})).to_string();
    assert!(huge.len() > 16 * 1024 * 1024);
    server.note(&format!(
        "sent a ping with id 1 padded to {} bytes in params._meta.pad, then a newline",
        huge.len()
    ));
    server.write_bytes(huge.as_bytes());
    server.write_bytes(b"\n");
    let response = server.recv();
    assert_error_for(
        &response,
        INVALID_REQUEST,
        Value::Null,
        "at most 16777216 bytes",
    );
    assert_eq!(
        response["error"]["data"],
        json!({"maxMessageBytes": 16_777_216})
    );
    ping(&mut server, 2);
    assert_transcript!("envelopes", "huge_line_default_cap", server.finish_clean());
}

#[test]
fn a_final_line_without_newline_is_processed() {
    let mut server = McpProcess::server(&[]);
    let line = request(1, "ping", Value::Null).to_string();
    server.note(&format!("sent {line} without a newline"));
    server.write_bytes(line.as_bytes());
    server.close_stdin();
    assert_pong(&server.recv(), json!(1));
    assert_transcript!(
        "envelopes",
        "final_line_without_newline",
        server.finish_clean()
    );
}

#[test]
fn an_overlong_final_line_without_newline_is_rejected() {
    let mut server = McpProcess::server(&["--max-message-bytes", "256"]);
    let line = ping_of_length(1, 300);
    server.note(&format!("sent {line} without a newline"));
    server.write_bytes(line.as_bytes());
    server.close_stdin();
    let response = server.recv();
    assert_error_for(&response, INVALID_REQUEST, Value::Null, "at most 256 bytes");
    assert_eq!(response["error"]["data"], json!({"maxMessageBytes": 256}));
    assert_transcript!("envelopes", "overlong_final_line", server.finish_clean());
}

#[test]
fn end_of_input_exits_zero_with_empty_stderr() {
    let server = McpProcess::server(&[]);
    let transcript = server.finish_clean();
    assert_eq!(transcript, "# end of input\n");
    assert_transcript!("envelopes", "eof", transcript);
}

#[test]
fn version_flag_prints_the_version_and_exits_zero() {
    let assert = assert_cmd::Command::new(server_bin())
        .arg("--version")
        .write_stdin("")
        .assert()
        .success()
        .code(0)
        .stderr("");
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).expect("UTF-8");
    assert_eq!(stdout, "lean-beam-mcp 0.1.0\n");
    assert_transcript!("envelopes", "version_flag", stdout);
}

#[test]
fn help_flag_prints_usage_and_exits_zero() {
    for flag in ["--help", "-h"] {
        let assert = assert_cmd::Command::new(server_bin())
            .arg(flag)
            .write_stdin("")
            .assert()
            .success()
            .code(0)
            .stderr("");
        let stdout = String::from_utf8(assert.get_output().stdout.clone()).expect("UTF-8");
        for words in [
            "Usage: lean-beam-mcp",
            "--max-message-bytes",
            "--status-delay-ms",
            "--help",
            "--version",
        ] {
            assert!(
                stdout.contains(words),
                "{flag} output lacks {words:?}:\n{stdout}"
            );
        }
    }
}
