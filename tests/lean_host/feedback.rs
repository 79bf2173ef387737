//! `beam_feedback_report` end to end: the compact report card and its metadata, the context a
//! cached runtime adds (its own workspace's only), confidential mode, redaction of the home
//! directory, bundles (a directory, a zip) under `<root>/.beam/feedback/`, evidence names and
//! paths that are refused, and the promise under all of them: it never starts Lean.
//!
//! The server's HOME is the directory that holds the project, so the project is `~/project`
//! once redacted; `[root]` in a result means the root was not redacted.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, request};

const TOOL: &str = "beam_feedback_report";

/// A server whose HOME is the directory holding `project`.
fn start(project: &Project) -> Lean {
    start_all(&[project])
}

fn start_all(projects: &[&Project]) -> Lean {
    let home = home_of(projects[0]);
    // A real lake finds its toolchains through elan, under the real home.
    let elan_home = std::env::var("ELAN_HOME")
        .unwrap_or_else(|_| format!("{}/.elan", std::env::var("HOME").unwrap_or_default()));
    Lean::start(
        projects,
        &[],
        &[
            ("HOME", home.to_str().expect("utf-8")),
            ("ELAN_HOME", &elan_home),
        ],
    )
}

fn home_of(project: &Project) -> PathBuf {
    project.root().parent().expect("a parent").to_path_buf()
}

/// The required fields for `project`, plus `more`.
fn report(project: &Project, more: Value) -> Value {
    let mut arguments = json!({
        "title": "Hover shows nothing",
        "summary": "lean_hover on a theorem name answers null.",
        "reproduction": "lean_sync Fixture/Basic.lean, then lean_hover at line 3.",
        "expected": "The theorem's type.",
        "actual": "{\"result\": null}",
        "workspace": project.descriptor(),
    });
    if let Value::Object(more) = more {
        arguments.as_object_mut().expect("object").extend(more);
    }
    arguments
}

/// What `project`'s `.beam` holds (nothing when it does not exist).
fn beam_dir(project: &Project) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![project.root().join(".beam")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().expect("a type").is_dir() {
                pending.push(entry.path());
            }
            found.push(entry.path());
        }
    }
    found
}

/// The bundle directory a result names, on disk.
fn bundle_on_disk(project: &Project, result: &Value) -> PathBuf {
    let named = result["bundle_dir"].as_str().expect("a bundle_dir");
    let id = named.rsplit('/').next().expect("an id");
    project.root().join(".beam/feedback").join(id)
}

/// The files of a directory, relative, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).expect("read a bundle").flatten() {
            if entry.file_type().expect("a type").is_dir() {
                pending.push(entry.path());
            } else {
                let relative = entry.path().strip_prefix(dir).unwrap().to_path_buf();
                files.push(relative.display().to_string());
            }
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read a bundle file")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).expect("a JSON bundle file")
}

/// A result as a reviewable snapshot: its markdown as text, then the rest as JSON, with the
/// time, the bundle id and the build's identity replaced by placeholders.
fn card_snapshot(result: &Value) -> String {
    let mut result = result.clone();
    crate::support::redact(&mut result);
    let mut text = serde_json::to_string(&result).expect("JSON");
    let generated = result["metadata"]["generated_at"]
        .as_str()
        .expect("generated_at")
        .to_owned();
    text = text.replace(&generated, "[generated_at]");
    if let Some(dir) = result["bundle_dir"].as_str() {
        let id = dir.rsplit('/').next().expect("an id").to_owned();
        text = text.replace(&id, "[bundle-id]");
    }
    let mut result: Value = serde_json::from_str(&text).expect("JSON");
    let markdown = result
        .as_object_mut()
        .expect("object")
        .remove("markdown")
        .expect("markdown");
    let markdown: Vec<&str> = markdown
        .as_str()
        .expect("text")
        .lines()
        // Whether a build knows its commit depends on where it was built.
        .filter(|line| !line.starts_with("- source:"))
        .collect();
    format!(
        "{}\n---\n{}\n",
        markdown.join("\n"),
        serde_json::to_string_pretty(&result).expect("JSON")
    )
}

fn is_timestamp(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.len() == 20
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && bytes[13] == b':'
        && text.ends_with('Z')
}

