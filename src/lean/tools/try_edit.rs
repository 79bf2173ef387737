//! `lean_try_edit`: propose, verify, gate and patch in one call. Up to 16 candidate edits of one
//! file, each checked by Lean in a hidden twin of the whole edited file, judged against the
//! file as it is, without touching the file or its document.
//!
//! Contract:
//! 1. The file is read and synced first; its sha256 must be the caller's `base_sha256`, and
//!    still be once the candidates ran (another writer may change it meanwhile): otherwise the
//!    call answers `contentModified` (`base_mismatch`, with `current_sha256`), never a verdict on
//!    a text the file no longer has.
//! 2. A candidate is `{range, text}` (0-based lines, UTF-16 columns, inside the file, start not
//!    after end) or `{declaration, body}`: the named declaration's body replaced
//!    (`syntax::declaration_named`); either with `allow_statement_change: true`, which alone
//!    lets a candidate that changes what the file states close (`speculation/edit.rs`).
//!    Anything else, a name no single declaration answers to, or a text that writes a
//!    terminal command (`#exit`, an `import` after the header: `syntax::terminal_commands`,
//!    `terminalCommand`), or an edit after the file's own `#exit` (`afterTerminalCommand`:
//!    Lean would never check it), is refused before Lean is asked, naming the candidate.
//! 3. The candidates run side by side over the twin pool under one deadline (`timeout_ms`, at
//!    most the Lean timeout; `speculation/trial.rs`); `prefer: "first_closed"` stops at the first
//!    that closes, the ones not finished then answering `skipped`. The result is `{path, version,
//!    base_sha256, candidates: [{verdict, reason?, goals, diagnostics, gate, patch?,
//!    truncated?}], receipt}` in the candidates' order (`speculation/edit.rs` says what each
//!    means); the receipt is the base's (`session/receipt.rs`; a typed error about the file
//!    carries it in its state, `data.receipt`, as every tool's: `tools/call.rs`).

use serde_json::{Value, json};

use super::schema::{LeanTool, natural, path, read_only, string_enum};
use crate::lean::error::HostError;
use crate::lean::session::fingerprint::sha256_hex;
use crate::lean::session::mirror::Document;
use crate::lean::session::receipt;
use crate::lean::speculation::edit::{Applied, MAX_DIAGNOSTICS, apply};
use crate::lean::speculation::probe::refuse_after_exit;
use crate::lean::speculation::trial::{Prefer, Trial, for_candidate};
use crate::lean::state::HostState;
use crate::lean::syntax::{NotFound, declaration_named, header_end, terminal_commands};
use crate::lean::text::{Position, offset_of};
use crate::lean::tools::call::LeanCall;
use crate::mcp::ToolSpec;

/// The tool's name.
pub const TRY_EDIT: &str = "lean_try_edit";

/// What each verdict means, for `--help`; the tool's description names the same verdicts more
/// briefly, to keep the tool list small.
pub const VERDICTS_EXPLAINED: &str = "closed (Lean confirmed the edited declaration has no \
    error, goal or sorry, by its #print axioms too, and the file no new error, and the file \
    states what it did unless the candidate allowed a statement change; with an apply-ready \
    patch), progressed (no error, goals remain and changed), failed (an error in the \
    declaration, a new error elsewhere, a statement changed, no progress, or a sorry Lean's \
    axioms could not rule out: see reason), timeout (past timeout_ms) or skipped (prefer: \
    first_closed stopped first)";

/// The candidate's member that lets it close with a statement changed.
const ALLOW: &str = "allow_statement_change";

/// The most candidates one call takes.
pub const MAX_CANDIDATES: usize = 16;

/// The longest deadline one call may ask for (a day, as the Lean timeout's own bound).
const MAX_TIMEOUT_MS: u64 = 86_400_000;

fn position() -> Value {
    json!({
        "type": "object",
        "properties": {
            "line": natural("0-based."),
            "character": natural("0-based, UTF-16."),
        },
        "required": ["line", "character"],
        "additionalProperties": false
    })
}

