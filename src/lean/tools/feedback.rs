//! `beam_feedback_report`: a pasteable report for one explicit workspace, and optionally a
//! local evidence bundle. Beam never sends it anywhere.
//!
//! Contract:
//! 1. The workspace is validated as a Lake project, and the whole report (`feedback::input`),
//!    before anything is collected or written. The tool never starts, restarts or talks to
//!    Lean: it reads only what the host already holds. It is not a Lean operation, so the
//!    statistics do not count it.
//! 2. Non-confidential, `collected` is `{identity, stats, openFiles, runtime}`: the server's
//!    identity (as `beam_version`, but with `mcp_protocol` the revision this request was made
//!    in, and `mcp_client: {name, version}` when the client named itself), this workspace's
//!    `beam_stats` entry, its open documents and
//!    its runtime (`{cached, lake, toolchain}`, and for a cached runtime `{epoch, alive,
//!    configChanges, lspMessagesSent, stderrTail}`), `null` for what does not exist; with
//!    tracing on, also `traces: {dir, files}`: the MCP trace and this workspace's LSP traces
//!    (every start of its Lean server), current and rotated, for the user to attach. Another
//!    workspace's state is never included. Without a cached runtime a collection warning says
//!    what could not be collected.
//! 3. Confidential, `collected` is `{identity: {name, version, mcp_protocol, runtime_active}}`
//!    (`mcp_protocol` as above):
//!    nothing is read from the project; the request, response, evidence and client request id
//!    are left out (a warning names which were given, and one says that trace files, which hold
//!    the workspace's text, are not named); `active_root` is null; the workspace is not echoed;
//!    and the workspace root (as `$WORKSPACE`) is redacted with the home directory
//!    from everything, error messages included.
//! 4. The result is `{markdown, metadata, collected? (with include_collected),
//!    collection_warnings, bundle_dir?, zip_path?, workspace? (non-confidential)}`; with
//!    `redact` (the default) everything but the workspace echo, which later calls may use, has
//!    the home directory replaced by `~`.
//! 5. A bundle (`feedback::bundle`) holds `card.md` (with the full debug context),
//!    `metadata.json`, `collected.json`, `report.json` (the full report; without local paths
//!    when confidential) and, unless confidential, `evidence/<name>` for each evidence entry,
//!    redacted like the rest. Evidence is read when it is written, never inlined in the card.

