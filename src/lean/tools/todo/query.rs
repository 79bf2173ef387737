//! What one `lean_todo` call asks for: the range, the kinds and the suggestion level, read from
//! its (schema-checked) arguments.
//!
//! Contract:
//! 1. Both ends of the range must lie inside the document (as for every position tool) and the
//!    start must not come after the end; otherwise `invalidParams`.
//! 2. `kinds` absent or `[]` means every kind; repeated kinds count once.
//! 3. `suggest` is `basic` unless the call says `none`.

use serde_json::{Value, json};

use super::item::Kind;
use super::range::Range;
use crate::lean::error::HostError;
use crate::lean::session::mirror::Document;
use crate::lean::tools::call::LeanCall;

/// One call's question.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The range asked about.
    pub range: Range,
    kinds: Vec<Kind>,
    /// Whether `suggest` is `basic`.
    pub suggest: bool,
}

impl Query {
    /// Reads the call's question, checking its range against `document`.
    pub fn read(call: &LeanCall<'_>, document: &Document) -> Result<Query, HostError> {
        let args = call.args;
        let start = call.inside(document, args.position("start_line", "start_character")?)?;
        let end = call.inside(document, args.position("end_line", "end_character")?)?;
        if start > end {
            return Err(HostError::invalid_params(format!(
                "the range starts at {}:{} after it ends at {}:{}; pass the start first (an \
                 empty range asks about one point)",
                start.line, start.character, end.line, end.character
            ))
            .with_data(json!({"start": start.to_json(), "end": end.to_json()})));
        }
        Ok(Query {
            range: Range::new(start, end),
            kinds: kinds(args.0.get("kinds")),
            suggest: args.choice("suggest", &["none", "basic"], Some("basic"))? == "basic",
        })
    }

    /// Whether the call wants items of `kind`.
    pub fn wants(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }

    /// Whether any item it wants comes from Lean's diagnostics (so they must be final first).
    pub fn needs_diagnostics(&self) -> bool {
        [Kind::Diagnostic, Kind::CodeAction, Kind::IncompleteProof]
            .into_iter()
            .any(|kind| self.wants(kind))
    }
}

/// The kinds `kinds` names; every kind when it names none.
fn kinds(given: Option<&Value>) -> Vec<Kind> {
    let named: Vec<Kind> = given
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .filter_map(Kind::named)
                .collect()
        })
        .unwrap_or_default();
    if named.is_empty() {
        return Kind::ALL.to_vec();
    }
    Kind::ALL
        .into_iter()
        .filter(|kind| named.contains(kind))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_kinds_means_every_kind() {
        assert_eq!(kinds(None), Kind::ALL);
        assert_eq!(kinds(Some(&json!([]))), Kind::ALL);
        assert_eq!(
            kinds(Some(&json!(["incomplete_proof", "sorry", "sorry"]))),
            [Kind::Sorry, Kind::IncompleteProof]
        );
    }
}
