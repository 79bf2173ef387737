//! Answers computed from the fixture's text: hover, definition in both forms, references,
//! symbols, signature help, goals before/after, term goals, derived diagnostics, code actions
//! and completion (README "Rules"; reference §1.7–1.8, §B, §D).

mod support;

use serde_json::{Value, json};
use support::{Client, Opts};

/// The position of the `n`th occurrence (0-based) of `needle` on `line` of a fixture file,
/// plus `delta` characters.
fn find(c: &Client, rel: &str, line: u32, needle: &str, delta: u32) -> (u32, u32) {
    let text = c.project.read(rel);
    let l = text.lines().nth(line as usize).unwrap();
    let byte = l
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not on line {line}: {l}"));
    let col = l[..byte].encode_utf16().count() as u32;
    (line, col + delta)
}

fn ready_with(rels: &[&str], opts: Opts) -> (Client, Vec<String>) {
    let mut c = Client::ready(opts);
    let uris: Vec<String> = rels.iter().map(|r| c.open(r)).collect();
    for u in &uris {
        c.sync(u, 1);
    }
    (c, uris)
}

fn range(a: (u32, u32), b: (u32, u32)) -> Value {
    json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
}

#[test]
fn hover_shows_signature_doc_and_import() {
    let (mut c, uris) = ready_with(
        &["Fixture/Basic.lean", "Fixture/Uses.lean"],
        Opts::default(),
    );
    let h = c.call("textDocument/hover", Client::at(&uris[0], 7, 5));
    assert_eq!(
        h["contents"],
        json!({"kind": "markdown", "value": "```lean\nFixture.double (n : Nat) : Nat\n```\n***\nDoubles a natural number."})
    );
    assert_eq!(h["range"], range((7, 4), (7, 10)));
    let (l, col) = find(&c, "Fixture/Uses.lean", 8, "double (double", 2);
    let h = c.call("textDocument/hover", Client::at(&uris[1], l, col));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.ends_with("\n***\n*import Fixture.Basic*"), "{v}");
    assert_eq!(h["range"], range((l, col - 2), (l, col + 4)));
    // A keyword and blank space: nothing.
    assert_eq!(
        c.call("textDocument/hover", Client::at(&uris[0], 7, 1)),
        Value::Null
    );
    assert_eq!(
        c.call("textDocument/hover", Client::at(&uris[0], 8, 0)),
        Value::Null
    );
    // A field.
    let h = c.call("textDocument/hover", Client::at(&uris[0], 13, 2));
    assert_eq!(
        h["contents"]["value"],
        "```lean\nFixture.Point.x (self : Fixture.Point) : Nat\n```"
    );
}

#[test]
fn definition_mixed_links_and_locations() {
    let (mut c, uris) = ready_with(
        &["Fixture/Basic.lean", "Fixture/Uses.lean"],
        Opts::default(),
    );
    // Same document: the worker's LocationLink[].
    let (l, col) = find(&c, "Fixture/Basic.lean", 16, "add p.x", 1);
    let d = c.call("textDocument/definition", Client::at(&uris[0], l, col));
    assert_eq!(
        d,
        json!([{
            "targetUri": uris[0],
            "targetRange": range((10, 4), (10, 7)),
            "targetSelectionRange": range((10, 4), (10, 7)),
            "originSelectionRange": range((l, col - 1), (l, col + 2)),
        }])
    );
    // Another file: the watchdog's .ilean fast path, Location[].
    let (l, col) = find(&c, "Fixture/Uses.lean", 8, "double (double", 0);
    let d = c.call("textDocument/definition", Client::at(&uris[1], l, col));
    assert_eq!(
        d,
        json!([{"uri": uris[0], "range": range((7, 4), (7, 10))}])
    );
    // Nothing there.
    assert_eq!(
        c.call("textDocument/definition", Client::at(&uris[0], 8, 0)),
        json!([])
    );
}

#[test]
fn definition_modes_from_the_environment() {
    for (mode, first_is_link, second_is_link) in [
        ("links", true, true),
        ("locations", false, false),
        ("alternate", false, true),
    ] {
        let (mut c, uris) = ready_with(
            &["Fixture/Basic.lean"],
            Opts::default().env("FAKE_LEAN_DEFINITION", mode),
        );
        let (l, col) = find(&c, "Fixture/Basic.lean", 16, "add p.x", 0);
        let a = c.call("textDocument/definition", Client::at(&uris[0], l, col));
        let b = c.call("textDocument/declaration", Client::at(&uris[0], l, col));
        assert_eq!(
            a[0].get("targetUri").is_some(),
            first_is_link,
            "{mode}: {a}"
        );
        assert_eq!(
            b[0].get("targetUri").is_some(),
            second_is_link,
            "{mode}: {b}"
        );
    }
}