use std::io::Read;
use std::path::Path;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::schema::{lean_input, string_enum};
use crate::lean::error::HostError;
use crate::lean::feedback::bundle;
use crate::lean::feedback::card::{self, Context};
use crate::lean::feedback::input::{Bundle, MAX_EVIDENCE_FILE, NARRATIVE, Report, Source};
use crate::lean::feedback::redact::Redactor;
use crate::lean::server::trace_prefix;
use crate::lean::session::diagnostics;
use crate::lean::state::HostState;
use crate::lean::text::uri_path;
use crate::lean::workspace::root::WorkspaceRoot;
use crate::lean::workspace::runtime::Runtime;
use crate::mcp::{CallContext, ClientInfo, Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// The tool name.
pub const NAME: &str = "beam_feedback_report";

/// What the tool does.
const DESCRIPTION: &str = "Write a bug report about Beam for one workspace: returns a markdown \
    card and its metadata for the user to review and post; nothing is sent anywhere and Lean is \
    never started. The card may hold your narrative and payloads, local paths and Beam's context \
    for the workspace; confidential: true leaves project context, payloads and evidence out and \
    redacts paths (the narrative stays as written). bundle also writes the evidence to \
    <root>/.beam/feedback/.";

/// The longest `lean-toolchain` read.
const TOOLCHAIN_BYTES: u64 = 256;

/// The catalog entry.
pub fn spec() -> ToolSpec {
    let text = || json!({"type": "string"});
    let flag = |default: bool| json!({"type": "boolean", "default": default});
    let mut bundle = string_enum(
        &["none", "dir", "zip"],
        "zip: the directory and a zip of it.",
    );
    bundle["default"] = json!("none");
    let payload = || json!({"type": "object"});
    let properties = [
        ("title", text()),
        ("summary", text()),
        ("reproduction", text()),
        ("expected", text()),
        ("actual", text()),
        (
            "kind",
            json!({"type": "string", "enum": ["bug", "ux", "perf", "docs", "question"]}),
        ),
        (
            "severity",
            json!({"type": "string", "enum": ["low", "medium", "high", "critical"]}),
        ),
        ("impact", text()),
        ("workaround", text()),
        (
            "tags",
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        ("client_request_id", text()),
        ("request", payload()),
        ("response", payload()),
        (
            "evidence",
            json!({
                "type": "array",
                "description": "Copied into the bundle: each a name and one of content (a string, \
                    or JSON) or path (a file in the workspace, at most 1 MiB).",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {
                            "type": "string",
                            "description": "A simple file name: letters, digits, '.', '_', '-'."
                        },
                        "content": {},
                        "path": {"type": "string"}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }
            }),
        ),
        ("bundle", bundle),
        ("redact", {
            let mut redact = flag(true);
            redact["description"] = json!("Replace the home directory with ~.");
            redact
        }),
        ("confidential", flag(false)),
        ("include_collected", {
            let mut collected = flag(false);
            collected["description"] = json!("Also return and show Beam's collected context.");
            collected
        }),
    ];
    ToolSpec {
        name: NAME.into(),
        description: DESCRIPTION.to_owned(),
        input_schema: lean_input(&properties, &NARRATIVE),
        annotations: ToolAnnotations::default(),
        execution: Execution::Concurrent,
        status: StatusNotice::WhenSlow,
    }
}

/// What a call says as it is admitted: its one phase, collection.
pub fn admitted(arguments: &Value, ctx: &CallContext) {
    ctx.set_status("collecting", None);
    ctx.progress(if confidential(arguments) {
        format!("{NAME}: preparing a confidential report")
    } else {
        format!("{NAME}: collecting the report context")
    });
}

fn confidential(arguments: &Value) -> bool {
    arguments.get("confidential") == Some(&Value::Bool(true))
}

/// Makes the report (see the contract).
pub async fn report(
    state: &HostState,
    arguments: &Value,
    client: &ClientInfo,
) -> Result<Value, HostError> {
    let descriptor = arguments.get("workspace").unwrap_or(&Value::Null);
    let root = WorkspaceRoot::resolve(descriptor)?;
    // Built from the raw flags, so even a refusal of the report is redacted as it would be.
    let written_root = descriptor["root"].as_str().unwrap_or_default();
    let redactor = Redactor::new(
        std::env::var("HOME").ok().as_deref(),
        arguments.get("redact") != Some(&Value::Bool(false)) || confidential(arguments),
        confidential(arguments).then_some((root.path(), written_root)),
    );
    let report = Report::read(arguments, root.path()).map_err(|e| redacted(&redactor, e))?;
    let (collected, warnings) = if report.confidential {
        let mut warnings = left_out(&report);
        if state.options.trace.is_some() {
            warnings.push(
                "tracing is on, but this confidential report's trace files are not named: they hold the workspace's text"
                    .into(),
            );
        }
        (restricted_identity(state, client), warnings)
    } else {
        collect(state, &root, &report, client)
    };
    let echo = (!report.confidential).then(|| root.descriptor());
    let root = root.path().to_path_buf();
    let at = OffsetDateTime::now_utc();
    let built = tokio::task::spawn_blocking(move || {
        build(report, &root, collected, warnings, at, &redactor).map_err(|e| redacted(&redactor, e))
    })
    .await
    .map_err(|_| {
        HostError::internal(
            "making the feedback report failed inside lean-beam-mcp (a bug: see its log)",
        )
    })?;
    let mut result = built?;
    if let Some(echo) = echo {
        result["workspace"] = echo;
    }
    Ok(result)
}

fn redacted(redactor: &Redactor, mut error: HostError) -> HostError {
    error.message = redactor.text(&error.message);
    error
}

fn restricted_identity(state: &HostState, client: &ClientInfo) -> Value {
    let full = session_identity(state, client);
    let mut identity = serde_json::Map::new();
    for key in ["name", "version", "mcp_protocol", "runtime_active"] {
        identity.insert(key.into(), full[key].clone());
    }
    json!({ "identity": identity })
}

/// The server's identity as this session sees it: the revision the request was made in (not
/// the server's preferred one) and, when the client named itself, the client.
fn session_identity(state: &HostState, client: &ClientInfo) -> Value {
    let mut identity = state.identity();
    identity["mcp_protocol"] = json!(client.family.revision());
    if let Some(name) = &client.name {
        identity["mcp_client"] = json!({"name": name.name, "version": name.version});
    }
    identity
}

/// The warning of a confidential report that was given what it leaves out.
fn left_out(report: &Report) -> Vec<String> {
    let given: Vec<&str> = [
        ("request", report.request.is_some()),
        ("response", report.response.is_some()),
        ("evidence", !report.evidence.is_empty()),
        ("client_request_id", report.client_request_id.is_some()),
    ]
    .iter()
    .filter(|(_, given)| *given)
    .map(|(name, _)| *name)
    .collect();
    if given.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "confidential report: {} left out",
        given.join(", ")
    )]
}