/// `<YYYYMMDD>-<HHMMSS>-<slug>`, with an optional `-<n>` for a name already taken.
fn is_bundle_id(id: &str, slug: &str) -> bool {
    let (stamp, rest) = id.split_at(id.len().min(16));
    let stamp_ok = stamp.len() == 16
        && stamp.char_indices().all(|(i, c)| match i {
            8 => c == '-',
            15 => c == '-',
            _ => c.is_ascii_digit(),
        });
    let suffix_ok = rest == slug
        || rest
            .strip_prefix(slug)
            .and_then(|s| s.strip_prefix('-'))
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    stamp_ok && suffix_ok
}

/// Asserts that nothing was started: no process in the project, no runtime, no statistics.
#[track_caller]
fn nothing_started(lean: &mut Lean, project: &Project) {
    assert!(
        project.processes().is_empty(),
        "a process runs in the project"
    );
    assert_eq!(
        lean.ok("beam_stats", json!({})),
        json!({"uptimeMs": 0, "workspaces": {}}),
        "no runtime and no statistics"
    );
    assert_eq!(lean.ok("beam_version", json!({}))["runtime_active"], false);
    if !crate::harness::fake_only("Lean received nothing") {
        assert_eq!(lean.received(), Vec::<String>::new());
    }
}

#[test]
fn the_report_card_is_compact_redacted_and_starts_nothing() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let file = project.root().join("Fixture/Basic.lean");
    let card = lean.ok(
        TOOL,
        report(
            &project,
            json!({
                "kind": "bug",
                "severity": "high",
                "tags": ["hover", "  ", "navigation"],
                "impact": "Agents cannot read types.",
                "workaround": "Use lean_goals.",
                "client_request_id": "req-42",
                "request": {"tool": "lean_hover", "arguments": {"path": file}},
                "response": {"result": null},
            }),
        ),
    );
    assert_eq!(
        card["workspace"],
        json!({"root": "[root]"}),
        "echoed, canonical"
    );
    let metadata = &card["metadata"];
    assert!(is_timestamp(metadata["generated_at"].as_str().unwrap()));
    assert_eq!(metadata["schema"], "beam.feedback.report-card.v1");
    assert_eq!(metadata["active_root"], "~/project", "home redacted");
    assert_eq!(metadata["tags"], json!(["hover", "navigation"]));
    assert_eq!(metadata["bundle"], "none");
    assert_eq!(metadata["redacted"], true);
    assert_eq!(metadata["confidential"], false);
    assert_eq!(metadata["client_request_id"], "req-42");
    assert!(card.get("collected").is_none(), "compact by default");
    assert!(card.get("bundle_dir").is_none() && card.get("zip_path").is_none());
    let markdown = card["markdown"].as_str().unwrap();
    for words in [
        "# Hover shows nothing",
        "Review before posting publicly",
        "Beam does not submit feedback automatically",
        "## Beam Runtime",
        "~/project/Fixture/Basic.lean",
    ] {
        assert!(
            markdown.contains(words),
            "{words:?} missing from:\n{markdown}"
        );
    }
    assert!(!markdown.contains("## Beam Debug Context"));
    let mut without_echo = card.clone();
    without_echo.as_object_mut().unwrap().remove("workspace");
    assert!(
        !without_echo.to_string().contains("[root]"),
        "the home directory is redacted everywhere but the echo: {without_echo}"
    );
    let warnings = card["collection_warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].as_str().unwrap().contains("never starts Lean"),
        "{warnings:?}"
    );
    nothing_started(&mut lean, &project);
    assert!(beam_dir(&project).is_empty(), "no bundle, nothing written");
    crate::harness::snapshot("feedback_card", card_snapshot(&card));
    lean.server.finish_clean();
}

