//! The report card: the pasteable markdown and the metadata of one report.
//!
//! Contract:
//! 1. The markdown opens with the title and a notice: "Review before posting publicly" (what it
//!    may hold, and that Beam does not submit feedback automatically), or for a confidential
//!    report "do not post this report publicly". Then the summary with its routing lines, a
//!    compact "## Beam Runtime" section read from the collected context (naming the trace files
//!    when it has them), the reproduction, the expected and actual behaviour, and what was given
//!    of impact, the full collected context ("## Beam Debug Context", when asked), the request
//!    and response, the evidence (listed by name, never inlined) and the workaround.
//! 2. Caller text is kept as written; code spans and fences are sized so that backticks in it
//!    cannot close them early, and the title is one line.
//! 3. The metadata is `{schema: "beam.feedback.report-card.v1", title, kind, severity,
//!    generated_at, active_root, tags, bundle, redacted, confidential, client_request_id}`,
//!    with `null` for what is absent. The caller prepares a confidential report (no project
//!    context, no payloads, no evidence, no request id, no root) before it is rendered.
//!
//! Nothing here redacts: the caller redacts what is rendered.

use serde_json::{Value, json};

use super::input::{Bundle, Report, Source};

/// The metadata's schema name.
pub const SCHEMA: &str = "beam.feedback.report-card.v1";

/// What a card is rendered from besides the report.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// When the report was made (RFC 3339, UTC, seconds).
    pub generated_at: &'a str,
    /// The workspace root, unless confidential.
    pub active_root: Option<&'a str>,
    /// What was collected: `identity`, and unless confidential `stats`, `openFiles`,
    /// `runtime` and, with tracing on, `traces`.
    pub collected: &'a Value,
    /// What could not be collected, or was left out.
    pub warnings: &'a [String],
}

/// The metadata.
pub fn metadata(report: &Report, context: &Context<'_>) -> Value {
    json!({
        "schema": SCHEMA,
        "title": report.title,
        "kind": report.kind,
        "severity": report.severity,
        "generated_at": context.generated_at,
        "active_root": context.active_root,
        "tags": report.tags,
        "bundle": report.bundle.name(),
        "redacted": report.redact,
        "confidential": report.confidential,
        "client_request_id": report.client_request_id,
    })
}

