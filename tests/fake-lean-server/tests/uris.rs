//! URIs as Lean builds them (`System.Uri.pathToUri`, newer and older eras, `FAKE_LEAN_URI`) and
//! a saved file's importers found by that exact string (reference Part 3, "URIs").

mod support;

use serde_json::{Value, json};
use support::{Client, Opts, Project};

const STALE: &str = "Imports are out of date and should be rebuilt; use the \"Restart File\" command in your editor.";

/// Whether a publish among `msgs` carries the stale-imports notice.
fn told_stale(msgs: &[Value]) -> bool {
    msgs.iter().any(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["message"] == STALE))
    })
}

/// A server for a project under `<tmp>/My Proofs+(v2)/Ü/`, with `Fixture/Uses.lean` open
/// (it imports `Fixture.Basic`), under the client's URI `uses`; the root's path.
fn importer_open(era: Option<&str>, uses: impl Fn(&str) -> String) -> (Client, String, String) {
    let project = Project::under("My Proofs+(v2)/Ü");
    let root = project.root.display().to_string();
    let opts = match era {
        Some(era) => Opts::default().env("FAKE_LEAN_URI", era),
        None => Opts::default(),
    };
    let mut c = Client::start(project, opts);
    c.handshake(json!({}));
    let uri = uses(&root);
    let text = c.project.read("Fixture/Uses.lean");
    c.open_text(&uri, &text, 1, None);
    c.sync(&uri, 1);
    (c, root, uri)
}

/// `root` with its `My Proofs+(v2)/Ü` part as each form writes it.
fn forms(root: &str) -> [(&'static str, String); 3] {
    let (head, tail) = root.split_once("My Proofs+(v2)/Ü").unwrap();
    let form = |escaped: &str| format!("file://{head}{escaped}{tail}");
    [
        ("new", form("My%20Proofs%2B%28v2%29/%C3%9C")),
        ("old", form("My Proofs%2b%28v2%29/%c3%9c")),
        ("url", form("My%20Proofs+(v2)/%C3%9C")),
    ]
}

#[test]
fn a_save_reaches_importers_only_under_the_uri_lean_built() {
    for (era, default) in [(Some("new"), false), (None, true), (Some("old"), false)] {
        let lean = era.unwrap_or("new");
        // The importer is open under the URL library's form: Lean keys its worker by that, but
        // its import closure by its own URIs.
        let (mut c, root, uses) = importer_open(era, |root| {
            format!("{}/Fixture/Uses.lean", forms(root)[2].1)
        });
        for (name, base) in forms(&root) {
            let basic = format!("{base}/Fixture/Basic.lean");
            c.notify(
                "textDocument/didSave",
                json!({"textDocument": {"uri": basic}}),
            );
            let told = told_stale(&c.sync(&uses, 1));
            assert_eq!(
                told,
                name == lean,
                "didSave under the {name} form, Lean's {lean} era (default: {default})"
            );
        }
        c.finish();
    }
}

#[test]
fn a_watched_change_reaches_importers_only_under_the_uri_lean_built() {
    for era in ["new", "old"] {
        let (mut c, root, uses) = importer_open(Some(era), |root| {
            format!("{}/Fixture/Uses.lean", forms(root)[0].1)
        });
        for (name, base) in forms(&root) {
            let basic = format!("{base}/Fixture/Basic.lean");
            c.notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": basic, "type": 2}]}),
            );
            let told = told_stale(&c.sync(&uses, 1));
            assert_eq!(
                told,
                name == era,
                "a change under the {name} form, {era} era"
            );
        }
        c.finish();
    }
}

#[test]
fn locations_lean_builds_are_in_its_own_form() {
    for (era, index) in [("new", 0), ("old", 1)] {
        let (mut c, root, uses) = importer_open(Some(era), |root| {
            format!("{}/Fixture/Uses.lean", forms(root)[2].1)
        });
        let lean = |relative: &str| format!("{}/{relative}", forms(&root)[index].1);
        // `double` in `def quadruple (n : Nat) : Nat := double (double n)`: another module.
        let found = c.call("textDocument/definition", Client::at(&uses, 8, 33));
        assert_eq!(
            found[0]["uri"],
            lean("Fixture/Basic.lean"),
            "{era}: {found}"
        );
        let mut params = Client::at(&uses, 8, 33);
        params["context"] = json!({"includeDeclaration": true});
        let refs = c.call("textDocument/references", params);
        let mut uris: Vec<&str> = refs
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["uri"].as_str().unwrap())
            .collect();
        uris.sort_unstable();
        uris.dedup();
        let mut expected = [lean("Fixture/Basic.lean"), lean("Fixture/Uses.lean")];
        expected.sort_unstable();
        assert_eq!(
            uris, expected,
            "{era}: the index names open files its own way"
        );
        // The worker names its own document by the client's URI.
        let links = c.call("textDocument/definition", Client::at(&uses, 8, 5));
        assert_eq!(links[0]["targetUri"], uses, "{era}: {links}");
        c.finish();
    }
}
