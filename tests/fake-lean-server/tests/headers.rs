//! Header errors in the shapes Lean publishes them (README "Header errors"): Lake's set-up
//! failures as `diagnosticsOfHeaderError` reports them, cut by `msgToInteractiveDiagnostic`
//! (`range` 0:0–1:0, `fullRange` to the end of the file), and Lean's own failure to import a
//! module (`Elab.processHeader`: zero-width at the header's first token), each with fatal
//! progress; mid Lake building a workspace module's imports from its file on disk.

mod support;

use serde_json::{Value, json};
use support::{Client, Opts, Project};

fn errors(msgs: &[Value]) -> Vec<Value> {
    Client::last_diagnostics(msgs)
        .into_iter()
        .filter(|d| d["severity"] == 1)
        .collect()
}

fn fatal(msgs: &[Value]) -> bool {
    msgs.iter()
        .any(|m| m["params"]["processing"][0]["kind"] == 2)
}

fn range(from: (u32, u32), to: (u32, u32)) -> Value {
    json!({"start": Client::pos(from.0, from.1), "end": Client::pos(to.0, to.1)})
}

/// The one header error of `text` opened as `rel`, checked to be fatal.
fn header_error(c: &mut Client, rel: &str, text: &str) -> Value {
    let uri = c.project.uri(rel);
    c.open_text(&uri, text, 1, None);
    let msgs = c.sync(&uri, 1);
    let errors = errors(&msgs);
    assert_eq!(errors.len(), 1, "{msgs:?}");
    assert!(fatal(&msgs), "fatal progress: {msgs:?}");
    errors[0].clone()
}

#[test]
fn a_failed_setup_is_one_error_cut_at_the_first_line_with_the_file_in_full_range() {
    let mut c = Client::ready(Opts::default());
    let text = "-- fake: setup-fail \"no such package\"\nimport Missing\n\ndef one : Nat := 1\n";
    let d = header_error(&mut c, "Fixture/Setup.lean", text);
    assert_eq!(d["range"], range((0, 0), (1, 0)));
    assert_eq!(d["fullRange"], range((0, 0), (4, 0)));
    assert_eq!(d["source"], "Lean 4");
    // A one-line file: the message ends on its first line, so nothing is cut.
    let one = "import Missing -- fake: setup-fail \"no\"";
    let d = header_error(&mut c, "Fixture/One.lean", one);
    assert_eq!(d["range"], range((0, 0), (0, 39)));
    assert_eq!(d["fullRange"], d["range"]);
}

#[test]
fn a_twin_mid_lake_cannot_set_up_and_imports_that_must_be_rebuilt_have_the_same_shape() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_TWIN", "fail"));
    let text = c.project.read("Fixture/Basic.lean");
    let lines = text.lines().count() as u32;
    let d = header_error(&mut c, "Fixture/Basic.beam-twin.lean", &text);
    assert_eq!(d["range"], range((0, 0), (1, 0)));
    assert_eq!(d["fullRange"], range((0, 0), (lines, 0)));
    let stale = "import Fixture.Basic\n-- fake: stale-imports\ndef a := 1\n";
    c.project.write("Fixture/Stale.lean", stale);
    let uri = c.project.uri("Fixture/Stale.lean");
    c.open_text(&uri, stale, 1, Some("never"));
    let d = &errors(&c.sync(&uri, 1))[0];
    assert!(d["message"].as_str().unwrap().contains("must be rebuilt"));
    assert_eq!(d["range"], range((0, 0), (1, 0)));
    assert_eq!(d["fullRange"], range((0, 0), (3, 0)));
}

#[test]
fn an_import_that_does_not_build_under_new_lake_has_the_same_shape() {
    let project = Project::new();
    project.write(
        "Fixture/Broken.lean",
        "def broken : Nat := oops -- fake: error \"unknown identifier 'oops'\" on \"oops\"\n",
    );
    let mut c = Client::start(project, Opts::default().env("FAKE_LAKE_SETUP_BUILD", "new"));
    c.handshake(json!({}));
    let text = "import Fixture.Broken\n\ntheorem fine : 1 = 1 := by\n  rfl\n";
    let d = header_error(&mut c, "Fixture/UsesBroken.lean", text);
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .starts_with("Failed to build module dependencies.\n")
    );
    assert_eq!(d["range"], range((0, 0), (1, 0)));
    assert_eq!(d["fullRange"], range((0, 0), (4, 0)));
}