/// The context of a non-confidential report, from what the host holds now.
fn collect(
    state: &HostState,
    root: &WorkspaceRoot,
    report: &Report,
    client: &ClientInfo,
) -> (Value, Vec<String>) {
    let mut warnings = Vec::new();
    let identity = session_identity(state, client);
    let stats = state.stats_report()["workspaces"]
        .get(root.key())
        .cloned()
        .unwrap_or(Value::Null);
    let cached = state
        .registry
        .running()
        .into_iter()
        .find(|r| r.root() == root);
    let mut runtime = json!({
        "cached": cached.is_some(),
        "lake": state.options.lake.display().to_string(),
        "toolchain": toolchain(root.path()),
    });
    let open_files = match &cached {
        Some(cached) => {
            runtime["epoch"] = json!(cached.epoch());
            runtime["alive"] = json!(cached.is_alive());
            runtime["configChanges"] = json!(cached.config_changes());
            runtime["lspMessagesSent"] = json!(cached.server().messages_sent());
            runtime["stderrTail"] = json!(cached.server().stderr_tail());
            open_files(cached, root)
        }
        None => {
            warnings.push(
                "no Lean runtime is cached for this workspace, so its open files and Lean \
                 server output were not collected (feedback never starts Lean)"
                    .into(),
            );
            Value::Null
        }
    };
    if !report.evidence.is_empty() && report.bundle == Bundle::None {
        warnings.push(
            "evidence is copied only into a bundle: pass bundle \"dir\" or \"zip\" to include it"
                .into(),
        );
    }
    let mut collected = json!({
        "identity": identity,
        "stats": stats,
        "openFiles": open_files,
        "runtime": runtime,
    });
    if let Some(trace) = &state.options.trace {
        let files: Vec<String> = trace
            .files("mcp")
            .into_iter()
            .chain(trace.files(&trace_prefix(root.path())))
            .map(|path| path.display().to_string())
            .collect();
        collected["traces"] = json!({"dir": trace.dir().display().to_string(), "files": files});
    }
    (collected, warnings)
}

fn open_files(runtime: &Runtime, root: &WorkspaceRoot) -> Value {
    let mut files: Vec<Value> = runtime
        .documents()
        .mirror()
        .real_documents()
        .iter()
        .map(|document| {
            let path = uri_path(&document.uri).map_or_else(
                || document.uri.to_string(),
                |path| {
                    path.strip_prefix(root.path())
                        .unwrap_or(&path)
                        .display()
                        .to_string()
                },
            );
            json!({
                "path": path,
                "version": document.version,
                "diagnostics": {"counts": diagnostics::counts(&document.diagnostics)},
                "document_progress": document.progress.to_json(),
            })
        })
        .collect();
    files.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    Value::Array(files)
}