#[test]
fn a_cached_runtime_adds_its_own_workspace_context_only() {
    let first = Project::fixture();
    let second = Project::fixture();
    let mut lean = start_all(&[&first, &second]);
    lean.ok("lean_sync", args(&first, "Fixture/Basic.lean", json!({})));
    lean.ok("lean_sync", args(&second, "Fixture/Uses.lean", json!({})));
    let sent_before = lean.received_after_handshake().len();
    let card = lean.ok(TOOL, report(&first, json!({"include_collected": true})));
    assert_eq!(
        lean.received().len(),
        sent_before,
        "collecting sends Lean nothing"
    );
    let collected = &card["collected"];
    let keys: Vec<&String> = collected.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["identity", "openFiles", "runtime", "stats"]);
    assert_eq!(collected["identity"]["name"], "lean-beam-mcp");
    assert_eq!(collected["stats"]["root"], "~/project");
    assert_eq!(
        collected["stats"]["byBackend"]["lean"]["ops"]["sync"]["count"],
        1
    );
    let open = collected["openFiles"].as_array().unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["path"], "Fixture/Basic.lean");
    assert_eq!(open[0]["version"], 1);
    assert_eq!(open[0]["diagnostics"]["counts"]["error"], 0);
    let runtime = &collected["runtime"];
    assert_eq!(runtime["cached"], true);
    assert_eq!(runtime["alive"], true);
    assert_eq!(runtime["epoch"], 1);
    assert_eq!(
        runtime["toolchain"],
        first.read("lean-toolchain").trim(),
        "{runtime}"
    );
    assert!(runtime["stderrTail"].is_array());
    assert_eq!(card["collection_warnings"], json!([]));
    assert!(
        card["markdown"]
            .as_str()
            .unwrap()
            .contains("## Beam Debug Context")
    );
    assert!(
        !card.to_string().contains("[root2]"),
        "another workspace's state is not included: {card}"
    );
    let stats = lean.ok("beam_stats", json!({}));
    let lean_stats = &stats["workspaces"]["local:[root]"]["byBackend"]["lean"];
    assert_eq!(
        lean_stats["requestCount"], 1,
        "feedback is not a Lean operation"
    );
    assert_eq!(lean_stats["sessionStarts"], 1);
    lean.server.finish_clean();
}

#[test]
fn confidential_reports_collect_nothing_and_name_no_workspace() {
    let project = Project::fixture();
    let mut lean = start(&project);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let root = project.root().display().to_string();
    let home = home_of(&project).display().to_string();
    let sent_before = lean.received_after_handshake().len();
    let card = lean.ok(
        TOOL,
        report(
            &project,
            json!({
                "summary": format!("It fails in {root}/Fixture/Basic.lean and in {home}/other."),
                "confidential": true,
                "include_collected": true,
                "bundle": "dir",
                "client_request_id": "req-7",
                "request": {"hush": "hush-request"},
                "response": {"hush": "hush-response"},
                "evidence": [{"name": "hush.txt", "content": "hush-evidence"}],
            }),
        ),
    );
    assert_eq!(lean.received().len(), sent_before, "Lean is not asked");
    assert!(card.get("workspace").is_none(), "no echo: {card}");
    let metadata = &card["metadata"];
    assert_eq!(metadata["confidential"], true);
    assert_eq!(metadata["redacted"], true);
    assert_eq!(metadata["active_root"], Value::Null);
    assert_eq!(metadata["client_request_id"], Value::Null);
    let identity = &card["collected"]["identity"];
    assert_eq!(
        card["collected"].as_object().unwrap().len(),
        1,
        "identity only: {card}"
    );
    let keys: BTreeSet<&str> = identity
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["mcp_protocol", "name", "runtime_active", "version"])
    );
    let markdown = card["markdown"].as_str().unwrap();
    assert!(
        markdown.contains("do not post this report publicly"),
        "{markdown}"
    );
    assert!(
        markdown.contains("$WORKSPACE/Fixture/Basic.lean"),
        "{markdown}"
    );
    assert!(markdown.contains("~/other"), "{markdown}");
    let text = card.to_string();
    for leaked in ["[root]", "~/project", "hush", "req-7"] {
        assert!(!text.contains(leaked), "{leaked:?} leaked: {text}");
    }
    let warnings = card["collection_warnings"].to_string();
    assert!(warnings.contains("left out"), "{warnings}");
    assert!(
        card["bundle_dir"]
            .as_str()
            .unwrap()
            .starts_with("$WORKSPACE/.beam/feedback/")
    );
    let bundle = bundle_on_disk(&project, &card);
    assert_eq!(
        files_in(&bundle),
        ["card.md", "collected.json", "metadata.json", "report.json"],
        "no evidence in a confidential bundle"
    );
    let report_json = read_json(&bundle.join("report.json"));
    assert!(report_json.get("bundle_dir").is_none(), "{report_json}");
    for file in files_in(&bundle) {
        let content = read(&bundle.join(&file));
        assert!(!content.contains(&root), "{file} names the root");
        assert!(!content.contains(&home), "{file} names the home directory");
        assert!(!content.contains("hush"), "{file} holds a payload");
    }
    crate::harness::snapshot("feedback_confidential", card_snapshot(&card));
    lean.server.finish_clean();
}

