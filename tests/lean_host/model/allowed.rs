//! The one table of errors a call may get from a correct server, each with the condition under
//! which the program can have caused it. An error that matches no row, or whose condition does
//! not hold, is a violation: a correct server only fails a call for a reason the client gave it.
//! Adjust the table here; `check` evaluates the conditions.

use serde_json::Value;

/// When an error is the program's doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// The version the call relied on is older than the current one, and the error's data says
    /// both (`currentVersion` above `expectedVersion` or `handleVersion`).
    Superseded,
    /// A `lean_drop_workspace` of the call's workspace was sent after the handle's chain began
    /// and before this answer.
    DroppedSince,
    /// Another call consumed the handle (a linear run on it sent before this answer).
    ConsumedSince,
    /// A `lean_release` of the handle was sent before this answer.
    ReleasedSince,
    /// The program cancelled the call.
    Cancelled,
    /// A `lean_save` in the workspace was sent before this answer (its imports went stale).
    SavedBefore,
    /// The program wrote the file while the call ran (an edit's update sent after the call
    /// and before its answer).
    EditedDuring,
    /// A program call wrote a file of the same workspace while this call ran.
    WorkspaceEditedDuring,
    /// Always (the programs never change the Lake configuration, but the row is the server's
    /// documented answer when it changes under a call).
    Always,
    /// A refusal the text alone explains: allowed when the call alone on a fresh server with the
    /// same text gets the same error.
    LikeAlone,
}

/// One row: the error's `code`, and its `data.reason` or a part of its message when given.
pub struct Allowed {
    pub code: &'static str,
    pub reason: Option<&'static str>,
    pub message: Option<&'static str>,
    pub when: When,
}

const fn row(code: &'static str, reason: &'static str, when: When) -> Allowed {
    Allowed {
        code,
        reason: Some(reason),
        message: None,
        when,
    }
}

pub const ALLOWED: &[Allowed] = &[
    row(
        "contentModified",
        "documentVersionMismatch",
        When::Superseded,
    ),
    row("contentModified", "handleStale", When::Superseded),
    row("contentModified", "handleSessionEnded", When::DroppedSince),
    row("contentModified", "lakeConfigurationChanged", When::Always),
    // A drop admitted while the call waited for its workspace's Lean to start stops that start
    // (`workspace/registry.rs`, contract 4): the drop ends that Lean anyway.
    row("runtimeSetup", "workspaceDropped", When::DroppedSince),
    // Not in the brief's list, but documented (`checkpoint.rs`, contract 6) and the client's
    // doing: the file changed on disk while `lake build` compiled it.
    row(
        "contentModified",
        "sourceChangedDuringSave",
        When::EditedDuring,
    ),
    // The same for an import (`checkpoint.rs`, contract 5): Lake's `query --no-build` says the
    // module is out of date after a build that succeeded.
    row(
        "contentModified",
        "importChangedDuringSave",
        When::WorkspaceEditedDuring,
    ),
    row("invalidParams", "handleConsumed", When::ConsumedSince),
    row("invalidParams", "handleReleased", When::ReleasedSince),
    row("invalidParams", "handleUnknown", When::DroppedSince),
    Allowed {
        code: "requestCancelled",
        reason: None,
        message: None,
        when: When::Cancelled,
    },
    Allowed {
        code: "syncBarrierIncomplete",
        reason: None,
        message: None,
        when: When::SavedBefore,
    },
    // Documented (`checkpoint.rs`, contract 4): Lake builds the file on disk, so a text with
    // errors written during the build fails it before the save can see the file changed.
    Allowed {
        code: "saveBuildFailed",
        reason: None,
        message: None,
        when: When::EditedDuring,
    },
    // Refusals the text explains whatever the timing: a save of a text with errors, goals
    // where the text has none.
    Allowed {
        code: "invalidParams",
        reason: None,
        message: Some("cannot save artifacts for a document with errors"),
        when: When::LikeAlone,
    },
    Allowed {
        code: "invalidParams",
        reason: None,
        message: Some("Lean has no proof goals at"),
        when: When::LikeAlone,
    },
];

/// The row an error (a tool's structured error) matches.
pub fn find(error: &Value) -> Option<&'static Allowed> {
    ALLOWED.iter().find(|row| {
        error["code"] == row.code
            && row.reason.is_none_or(|r| error["data"]["reason"] == r)
            && row
                .message
                .is_none_or(|m| error["message"].as_str().is_some_and(|t| t.contains(m)))
    })
}