/// The first line of the workspace's `lean-toolchain`, if it has one.
fn toolchain(root: &Path) -> Option<String> {
    let path = root.join("lean-toolchain");
    // Never opened unless regular: a FIFO would block.
    if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(TOOLCHAIN_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// Renders the report, writes its bundle if asked, and returns the result (without the
/// workspace echo), redacted.
fn build(
    mut report: Report,
    root: &Path,
    collected: Value,
    warnings: Vec<String>,
    at: OffsetDateTime,
    redactor: &Redactor,
) -> Result<Value, HostError> {
    let evidence = if report.bundle != Bundle::None && !report.confidential {
        read_evidence(&report, redactor)?
    } else {
        Vec::new()
    };
    if report.confidential {
        report.request = None;
        report.response = None;
        report.evidence.clear();
        report.client_request_id = None;
    }
    let generated_at = crate::timestamp::iso(at);
    let active_root = (!report.confidential).then(|| root.display().to_string());
    let context = Context {
        generated_at: &generated_at,
        active_root: active_root.as_deref(),
        collected: &collected,
        warnings: &warnings,
    };
    let metadata = card::metadata(&report, &context);
    let full = card::markdown(&report, &context, true);
    let markdown = if report.include_collected {
        full.clone()
    } else {
        card::markdown(&report, &context, false)
    };
    let mut result = json!({
        "markdown": markdown,
        "metadata": metadata,
        "collection_warnings": warnings,
    });
    if report.include_collected {
        result["collected"] = collected.clone();
    }
    if report.bundle != Bundle::None {
        let claimed = bundle::claim(root, &report.title, at, report.bundle == Bundle::Zip)?;
        let dir = claimed.dir.display().to_string();
        let zip = claimed.zip.as_ref().map(|z| z.display().to_string());
        result["bundle_dir"] = json!(dir);
        if let Some(zip) = &zip {
            result["zip_path"] = json!(zip);
        }
        let mut saved = json!({
            "markdown": full,
            "metadata": result["metadata"],
            "collected": collected,
            "collection_warnings": result["collection_warnings"],
        });
        if !report.confidential {
            saved["bundle_dir"] = json!(dir);
            if let Some(zip) = &zip {
                saved["zip_path"] = json!(zip);
            }
        }
        let pretty = |value: &Value| {
            let mut text = serde_json::to_string_pretty(&redactor.json(value)).unwrap_or_default();
            text.push('\n');
            text.into_bytes()
        };
        let mut files = vec![
            ("card.md".to_owned(), redactor.bytes(full.as_bytes())),
            ("metadata.json".to_owned(), pretty(&saved["metadata"])),
            ("collected.json".to_owned(), pretty(&saved["collected"])),
            ("report.json".to_owned(), pretty(&saved)),
        ];
        files.extend(evidence);
        bundle::write(&claimed, &files, at)?;
    }
    Ok(redactor.json(&result))
}

/// Each evidence entry's file in the bundle and its redacted content.
fn read_evidence(
    report: &Report,
    redactor: &Redactor,
) -> Result<Vec<(String, Vec<u8>)>, HostError> {
    let mut files = Vec::with_capacity(report.evidence.len());
    for (index, evidence) in report.evidence.iter().enumerate() {
        let content = match &evidence.source {
            Source::Inline(Value::String(text)) => text.clone().into_bytes(),
            Source::Inline(value) => {
                let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
                text.push('\n');
                text.into_bytes()
            }
            Source::File { given, path, .. } => {
                let refuse = |why: String| {
                    HostError::invalid_input(format!("evidence path {given:?} {why}"))
                        .with_path(&format!("/evidence/{index}/path"))
                };
                let mut content = Vec::new();
                std::fs::File::open(path)
                    .and_then(|file| file.take(MAX_EVIDENCE_FILE + 1).read_to_end(&mut content))
                    .map_err(|e| refuse(format!("cannot be read: {e}")))?;
                if content.len() as u64 > MAX_EVIDENCE_FILE {
                    return Err(refuse(format!(
                        "grew larger than the {} MiB a report copies of one file",
                        MAX_EVIDENCE_FILE >> 20
                    )));
                }
                content
            }
        };
        files.push((
            format!("evidence/{}", evidence.name),
            redactor.bytes(&content),
        ));
    }
    Ok(files)
}
