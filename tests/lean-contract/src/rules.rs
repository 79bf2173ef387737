//! The rules: what Lean's source says about the messages a `lake serve` sends, one entry each,
//! with the file (and function) of `leanprover/lean4` it was read from. The checker reports a
//! violation by naming one of these; the fake's README ("Lean contract") lists the same table.

/// One rule of the contract.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// A stable name, as the fake's trace and a failing test print it.
    pub id: &'static str,
    /// What Lean does, in one sentence.
    pub statement: &'static str,
    /// Where in Lean's source it was read.
    pub source: &'static str,
}

pub const RANGE_CUT: Rule = Rule {
    id: "diagnostic.range-cut",
    statement: "a diagnostic's `range` starts where its `fullRange` starts; when `fullRange` \
                spans several lines, `range` ends at the start of the next line \
                (`{line: start.line+1, character: 0}`) unless the message keeps its full range \
                (`keepFullRange`: parser errors), when it equals `fullRange`; on one line it \
                equals `fullRange`; without `fullRange` (older Leans) `range` is cut the same \
                way (Lean's hard-coded 0:0–1:0 literals excepted, see `position.in-text`)",
    source: "src/Lean/Widget/InteractiveDiagnostic.lean (msgToInteractiveDiagnostic); \
             src/Lean/Parser/Module.lean (mkErrorMessage: keepFullRange)",
};

pub const HEADER_ERROR: Rule = Rule {
    id: "diagnostic.header-error",
    statement: "an error from 0:0 over the whole text (a header error) has `range` 0:0–1:0 when \
                the text has several lines, and `range` = `fullRange` (0:0–0:n) on one line: it \
                is logged without `keepFullRange` and cut like every multi-line message",
    source: "src/Lean/Language/Basic.lean (diagnosticsOfHeaderError); \
             src/Lean/Widget/InteractiveDiagnostic.lean (msgToInteractiveDiagnostic)",
};

pub const SEVERITY: Rule = Rule {
    id: "diagnostic.severity",
    statement: "every diagnostic has `severity` 1, 2 or 3: Lean's messages have three severities, \
                Lake's setup lines and the stale-import notice are information, and Lake's \
                cross-file reports map the same three (never 4, hint)",
    source: "src/Lean/Widget/InteractiveDiagnostic.lean (msgToInteractiveDiagnostic); \
             src/Lean/Server/FileWorker.lean (setupImports, handleStaleDependency); \
             src/Lean/Server/FileWorker/SetupFile.lean (serialMessageToDiagnostic)",
};

pub const IN_TEXT: Rule = Rule {
    id: "position.in-text",
    statement: "every position of a diagnostic of a versioned publish, of a `$/lean/fileProgress` \
                range, and of a result located in the request's own document (hover, \
                documentHighlight, documentSymbol, foldingRange, inlayHint, plainTermGoal, a \
                LocationLink's origin) lies inside that version's text: line at most the last, \
                UTF-16 column at most the line's length (the hard-coded 0:0–1:0 `range` of a \
                setup line, a stale-import notice or a worker's start failure excepted, and the \
                whole stale-import notice: it is sticky, repeated with every later version with \
                the `fullRange` of the text it came with)",
    source: "src/Lean/Server/Utils.lean (Syntax.Range.toLspRange, mkFileProgressAtPosNotification); \
             src/Lean/Data/Lsp/Utf16.lean (FileMap.utf8PosToLspPos, leanPosToLspPos); \
             src/Lean/Server/FileWorker.lean (setupImports, handleStaleDependency, \
             initAndRunWorker: writeErrorDiag)",
};

pub const VERSION: Rule = Rule {
    id: "version.sent",
    statement: "`textDocument/publishDiagnostics` and `$/lean/fileProgress` name a version the \
                client sent for that URI (a `didOpen`, or a `didChange` with changes); only \
                Lake's cross-file reports (every diagnostic `source: \"Lake\"`) carry none",
    source: "src/Lean/Server/Utils.lean (mkPublishDiagnosticsNotification, \
             mkFileProgressNotification); src/Lean/Server/Watchdog.lean (handleDidChange: empty \
             changes are dropped); src/Lean/Server/FileWorker/SetupFile.lean \
             (serialMessagesToCrossFileDiagnostics)",
};