#[test]
fn confidential_with_redact_false_is_refused() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let error = lean.fails(
        TOOL,
        report(
            &project,
            json!({"confidential": true, "redact": false, "bundle": "dir"}),
        ),
        "invalidInput",
    );
    assert_eq!(error["data"]["path"], "/redact");
    assert!(
        error["message"].as_str().unwrap().contains("confidential"),
        "{error}"
    );
    assert!(beam_dir(&project).is_empty());
    nothing_started(&mut lean, &project);
    lean.server.finish_clean();
}

#[test]
fn a_misspelled_field_fails_closed() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let error = lean.fails(
        TOOL,
        report(&project, json!({"confidental": true, "bundle": "dir"})),
        "invalidInput",
    );
    assert_eq!(error["data"]["path"], "/confidental");
    assert_eq!(
        error["message"],
        "beam_feedback_report accepts no undeclared input fields: confidental"
    );
    let nested = lean.fails(
        TOOL,
        report(
            &project,
            json!({"bundle": "dir", "evidence": [{"name": "a.txt", "contents": "x"}]}),
        ),
        "invalidInput",
    );
    assert_eq!(nested["data"]["path"], "/evidence/0/contents");
    let bad_enum = lean.fails(
        TOOL,
        report(&project, json!({"bundle": "tar"})),
        "invalidInput",
    );
    assert_eq!(bad_enum["data"]["path"], "/bundle");
    assert!(beam_dir(&project).is_empty());
    nothing_started(&mut lean, &project);
    lean.server.finish_clean();
}

#[test]
fn blank_required_fields_are_refused() {
    let project = Project::fixture();
    let mut lean = start(&project);
    for field in ["title", "summary", "reproduction", "expected", "actual"] {
        let error = lean.fails(
            TOOL,
            report(&project, json!({field: " \n"})),
            "invalidInput",
        );
        assert_eq!(error["data"]["path"], format!("/{field}"), "{error}");
    }
    lean.server.finish_clean();
}

#[test]
fn the_workspace_must_be_a_lake_project_even_when_confidential() {
    let project = Project::fixture();
    let plain = tempfile::tempdir().unwrap();
    let mut lean = start(&project);
    let mut arguments = report(&project, json!({"confidential": true, "bundle": "dir"}));
    arguments["workspace"] = json!({"root": plain.path()});
    let error = lean.fails(TOOL, arguments, "invalidInput");
    assert_eq!(error["data"]["path"], "/workspace/root");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("not a Lean/Lake project"),
        "{error}"
    );
    assert!(!plain.path().join(".beam").exists(), "nothing written");
    lean.server.finish_clean();
}

#[test]
fn evidence_names_must_be_simple_file_names() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let long = "a".repeat(200);
    let bad = [
        "",
        "   ",
        ".",
        "..",
        "../escape.txt",
        "../../etc/passwd",
        "a/b.txt",
        "a\\b.txt",
        "/etc/passwd",
        "C:evil.txt",
        ".hidden",
        "..hidden",
        "a..b",
        "nul\0byte",
        "line\nbreak",
        "tab\tname",
        "space name.txt",
        "trailing.",
        "-rf",
        "CON",
        "con.txt",
        "ünïcode.txt",
        long.as_str(),
    ];
    for bundle in ["dir", "zip", "none"] {
        for name in bad {
            let error = lean.fails(
                TOOL,
                report(
                    &project,
                    json!({"bundle": bundle, "evidence": [
                        {"name": "fine.txt", "content": "ok"},
                        {"name": name, "content": "x"},
                    ]}),
                ),
                "invalidInput",
            );
            assert_eq!(
                error["data"]["path"], "/evidence/1/name",
                "{name:?}: {error}"
            );
            assert!(
                error["message"].as_str().unwrap().contains("evidence name"),
                "{name:?}: {error}"
            );
        }
    }
    let duplicate = lean.fails(
        TOOL,
        report(
            &project,
            json!({"bundle": "dir", "evidence": [
                {"name": "log.txt", "content": "one"},
                {"name": "LOG.txt", "content": "two"},
            ]}),
        ),
        "invalidInput",
    );
    assert_eq!(duplicate["data"]["path"], "/evidence/1/name");
    assert!(
        duplicate["message"].as_str().unwrap().contains("log.txt"),
        "{duplicate}"
    );
    assert!(beam_dir(&project).is_empty(), "{:?}", beam_dir(&project));
    lean.server.finish_clean();
}