fn candidate() -> Value {
    json!({
        "type": "object",
        "description": "{range, text}, or {declaration, body}: the new body (after := or \
                        where) of the named declaration.",
        "properties": {
            "range": {
                "type": "object",
                "properties": {"start": position(), "end": position()},
                "required": ["start", "end"],
                "additionalProperties": false
            },
            "text": {"type": "string"},
            "declaration": {"type": "string"},
            "body": {"type": "string"},
            ALLOW: {
                "type": "boolean",
                "default": false,
                "description": "true: may close though it changes what the file states."
            }
        },
        "minProperties": 2,
        "maxProperties": 3,
        "additionalProperties": false
    })
}

/// The catalog entry.
pub fn spec() -> ToolSpec {
    let properties = [
        ("path", path()),
        (
            "base_sha256",
            json!({
                "type": "string",
                "minLength": 64,
                "maxLength": 64,
                "description": "The sha256 of the file's text the candidates edit."
            }),
        ),
        (
            "candidates",
            json!({
                "type": "array",
                "items": candidate(),
                "minItems": 1,
                "maxItems": MAX_CANDIDATES,
                "description": "Each tried alone on the base."
            }),
        ),
        ("prefer", {
            let mut prefer = string_enum(
                &["all", "first_closed"],
                "first_closed: stop at the first candidate that closes.",
            );
            prefer["default"] = json!("all");
            prefer
        }),
        (
            "timeout_ms",
            json!({
                "type": "integer", "minimum": 1,
                "description": "One deadline for all candidates."
            }),
        ),
    ];
    let description = format!(
        "Try up to 16 edits of a file at once, each checked by Lean in a hidden copy (never on \
         disk), to pick a proof before editing. Per candidate a verdict: closed (Lean confirmed \
         no error, goal or sorry; with a patch to apply), progressed, failed (see reason), \
         timeout or skipped; the goals left, up to {MAX_DIAGNOSTICS} diagnostics and a gate \
         (new errors elsewhere, sorry counts, statement_changed: a declaration or command of \
         the file added, removed, renamed or restated, an axiom added; never closed then unless \
         allow_statement_change). base_mismatch when the file is not that text."
    );
    LeanTool::concurrent(
        TRY_EDIT,
        &description,
        &properties,
        &["path", "base_sha256", "candidates"],
        read_only(),
    )
}

/// Runs the tool (see the contract).
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let expected = call.args.text("base_sha256")?.to_ascii_lowercase();
    // The schema bounds the length (its subset has no `pattern`); the digits are checked here.
    if !expected.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HostError::invalid_input(
            "argument /base_sha256 must be 64 hex digits, the sha256 of the file's text",
        )
        .with_path("/base_sha256"));
    }
    let prefer = match call
        .args
        .choice("prefer", &["all", "first_closed"], Some("all"))?
    {
        "first_closed" => Prefer::FirstClosed,
        _ => Prefer::All,
    };
    let lean_timeout = state.options.lean_timeout;
    let timeout = match call.args.0.get("timeout_ms") {
        Some(_) => lean_timeout.min(std::time::Duration::from_millis(
            call.args.natural("timeout_ms", MAX_TIMEOUT_MS)?,
        )),
        None => lean_timeout,
    };
    let runtime = call.runtime(&state.registry).await?;
    let file = call.file()?;
    let path = call.path_argument();
    let (pin, synced) = call.document(&runtime).await?;
    let same = |text_sha256: &str| match text_sha256 == expected {
        true => Ok(()),
        false => Err(HostError::base_mismatch(path, &expected, text_sha256)),
    };
    same(&synced.document.text_sha256())?;
    let candidates = candidates(call, &synced.document)?;
    let caller = call.caller();
    let trial = Trial {
        runtime: &runtime,
        real: &pin,
        file: &file,
        path,
        verdicts: &state.verdicts,
        caller: &caller,
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let base = trial.base(synced.document).await?;
    same(&base.text_sha256())?;
    let results = trial.run(&base, &candidates, prefer, deadline).await?;
    // Another writer may have changed the file while the candidates ran.
    let now = tokio::fs::read(&file).await.map_err(|e| {
        HostError::invalid_params(format!("cannot read {} again: {e}", file.display()))
    })?;
    same(&sha256_hex(&now))?;
    Ok(json!({
        "path": path,
        "version": base.version,
        "base_sha256": expected,
        "candidates": results,
        "receipt": receipt::now(runtime.documents(), &base, None).to_json(),
    }))
}

