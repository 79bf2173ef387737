//! `lean_check_receipt` (issue 17 §1): a receipt holds until a file it names changes, each
//! difference is named, a malformed receipt is refused naming its field, and Lean hears nothing
//! of it — it is never even started for it. The property: every single-byte edit (insert,
//! delete, replace) of the file or of a direct import is flagged.

use std::cell::RefCell;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, fake_only};

const USES: &str = "Fixture/Uses.lean";
const BASIC: &str = "Fixture/Basic.lean";

/// A server synced on `Fixture/Uses.lean` (which imports `Fixture.Basic`); its receipt.
fn synced(project: &Project) -> (Lean, Value) {
    let mut lean = Lean::start(&[project], &[], &[]);
    let synced = lean.ok("lean_sync", args(project, USES, json!({})));
    let receipt = synced["receipt"].clone();
    assert_eq!(receipt["state"], "complete", "{synced}");
    assert_eq!(
        receipt["imports"],
        json!([{"module": "Fixture.Basic", "path": BASIC,
                "sha256": crate::harness::sha256_hex(project.read(BASIC).as_bytes())}]),
    );
    (lean, receipt)
}

/// `lean_check_receipt`'s answer about `receipt`, without the workspace it echoes.
fn check(lean: &mut Lean, project: &Project, receipt: &Value) -> Value {
    let mut answer = lean.ok(
        "lean_check_receipt",
        args(project, USES, json!({ "receipt": receipt })),
    );
    answer.as_object_mut().unwrap().remove("workspace");
    answer
}

#[test]
fn a_receipt_holds_until_a_file_it_names_changes() {
    if fake_only("a_receipt_holds_until_a_file_it_names_changes") {
        return;
    }
    let project = Project::fixture();
    let (mut lean, receipt) = synced(&project);
    let before = lean.received();
    let holds = check(&mut lean, &project, &receipt);
    assert_eq!(
        holds,
        json!({"holds": true, "changed": [], "state": "complete"})
    );
    let edits: [(&str, &str, &str, &[&str]); 5] = [
        (USES, "\n", "\n-- edited\n", &["text"]),
        (BASIC, "\n", "\n-- edited\n", &["import:Fixture.Basic"]),
        ("lakefile.toml", "\n", "\n# edited\n", &["lake_config"]),
        // Trimmed, the toolchain is the same: only the configuration's bytes changed.
        ("lean-toolchain", "\n", " \n", &["lake_config"]),
        (
            "lean-toolchain",
            "v4.24.0",
            "v4.25.0",
            &["lake_config", "toolchain"],
        ),
    ];
    for (file, from, to, named) in edits {
        let kept = project.read(file);
        assert!(kept.contains(from), "{file}");
        project.write(file, &kept.replacen(from, to, 1));
        let changed = check(&mut lean, &project, &receipt);
        let expected = json!({"holds": false, "changed": named, "state": "complete"});
        assert_eq!(changed, expected, "after editing {file}");
        project.write(file, &kept);
        assert_eq!(check(&mut lean, &project, &receipt)["holds"], true);
    }
    let kept = project.read(USES);
    std::fs::remove_file(project.root().join(USES)).unwrap();
    assert_eq!(
        check(&mut lean, &project, &receipt)["changed"],
        json!(["text"])
    );
    project.write(USES, &kept);
    // A receipt in another state is checked the same way, its state echoed.
    let mut stale = receipt.clone();
    stale["state"] = json!("stale_imports");
    stale["paths"] = json!([BASIC]);
    let echoed = check(&mut lean, &project, &stale);
    assert_eq!(
        (&echoed["holds"], &echoed["state"]),
        (&json!(true), &json!("stale_imports"))
    );
    assert_eq!(
        lean.received(),
        before,
        "lean_check_receipt sent Lean something"
    );
    lean.finish_without_violations();
}

