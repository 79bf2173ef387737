//! The schema validator: arguments checked against the Lean host's real tool schemas, as
//! `tools/call` checks them before dispatch.
//!
//! Input: one byte choosing the tool, then JSON text for its arguments. Checked: validation
//! never panics, gives the same answer twice, and a violation's JSON Pointer leads into the
//! arguments (its parent exists: the offending member, or the object missing it).

#![no_main]

use std::sync::LazyLock;

use lean_beam_mcp::fuzzing::check_arguments;
use lean_beam_mcp::lean::tools::catalog;
use lean_beam_mcp::mcp::{Catalog, ToolSpec};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

static TOOLS: LazyLock<(Vec<ToolSpec>, Catalog)> = LazyLock::new(|| {
    let specs = catalog();
    let compiled = Catalog::new(specs.clone()).expect("the Lean catalog compiles");
    (specs, compiled)
});

/// The pointer's parent, decoded into path segments.
fn parent(pointer: &str) -> String {
    match pointer.rfind('/') {
        Some(at) => pointer[..at].to_string(),
        None => String::new(),
    }
}

fuzz_target!(|data: &[u8]| {
    let [choice, text @ ..] = data else {
        return;
    };
    let (specs, compiled) = &*TOOLS;
    let tool = &specs[usize::from(*choice) % specs.len()].name;
    let Ok(arguments) = serde_json::from_slice::<Value>(text) else {
        return;
    };
    let verdict = check_arguments(compiled, tool, &arguments).expect("a listed tool");
    assert_eq!(
        check_arguments(compiled, tool, &arguments),
        Some(verdict.clone())
    );
    if let Err(violation) = verdict {
        assert!(
            violation.path.is_empty() || violation.path.starts_with('/'),
            "{violation:?}"
        );
        assert!(
            arguments.pointer(&parent(&violation.path)).is_some(),
            "{tool}: {violation:?} does not lead into {arguments}"
        );
        assert!(!violation.message.is_empty());
    }
});