#[test]
fn evidence_needs_exactly_one_source() {
    let project = Project::fixture();
    let mut lean = start(&project);
    for entry in [
        json!({"name": "both.txt", "content": "x", "path": "Fixture/Basic.lean"}),
        json!({"name": "neither.txt"}),
    ] {
        let error = lean.fails(
            TOOL,
            report(&project, json!({"bundle": "dir", "evidence": [entry]})),
            "invalidInput",
        );
        assert_eq!(error["data"]["path"], "/evidence/0", "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("exactly one of content or path"),
            "{error}"
        );
    }
    assert!(beam_dir(&project).is_empty());
    lean.server.finish_clean();
}

#[test]
fn file_evidence_is_read_only_inside_the_workspace() {
    let project = Project::fixture();
    let outside = home_of(&project).join("outside.txt");
    std::fs::write(&outside, "not yours").unwrap();
    std::os::unix::fs::symlink(&outside, project.root().join("Fixture/link.txt")).unwrap();
    std::fs::write(project.root().join("big.log"), vec![b'x'; 1024 * 1024 + 1]).unwrap();
    let fifo = project.root().join("pipe");
    let fifo_c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo_c.as_ptr(), 0o600) }, 0);
    let mut lean = start(&project);
    let outside_text = outside.display().to_string();
    for (path, words) in [
        ("../outside.txt", "outside the workspace"),
        (outside_text.as_str(), "outside the workspace"),
        ("Fixture/link.txt", "outside the workspace"),
        ("Fixture", "not a regular file"),
        ("pipe", "not a regular file"),
        ("Fixture/Nope.lean", "does not exist"),
        ("big.log", "larger than"),
    ] {
        for bundle in ["dir", "none"] {
            let error = lean.fails(
                TOOL,
                report(
                    &project,
                    json!({"bundle": bundle, "evidence": [{"name": "e.txt", "path": path}]}),
                ),
                "invalidInput",
            );
            assert_eq!(error["data"]["path"], "/evidence/0/path", "{path}: {error}");
            assert!(
                error["message"].as_str().unwrap().contains(words),
                "{path}: {error}"
            );
        }
    }
    assert!(beam_dir(&project).is_empty());
    lean.server.finish_clean();
}