pub const INCREMENTAL: Rule = Rule {
    id: "publish.incremental",
    statement: "`isIncremental` appears only when the client declared \
                `capabilities.lean.incrementalDiagnosticSupport`, and `isIncremental: true` for a \
                version only after an `isIncremental: false` publish of that version",
    source: "src/Lean/Server/FileWorker/Utils.lean (EditableDocumentCore.publishDiagnostics, \
             DiagnosticsState.isIncremental := false)",
};

pub const PROGRESS: Rule = Rule {
    id: "progress.shape",
    statement: "a `$/lean/fileProgress`'s `processing` is `[]` or one entry whose `kind` is 1 \
                (processing) or 2 (fatal error) and whose `range` runs from a position to the end \
                of that version's text; a fatal entry starts at 0:0",
    source: "src/Lean/Data/Lsp/Extra.lean (LeanFileProgressKind); src/Lean/Server/Utils.lean \
             (mkFileProgressAtPosNotification, mkFileProgressDoneNotification); \
             src/Lean/Server/FileWorker.lean (reportSnapshots); src/Lean/Server/Watchdog.lean \
             (startFileWorker, mainLoop: a crashed worker)",
};

pub const WAIT_VERSION: Rule = Rule {
    id: "wait.version",
    statement: "`textDocument/waitForDiagnostics` for version v is answered only once the client \
                has sent a version of that URI at or above v: the worker polls until it has one",
    source: "src/Lean/Server/FileWorker/RequestHandling.lean (handleWaitForDiagnostics)",
};

pub const WAIT_AFTER_PROGRESS: Rule = Rule {
    id: "wait.after-final-progress",
    statement: "a `textDocument/waitForDiagnostics` result for the newest version v of a document \
                comes after v's final `$/lean/fileProgress` (`processing: []`, or a fatal entry) \
                and no other progress of v in between: the worker answers when v's reporter task \
                is done, whose last act is that progress, through one ordered channel",
    source: "src/Lean/Server/FileWorker/RequestHandling.lean (handleWaitForDiagnostics: waits on \
             doc.reporter); src/Lean/Server/FileWorker.lean (reportSnapshots, \
             mkLspOutputChannel)",
};

pub const RESPONSE_ID: Rule = Rule {
    id: "response.id",
    statement: "a response answers the id of a request the client sent, and at most once",
    source: "src/Lean/Server/Watchdog.lean (forwardMessages: only requests still pending are \
             answered; errorPendingRequests)",
};

pub const ERROR_CODE: Rule = Rule {
    id: "response.error-code",
    statement: "an error response's code is one of Lean's `ErrorCode`s: -32700, -32600, -32601, \
                -32602, -32603, -32002, -32001, -32801, -32800, -32900, -32901, -32902",
    source: "src/Lean/Data/JsonRpc.lean (ErrorCode, ToJson ErrorCode)",
};

pub const HANDSHAKE: Rule = Rule {
    id: "handshake.order",
    statement: "the server sends nothing before `initialize`, nothing but its answer before the \
                client's `initialized`, and then first the watcher registration \
                (`client/registerCapability`, id `register_lean_watcher`)",
    source: "src/Lean/Server/Watchdog.lean (initAndRunWatchdog, initAndRunWatchdogAux)",
};

pub const SERVER_REQUEST_ID: Rule = Rule {
    id: "server-request.id",
    statement: "a server→client request carries the string id `register_lean_watcher` (once) or \
                a number the watchdog hands out in order from 0, each once",
    source: "src/Lean/Server/Watchdog.lean (ServerRequestData.trackOutboundRequest, \
             initAndRunWatchdogAux)",
};

/// Every rule, in the order the README lists them.
pub const RULES: [&Rule; 13] = [
    &RANGE_CUT,
    &HEADER_ERROR,
    &SEVERITY,
    &IN_TEXT,
    &VERSION,
    &INCREMENTAL,
    &PROGRESS,
    &WAIT_VERSION,
    &WAIT_AFTER_PROGRESS,
    &RESPONSE_ID,
    &ERROR_CODE,
    &HANDSHAKE,
    &SERVER_REQUEST_ID,
];

/// The rule named `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.id == id)
}
