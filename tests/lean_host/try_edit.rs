//! `lean_try_edit`: candidates judged against the file as it is, each in a twin of its own,
//! side by side; patches bound to the base; `base_mismatch` when another writer changes the
//! file; `statement_changed`; what a warm or repeated candidate costs Lean; `first_closed` and
//! the deadline; candidates that never see each other's text.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::{Lean, Project, args, is_twin_uri};
use crate::support::{call, request};

const BASIC: &str = "Fixture/Basic.lean";

/// The sha256 of a text, in lowercase hex.
pub fn sha(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A `{range, text}` candidate.
pub fn replace(from: (u64, u64), to: (u64, u64), text: &str) -> Value {
    json!({"range": {"start": {"line": from.0, "character": from.1},
                     "end": {"line": to.0, "character": to.1}}, "text": text})
}

/// `lean_try_edit`'s arguments for `candidates` on `path`, whose text is `base`.
pub fn try_edit(project: &Project, path: &str, base: &str, candidates: Vec<Value>) -> Value {
    args(
        project,
        path,
        json!({"base_sha256": sha(base), "candidates": candidates}),
    )
}

fn verdicts(result: &Value) -> Vec<String> {
    result["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("no candidates: {result}"))
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_owned())
        .collect()
}

/// A fresh fixture project, the server on it with `flags`, and `Fixture/Basic.lean`'s text.
fn started(flags: &[&str]) -> (Project, Lean, String) {
    let project = Project::fixture();
    let lean = Lean::start(&[&project], flags, &[]);
    let base = project.read(BASIC);
    (project, lean, base)
}

/// `and_swap`'s proof is lines 23–25 (`constructor`, two bullets).
fn proof_lines() -> ((u64, u64), (u64, u64)) {
    ((23, 2), (25, 12))
}

#[test]
fn candidates_are_judged_against_the_file_and_closed_ones_come_with_a_patch() {
    let (project, mut lean, base) = started(&[]);
    let (from, to) = proof_lines();
    let result = lean.ok(
        "lean_try_edit",
        try_edit(
            &project,
            BASIC,
            &base,
            vec![
                replace(from, to, "exact ⟨hq, hp⟩"),
                replace(from, to, "constructor"),
                replace(from, to, "exact hp -- fake: error \"type mismatch\""),
                replace(from, to, "sorry"),
                replace((23, 2), (23, 13), "skip\n  constructor"),
            ],
        ),
    );
    assert_eq!(
        verdicts(&result),
        ["closed", "progressed", "failed", "progressed", "closed"],
        "{result}"
    );
    let closed = &result["candidates"][0];
    assert_eq!(closed["goals"], json!([]));
    let patch = &closed["patch"];
    assert_eq!(patch["base_sha256"], sha(&base));
    assert_eq!(patch["text"], "exact ⟨hq, hp⟩");
    let patched = base.replace("constructor\n  · exact hq\n  · exact hp", "exact ⟨hq, hp⟩");
    assert_eq!(patch["result_sha256"], sha(&patched));
    let progressed = &result["candidates"][1];
    let targets: Vec<&str> = progressed["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["q", "p"], "{progressed}");
    assert_eq!(progressed.get("patch"), None);
    let failed = &result["candidates"][2];
    assert_eq!(failed["reason"], "errorInDeclaration");
    assert_eq!(failed["diagnostics"][0]["message"], "type mismatch");
    assert_eq!(failed["diagnostics"][0]["in_edit"], true);
    assert_eq!(failed["diagnostics"][0]["path"], BASIC);
    let sorry = &result["candidates"][3];
    assert_eq!(sorry["gate"]["sorry"], json!({"base": 0, "candidate": 1}));
    assert!(
        result["candidates"][4]["patch"].is_object(),
        "a proof still closed is closed"
    );
    for candidate in result["candidates"].as_array().unwrap() {
        assert_eq!(candidate["gate"]["statement_changed"], false, "{candidate}");
    }
    assert!(!result.to_string().contains(".lake/beam"), "{result}");
    assert_eq!(project.read(BASIC), base, "the file is untouched");
    // The receipt names the base Lean checked the candidates against.
    let receipt = &result["receipt"];
    assert_eq!(receipt["state"], "complete", "{receipt}");
    assert_eq!(receipt["text_sha256"], sha(&base));
    assert_eq!(receipt["version"], result["version"]);
    lean.finish_without_violations();
}

#[test]
fn an_unfinished_proof_is_judged_against_what_it_left() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let path = "Fixture/TypeError.lean";
    let base = project.read(path);
    // `unfinished`: `constructor` then `exact hp` on lines 15–16 leaves `q`.
    let result = lean.ok(
        "lean_try_edit",
        try_edit(
            &project,
            path,
            &base,
            vec![
                replace((16, 10), (16, 10), "\n  exact hq"),
                replace((16, 10), (16, 10), "\n  skip"),
                replace((15, 2), (16, 10), "skip"),
                json!({"declaration": "unfinished", "body": "⟨hp, hq⟩"}),
                json!({"declaration": "Fixture.Broken.unfinished", "body": "by\n  constructor"}),
            ],
        ),
    );
    assert_eq!(
        verdicts(&result),
        ["closed", "failed", "progressed", "closed", "progressed"],
        "{result}"
    );
    let candidates = &result["candidates"];
    assert_eq!(candidates[1]["reason"], "noProgress");
    assert_eq!(candidates[1]["goals"][0]["target"], "q");
    // The file's other errors are the base's: none is new.
    for n in 0..5 {
        assert_eq!(
            candidates[n]["gate"]["new_errors_elsewhere"],
            json!([]),
            "{n}"
        );
    }
    let body = &candidates[3]["patch"];
    assert_eq!(body["text"], "⟨hp, hq⟩");
    assert_eq!(
        body["range"],
        json!({"start": {"line": 14, "character": 61}, "end": {"line": 16, "character": 10}})
    );
    lean.finish_without_violations();
}

/// Sends `lean_try_edit` as request `id` without waiting for its answer.
fn send(lean: &mut Lean, id: i64, arguments: Value) {
    lean.server
        .send(&request(id, "tools/call", call("lean_try_edit", arguments)));
}

fn answer(lean: &mut Lean, id: i64) -> Value {
    lean.server.response(&json!(id))["result"].clone()
}

#[test]
fn another_writer_changing_the_file_during_the_call_is_a_base_mismatch() {
    if crate::harness::fake_only("a candidate held at the fake's gate") {
        return;
    }
    let (project, mut lean, base) = started(&[]);
    let (from, to) = proof_lines();
    // A hash that is not the file's: refused before Lean is asked for anything.
    let wrong = args(
        &project,
        BASIC,
        json!({"base_sha256": sha("another text"), "candidates": [replace(from, to, "rfl")]}),
    );
    let error = lean.fails("lean_try_edit", wrong, "contentModified");
    assert_eq!(error["data"]["reason"], "base_mismatch");
    // Not a hash at all, though of a hash's length: named as such, never a mismatch.
    let not_hex = args(
        &project,
        BASIC,
        json!({"base_sha256": "g".repeat(64), "candidates": [replace(from, to, "rfl")]}),
    );
    let refused = lean.fails("lean_try_edit", not_hex, "invalidInput");
    assert_eq!(refused["data"]["path"], "/base_sha256", "{refused}");
    assert_eq!(error["data"]["current_sha256"], sha(&base));
    assert!(
        !lean
            .received()
            .iter()
            .any(|m| m == "textDocument/waitForDiagnostics"),
        "no verdict was asked for"
    );
    // The file changes while a candidate is held in Lean.
    let held = replace(from, to, "exact ⟨hq, hp⟩ -- fake: gate held");
    send(&mut lean, 901, try_edit(&project, BASIC, &base, vec![held]));
    lean.gate_entered("held");
    let changed = format!("{base}\n-- another writer\n");
    project.write(BASIC, &changed);
    lean.open_gate("held");
    let result = answer(&mut lean, 901);
    assert_eq!(result["isError"], true, "{result}");
    let error = &result["structuredContent"];
    assert_eq!(error["code"], "contentModified");
    assert_eq!(error["data"]["reason"], "base_mismatch");
    assert_eq!(error["data"]["current_sha256"], sha(&changed));
    assert_eq!(error["data"]["expected_sha256"], sha(&base));
    lean.finish_without_violations();
}

#[test]
fn every_edit_to_a_statement_trips_statement_changed() {
    let (project, mut lean, base) = started(&[]);
    // `theorem and_swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by` on line 22: every
    // character before `:=` (column 56), replaced, deleted or with text inserted before it.
    let line = base.lines().nth(22).unwrap();
    let body = line.find(":=").unwrap();
    let statement: Vec<char> = line[..body].chars().collect();
    let mut candidates = Vec::new();
    for (k, c) in statement.iter().enumerate().step_by(4) {
        let k = k as u64;
        let other = if *c == 'x' { "y" } else { "x" };
        candidates.push(replace((22, k), (22, k + 1), other));
        candidates.push(replace((22, k), (22, k), "x"));
        candidates.push(replace((22, k), (22, k + 1), ""));
    }
    candidates.push(replace((22, 8), (22, 16), "swapped"));
    candidates.push(replace((22, 53), (22, 58), "p ∧ q :="));
    let mut tripped = 0;
    for chunk in candidates.chunks(16) {
        let result = lean.ok(
            "lean_try_edit",
            try_edit(&project, BASIC, &base, chunk.to_vec()),
        );
        for (candidate, shown) in chunk.iter().zip(result["candidates"].as_array().unwrap()) {
            assert_eq!(
                shown["gate"]["statement_changed"], true,
                "{candidate} -> {shown}"
            );
            assert_ne!(shown["verdict"], "skipped");
            tripped += 1;
        }
    }
    assert_eq!(tripped, candidates.len());
    // An edit of the body alone does not.
    let (from, to) = proof_lines();
    let body_only = lean.ok(
        "lean_try_edit",
        try_edit(&project, BASIC, &base, vec![replace(from, to, "simp")]),
    );
    assert_eq!(
        body_only["candidates"][0]["gate"]["statement_changed"],
        false
    );
    lean.finish_without_violations();
}

/// A statement change as the gate lists it.
fn change(change: &str, line: u64, fields: Value) -> Value {
    let mut shown = json!({"change": change, "line": line});
    for (key, value) in fields.as_object().unwrap() {
        shown[key] = value.clone();
    }
    shown
}

#[test]
fn an_edit_reaching_past_its_declaration_cannot_hide_a_statement_change() {
    let (project, mut lean, base) = started(&[]);
    // From `and_swap`'s proof through `imp_self'`'s (lines 27–29), and to its end (25:12).
    let (from, past, end) = ((23, 2), (29, 9), (25, 12));
    let proof = "exact ⟨hq, hp⟩";
    let theorem = |name: &str| json!({"kind": "theorem", "name": format!("Fixture.{name}")});
    let cases = [
        (
            replace(from, past, proof),
            vec![change("removed", 27, theorem("imp_self'"))],
        ),
        (
            replace(
                from,
                past,
                &format!("{proof}\n\ntheorem imp_self' : True := by\n  trivial"),
            ),
            vec![change("restated", 25, theorem("imp_self'"))],
        ),
        (
            replace(
                from,
                past,
                &format!(
                    "{proof}\n\naxiom cheat (p : Prop) : p → p\n\ntheorem imp_self' (p : Prop) : \
                     p → p := by\n  exact cheat p"
                ),
            ),
            vec![change(
                "axiom_added",
                25,
                json!({"kind": "axiom", "name": "Fixture.cheat"}),
            )],
        ),
        (
            replace(end, end, "\n\ntheorem x : False := sorry"),
            vec![change("added", 27, theorem("x"))],
        ),
        (
            replace(end, end, "\n\naxiom boom : False"),
            vec![change(
                "axiom_added",
                27,
                json!({"kind": "axiom", "name": "Fixture.boom"}),
            )],
        ),
        (
            replace(
                from,
                (27, 17),
                &format!("{proof}\n\ntheorem imp_self_renamed"),
            ),
            vec![change(
                "renamed",
                25,
                json!({"kind": "theorem", "name": "Fixture.imp_self_renamed",
                       "was": "Fixture.imp_self'"}),
            )],
        ),
        (
            replace(
                from,
                end,
                &format!("{proof}\n\nend Fixture\n\nnamespace Other"),
            ),
            vec![
                change("scope_changed", 25, json!({"command": "end Fixture"})),
                change("scope_changed", 27, json!({"command": "namespace Other"})),
                change(
                    "renamed",
                    29,
                    json!({"kind": "theorem", "name": "Other.imp_self'", "was": "Fixture.imp_self'"}),
                ),
                change(
                    "renamed",
                    33,
                    json!({"kind": "theorem", "name": "Other.add_zero'", "was": "Fixture.add_zero'"}),
                ),
                change(
                    "renamed",
                    36,
                    json!({"kind": "theorem", "name": "Other.double_two",
                           "was": "Fixture.double_two"}),
                ),
            ],
        ),
        (
            replace(end, end, "\n\nopen Nat"),
            vec![change("scope_changed", 27, json!({"command": "open Nat"}))],
        ),
        (
            // `add`'s value changed by an edit that starts in `double`'s.
            replace(
                (7, 30),
                (10, 34),
                "2 * n\n\ndef add (a b : Nat) : Nat := b + a",
            ),
            vec![change(
                "value_changed",
                9,
                json!({"kind": "def", "name": "Fixture.add"}),
            )],
        ),
        (
            // Lean begins a command at its keyword wherever it stands: indented after a proof.
            // (The fake reads that line as a tactic, and fails it: its reason is not pinned.)
            replace(end, end, "\n  axiom hidden : False"),
            vec![change(
                "axiom_added",
                26,
                json!({"kind": "axiom", "name": "Fixture.hidden"}),
            )],
        ),
    ];
    let (candidates, expected): (Vec<Value>, Vec<Vec<Value>>) = cases.into_iter().unzip();
    let result = lean.ok(
        "lean_try_edit",
        try_edit(&project, BASIC, &base, candidates.clone()),
    );
    for ((candidate, expected), shown) in candidates
        .iter()
        .zip(expected)
        .zip(result["candidates"].as_array().unwrap())
    {
        let gate = &shown["gate"];
        assert_eq!(gate["statement_changed"], true, "{candidate} -> {shown}");
        assert_eq!(
            gate["statement_changes"],
            json!(expected),
            "{candidate} -> {shown}"
        );
        assert_ne!(shown["verdict"], "closed", "{candidate} -> {shown}");
        assert_eq!(shown.get("patch"), None, "{candidate} -> {shown}");
    }
    // Lean accepts them all but the `sorry`: only the statement change keeps them from closing.
    let reasons: Vec<&str> = result["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["reason"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        reasons[..9],
        [
            "statementChanged",
            "statementChanged",
            "statementChanged",
            "usesSorry",
            "statementChanged",
            "statementChanged",
            "statementChanged",
            "statementChanged",
            "statementChanged"
        ],
        "{result}"
    );
    lean.finish_without_violations();
}

#[test]
fn a_statement_change_closes_only_when_the_candidate_allows_it() {
    let (project, mut lean, base) = started(&[]);
    let proof = "exact ⟨hq, hp⟩";
    // Both proofs rewritten, both statements as they were: no statement change.
    let restated = format!("{proof}\n\ntheorem imp_self' (p : Prop) : p → p := by\n  exact id");
    let same = replace((23, 2), (29, 9), &restated);
    // A comment and layout are no statement either.
    let layout = replace((22, 52), (22, 53), "-- note\n    ∧");
    let mut allowed = replace((23, 2), (29, 9), proof);
    allowed["allow_statement_change"] = json!(true);
    let result = lean.ok(
        "lean_try_edit",
        try_edit(&project, BASIC, &base, vec![same, layout, allowed]),
    );
    assert_eq!(
        verdicts(&result),
        ["closed", "closed", "closed"],
        "{result}"
    );
    let candidates = result["candidates"].as_array().unwrap();
    for shown in &candidates[..2] {
        assert_eq!(shown["gate"]["statement_changed"], false, "{shown}");
        assert_eq!(shown["gate"]["statement_changes"], json!([]), "{shown}");
    }
    let gate = &candidates[2]["gate"];
    assert_eq!(gate["statement_changed"], true, "{gate}");
    assert_eq!(gate["statement_changes"][0]["change"], "removed", "{gate}");
    assert!(candidates[2]["patch"].is_object(), "{result}");
    lean.finish_without_violations();
}

#[test]
fn a_warm_candidate_costs_one_change_and_one_barrier_and_a_repeated_one_nothing() {
    if crate::harness::fake_only("counting the messages Lean received") {
        return;
    }
    let (project, mut lean, base) = started(&[]);
    let (from, to) = proof_lines();
    lean.ok(
        "lean_try_edit",
        try_edit(
            &project,
            BASIC,
            &base,
            vec![replace(from, to, "constructor")],
        ),
    );
    let before = lean.received().len();
    let warm = lean.ok(
        "lean_try_edit",
        try_edit(
            &project,
            BASIC,
            &base,
            vec![replace(from, to, "exact ⟨hq, hp⟩")],
        ),
    );
    assert_eq!(verdicts(&warm), ["closed"]);
    assert_eq!(
        lean.received()[before..],
        ["textDocument/didChange", "textDocument/waitForDiagnostics"],
        "a warm candidate: one didChange and one waitForDiagnostics, nothing else"
    );
    let twin_changes = lean
        .trace()
        .iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
        .all(|t| t["uri"].as_str().is_some_and(is_twin_uri));
    assert!(twin_changes, "the user's document is never edited");
    // The same call again, and the same candidates in any order: Lean is asked nothing.
    let before = lean.received().len();
    let again = lean.ok(
        "lean_try_edit",
        try_edit(
            &project,
            BASIC,
            &base,
            vec![
                replace(from, to, "constructor"),
                replace(from, to, "exact ⟨hq, hp⟩"),
            ],
        ),
    );
    assert_eq!(verdicts(&again), ["progressed", "closed"]);
    assert_eq!(again["candidates"][1], warm["candidates"][0]);
    assert_eq!(lean.received()[before..], [] as [String; 0]);
    lean.finish_without_violations();
}

/// A candidate that fails with an error naming `mark`, held at gate `gate` if any.
fn marked(mark: usize, gate: Option<&str>) -> Value {
    let held = gate.map_or(String::new(), |g| format!(" -- fake: gate {g}"));
    let (from, to) = proof_lines();
    replace(
        from,
        to,
        &format!("constructor{held}\n  · exact hq -- fake: error \"mark {mark}\"\n  · exact hp"),
    )
}

#[test]
fn parallel_candidates_each_see_their_own_text_alone() {
    if crate::harness::fake_only("candidates held at the fake's gates") {
        return;
    }
    let (project, mut lean, base) = started(&["--max-twins", "4"]);
    let gates = ["g0", "g1", "g2", "g3"];
    let candidates: Vec<Value> = (0..16).map(|n| marked(n, gates.get(n).copied())).collect();
    send(
        &mut lean,
        1001,
        try_edit(&project, BASIC, &base, candidates),
    );
    // Four candidates are in Lean at once, each in a twin of its own.
    for gate in gates {
        lean.gate_entered(gate);
    }
    for gate in gates {
        lean.open_gate(gate);
    }
    let result = answer(&mut lean, 1001);
    let result = &result["structuredContent"];
    for (n, candidate) in result["candidates"].as_array().unwrap().iter().enumerate() {
        assert_eq!(candidate["verdict"], "failed", "{n}: {candidate}");
        let messages: Vec<&str> = candidate["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["message"].as_str().unwrap())
            .collect();
        assert_eq!(messages, [format!("mark {n}")], "{n}: {candidate}");
    }
    assert_eq!(
        crate::ownership::peak_open(&lean).1,
        4,
        "the twin bound held"
    );
    lean.finish_without_violations();
}

#[test]
fn first_closed_skips_the_rest_and_the_deadline_times_out_only_the_late() {
    if crate::harness::fake_only("candidates held at the fake's gates") {
        return;
    }
    let (project, mut lean, base) = started(&["--max-twins", "2"]);
    let (from, to) = proof_lines();
    let held = replace(from, to, "constructor -- fake: gate held");
    let closes = replace(from, to, "exact ⟨hq, hp⟩");
    let mut first = try_edit(&project, BASIC, &base, vec![held.clone(), closes.clone()]);
    first["prefer"] = json!("first_closed");
    send(&mut lean, 1101, first);
    lean.gate_entered("held");
    let result = answer(&mut lean, 1101);
    assert_eq!(
        verdicts(&result["structuredContent"]),
        ["skipped", "closed"],
        "{result}"
    );
    // The skipped candidate's wait was cancelled in Lean.
    lean.wait_received("the skipped candidate's $/cancelRequest", |t| {
        t["method"] == "$/cancelRequest"
    });
    // A deadline: the held candidate times out, the other still answers.
    let held = replace(from, to, "constructor -- fake: gate late");
    let mut timed = try_edit(&project, BASIC, &base, vec![held, closes]);
    timed["timeout_ms"] = json!(3000);
    send(&mut lean, 1102, timed);
    lean.gate_entered("late");
    let result = answer(&mut lean, 1102);
    assert_eq!(
        verdicts(&result["structuredContent"]),
        ["timeout", "closed"],
        "{result}"
    );
    lean.open_gate("held");
    lean.open_gate("late");
    lean.finish_without_violations();
}

/// Mid-2025 Lake sets a module up with the imports of its file on disk, whatever header the text
/// Lean has (reference Part 4, "Mid-era Lake"): a candidate that adds an import never built
/// fails in its twin's header. The call says so, naming the candidate, the import and what to
/// do: never a crash, never a verdict. New Lake builds the twin's own header: the candidate is
/// judged.
#[test]
fn a_candidate_adding_an_import_mid_era_lake_does_not_build_says_so() {
    if crate::harness::fake_only("mid-era Lake's set-up from the file on disk") {
        return;
    }
    let path = "Fixture/Uses.lean";
    let header = replace(
        (0, 0),
        (0, 20),
        "import Fixture.Basic\nimport Fixture.TypeError",
    );
    for mid in [true, false] {
        let project = Project::fixture();
        let base = project.read(path);
        let env: &[(&str, &str)] = if mid {
            &[("FAKE_LAKE_SETUP_IMPORTS", "disk")]
        } else {
            &[]
        };
        let mut lean = Lean::start(&[&project], &[], env);
        let candidates = vec![header.clone()];
        if !mid {
            let judged = lean.ok("lean_try_edit", try_edit(&project, path, &base, candidates));
            assert!(judged["candidates"][0]["verdict"].is_string(), "{judged}");
            lean.finish_without_violations();
            continue;
        }
        let failed = lean.fails(
            "lean_try_edit",
            try_edit(&project, path, &base, candidates),
            "runtimeSetup",
        );
        crate::speculative::says_the_added_import_was_not_built(&failed);
        assert_eq!(failed["data"]["candidate"], 0, "{failed}");
        let revivals = lean
            .trace()
            .into_iter()
            .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
            .filter(|t| t["uri"].as_str().is_some_and(is_twin_uri))
            .count();
        assert_eq!(
            revivals, 0,
            "the twin was opened with its text and never revived"
        );
        lean.finish_without_violations();
    }
}