#[test]
fn a_dir_bundle_holds_the_card_its_context_and_the_evidence() {
    let project = Project::fixture();
    let home = home_of(&project).display().to_string();
    let root = project.root().display().to_string();
    let mut lean = start(&project);
    let card = lean.ok(
        TOOL,
        report(
            &project,
            json!({
                "bundle": "dir",
                "evidence": [
                    {"name": "notes.txt", "content": format!("seen under {home}/elsewhere")},
                    {"name": "response.json", "content": {"path": format!("{root}/Fixture/Basic.lean")}},
                    {"name": "Basic.lean", "path": "Fixture/Basic.lean"},
                ],
            }),
        ),
    );
    let named = card["bundle_dir"].as_str().unwrap();
    let (parent, id) = named.rsplit_once('/').unwrap();
    assert_eq!(parent, "~/project/.beam/feedback");
    assert!(is_bundle_id(id, "hover-shows-nothing"), "{id}");
    assert!(card.get("zip_path").is_none());
    assert_eq!(card["metadata"]["bundle"], "dir");
    let bundle = bundle_on_disk(&project, &card);
    assert_eq!(
        files_in(&bundle),
        [
            "card.md",
            "collected.json",
            "evidence/Basic.lean",
            "evidence/notes.txt",
            "evidence/response.json",
            "metadata.json",
            "report.json",
        ]
    );
    assert_eq!(
        read(&project.root().join(".beam/feedback/.gitignore")),
        "*\n",
        "bundles are kept out of version control"
    );
    let evidence = bundle.join("evidence");
    assert_eq!(read(&evidence.join("notes.txt")), "seen under ~/elsewhere");
    assert_eq!(
        read_json(&evidence.join("response.json")),
        json!({"path": "~/project/Fixture/Basic.lean"})
    );
    assert_eq!(
        read(&evidence.join("Basic.lean")),
        project.read("Fixture/Basic.lean")
    );
    assert_eq!(read_json(&bundle.join("metadata.json")), card["metadata"]);
    let collected = read_json(&bundle.join("collected.json"));
    assert!(collected.get("identity").is_some(), "{collected}");
    let saved = read_json(&bundle.join("report.json"));
    assert_eq!(saved["bundle_dir"], card["bundle_dir"]);
    assert_eq!(saved["collected"], collected);
    let card_md = read(&bundle.join("card.md"));
    assert!(
        card_md.contains("## Beam Debug Context"),
        "the bundle is complete"
    );
    for name in ["notes.txt", "response.json", "Basic.lean"] {
        assert!(card["markdown"].as_str().unwrap().contains(name), "{name}");
    }
    for file in files_in(&bundle) {
        let content = read(&bundle.join(&file));
        assert!(!content.contains(&home), "{file} names the home directory");
    }
    nothing_started(&mut lean, &project);
    lean.server.finish_clean();
}

#[test]
fn a_zip_bundle_is_the_bundle_directory_zipped() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let card = lean.ok(
        TOOL,
        report(
            &project,
            json!({"bundle": "zip", "evidence": [{"name": "notes.txt", "content": "seen"}]}),
        ),
    );
    let dir = card["bundle_dir"].as_str().unwrap();
    assert_eq!(card["zip_path"], format!("{dir}.zip"));
    let bundle = bundle_on_disk(&project, &card);
    let id = bundle.file_name().unwrap().to_str().unwrap().to_owned();
    let zip_file = project
        .root()
        .join(".beam/feedback")
        .join(format!("{id}.zip"));
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&zip_file).unwrap()).unwrap();
    let mut names: Vec<String> = archive
        .file_names()
        .map(|name| name.expect("a readable entry name").into_owned())
        .collect();
    names.sort();
    let expected: Vec<String> = files_in(&bundle)
        .iter()
        .map(|f| format!("{id}/{f}"))
        .collect();
    assert_eq!(names, expected);
    for name in names {
        let mut content = String::new();
        archive
            .by_name(&name)
            .unwrap()
            .read_to_string(&mut content)
            .unwrap();
        let on_disk = read(&bundle.join(name.strip_prefix(&format!("{id}/")).unwrap()));
        assert_eq!(content, on_disk, "{name}");
    }
    let saved = read_json(&bundle.join("report.json"));
    assert_eq!(saved["zip_path"], card["zip_path"]);
    lean.server.finish_clean();
}

#[test]
fn reports_at_once_get_their_own_bundles() {
    let project = Project::fixture();
    let mut lean = start(&project);
    for id in [101, 102, 103] {
        lean.server.send(&request(
            id,
            "tools/call",
            call(TOOL, report(&project, json!({"bundle": "zip"}))),
        ));
    }
    let mut dirs = BTreeSet::new();
    for id in [101, 102, 103] {
        let answer = lean.server.response(&json!(id));
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let card = &answer["result"]["structuredContent"];
        let bundle = bundle_on_disk(&project, card);
        assert_eq!(files_in(&bundle).len(), 4, "complete: {bundle:?}");
        assert_eq!(
            card["zip_path"],
            format!("{}.zip", card["bundle_dir"].as_str().unwrap())
        );
        dirs.insert(bundle);
    }
    assert_eq!(dirs.len(), 3, "one bundle each: {dirs:?}");
    lean.server.finish_clean();
}