/// The candidates, applied to the base (see the contract).
fn candidates(call: &LeanCall<'_>, base: &Document) -> Result<Vec<Applied>, HostError> {
    let given = call
        .args
        .0
        .get("candidates")
        .and_then(Value::as_array)
        .ok_or_else(|| HostError::invalid_input("argument `candidates` is required"))?;
    given
        .iter()
        .enumerate()
        .map(|(n, candidate)| one(call, base, n, candidate))
        .collect()
}

fn one(
    call: &LeanCall<'_>,
    base: &Document,
    n: usize,
    candidate: &Value,
) -> Result<Applied, HostError> {
    let at = |pointer: &str| candidate.pointer(pointer).and_then(Position::from_json);
    let text = |name: &str| candidate.get(name).and_then(Value::as_str);
    let allowed = candidate
        .get(ALLOW)
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let members = candidate
        .as_object()
        .map_or(0, |o| o.keys().filter(|k| *k != ALLOW).count());
    if members != 2 {
        return Err(not_a_candidate(n));
    }
    let (from, to, text) = match (at("/range/start"), at("/range/end"), text("text")) {
        (Some(from), Some(to), Some(text)) => {
            let inside = |at| call.inside(base, at).map_err(|e| named(e, n));
            let (from, to) = (inside(from)?, inside(to)?);
            if to < from {
                return Err(refused(
                    n,
                    "rangeReversed",
                    "its range ends before it starts".into(),
                ));
            }
            (from, to, text)
        }
        _ => match (text("declaration"), text("body")) {
            (Some(name), Some(body)) => {
                let named = declaration_named(&base.text, name).map_err(|why| {
                    let (reason, message) = match why {
                        NotFound::Missing => (
                            "declarationNotFound",
                            format!("no declaration of the file is named {name:?}"),
                        ),
                        NotFound::Ambiguous(names) => (
                            "declarationAmbiguous",
                            format!(
                                "{name:?} names several declarations ({}); give the full name",
                                names.join(", ")
                            ),
                        ),
                        NotFound::NoBody(full) => (
                            "declarationWithoutBody",
                            format!("{full} has no body (:=, where, |) to replace"),
                        ),
                    };
                    refused(n, reason, message)
                })?;
                (named.body.0, named.body.1, body)
            }
            _ => return Err(not_a_candidate(n)),
        },
    };
    let applied = apply(&base.text, from, to, text);
    // Where the candidate's text lies in the result, and where the result's header ends.
    let start = offset_of(&applied.text, from);
    refuse_after_exit(&applied.text[..start]).map_err(|e| for_candidate(e, n))?;
    let header = header_end(&applied.text).saturating_sub(start);
    if let Some(terminal) = terminal_commands(text, header).first() {
        let at = terminal.at;
        let error = HostError::terminal_command(terminal.command, at.line, at.character);
        return Err(for_candidate(error, n));
    }
    Ok(applied.allowing_statement_change(allowed))
}

fn not_a_candidate(n: usize) -> HostError {
    HostError::invalid_input(format!(
        "candidate {} must be {{range, text}} or {{declaration, body}}, with {ALLOW} or not",
        n + 1
    ))
    .with_path(&format!("/candidates/{n}"))
}

fn refused(n: usize, reason: &'static str, why: String) -> HostError {
    HostError::invalid_params(format!("candidate {} was refused: {why}", n + 1))
        .with_data(json!({"reason": reason, "candidate": n, "path": format!("/candidates/{n}")}))
}

/// `error` about candidate `n`, saying so.
fn named(mut error: HostError, n: usize) -> HostError {
    error.message = format!("candidate {}: {}", n + 1, error.message);
    error
}