#[test]
fn references_across_files_honour_include_declaration() {
    let (mut c, uris) = ready_with(&["Fixture/Basic.lean"], Opts::default());
    let params = |incl: bool| {
        json!({"textDocument": {"uri": uris[0]}, "position": {"line": 7, "character": 6},
               "context": {"includeDeclaration": incl}})
    };
    let with = c.call("textDocument/references", params(true));
    let without = c.call("textDocument/references", params(false));
    let count = |v: &Value, uri: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|l| l["uri"] == uri)
            .count()
    };
    let uses = c.project.uri("Fixture/Uses.lean");
    assert_eq!((count(&with, &uris[0]), count(&with, &uses)), (4, 3));
    assert_eq!((count(&without, &uris[0]), count(&without, &uses)), (3, 3));
    assert_eq!(
        with[0],
        json!({"uri": uris[0], "range": range((7, 4), (7, 10))})
    );
    // A newer watchdog finds a request's module among its open documents only; an older one
    // finds it by the path, open or not (README "The reference index").
    let from_closed = json!({"textDocument": {"uri": uses}, "position": {"line": 8, "character": 34},
               "context": {"includeDeclaration": true}});
    assert_eq!(
        c.call("textDocument/references", from_closed.clone()),
        json!([])
    );
    let (mut old, old_uris) = ready_with(
        &["Fixture/Basic.lean"],
        Opts::default().env("FAKE_LEAN_REFS", "path"),
    );
    let uses = old.project.uri("Fixture/Uses.lean");
    let mut from_closed = from_closed;
    from_closed["textDocument"]["uri"] = json!(uses);
    let old_with = old.call("textDocument/references", params_for(&old_uris[0], true));
    assert_eq!(old.call("textDocument/references", from_closed), old_with);
}

fn params_for(uri: &str, incl: bool) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": 7, "character": 6},
           "context": {"includeDeclaration": incl}})
}

#[test]
fn workspace_symbols_are_fuzzy_and_capped() {
    let (mut c, _) = ready_with(&[], Opts::default());
    let r = c.call("workspace/symbol", json!({"query": "double"}));
    let r = r.as_array().unwrap();
    assert_eq!(r[0]["name"], "Fixture.double");
    assert_eq!(r[0]["kind"], 14);
    assert_eq!(r[0]["tags"], json!([]));
    assert_eq!(r[0]["location"]["range"], range((7, 4), (7, 10)));
    let names: Vec<&str> = r.iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.contains(&"Fixture.double_eq") && names.contains(&"Fixture.double_two"));
    assert_eq!(c.call("workspace/symbol", json!({"query": ""})), json!([]));
    let fuzzy = c.call("workspace/symbol", json!({"query": "QDRPL"}));
    assert_eq!(fuzzy[0]["name"], "quadruple");
}

#[test]
fn document_symbols_nest_namespaces() {
    let (mut c, uris) = ready_with(&["Fixture/Basic.lean"], Opts::default());
    let s = c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uris[0]}}),
    );
    let ns = &s[0];
    assert_eq!(
        (ns["name"].as_str(), ns["kind"].as_u64()),
        (Some("Fixture"), Some(3))
    );
    assert_eq!(ns["range"], range((4, 0), (36, 11)));
    assert_eq!(ns["selectionRange"], range((4, 10), (4, 17)));
    let names: Vec<&str> = ns["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "double",
            "add",
            "Point",
            "Point.sum",
            "double_eq",
            "and_swap",
            "imp_self'",
            "add_zero'",
            "double_two"
        ]
    );
    let double = &ns["children"][0];
    assert_eq!(double["kind"], 6);
    assert_eq!(double["range"], range((7, 0), (7, 35)));
    assert!(double.get("children").is_none());
}

