//! The argument defaults the command line may change: `diagnostics_in_result` and
//! `diagnostic_scope` (`--diagnostics-in-result`, `--diagnostic-scope`), for clients that never
//! show the model log notifications.
//!
//! Contract: the listing advertises the defaults in force (each property's `default`), and a call
//! that leaves such an argument out is run as if it had given the default in force. Only tools
//! whose schema declares the argument are touched; without the flags the seed's defaults hold
//! (false, `errors`), and a call's arguments are passed on exactly as they came.

use serde_json::{Value, json};

use crate::lean::options::HostOptions;
use crate::mcp::ToolSpec;

/// The arguments concerned, with their defaults in force.
fn in_force(options: &HostOptions) -> [(&'static str, Value); 2] {
    [
        (
            "diagnostics_in_result",
            json!(options.diagnostics_in_result),
        ),
        ("diagnostic_scope", json!(options.diagnostic_scope)),
    ]
}

/// Writes the defaults in force into the schemas that declare the arguments.
pub fn advertise(specs: &mut [ToolSpec], options: &HostOptions) {
    for spec in specs {
        for (name, value) in in_force(options) {
            if let Some(property) = spec
                .input_schema
                .pointer_mut(&format!("/properties/{name}"))
            {
                property["default"] = value;
            }
        }
    }
}

/// Gives `arguments` the defaults in force that `spec`'s schema declares and they leave out.
pub fn fill(spec: &ToolSpec, arguments: &mut Value, options: &HostOptions) {
    // The seed's defaults are the tools' own: a call is then passed on exactly as it came.
    let seed = HostOptions::default();
    let seeds = options.diagnostics_in_result == seed.diagnostics_in_result
        && options.diagnostic_scope == seed.diagnostic_scope;
    let Some(arguments) = arguments.as_object_mut().filter(|_| !seeds) else {
        return;
    };
    for (name, value) in in_force(options) {
        let declared = spec
            .input_schema
            .pointer(&format!("/properties/{name}"))
            .is_some();
        if declared && !arguments.contains_key(name) {
            arguments.insert(name.to_owned(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_change_what_is_listed_and_what_an_omitted_argument_means() {
        let options = HostOptions {
            diagnostics_in_result: true,
            diagnostic_scope: "all",
            ..HostOptions::default()
        };
        let mut specs = crate::lean::tools::catalog();
        advertise(&mut specs, &options);
        let sync = specs.iter().find(|s| s.name == "lean_sync").unwrap();
        let properties = &sync.input_schema["properties"];
        assert_eq!(properties["diagnostics_in_result"]["default"], true);
        assert_eq!(properties["diagnostic_scope"]["default"], "all");
        let mut arguments = json!({"path": "A.lean", "diagnostic_scope": "errors"});
        fill(sync, &mut arguments, &options);
        assert_eq!(
            arguments,
            json!({"path": "A.lean", "diagnostic_scope": "errors", "diagnostics_in_result": true})
        );
        let hover = specs.iter().find(|s| s.name == "lean_hover").unwrap();
        let mut arguments = json!({"path": "A.lean"});
        fill(hover, &mut arguments, &options);
        assert_eq!(arguments, json!({"path": "A.lean"}));
    }

    #[test]
    fn without_the_flags_the_seed_defaults_hold() {
        let mut specs = crate::lean::tools::catalog();
        let schemas = |specs: &[ToolSpec]| -> Vec<Value> {
            specs.iter().map(|s| s.input_schema.clone()).collect()
        };
        let before = schemas(&specs);
        advertise(&mut specs, &HostOptions::default());
        assert_eq!(schemas(&specs), before);
        let sync = specs.iter().find(|s| s.name == "lean_sync").unwrap();
        let mut arguments = json!({"path": "A.lean"});
        fill(sync, &mut arguments, &HostOptions::default());
        assert_eq!(arguments, json!({"path": "A.lean"}), "passed on as it came");
    }
}