/// The markdown; `debug_context` adds the full collected context.
pub fn markdown(report: &Report, context: &Context<'_>, debug_context: bool) -> String {
    let mut out = String::new();
    let title: Vec<&str> = report.title.split_whitespace().collect();
    out.push_str(&format!("# {}\n\n", title.join(" ")));
    out.push_str(if report.confidential {
        "> [!IMPORTANT]\n\
         > Confidential report: do not post this report publicly.\n\
         > Beam collected no project context, and left out request and response payloads,\n\
         > evidence and the client request id.\n\
         > The narrative is kept as written, except that home and workspace paths are replaced:\n\
         > review it for secrets before sharing it privately.\n\
         > Beam does not submit feedback automatically.\n\n"
    } else {
        "> [!WARNING]\n\
         > Review before posting publicly.\n\
         > This report may include the narrative you wrote, request and response payloads, local\n\
         > paths, this workspace's Beam statistics, open files and Lean server output, and\n\
         > bundle evidence.\n\
         > Beam does not submit feedback automatically.\n\n"
    });
    let mut routing = Vec::new();
    if let Some(kind) = &report.kind {
        routing.push(format!("- Kind: {}", code(kind)));
    }
    if let Some(severity) = &report.severity {
        routing.push(format!("- Severity: {}", code(severity)));
    }
    if !report.tags.is_empty() {
        let tags: Vec<String> = report.tags.iter().map(|t| code(t)).collect();
        routing.push(format!("- Tags: {}", tags.join(", ")));
    }
    if let Some(id) = &report.client_request_id {
        routing.push(format!("- Client request id: {}", code(id)));
    }
    let mut summary = report.summary.trim().to_owned();
    if !routing.is_empty() {
        summary = format!("{summary}\n\n{}", routing.join("\n"));
    }
    section(&mut out, "Summary", &summary);
    section(&mut out, "Beam Runtime", &runtime_summary(context));
    section(&mut out, "Reproduction", &report.reproduction);
    section(&mut out, "Expected Behavior", &report.expected);
    section(&mut out, "Actual Behavior", &report.actual);
    if let Some(impact) = &report.impact {
        section(&mut out, "Impact", impact);
    }
    if debug_context {
        section(
            &mut out,
            "Beam Debug Context",
            &json_block(context.collected),
        );
    }
    if report.request.is_some() || report.response.is_some() {
        let mut body = String::new();
        for (label, payload) in [("Request", &report.request), ("Response", &report.response)] {
            if let Some(payload) = payload {
                if !body.is_empty() {
                    body.push_str("\n\n");
                }
                body.push_str(&format!("### {label}\n\n{}", json_block(payload)));
            }
        }
        section(&mut out, "Request And Response", &body);
    }
    if !report.evidence.is_empty() {
        section(&mut out, "Evidence", &evidence(report));
    }
    if let Some(workaround) = &report.workaround {
        section(&mut out, "Workaround", workaround);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn section(out: &mut String, title: &str, body: &str) {
    out.push_str(&format!("## {title}\n\n{}\n\n", body.trim()));
}

fn runtime_summary(context: &Context<'_>) -> String {
    let identity = &context.collected["identity"];
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let mut lines = vec![format!("- generated at: {}", code(context.generated_at))];
    let server = [&identity["name"], &identity["version"]]
        .iter()
        .filter_map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if !server.is_empty() {
        lines.push(format!("- server: {}", code(&server)));
    }
    if let Some(protocol) = text(&identity["mcp_protocol"]) {
        lines.push(format!("- MCP protocol: {}", code(&protocol)));
    }
    let client = &identity["mcp_client"];
    if let (Some(name), Some(version)) = (text(&client["name"]), text(&client["version"])) {
        lines.push(format!(
            "- MCP client: {}",
            code(&format!("{name} {version}"))
        ));
    }
    if let Some(commit) = text(&identity["source_commit"]) {
        let short: String = commit.chars().take(12).collect();
        let dirty = if identity["source_dirty"] == true {
            ", dirty"
        } else {
            ""
        };
        lines.push(format!(
            "- source: {}",
            code(&format!("commit {short}{dirty}"))
        ));
    }
    if let Some(root) = context.active_root {
        lines.push(format!("- workspace: {}", code(root)));
    }
    let runtime = &context.collected["runtime"];
    if let Some(toolchain) = text(&runtime["toolchain"]) {
        lines.push(format!("- toolchain: {}", code(&toolchain)));
    }
    if runtime.is_object() {
        let state = if runtime["cached"] != true {
            "not started".to_owned()
        } else {
            let open = context.collected["openFiles"]
                .as_array()
                .map_or(0, Vec::len);
            let files = if open == 1 { "file" } else { "files" };
            let epoch = runtime["epoch"].as_u64().unwrap_or(0);
            let alive = if runtime["alive"] == true {
                "running"
            } else {
                "exited"
            };
            format!("{alive} (start {epoch}, {open} open {files})")
        };
        lines.push(format!(
            "- Lean runtime for this workspace: {}",
            code(&state)
        ));
    }
    if let Some(files) = context.collected["traces"]["files"].as_array() {
        let files: Vec<String> = files.iter().filter_map(|f| f.as_str()).map(code).collect();
        if !files.is_empty() {
            lines.push(format!("- trace files (attach them): {}", files.join(", ")));
        }
    }
    if let Some(active) = identity["runtime_active"].as_bool() {
        lines.push(format!(
            "- any Lean runtime active in this server: {}",
            code(&active.to_string())
        ));
    }
    if !context.warnings.is_empty() {
        lines.push(String::new());
        lines.push("Collection warnings:".into());
        lines.extend(context.warnings.iter().map(|w| format!("- {w}")));
    }
    lines.join("\n")
}

fn evidence(report: &Report) -> String {
    let mut lines: Vec<String> = report
        .evidence
        .iter()
        .map(|e| match &e.source {
            Source::Inline(Value::String(text)) => {
                format!("- {}: inline text, {} bytes", code(&e.name), text.len())
            }
            Source::Inline(_) => format!("- {}: inline JSON", code(&e.name)),
            Source::File { given, len, .. } => {
                format!("- {}: file {}, {len} bytes", code(&e.name), code(given))
            }
        })
        .collect();
    lines.push(String::new());
    lines.push(match report.bundle {
        Bundle::None => "Not copied: evidence is only written into a bundle (`bundle`: `dir` or \
                         `zip`)."
            .into(),
        Bundle::Dir | Bundle::Zip => "Copied into the bundle's `evidence/` directory.".into(),
    });
    lines.join("\n")
}

/// `text` as an inline code span that its own backticks cannot close.
pub fn code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let run = longest_backtick_run(&text);
    if run == 0 {
        return format!("`{text}`");
    }
    let ticks = "`".repeat(run + 1);
    format!("{ticks} {text} {ticks}")
}

/// `value` as a fenced JSON block that its own backticks cannot close.
pub fn json_block(value: &Value) -> String {
    let body = serde_json::to_string_pretty(value).unwrap_or_default();
    let fence = "`".repeat((longest_backtick_run(&body) + 1).max(3));
    format!("{fence}json\n{body}\n{fence}")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_and_fences_outlast_the_backticks_inside() {
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(code("a `b` c"), "`` a `b` c ``");
        assert_eq!(code("two\nlines"), "`two lines`");
        let block = json_block(&json!({"text": "```rust\nx\n```"}));
        assert!(
            block.starts_with("````json\n") && block.ends_with("\n````"),
            "{block}"
        );
    }
}