#[test]
fn without_redaction_local_paths_stay() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let card = lean.ok(
        TOOL,
        report(&project, json!({"redact": false, "bundle": "dir"})),
    );
    assert_eq!(card["metadata"]["redacted"], false);
    assert_eq!(card["metadata"]["active_root"], "[root]");
    assert!(
        card["bundle_dir"]
            .as_str()
            .unwrap()
            .starts_with("[root]/.beam/feedback/"),
        "{card}"
    );
    assert!(card["markdown"].as_str().unwrap().contains("[root]"));
    lean.server.finish_clean();
}

#[test]
fn a_bundle_never_leaves_the_workspace() {
    let project = Project::fixture();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), project.root().join(".beam")).unwrap();
    let mut lean = start(&project);
    let error = lean.fails(
        TOOL,
        report(&project, json!({"bundle": "dir"})),
        "feedbackBundleFailed",
    );
    assert!(
        error["message"].as_str().unwrap().contains(".beam"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_dir(elsewhere.path()).unwrap().count(),
        0,
        "nothing written through the link"
    );
    lean.server.finish_clean();
}

#[test]
fn a_progress_token_gets_the_collection_phase_only() {
    let project = Project::fixture();
    let mut lean = start(&project);
    for (id, confidential, message) in [
        (
            101,
            false,
            "beam_feedback_report: collecting the report context",
        ),
        (
            102,
            true,
            "beam_feedback_report: preparing a confidential report",
        ),
    ] {
        let mut params = call(
            TOOL,
            report(&project, json!({"confidential": confidential})),
        );
        params["_meta"] = json!({"progressToken": format!("p{id}")});
        lean.server.send(&request(id, "tools/call", params));
        let seen = lean.server.until_response(&json!(id));
        let progress: Vec<&Value> = seen
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 1, "{seen:?}");
        assert_eq!(progress[0]["params"]["message"], message);
    }
    nothing_started(&mut lean, &project);
    lean.server.finish_clean();
}

#[test]
fn the_catalog_entry_follows_the_specification() {
    let mut server = crate::support::McpProcess::server(&[]);
    server.initialize_legacy();
    let list = server.ask(request(1, "tools/list", Value::Null));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names[..4],
        ["beam_version", "beam_stats", TOOL, "lean_drop_workspace"]
    );
    let tool = &tools[2];
    assert!(
        tool.get("annotations").is_none(),
        "it may write files: {tool}"
    );
    let description = tool["description"].as_str().unwrap();
    assert!(
        description.contains("nothing is sent anywhere and Lean is never started"),
        "{description}"
    );
    let schema = &tool["inputSchema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        json!([
            "title",
            "summary",
            "reproduction",
            "expected",
            "actual",
            "workspace"
        ])
    );
    let properties: BTreeSet<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        properties,
        BTreeSet::from([
            "title",
            "summary",
            "reproduction",
            "expected",
            "actual",
            "kind",
            "severity",
            "impact",
            "workaround",
            "tags",
            "client_request_id",
            "request",
            "response",
            "evidence",
            "bundle",
            "redact",
            "confidential",
            "include_collected",
            "workspace",
        ])
    );
    let p = &schema["properties"];
    assert_eq!(
        p["kind"]["enum"],
        json!(["bug", "ux", "perf", "docs", "question"])
    );
    assert_eq!(
        p["severity"]["enum"],
        json!(["low", "medium", "high", "critical"])
    );
    assert_eq!(p["bundle"]["enum"], json!(["none", "dir", "zip"]));
    assert_eq!(p["bundle"]["default"], "none");
    assert_eq!(p["redact"]["default"], true);
    assert_eq!(p["confidential"]["default"], false);
    assert_eq!(p["include_collected"]["default"], false);
    assert_eq!(p["tags"]["items"]["type"], "string");
    assert_eq!(p["request"]["type"], "object");
    assert_eq!(p["response"]["type"], "object");
    let evidence = &p["evidence"]["items"];
    assert_eq!(evidence["required"], json!(["name"]));
    assert_eq!(evidence["additionalProperties"], false);
    let content: Vec<&String> = evidence["properties"]["content"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(content.is_empty(), "any JSON value: {content:?}");
    assert_eq!(evidence["properties"]["path"]["type"], "string");
    server.finish_clean();
}