#[test]
fn signature_help_shows_the_remaining_arguments() {
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.project.uri("Fixture/Sig.lean");
    c.open_text(&uri, "import Fixture.Basic\nopen Fixture\n#check add \n#check add 1 \n#check add 1 2\n#check add -- c\n", 1, None);
    c.sync(&uri, 1);
    let sig = |c: &mut Client, l, ch| c.call("textDocument/signatureHelp", Client::at(&uri, l, ch));
    assert_eq!(
        sig(&mut c, 2, 11),
        json!({"signatures": [{"label": "(a b : Nat) → Nat"}], "activeSignature": 0})
    );
    assert_eq!(
        sig(&mut c, 3, 13)["signatures"][0]["label"],
        "(b : Nat) → Nat"
    );
    assert_eq!(sig(&mut c, 4, 14), Value::Null);
    assert_eq!(sig(&mut c, 5, 12), Value::Null);
}

fn goal(c: &mut Client, uri: &str, l: u32, ch: u32) -> Value {
    c.call("$/lean/plainGoal", Client::at(uri, l, ch))
}

fn rendered(goals: &[&str]) -> Value {
    if goals.is_empty() {
        return json!({"rendered": "no goals", "goals": []});
    }
    let fenced: Vec<String> = goals.iter().map(|g| format!("```lean\n{g}\n```")).collect();
    json!({"rendered": fenced.join("\n---\n"), "goals": goals})
}

#[test]
fn goals_before_at_a_tactic_start_and_after_inside_it() {
    let (mut c, uris) = ready_with(&["Fixture/Basic.lean"], Opts::default());
    let u = &uris[0];
    let hyps = "p q : Prop\nhp : p\nhq : q";
    let initial = format!("{hyps}\n⊢ q ∧ p");
    let left = format!("case left\n{hyps}\n⊢ q");
    let right = format!("case right\n{hyps}\n⊢ p");
    // On `by` and between `by` and the first tactic: the initial goal.
    let (l, by) = find(&c, "Fixture/Basic.lean", 22, ":= by", 3);
    assert_eq!(goal(&mut c, u, l, by), rendered(&[&initial]));
    assert_eq!(goal(&mut c, u, l, by + 2), rendered(&[&initial]));
    // Exactly at `constructor`: before; one character in: after.
    assert_eq!(goal(&mut c, u, 23, 2), rendered(&[&initial]));
    assert_eq!(goal(&mut c, u, 23, 3), rendered(&[&left, &right]));
    // End of line (trailing whitespace) is still after.
    assert_eq!(goal(&mut c, u, 23, 13), rendered(&[&left, &right]));
    // In the bullet, at `exact` (before) and inside it (after: closed).
    assert_eq!(goal(&mut c, u, 24, 4), rendered(&[&left]));
    assert_eq!(goal(&mut c, u, 24, 6), rendered(&[]));
    assert_eq!(goal(&mut c, u, 25, 11), rendered(&[]));
    // Outside any tactic block.
    assert_eq!(goal(&mut c, u, 22, 3), Value::Null);
    assert_eq!(goal(&mut c, u, 7, 10), Value::Null);
    // `intro h` (→ rule) and the `goals` override directive.
    assert_eq!(goal(&mut c, u, 28, 3), rendered(&["p : Prop\nh : p\n⊢ p"]));
    assert_eq!(
        goal(&mut c, u, 19, 2),
        rendered(&["n : Nat\n⊢ double n = n + n"])
    );
    assert_eq!(
        goal(&mut c, u, 19, 3),
        rendered(&["n : Nat\n⊢ 2 * n = n + n"])
    );
    // A one-line proof: `by decide`.
    let (l, d) = find(&c, "Fixture/Basic.lean", 34, "decide", 0);
    assert_eq!(goal(&mut c, u, l, d), rendered(&["⊢ double 2 = 4"]));
    assert_eq!(goal(&mut c, u, l, d + 3), rendered(&[]));
}

#[test]
fn term_goals() {
    let (mut c, uris) = ready_with(
        &["Fixture/Basic.lean", "Fixture/Uses.lean"],
        Opts::default(),
    );
    let t = c.call("$/lean/plainTermGoal", Client::at(&uris[0], 24, 11));
    assert_eq!(
        t,
        json!({"goal": "p q : Prop\nhp : p\nhq : q\n⊢ q", "range": range((24, 10), (24, 12))})
    );
    let (l, r) = find(&c, "Fixture/Uses.lean", 16, "rfl", 1);
    let t = c.call("$/lean/plainTermGoal", Client::at(&uris[1], l, r));
    assert_eq!(
        t,
        json!({"goal": "⊢ origin.sum = add 0 0", "range": range((l, r - 1), (l, r + 2))})
    );
    assert_eq!(
        c.call("$/lean/plainTermGoal", Client::at(&uris[0], 4, 0)),
        Value::Null
    );
}

