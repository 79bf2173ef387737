//! The watchdog's reference index (README "The reference index"): keyed by the module of a
//! document's real path, so a link to a file reports as that file's module; a lower version is
//! ignored, an equal or higher one replaces; a close erases the module's entry whoever reported
//! it; modules no worker reported answer from the `.ilean` stand-in.

mod support;

use serde_json::{Value, json};
use support::{Client, Opts};

const BASIC: &str = "Fixture/Basic.lean";
const LINK: &str = ".lake/beam/twins/1-1/Fixture/Basic.lean";
/// The real text up to line 12, then a probe where `structure Point where` was.
const PROBE: &str = "theorem probe_only : True := trivial\n";

/// A client with `Basic.lean` open at `real` and its link (the text up to line 12, then
/// [`PROBE`]) open at `link`, both finished.
fn with_link(opts: Opts, real: i64, link: i64) -> (Client, String, String) {
    let mut c = Client::ready(opts);
    let basic = c.project.uri(BASIC);
    let text = c.project.read(BASIC);
    c.open_text(&basic, &text, real, None);
    c.sync(&basic, real);
    let path = c.project.root.join(LINK);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(c.project.root.join(BASIC), &path).unwrap();
    let twin = c.project.uri(LINK);
    let prefix: String = text.split_inclusive('\n').take(12).collect();
    c.open_text(&twin, &format!("{prefix}{PROBE}"), link, None);
    c.sync(&twin, link);
    (c, basic, twin)
}

fn symbols(c: &mut Client, query: &str) -> Vec<Value> {
    let found = c.call("workspace/symbol", json!({"query": query}));
    found.as_array().unwrap().clone()
}

fn references_of_double(c: &mut Client, uri: &str) -> Vec<Value> {
    let at = json!({"textDocument": {"uri": uri}, "position": {"line": 7, "character": 6},
                    "context": {"includeDeclaration": true}});
    c.call("textDocument/references", at)
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_link_at_a_higher_version_answers_for_its_target_under_the_targets_uri() {
    let (mut c, basic, twin) = with_link(Opts::default(), 1, 2);
    let probe = symbols(&mut c, "probe_only");
    assert_eq!(probe.len(), 1, "{probe:?}");
    assert_eq!(probe[0]["location"]["uri"], basic, "the module's own file");
    // `double`'s uses after line 12 are not in the link's text, which the index now holds.
    let in_basic = |refs: &[Value]| refs.iter().filter(|l| l["uri"] == basic).count();
    assert_eq!(in_basic(&references_of_double(&mut c, &basic)), 1);
    // Closing the link erases the module's entry: the disk answers again.
    c.close(&twin);
    assert_eq!(symbols(&mut c, "probe_only"), Vec::<Value>::new());
    assert_eq!(in_basic(&references_of_double(&mut c, &basic)), 4);
}

#[test]
fn a_link_at_a_lower_version_is_ignored_but_its_close_erases_the_entry() {
    let opts = Opts::default().env("FAKE_LEAN_ILEANS", "built");
    let (mut c, basic, twin) = with_link(opts, 5, 1);
    assert_eq!(symbols(&mut c, "probe_only"), Vec::<Value>::new());
    let point = symbols(&mut c, "Point.sum");
    assert_eq!(point[0]["location"]["uri"], basic, "{point:?}");
    c.close(&twin);
    // Never built: no `.ilean` answers for the module once its worker's entry is gone.
    assert_eq!(symbols(&mut c, "Point.sum"), Vec::<Value>::new());
    // A new version of the real document reports it again.
    let text = c.project.read(BASIC);
    c.change_full(&basic, 6, &text);
    c.sync(&basic, 6);
    let point = symbols(&mut c, "Point.sum");
    assert_eq!(point[0]["location"]["uri"], basic, "{point:?}");
}

#[test]
fn the_fast_path_answers_from_the_text_the_index_holds() {
    let opts = Opts::default().env("FAKE_LEAN_DEFINITION", "locations");
    let (mut c, basic, _twin) = with_link(opts, 1, 2);
    // `Point` in `structure Point where` (line 12): the index holds the link's text there.
    let found = c.call("textDocument/definition", Client::at(&basic, 12, 11));
    assert_eq!(
        found,
        json!([{"uri": basic, "range": {"start": {"line": 12, "character": 8},
                                        "end": {"line": 12, "character": 18}}}])
    );
}

#[test]
fn an_older_watchdog_names_a_closed_link_by_its_path_then() {
    let opts = Opts::default().env("FAKE_LEAN_REFS", "path");
    let (mut c, _basic, twin) = with_link(opts, 1, 2);
    // The link is gone before its close is read: its path names no module any more, and the
    // entry it reported stays.
    std::fs::remove_file(c.project.root.join(LINK)).unwrap();
    c.close(&twin);
    assert_eq!(symbols(&mut c, "probe_only").len(), 1);
}