#[test]
fn a_malformed_receipt_is_refused_naming_its_field() {
    if fake_only("a_malformed_receipt_is_refused_naming_its_field") {
        return;
    }
    let project = Project::fixture();
    let (mut lean, receipt) = synced(&project);
    let refused = |lean: &mut Lean, change: &dyn Fn(&mut Value), code: &str| -> String {
        let mut bad = receipt.clone();
        change(&mut bad);
        let error = lean.fails(
            "lean_check_receipt",
            args(&project, USES, json!({ "receipt": bad })),
            code,
        );
        error["data"]["path"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let upper = |r: &mut Value| {
        r["text_sha256"] = json!(r["text_sha256"].as_str().unwrap().to_uppercase());
    };
    assert_eq!(
        refused(&mut lean, &upper, "invalidInput"),
        "/receipt/text_sha256"
    );
    let missing = |r: &mut Value| {
        r.as_object_mut().unwrap().remove("lake_config_sha256");
    };
    assert_eq!(
        refused(&mut lean, &missing, "invalidInput"),
        "/receipt/lake_config_sha256"
    );
    let typed = |r: &mut Value| r["version"] = json!("1");
    assert_eq!(
        refused(&mut lean, &typed, "invalidInput"),
        "/receipt/version"
    );
    let reason = |r: &mut Value| r["reason"] = json!("elaborating");
    assert_eq!(
        refused(&mut lean, &reason, "invalidParams"),
        "/receipt/reason"
    );
    let escape = |r: &mut Value| r["imports"][0]["path"] = json!("../outside/Basic.lean");
    assert_eq!(
        refused(&mut lean, &escape, "invalidParams"),
        "/receipt/imports/0/path"
    );
    lean.finish_without_violations();
}

#[test]
fn checking_a_receipt_never_starts_lean() {
    if fake_only("checking_a_receipt_never_starts_lean") {
        return;
    }
    let project = Project::fixture();
    let (first, receipt) = synced(&project);
    first.finish_without_violations();
    project.wait_no_processes();
    let mut fresh = Lean::start(&[&project], &[], &[]);
    let checked = check(&mut fresh, &project, &receipt);
    assert_eq!(checked["holds"], true, "{checked}");
    assert!(project.processes().is_empty(), "a lake process was started");
    assert_eq!(
        fresh.trace(),
        Vec::<Value>::new(),
        "Lean was started or told something"
    );
    fresh.finish_without_violations();
}

/// One single-byte edit: of the file or its import, an insertion, a deletion or a replacement,
/// where and with what.
fn edit() -> impl Strategy<Value = (bool, u8, Index, u8)> {
    (any::<bool>(), 0..3u8, any::<Index>(), any::<u8>())
}

#[test]
fn every_single_byte_edit_of_the_file_or_an_import_is_flagged() {
    if fake_only("every_single_byte_edit_of_the_file_or_an_import_is_flagged") {
        return;
    }
    let project = Project::fixture();
    let (lean, receipt) = synced(&project);
    let before = lean.received();
    let lean = RefCell::new(lean);
    let config = Config {
        cases: 600,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&edit(), |(import, op, at, byte)| {
        let (file, named) = if import {
            (BASIC, "import:Fixture.Basic")
        } else {
            (USES, "text")
        };
        let path = project.root().join(file);
        let kept = std::fs::read(&path).unwrap();
        let mut edited = kept.clone();
        let what = match op {
            0 => {
                edited.insert(at.index(kept.len() + 1), byte);
                "insert"
            }
            1 => {
                edited.remove(at.index(kept.len()));
                "delete"
            }
            _ => {
                let i = at.index(kept.len());
                edited[i] = if edited[i] == byte {
                    byte.wrapping_add(1)
                } else {
                    byte
                };
                "replace"
            }
        };
        std::fs::write(&path, &edited).unwrap();
        let changed = check(&mut lean.borrow_mut(), &project, &receipt);
        std::fs::write(&path, &kept).unwrap();
        let restored = check(&mut lean.borrow_mut(), &project, &receipt);
        prop_assert_eq!(&changed["changed"], &json!([named]), "{} of {}", what, file);
        prop_assert_eq!(&changed["holds"], &json!(false));
        prop_assert_eq!(&restored["holds"], &json!(true));
        Ok::<(), TestCaseError>(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    let lean = lean.into_inner();
    assert_eq!(
        lean.received(),
        before,
        "lean_check_receipt sent Lean something"
    );
    lean.finish_without_violations();
}

/// Issue 25: a receipt names the whole import closure of the workspace's own modules and the
/// files the text reads with `include_str`, so a change of any of them is named.
#[test]
fn a_receipt_names_its_import_closure_and_the_files_it_reads() {
    if fake_only("a_receipt_names_its_import_closure_and_the_files_it_reads") {
        return;
    }
    let project = Project::fixture();
    let (top, middle, bottom) = (
        "Fixture/Deep/A.lean",
        "Fixture/Deep/B.lean",
        "Fixture/Deep/C.lean",
    );
    let data = "Fixture/Deep/data.txt";
    project.write(bottom, "def Deep.c : Nat := 1\n");
    project.write(
        middle,
        "import Fixture.Deep.C\n\ndef Deep.b : Nat := Deep.c\n",
    );
    project.write(
        top,
        "import Fixture.Deep.B\n\ndef Deep.s : String := include_str \"data.txt\"\n",
    );
    project.write(data, "some data\n");
    let mut lean = Lean::start(&[&project], &[], &[]);
    let synced = lean.ok("lean_sync", args(&project, top, json!({})));
    let receipt = synced["receipt"].clone();
    assert_eq!(receipt["state"], "complete", "{synced}");
    let hash = |path: &str| crate::harness::sha256_hex(project.read(path).as_bytes());
    assert_eq!(
        receipt["includes"],
        json!([{"path": data, "sha256": hash(data)}]),
        "{receipt}"
    );
    let check = |lean: &mut Lean| {
        lean.ok(
            "lean_check_receipt",
            args(&project, top, json!({ "receipt": receipt })),
        )
    };
    assert_eq!(check(&mut lean)["holds"], true);
    let edits = [
        (bottom, "import:Fixture.Deep.C".to_owned()),
        (middle, "import:Fixture.Deep.B".to_owned()),
        (data, format!("include:{data}")),
    ];
    for (file, named) in edits {
        let kept = project.read(file);
        project.write(file, &format!("{kept}\n"));
        let changed = check(&mut lean);
        assert_eq!(changed["holds"], false, "{file}: {changed}");
        assert_eq!(changed["changed"], json!([named]), "{file}: {changed}");
        project.write(file, &kept);
        assert_eq!(check(&mut lean)["holds"], true, "{file} restored");
    }
    lean.finish_without_violations();
}