#[test]
fn derived_diagnostics_unsolved_goals_sorry_and_directives() {
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.open("Fixture/TypeError.lean");
    let d = Client::last_diagnostics(&c.sync(&uri, 1));
    assert_eq!(d.len(), 3);
    assert_eq!(d[0]["range"], range((9, 17), (9, 22)));
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Type mismatch")
    );
    assert_eq!(d[1]["code"], "lean.unknownIdentifier");
    let unsolved = &d[2];
    assert_eq!(
        unsolved["message"],
        "unsolved goals\ncase right\np q : Prop\nhp : p\nhq : q\n⊢ q"
    );
    assert_eq!(unsolved["leanTags"], json!([1]));
    let (l, by) = find(&c, "Fixture/TypeError.lean", 14, ":= by", 3);
    assert_eq!(unsolved["range"], range((l, by), (l + 1, 0)));
    assert_eq!(unsolved["fullRange"], range((l, by), (16, 10)));
    assert!(
        d.iter()
            .all(|x| x["source"] == "Lean 4" && x["severity"] == 1)
    );

    let holes = c.open("Fixture/Holes.lean");
    let d = Client::last_diagnostics(&c.sync(&holes, 1));
    let msgs: Vec<&str> = d.iter().filter_map(|x| x["message"].as_str()).collect();
    assert_eq!(
        msgs,
        [
            "declaration uses `sorry`",
            "declaration uses `sorry`",
            "don't know how to synthesize placeholder\ncontext:\n⊢ Nat"
        ]
    );
    assert_eq!(
        d[0]["range"],
        range((6, 8), (6, 12)),
        "on the declaration's name"
    );
    assert_eq!(d[0]["severity"], 2);
    // The refine override: two goals after it.
    let g = goal(&mut c, &holes, 14, 4);
    assert_eq!(g["goals"].as_array().unwrap().len(), 2);
    assert!(g["goals"][1].as_str().unwrap().starts_with("case refine_2"));
}

#[test]
fn code_actions_with_and_without_data_and_resolve() {
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.project.uri("Fixture/Actions.lean");
    let text = "example : True := by\n  -- fake: code-action \"Try this: simp only\" \"simp only\" on \"simp?\" data\n  -- fake: code-action \"Lazy fix\" \"trivial\" on \"simp?\" lazy\n  -- fake: code-action \"Eager fix\" \"trivial\" preferred\n  simp?\n";
    c.open_text(&uri, text, 1, None);
    c.sync(&uri, 1);
    let params = json!({"textDocument": {"uri": uri}, "range": range((4, 4), (4, 4)), "context": {"diagnostics": []}});
    let actions = c.call("textDocument/codeAction", params.clone());
    let a = actions.as_array().unwrap();
    assert_eq!(a.len(), 3);
    let edit = |new: &str, r: Value| json!({"documentChanges": [{"textDocument": {"uri": uri, "version": 1}, "edits": [{"range": r, "newText": new}]}]});
    assert_eq!(
        a[0],
        json!({"title": "Try this: simp only", "kind": "quickfix",
               "edit": edit("simp only", range((4, 2), (4, 7))),
               "data": {"params": params, "providerName": "FakeLean.directiveCodeActionProvider", "providerResultIndex": 0}})
    );
    assert!(a[1].get("edit").is_none() && a[1].get("data").is_some());
    assert_eq!(a[2]["isPreferred"], true);
    assert!(a[2].get("data").is_none());
    // Resolving an eager action with data returns it as is; a lazy one gains its edit.
    assert_eq!(c.call("codeAction/resolve", a[0].clone()), a[0]);
    let lazy = c.call("codeAction/resolve", a[1].clone());
    assert_eq!(lazy["edit"], edit("trivial", range((4, 2), (4, 7))));
    // No data: the watchdog cannot route it.
    let id = c.request("codeAction/resolve", a[2].clone());
    let r = c.response(&id);
    assert_eq!(r["error"]["code"], -32801);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Cannot process request")
    );
    // Outside the directive's line: nothing.
    let none = c.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range((0, 0), (0, 0)), "context": {"diagnostics": []}}),
    );
    assert_eq!(none, json!([]));
}