#[test]
fn a_misspelt_import_is_leans_own_error_at_the_first_header_token() {
    let mut c = Client::ready(Opts::default());
    // A module of a prefix the project has: its `.olean` does not exist.
    let text =
        "/- A file. -/\n-- about it\nimport Fixture.Basik\n\ntheorem t : True := by\n  trivial\n";
    let d = header_error(&mut c, "Fixture/Misspelt.lean", text);
    assert_eq!(d["range"], range((2, 0), (2, 0)), "{d}");
    assert_eq!(d["fullRange"], d["range"]);
    assert_eq!(d["source"], "Lean 4");
    assert_eq!(
        d["message"],
        "object file './.lake/build/lib/lean/Fixture/Basik.olean' of module Fixture.Basik does not exist"
    );
    // No Lake output at all (new Lake skips imports it does not know), no answers.
    let uri = c.project.uri("Fixture/Misspelt.lean");
    let goal = c.call("$/lean/plainGoal", Client::at(&uri, 5, 2));
    assert_eq!(goal, Value::Null);
    // A prefix no search path entry has.
    let d = header_error(
        &mut c,
        "Fixture/Prefix.lean",
        "import Fixtur.Basic\n\ndef a := 1\n",
    );
    assert_eq!(d["range"], range((0, 0), (0, 0)));
    let message = d["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "unknown module prefix 'Fixtur'\n\nNo directory 'Fixtur' or file 'Fixtur.olean' in \
             the search path entries:\n./.lake/build/lib/lean\n/"
        ),
        "{message}"
    );
    // Modules that exist: the toolchain's, the project's, and built ones.
    let fine = "import Lean.Elab.Command\nimport Fixture.Basic\n\ndef a := 1\n";
    let uri = c.project.uri("Fixture/Fine.lean");
    c.open_text(&uri, fine, 1, None);
    let msgs = c.sync(&uri, 1);
    assert!(errors(&msgs).is_empty() && !fatal(&msgs), "{msgs:?}");
    // An `import` after a command is no part of the header.
    let uri = c.project.uri("Fixture/Late.lean");
    c.open_text(&uri, "def a := 1\nimport Nope.Never\n", 1, None);
    assert!(!fatal(&c.sync(&uri, 1)));
    c.project
        .write(".lake/build/lib/lean/Extra/Built.olean", "FAKEOLEAN");
    let uri = c.project.uri("Fixture/Built.lean");
    c.open_text(&uri, "import Extra.Built\n", 1, None);
    assert!(errors(&c.sync(&uri, 1)).is_empty());
}

#[test]
fn older_lean_says_unknown_package() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_IMPORT_TEXT", "package"));
    let d = header_error(&mut c, "Fixture/Prefix.lean", "import Fixtur.Basic\n");
    assert_eq!(d["message"], "unknown package 'Fixtur'");
    // The object-file text is the same in every era.
    let d = header_error(&mut c, "Fixture/Misspelt.lean", "import Fixture.Basik\n");
    assert_eq!(
        d["message"],
        "object file './.lake/build/lib/lean/Fixture/Basik.olean' of module Fixture.Basik does not exist"
    );
}

/// A link to `Fixture/Uses.lean` (which imports `Fixture.Basic` only) whose text adds
/// `import Fixture.TypeError`, opened under the given Lake era, with that module built before
/// (its `.olean` in the build directory) or not.
fn twin_adding_an_import(env: &[(&str, &str)], built: bool) -> Vec<Value> {
    let mut opts = Opts::default();
    for (k, v) in env {
        opts = opts.env(k, v);
    }
    let mut c = Client::ready(opts);
    if built {
        let olean = ".lake/build/lib/lean/Fixture/TypeError.olean";
        c.project.write(olean, "FAKEOLEAN");
    }
    let link = c.project.root.join(".lake/beam/twins/1/Fixture/Uses.lean");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(c.project.root.join("Fixture/Uses.lean"), &link).unwrap();
    let real = c.project.read("Fixture/Uses.lean");
    let text = real.replacen(
        "import Fixture.Basic\n",
        "import Fixture.Basic\nimport Fixture.TypeError\n",
        1,
    );
    let uri = format!("file://{}", link.display());
    c.open_text(&uri, &text, 1, None);
    c.sync(&uri, 1)
}

#[test]
fn mid_lake_builds_a_modules_imports_from_its_file_on_disk() {
    let mid = [("FAKE_LAKE_SETUP_IMPORTS", "disk")];
    let msgs = twin_adding_an_import(&mid, false);
    let errors = errors(&msgs);
    assert_eq!(errors.len(), 1, "{msgs:?}");
    assert!(fatal(&msgs));
    assert_eq!(errors[0]["range"], range((0, 0), (0, 0)));
    assert_eq!(
        errors[0]["message"],
        "object file './.lake/build/lib/lean/Fixture/TypeError.olean' of module \
         Fixture.TypeError does not exist"
    );
    // Lean finds an import built before; new Lake builds the header it is sent.
    assert!(!fatal(&twin_adding_an_import(&mid, true)));
    assert!(!fatal(&twin_adding_an_import(&[], false)));
}

#[test]
fn every_message_of_several_lines_is_cut() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    for d in Client::last_diagnostics(&msgs) {
        let (start, end, full) = (
            &d["range"]["start"],
            &d["range"]["end"],
            &d["fullRange"]["end"],
        );
        if full["line"] == start["line"] {
            assert_eq!(d["range"], d["fullRange"], "{d}");
        } else {
            assert_eq!(end["line"], start["line"].as_u64().unwrap() + 1, "{d}");
            assert_eq!(end["character"], 0, "{d}");
        }
    }
}