#[test]
fn evidence_without_a_bundle_is_listed_not_copied() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let card = lean.ok(
        TOOL,
        report(
            &project,
            json!({"evidence": [
                {"name": "notes.txt", "content": "inline words"},
                {"name": "Basic.lean", "path": "Fixture/Basic.lean"},
            ]}),
        ),
    );
    let markdown = card["markdown"].as_str().unwrap();
    assert!(markdown.contains("## Evidence"), "{markdown}");
    assert!(
        markdown.contains("`notes.txt`: inline text, 12 bytes"),
        "{markdown}"
    );
    assert!(
        markdown.contains("`Basic.lean`: file `Fixture/Basic.lean`"),
        "{markdown}"
    );
    assert!(!markdown.contains("inline words"), "listed, never inlined");
    assert!(
        card["collection_warnings"]
            .to_string()
            .contains("copied only into a bundle"),
        "{card}"
    );
    assert!(beam_dir(&project).is_empty());
    lean.server.finish_clean();
}

#[test]
fn a_confidential_refusal_names_no_workspace_either() {
    let project = Project::fixture();
    let mut lean = start(&project);
    let missing = project.root().join("Fixture/Nope.lean");
    let error = lean.fails(
        TOOL,
        report(
            &project,
            json!({"confidential": true, "evidence": [{"name": "e.txt", "path": missing}]}),
        ),
        "invalidInput",
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("$WORKSPACE/Fixture/Nope.lean"),
        "{message}"
    );
    assert!(!error.to_string().contains("[root]"), "{error}");
    lean.server.finish_clean();
}

/// With tracing on, a report names the trace files a user can attach: the MCP trace and this
/// workspace's LSP traces (every start of its Lean server), never another workspace's; a
/// confidential report names none (they hold the workspace's text) and says so.
#[test]
fn a_report_names_the_trace_files_when_tracing_is_on() {
    let first = Project::fixture();
    let second = Project::fixture();
    let traces = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(traces.path()).unwrap();
    let home = home_of(&first);
    let elan_home = std::env::var("ELAN_HOME")
        .unwrap_or_else(|_| format!("{}/.elan", std::env::var("HOME").unwrap_or_default()));
    let mut lean = Lean::start(
        &[&first, &second],
        &["--trace-dir", dir.to_str().unwrap()],
        &[("HOME", home.to_str().unwrap()), ("ELAN_HOME", &elan_home)],
    );
    lean.server.replace(&dir.display().to_string(), "[traces]");
    lean.ok("lean_sync", args(&first, "Fixture/Basic.lean", json!({})));
    lean.ok("lean_sync", args(&second, "Fixture/Basic.lean", json!({})));
    let card = lean.ok(TOOL, report(&first, json!({"include_collected": true})));
    let traces = &card["collected"]["traces"];
    assert_eq!(traces["dir"], "[traces]", "{card}");
    let files: Vec<&str> = traces["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        files.len(),
        2,
        "the MCP trace and one Lean start: {files:?}"
    );
    assert!(
        files.iter().all(|f| f.starts_with("[traces]/lean-beam-")),
        "{files:?}"
    );
    assert!(files.iter().any(|f| f.ends_with("-mcp.log")), "{files:?}");
    assert!(
        files
            .iter()
            .any(|f| f.contains("-lsp-project-") && f.ends_with("-1.log")),
        "{files:?}"
    );
    for file in &files {
        let on_disk = file.replace("[traces]", dir.to_str().unwrap());
        assert!(Path::new(&on_disk).is_file(), "{on_disk}");
    }
    let markdown = card["markdown"].as_str().unwrap();
    assert!(
        markdown.contains("- trace files (attach them): `[traces]/lean-beam-"),
        "{markdown}"
    );
    let confidential = lean.ok(
        TOOL,
        report(
            &first,
            json!({"confidential": true, "include_collected": true}),
        ),
    );
    assert!(
        confidential["collected"].get("traces").is_none(),
        "{confidential}"
    );
    assert!(
        !confidential.to_string().contains("[traces]"),
        "{confidential}"
    );
    let warnings = confidential["collection_warnings"].to_string();
    assert!(warnings.contains("trace files are not named"), "{warnings}");
    lean.server.finish_clean();
}