#[test]
fn a_lazy_action_resolves_to_its_own_edit_whatever_else_the_file_offers() {
    // SPEC §D: resolve re-runs the provider for `data.params` and completes the action at
    // `providerResultIndex` of *that* run, so the index counts only the actions of its range.
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.project.uri("Fixture/TwoActions.lean");
    let text = "example : True := by\n  trivial -- fake: code-action \"First\" \"decide\" data\n\nexample : True := by\n  trivial -- fake: code-action \"Second\" \"exact True.intro\" lazy\n";
    c.open_text(&uri, text, 1, None);
    c.sync(&uri, 1);
    let params = json!({"textDocument": {"uri": uri}, "range": range((4, 2), (4, 2)), "context": {"diagnostics": []}});
    let actions = c.call("textDocument/codeAction", params);
    let a = actions.as_array().unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["title"], "Second");
    let resolved = c.call("codeAction/resolve", a[0].clone());
    assert_eq!(resolved["title"], "Second");
    assert_eq!(
        resolved["edit"]["documentChanges"][0]["edits"][0],
        json!({"range": range((4, 2), (4, 9)), "newText": "exact True.intro"})
    );
}

#[test]
fn code_actions_come_from_the_command_where_the_range_ends() {
    // SPEC §D: `handleCodeAction` waits for the snapshot with `endPos ≥ range.end` and runs the
    // providers on that one command, so a range over two commands offers the second's actions.
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.project.uri("Fixture/TwoCommands.lean");
    let text = "example : True := by\n  trivial -- fake: code-action \"First\" \"decide\"\n\nexample : True := by\n  trivial -- fake: code-action \"Second\" \"decide\"\n";
    c.open_text(&uri, text, 1, None);
    c.sync(&uri, 1);
    let mut titles = |from: (u32, u32), to: (u32, u32)| {
        let params = json!({"textDocument": {"uri": uri}, "range": range(from, to), "context": {"diagnostics": []}});
        let actions = c.call("textDocument/codeAction", params);
        let titles: Vec<String> = actions
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["title"].as_str().unwrap().to_owned())
            .collect();
        titles
    };
    assert_eq!(titles((0, 0), (5, 0)), ["Second"]);
    assert_eq!(titles((0, 0), (1, 9)), ["First"]);
    // The end of the first command's trailing whitespace is still the first command.
    assert_eq!(titles((1, 0), (3, 0)), ["First"]);
    assert_eq!(
        titles((1, 0), (3, 1)),
        Vec::<String>::new(),
        "line 1 is not the second's"
    );
}

#[test]
fn completion_and_resolve() {
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.project.uri("Fixture/Complete.lean");
    c.open_text(
        &uri,
        "import Fixture.Basic\nopen Fixture\n#check dou\n",
        1,
        None,
    );
    c.sync(&uri, 1);
    let r = c.call("textDocument/completion", Client::at(&uri, 2, 10));
    assert_eq!(r["isIncomplete"], false);
    let items = r["items"].as_array().unwrap();
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    assert_eq!(labels, ["double", "double_eq", "double_two"]);
    assert_eq!(items[0]["data"], json!([uri, 2, 10, 0, "cFixture.double"]));
    let resolved = c.call("completionItem/resolve", items[0].clone());
    assert_eq!(resolved["detail"], "(n : Nat) → Nat");
}

#[test]
fn requests_wait_for_elaboration_to_reach_their_position() {
    let (mut c, _) = ready_with(&[], Opts::default());
    let uri = c.project.uri("Fixture/Wait.lean");
    c.open_text(
        &uri,
        "def a : Nat := 1\n-- fake: gate late\ndef b : Nat := a\n",
        1,
        None,
    );
    c.project.await_gate("late");
    // Before the gate: answered now. After it: only once the gate opens.
    let early = c.call("textDocument/hover", Client::at(&uri, 0, 4));
    assert_eq!(early["contents"]["value"], "```lean\na : Nat\n```");
    let late = c.request("textDocument/hover", Client::at(&uri, 2, 15));
    let marker = c.request("$/lean/waitForILeans", json!({}));
    c.result(&marker);
    assert!(
        !c.log
            .iter()
            .any(|m| m.get("id") == Some(&late) && m.get("method").is_none())
    );
    c.project.open_gate("late");
    assert_eq!(c.result(&late)["range"], range((2, 15), (2, 16)));
}
